"""<rivet/rivet.hpp> is the one include for the whole core API: every public header is reachable
from it (the README's framework example once failed to compile because cors.hpp and
request_id.hpp were not). Optional components (PostgreSQL: pg*.hpp) have their own include."""
import re
import subprocess
from pathlib import Path

INCLUDE = Path(__file__).resolve().parents[2] / "include"
OPTIONAL = re.compile(r"^pg(_.*)?\.hpp$")


def test_rivet_hpp_reaches_every_core_header(tmp_path):
    src = tmp_path / "all.cpp"
    src.write_text("#include <rivet/rivet.hpp>\n")
    deps = subprocess.run(["g++", "-std=c++20", "-M", f"-I{INCLUDE}", str(src)],
                          capture_output=True, text=True, timeout=300, check=True).stdout
    reached = {Path(p).name for p in re.findall(r"\S*include/rivet/[\w.]+\.hpp", deps)}
    core = {p.name for p in (INCLUDE / "rivet").glob("*.hpp") if not OPTIONAL.match(p.name)}
    assert core - reached == set()
