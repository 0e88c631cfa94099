"""Every C++ block of README.md and docs/*.md compiles against the public headers (include/), as
a user copying it would compile it (issue 26, item 18: the README's example did not).

Each ```cpp block follows a comment that says how it compiles, and declares what the block
uses without showing (hidden in the rendered page, visible in the source):

    <!-- compile: MODE
    C++ at file scope: declarations the block assumes (and definitions, for a program)
    -->

MODE is `program` (the block with the context before it is a whole program: compiled and
linked against build/librivet.a), `file` (at file scope, compiled only), `function` or
`coroutine` (the block is the body of a `void` or `rivet::Task<>` function with `app`, `req`
and `res` in scope, compiled only). Blocks other than programs get `#include <rivet/rivet.hpp>`
first. An elision `...` in code (not a pack expansion) reads as `{}`, and a line of code that is
only words between two `...` as a comment. A block without the comment fails, as does one that
does not compile.

Run alone: python3 tests/e2e/test_doc_examples.py [BUILD_DIR] (prints the failures).
"""
import os
import re
import shlex
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
DOCS = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
BLOCK = re.compile(r"^```(?:cpp|c\+\+)\n(.*?)^```", re.S | re.M)
# The comment right before a block (its context may hold neither "-->" nor a fence).
MARKER = re.compile(r"<!-- compile: (program|file|function|coroutine)\n?"
                    r"((?:(?!-->|```).)*)-->\s*\Z", re.S)
MODES_WRAPPED = {"function": "void", "coroutine": "rivet::Task<>"}


def blocks():
    """(id, markdown file, line, mode or None, context, code) for every C++ block."""
    out = []
    for doc in DOCS:
        text = doc.read_text()
        for m in BLOCK.finditer(text):
            line = text.count("\n", 0, m.start()) + 1
            marker = MARKER.search(text[max(0, m.start() - 4000):m.start()])
            mode, context = (marker.group(1), marker.group(2)) if marker else (None, "")
            out.append((f"{doc.name}:{line}", doc, line, mode, context, m.group(1)))
    return out


def elide(code: str) -> str:
    lines = []
    for line in code.splitlines():
        text, slashes, comment = line.partition("//")
        if re.fullmatch(r"\s*\.\.\.[^.]*\.\.\.\s*", text):
            lines.append("// " + line)  # "... check the credentials ..."
            continue
        lines.append(re.sub(r"(?<![\w>)\]])\.\.\.", "{}", text) + slashes + comment)
    return "\n".join(lines) + "\n"


def source(doc: Path, line: int, mode: str, context: str, code: str) -> str:
    body = f'#line {line + 1} "{doc.name}"\n' + elide(code)
    if mode == "program":
        return context + body
    head = "#include <rivet/rivet.hpp>\n" + context
    if mode == "file":
        return head + body
    includes = "".join(l + "\n" for l in code.splitlines() if l.startswith("#include"))
    body = "\n".join("" if l.startswith("#include") else l for l in body.splitlines())
    end = "co_return;\n" if mode == "coroutine" else ""
    return (head + includes + f"{MODES_WRAPPED[mode]} doc_block([[maybe_unused]] rivet::App& app, "
            "[[maybe_unused]] rivet::Request& req, [[maybe_unused]] rivet::Response& res) {\n{\n"
            + body + "\n}\n" + end + "}\n")


def build_dir() -> Path:
    if len(sys.argv) > 1 and __name__ == "__main__":
        return Path(sys.argv[1]).resolve()
    binary = os.environ.get("RIVET_BIN")
    return Path(binary).resolve().parent if binary else REPO / "build"


def compiler(build: Path) -> list:
    cache = build / "CMakeCache.txt"
    if cache.exists():
        m = re.search(r"^CMAKE_CXX_COMPILER:\w+=(.+)$", cache.read_text(), re.M)
        if m and m.group(1).strip():
            return [m.group(1).strip()]
    return [os.environ.get("CXX", "c++")]


def sanitizer_flags(build: Path) -> list:
    """A sanitized build's librivet.a links only into a program built with the same sanitizers
    (CMakeLists.txt: RIVET_SANITIZE, RIVET_TSAN)."""
    cache = build / "CMakeCache.txt"
    text = cache.read_text() if cache.exists() else ""
    if re.search(r"^RIVET_SANITIZE:\w+=ON$", text, re.M):
        return ["-fsanitize=address,undefined"]
    if re.search(r"^RIVET_TSAN:\w+=ON$", text, re.M):
        return ["-fsanitize=thread"]
    return []


def link_flags(build: Path) -> list:
    """librivet.a and what rivet.pc says it needs."""
    pc = (build / "rivet.pc").read_text()
    requires = re.search(r"^Requires:(.*)$", pc, re.M).group(1)
    modules = [r.split()[0] for r in requires.split(",") if r.strip()]
    libs = subprocess.run(["pkg-config", "--libs", *modules], capture_output=True, text=True,
                          check=True).stdout
    return [str(build / "librivet.a"), *shlex.split(libs), "-pthread"]


def compile_block(doc: Path, line: int, mode: str, context: str, code: str,
                  build: Path) -> str | None:
    """None when it compiles (and links, for a program); else the compiler's complaint."""
    with tempfile.TemporaryDirectory(prefix="rivet-doc-") as tmp:
        src = Path(tmp) / "block.cpp"
        src.write_text(source(doc, line, mode, context, code))
        cmd = [*compiler(build), "-std=c++20", "-pthread", f"-I{REPO / 'include'}"]
        if mode == "program":
            cmd += ["-O0", *sanitizer_flags(build), "-o", str(Path(tmp) / "program"), str(src),
                    *link_flags(build)]
        else:
            cmd += ["-fsyntax-only", str(src)]
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
        if p.returncode == 0:
            return None
        return f"{doc.name}:{line}: {mode} block does not compile:\n{p.stderr[-6000:]}"


ALL = blocks()


@pytest.mark.parametrize("block", ALL, ids=[b[0] for b in ALL])
def test_doc_block_compiles(block):
    name, doc, line, mode, context, code = block
    assert mode, (f"{name}: a C++ block without `<!-- compile: MODE ... -->` before it "
                  "(tests/e2e/test_doc_examples.py says how)")
    problem = compile_block(doc, line, mode, context, code, build_dir())
    assert problem is None, problem


def test_the_docs_have_cpp_blocks():
    assert len(ALL) >= 10  # the extraction still finds them


if __name__ == "__main__":
    from concurrent.futures import ThreadPoolExecutor
    build = build_dir()

    def check(b):
        if not b[3]:
            return f"{b[0]}: no compile marker"
        return compile_block(*b[1:], build)
    with ThreadPoolExecutor(os.cpu_count() or 2) as pool:
        problems = [p for p in pool.map(check, ALL) if p]
    print("\n\n".join(problems) or f"all {len(ALL)} blocks compile")
    sys.exit(1 if problems else 0)
