"""Prints, for a results file of bench/bench.py, each scenario's ratio of one server's figure
to another's taken within each rep (stats.paired_ratios): the comparison that holds when the
machine changes speed between reps.

    python3 bench/paired.py bench/results/<file>.json [--a rivet] [--b rivet_base]
        [--key cpu_us_per_req]
"""

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import stats  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("results")
    ap.add_argument("--a", default="rivet")
    ap.add_argument("--b", default="rivet_base")
    ap.add_argument("--key", default="cpu_us_per_req")
    args = ap.parse_args()
    runs = json.loads(Path(args.results).read_text())["runs"]
    pairs = stats.paired_ratios(runs, args.key, args.a, args.b)
    if not pairs:
        print(f"paired: no rep has both {args.a} and {args.b}", file=sys.stderr)
        return 1
    for scenario, p in pairs.items():
        each = " ".join("-" if r is None else f"{r:.2f}" for r in p["ratios"])
        print(f"{scenario}: {args.a}/{args.b} median {p['median']:.3f} "
              f"({p['min']:.3f}-{p['max']:.3f}, n={p['n']}); each rep: {each}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
