"""bench/instructions.py's arithmetic, on a recorded callgrind summary."""
import pathlib
import sys

import pytest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))

from instructions import callgrind_total, per_request  # noqa: E402

# The head of a callgrind output file, as valgrind 3.19 writes it (trimmed).
RECORDED = """# callgrind format
version: 1
creator: callgrind-3.19.0
pid: 20245
cmd:  /tmp/rivet --port 18611 --bind 127.0.0.1 --threads 1 --workers 1
part: 1

events: Ir

summary: 94125802
totals: 94125802
"""


def test_the_total_is_read_from_the_summary_line():
    assert callgrind_total(RECORDED) == 94125802


def test_a_file_without_a_total_is_refused():
    with pytest.raises(ValueError):
        callgrind_total("events: Ir\n")


def test_start_up_and_shutdown_cancel_out():
    # 3,200 requests cost 10.5 M with the start; 19,200 cost 53.0 M: 2,656.25 a request.
    assert per_request((3200, 10_500_000), (19200, 53_000_000)) == 2656.25


def test_the_runs_must_differ_in_requests():
    with pytest.raises(ValueError):
        per_request((3200, 1), (3200, 2))
