"""<rivet/rivet.hpp> is the one include for the whole core API: every public header is reachable
from it (the README's framework example once failed to compile because cors.hpp and
request_id.hpp were not). Optional components (PostgreSQL: pg*.hpp) have their own include."""
import re
import subprocess
from pathlib import Path

import pytest

from rivet_e2e import SANITIZED

# Compiles headers only: nothing of the binary under test, so once per `make test` is enough.
pytestmark = pytest.mark.skipif(SANITIZED, reason="header checks run in the plain pass")

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


DESIGNATED = """
#include <rivet/http_client.hpp>
#include <rivet/pg.hpp>
#include <rivet/rivet.hpp>
#include <rivet/static_files.hpp>
int main() {
    rivet::ClientRequest post{.method = "POST", .url = "http://x/", .body = "b"};
    rivet::pg::Options db{.conninfo = "dbname=x", .max_connections = 2};
    (void)post;
    (void)db;
    rivet::App app;
    rivet::RunOptions nested{.port = 8080, .limits = {.max_connections = 10},
                             .timeouts = {.idle_ms = 1000}, .tls = {.port = 8443},
                             .ops = {.log = {}, .rate_limit = {.allow = {"10.0.0.0/8"}}}};
    (void)nested;
    app.run({.port = 8080});  // the README's style
}
"""


def test_options_in_the_readme_style_compile_without_warnings(tmp_path):
    # -Wextra's -Wmissing-field-initializers fires for every member without a default: users
    # building with -Werror could not write {.port = 8080} (issue 26 #19).
    src = tmp_path / "options.cpp"
    src.write_text(DESIGNATED)
    got = subprocess.run(["g++", "-std=c++20", "-Wall", "-Wextra", "-Werror", "-fsyntax-only",
                          f"-I{INCLUDE}", str(src)], capture_output=True, text=True, timeout=300)
    assert got.returncode == 0, got.stderr
