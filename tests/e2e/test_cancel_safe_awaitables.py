"""Only cancel-safe awaitables compile in a rivet::Task (include/rivet/task.hpp's
CancelSafeAwaitable): a hand-written awaiter that keeps a coroutine_handle for a callback to resume
crashed a user's server when its client left first (issue 23). Now it is refused at compile time
with a message that names the way that is safe, and that way compiles."""
import subprocess
from pathlib import Path

import pytest

from rivet_e2e import SANITIZED

# Compiles headers only: nothing of the binary under test, so once per `make test` is enough.
pytestmark = pytest.mark.skipif(SANITIZED, reason="header checks run in the plain pass")


INCLUDE = Path(__file__).resolve().parents[2] / "include"

RAW_AWAITER = """
#include <rivet/rivet.hpp>
struct RawTimerAwaiter {  // resumes from a timer: a freed frame if the handler was cancelled
    bool await_ready() { return false; }
    void await_suspend(std::coroutine_handle<> h) {
        rivet::EventLoop::current()->call_after(std::chrono::milliseconds(100), [h] { h.resume(); });
    }
    void await_resume() {}
};
rivet::Task<> handler() { co_await RawTimerAwaiter{}; }
"""

THROUGH_COMPLETION = """
#include <rivet/rivet.hpp>
rivet::Task<int> handler() {
    co_return co_await rivet::until_complete<int>([](rivet::Completion<int> c) {
        rivet::EventLoop::current()->call_after(std::chrono::milliseconds(100), [c] { c.done(1); });
    });
}
struct Declared {  // its author vouches that the destructor withdraws the resumption
    static constexpr bool rivet_cancel_safe = true;
    bool await_ready() { return true; }
    void await_suspend(std::coroutine_handle<>) {}
    int await_resume() { return 2; }
};
rivet::Task<int> declared() { co_return co_await Declared{}; }
"""


def compile_snippet(tmp_path, text):
    src = tmp_path / "snippet.cpp"
    src.write_text(text)
    return subprocess.run(["g++", "-std=c++20", "-fsyntax-only", f"-I{INCLUDE}", str(src)],
                          capture_output=True, text=True, timeout=300)


def test_a_raw_awaiter_is_refused_with_the_safe_way_named(tmp_path):
    got = compile_snippet(tmp_path, RAW_AWAITER)
    assert got.returncode != 0
    assert "not known to be cancel-safe" in got.stderr
    assert "rivet::until_complete" in got.stderr


def test_completion_and_declared_awaiters_compile(tmp_path):
    got = compile_snippet(tmp_path, THROUGH_COMPLETION)
    assert got.returncode == 0, got.stderr
