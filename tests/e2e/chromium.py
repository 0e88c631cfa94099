"""Headless Chromium for the e2e tests of the demo's pages: its path (None when it is not
installed: scripts/setup.sh installs it), the flags every run gets, and a page driven over the
DevTools protocol for pages that must be watched while something else happens (the chat page
and a second client talking to each other). One-shot pages use `--dump-dom` with
`--virtual-time-budget` instead (headless_command)."""
from __future__ import annotations

import json
import shutil
import subprocess
import time
import urllib.request
from contextlib import ExitStack
from pathlib import Path

from websockets.sync.client import connect as ws_connect

from host_links import browsing
from rivet_e2e import SLOW

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


def headless_command(profile: Path, *extra: str) -> list[str]:
    """Chromium headless, with nothing of its own on the network, in a fresh profile."""
    return [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu",
            "--disable-background-networking", "--disable-component-update", "--disable-sync",
            "--no-first-run", f"--user-data-dir={profile}", *extra]


def run_headless(profile: Path, *args: str, timeout: float) -> subprocess.CompletedProcess:
    """One headless_command run to its end (text output captured), while no test changes the
    host's links (host_links)."""
    with browsing():
        return subprocess.run(headless_command(profile, *args), capture_output=True, text=True,
                              timeout=timeout)


class DevToolsPage:
    """One Chromium tab under the DevTools protocol: navigate(), evaluate(), wait_for(),
    wait_across_navigation(), and command() for anything else (DOM.setFileInputFiles ...).

    Raises RuntimeError when Chromium does not start (a test may skip on it). While it is
    open, no test changes the host's links (host_links)."""

    def __init__(self, profile: Path, *extra: str, timeout: float = 30.0):
        profile.mkdir(parents=True, exist_ok=True)
        self.stderr_path = profile.parent / f"{profile.name}-chromium.stderr"
        self.next_id = 0
        self.events: list[dict] = []  # DevTools events (of the domains enabled) in arrival order
        self.socket = None
        # Closed in reverse: the DevTools socket, Chromium, the links lock.
        self.exit_stack = ExitStack()
        self.exit_stack.enter_context(browsing())
        try:
            with open(self.stderr_path, "wb") as err:
                self.proc = subprocess.Popen(
                    headless_command(profile, "--remote-debugging-port=0", *extra,
                                     "about:blank"),
                    stdout=subprocess.DEVNULL, stderr=err)
            self.exit_stack.callback(self._stop_chromium)
            port = self._devtools_port(profile / "DevToolsActivePort", timeout * SLOW)
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list",
                                        timeout=timeout * SLOW) as r:
                targets = json.load(r)
            page = next(t for t in targets if t["type"] == "page")
            self.socket = self.exit_stack.enter_context(ws_connect(
                page["webSocketDebuggerUrl"], max_size=None, open_timeout=timeout * SLOW))
        except BaseException:
            self.close()
            raise

    def _devtools_port(self, path: Path, timeout: float) -> int:
        # Chromium writes the port it chose (first line) once it listens.
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"chromium exited with {self.proc.returncode}: "
                                   f"{self.stderr_path.read_text(errors='replace')[-500:]}")
            text = path.read_text() if path.exists() else ""
            if "\n" in text:
                return int(text.split("\n")[0])
            time.sleep(0.05)
        raise RuntimeError(f"chromium did not open its DevTools port within {timeout:.0f} s")

    def command(self, method: str, timeout: float = 30.0, **params):
        """Sends one command and returns its result (events that come meanwhile go to events)."""
        self.next_id += 1
        self.socket.send(json.dumps({"id": self.next_id, "method": method, "params": params}))
        deadline = time.monotonic() + timeout * SLOW
        while True:
            reply = json.loads(self.socket.recv(timeout=max(0.0, deadline - time.monotonic())))
            if "method" in reply and "id" not in reply:
                self.events.append(reply)
            elif reply.get("id") == self.next_id:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return reply["result"]

    def navigate(self, url: str):
        result = self.command("Page.navigate", url=url)
        if result.get("errorText"):
            raise RuntimeError(f"navigating to {url}: {result['errorText']}")

    def evaluate(self, expression: str):
        """The expression's value (JSON-able), evaluated in the page."""
        result = self.command("Runtime.evaluate", expression=expression, returnByValue=True)
        if "exceptionDetails" in result:
            raise RuntimeError(f"{expression}: {result['exceptionDetails']}")
        return result["result"].get("value")

    # Deadlines are bounds for a machine under load (Chromium, TLS and the server share its
    # cores), not expectations: a page answers in well under a second when the machine is idle.
    def wait_for(self, expression: str, timeout: float = 60.0):
        """Evaluates `expression` until it is truthy; returns its value. Raises on the deadline,
        with the last value."""
        deadline = time.monotonic() + timeout * SLOW
        while True:
            value = self.evaluate(expression)
            if value:
                return value
            if time.monotonic() > deadline:
                raise AssertionError(f"{expression} still {value!r} after {timeout * SLOW:.0f} s")
            time.sleep(0.05)

    def wait_across_navigation(self, expression: str, timeout: float = 60.0):
        """wait_for, for a page that is navigating (a form posted, a link followed): an evaluation
        that meets the old document's end (its context destroyed) is tried again, not a
        failure."""
        deadline = time.monotonic() + timeout * SLOW
        while True:
            try:
                value = self.evaluate(expression)
            except RuntimeError as e:
                value = f"(navigating: {e})"
            else:
                if value:
                    return value
            if time.monotonic() > deadline:
                raise AssertionError(f"{expression} still {value!r} after {timeout * SLOW:.0f} s")
            time.sleep(0.05)

    def _stop_chromium(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10 * SLOW)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()

    def close(self):
        self.exit_stack.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
