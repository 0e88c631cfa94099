"""Cookies, sessions and CSRF on a real socket, through examples/login.cpp: curl's cookie jar,
Python requests, and headless Chromium signing in through the HTML form. A tampered cookie is no
session, a session id stolen before login is worth nothing after it, sessions end (logout, idle
and absolute expiry), the in-memory store keeps its bound, and unsafe requests without the
session's CSRF token are refused with 403."""
import base64
import json
import re
import subprocess
import time

import pytest
import requests

from chromium import CHROMIUM, DevToolsPage
from rivet_e2e import BIN, SLOW

LOGIN = BIN.parent / "example_login"
COOKIE = "rivet_session"
TIMEOUT = 10 * SLOW


@pytest.fixture
def login_app(rivet):
    def start(*flags, env=None):
        srv = rivet(command=[LOGIN, 0, *flags], root=None, env=env)
        srv.url = f"http://{srv.host}:{srv.port}"
        return srv
    return start


def form_token(html: str) -> str:
    m = re.search(r'name=_csrf value="([^"]+)"', html)
    assert m, html
    return m.group(1)


def sign_in(http: requests.Session, url: str, user="ada", password="lovelace"):
    token = form_token(http.get(url + "/", timeout=TIMEOUT).text)
    return http.post(url + "/login", data={"_csrf": token, "username": user,
                                            "password": password}, timeout=TIMEOUT)


def whoami(url: str, cookie: str | None = None) -> dict:
    headers = {"Cookie": f"{COOKIE}={cookie}"} if cookie is not None else {}
    r = requests.get(url + "/whoami", headers=headers, timeout=TIMEOUT)
    assert r.status_code == 200, r.text
    return r.json()


def test_python_requests_sign_in_see_the_user_and_sign_out(login_app):
    srv = login_app()
    http = requests.Session()
    r = sign_in(http, srv.url, password="wrong")
    assert r.status_code == 401
    r = sign_in(http, srv.url)
    assert r.status_code == 200 and "Signed in as ada" in r.text, r.text  # after the 303
    assert r.history[0].status_code == 303
    set_cookie = next(f for f in r.history[0].raw.headers.getlist("Set-Cookie")
                      if f.startswith(COOKIE))
    assert set_cookie.startswith(f"{COOKIE}=") and "HttpOnly" in set_cookie, set_cookie
    assert "SameSite=Lax" in set_cookie and "Path=/" in set_cookie, set_cookie
    assert "Secure" not in set_cookie  # plain HTTP: Secure only over TLS by default
    assert http.get(srv.url + "/whoami", timeout=TIMEOUT).json()["user"] == "ada"
    before_logout = http.cookies[COOKIE]

    r = http.post(srv.url + "/logout", data={"_csrf": form_token(r.text)}, timeout=TIMEOUT,
                  allow_redirects=False)
    assert r.status_code == 303
    assert re.match(rf"{COOKIE}=; .*Max-Age=0", r.headers["Set-Cookie"]), r.headers
    assert COOKIE not in http.cookies  # the client dropped it
    # The old cookie, kept by someone, is no session either: logout removed it from the store.
    assert whoami(srv.url, before_logout) == {"user": None, "note": "", "new_session": True}


def test_curl_cookie_jar_round_trip(login_app, tmp_path):
    srv = login_app()
    jar = tmp_path / "jar.txt"

    def curl(*args):
        out = subprocess.run(["curl", "-sS", "-c", str(jar), "-b", str(jar), *args],
                             capture_output=True, text=True, timeout=TIMEOUT, check=True)
        return out.stdout

    token = form_token(curl(srv.url + "/"))
    page = curl("-L", "-d", f"_csrf={token}&username=alan&password=turing", srv.url + "/login")
    assert "Signed in as alan" in page, page
    assert json.loads(curl(srv.url + "/whoami"))["user"] == "alan"

    def session_in_jar():
        return re.search(rf"{COOKIE}\t(\S+)", jar.read_text()).group(1)

    # Several Cookie fields: the session is found in the second.
    out = subprocess.run(["curl", "-sS", "-H", "Cookie: a=1; theme=dark",
                          "-H", f"Cookie: other=2; {COOKIE}={session_in_jar()}",
                          srv.url + "/whoami"],
                         capture_output=True, text=True, timeout=TIMEOUT, check=True).stdout
    assert json.loads(out)["user"] == "alan", out

    # A login answer sets two cookies, each its own Set-Cookie field. (Signed in, the page's
    # logout form carries the token: the login renewed it.)
    token = form_token(curl(srv.url + "/"))
    head = curl("-D", "-", "-o", "/dev/null", "-d",
                f"_csrf={token}&username=alan&password=turing", srv.url + "/login")
    fields = [line.strip() for line in head.splitlines()
              if line.lower().startswith("set-cookie:")]
    assert len(fields) == 2, head
    assert fields[0] == ("Set-Cookie: last_user=alan; Path=/; Max-Age=2592000; HttpOnly; "
                         "SameSite=Strict"), fields
    assert fields[1].startswith(f"Set-Cookie: {COOKIE}="), fields
    assert "last_user\talan" in jar.read_text()
    signed_in = session_in_jar()
    assert json.loads(curl(srv.url + "/whoami"))["user"] == "alan"

    # Logout; the jar sends last_user back, so the form comes filled in. The form page that
    # followed began a new session (for its CSRF token), not signed in.
    token = form_token(curl(srv.url + "/"))
    page = curl("-L", "-d", f"_csrf={token}", srv.url + "/logout")
    assert 'id=username value="alan"' in page, page
    assert session_in_jar() != signed_in
    assert json.loads(curl(srv.url + "/whoami"))["user"] is None


def test_tampered_or_unsigned_session_cookie_is_no_session(login_app):
    for flags in ((), ("--cookie-sessions",)):
        srv = login_app(*flags)
        http = requests.Session()
        sign_in(http, srv.url)
        good = http.cookies[COOKIE]
        assert whoami(srv.url, good)["user"] == "ada"
        value, mac = good.rsplit(".", 1)
        flipped = value[:-1] + ("A" if value[-1] != "A" else "B")
        for bad in (flipped + "." + mac, value + "." + mac[::-1], value, "", "x.y.z",
                    value + "." + mac + "x", "\"" + good + "\"x", "A" * 6000 + "." + mac):
            assert whoami(srv.url, bad) == {"user": None, "note": "", "new_session": True}, bad
        assert whoami(srv.url, good)["user"] == "ada"  # the real one still works

    # Cookie-only sessions are signed, not encrypted: data rewritten by the visitor is refused
    # even when it decodes.
    payload = json.loads(base64.urlsafe_b64decode(value + "=" * (-len(value) % 4)))
    assert payload["d"]["user"] == "ada"
    payload["d"]["user"] = "alan"
    forged = base64.urlsafe_b64encode(json.dumps(payload).encode()).decode().rstrip("=")
    assert whoami(srv.url, forged + "." + mac)["user"] is None


def test_encrypted_cookie_sessions_hide_the_data_and_refuse_tampering(login_app):
    # Two instances with one secret: the cookie carries the session (nothing is stored), so
    # the second serves what the first began; a signed-only instance with the same secret does
    # not take the encrypted cookie, nor the encrypted one its signed cookie.
    env = {"RIVET_SESSION_SECRET": "s" * 40}
    first = login_app("--encrypted-cookie-sessions", env=env)
    second = login_app("--encrypted-cookie-sessions", env=env)
    signed_only = login_app("--cookie-sessions", env=env)
    http = requests.Session()
    assert "Signed in as ada" in sign_in(http, first.url).text
    good = http.cookies[COOKIE]
    raw = base64.urlsafe_b64decode(good + "=" * (-len(good) % 4))
    assert b"ada" not in raw and b"user" not in raw and b'"d"' not in raw
    assert whoami(first.url, good)["user"] == "ada"
    assert whoami(second.url, good)["user"] == "ada"
    assert whoami(signed_only.url, good)["user"] is None
    signed = requests.Session()
    sign_in(signed, signed_only.url)
    assert whoami(signed_only.url, signed.cookies[COOKIE])["user"] == "ada"
    assert whoami(first.url, signed.cookies[COOKIE])["user"] is None

    # Any changed byte (salt, ciphertext or tag), a cut, or junk: a new, empty session.
    def changed(i: int) -> str:
        b = bytearray(raw)
        b[i] ^= 1
        return base64.urlsafe_b64encode(bytes(b)).decode().rstrip("=")
    for bad in (changed(0), changed(1), changed(len(raw) // 2), changed(len(raw) - 1),
                good[:-4], good[:40], "", "x", "A" * 6000, good + "." + good):
        assert whoami(first.url, bad) == {"user": None, "note": "", "new_session": True}, bad
    # Another secret opens nothing.
    other = login_app("--encrypted-cookie-sessions", env={"RIVET_SESSION_SECRET": "t" * 40})
    assert whoami(other.url, good)["user"] is None
    assert whoami(first.url, good)["user"] == "ada"  # the real one still works


def test_session_id_stolen_before_login_is_useless_after(login_app):
    srv = login_app()
    victim = requests.Session()
    victim.get(srv.url + "/", timeout=TIMEOUT)  # the form: its CSRF token in the cookie
    planted = victim.cookies[COOKIE]             # what an attacker fixed or read
    assert whoami(srv.url, planted)["new_session"] is True  # a token, no session
    victim.post(srv.url + "/note", data="before", timeout=TIMEOUT,
                headers={"X-CSRF-Token": form_token(victim.get(srv.url + "/").text)})
    planted = victim.cookies[COOKIE]  # now a session: the note made one
    assert whoami(srv.url, planted)["new_session"] is False
    sign_in(victim, srv.url)
    assert victim.cookies[COOKIE] != planted
    assert whoami(srv.url, victim.cookies[COOKIE])["user"] == "ada"
    assert whoami(srv.url, planted) == {"user": None, "note": "", "new_session": True}


def test_idle_and_absolute_expiry(login_app):
    # Timeouts far above a request's time, so that signing in (two requests) fits well within
    # them on a busy machine; the waits only pass them.
    limit = int(2 * SLOW)
    for flags in ((f"--idle={limit}",), (f"--idle={limit}", "--cookie-sessions"),
                  (f"--idle={limit}", "--encrypted-cookie-sessions")):
        srv = login_app(*flags)
        http = requests.Session()
        assert "Signed in as ada" in sign_in(http, srv.url).text, flags
        cookie = http.cookies[COOKIE]
        time.sleep(limit + 0.5)  # idle past the timeout
        assert whoami(srv.url, cookie)["user"] is None, flags

    # A form's CSRF token travels in the cookie (no session yet) and lasts absolute_timeout.
    srv = login_app(f"--absolute={limit}")
    http = requests.Session()
    token = form_token(http.get(srv.url + "/", timeout=TIMEOUT).text)
    time.sleep(limit + 0.5)
    r = http.post(srv.url + "/login", data={"_csrf": token, "username": "ada",
                                            "password": "lovelace"}, timeout=TIMEOUT)
    assert r.status_code == 403 and "the session has none" in r.text, r.text

    # Absolute: however often the visitor comes back, the session ends.
    srv = login_app(f"--absolute={limit}")
    http = requests.Session()
    assert "Signed in as ada" in sign_in(http, srv.url).text
    started = time.monotonic()  # the session (re)began before this
    while time.monotonic() < started + limit + 0.5:
        http.get(srv.url + "/whoami", timeout=TIMEOUT)
        time.sleep(0.2)
    assert http.get(srv.url + "/whoami", timeout=TIMEOUT).json()["user"] is None


def test_csrf_missing_or_wrong_is_403_right_passes(login_app):
    srv = login_app()
    http = requests.Session()
    token = form_token(http.get(srv.url + "/", timeout=TIMEOUT).text)
    creds = {"username": "ada", "password": "lovelace"}
    r = http.post(srv.url + "/login", data=creds, timeout=TIMEOUT)
    assert r.status_code == 403 and "CSRF token missing" in r.text, r.text
    r = http.post(srv.url + "/login", data={**creds, "_csrf": token[:-1] + "x"}, timeout=TIMEOUT)
    assert r.status_code == 403 and "does not match" in r.text, r.text
    r = http.post(srv.url + "/login", data={**creds, "_csrf": token},
                  headers={"X-CSRF-Token": "wrong"}, timeout=TIMEOUT)
    assert r.status_code == 403, r.text  # the header, when sent, is what counts
    # No session at all (a forged cross-site post carries none): refused too.
    r = requests.post(srv.url + "/login", data={**creds, "_csrf": token}, timeout=TIMEOUT)
    assert r.status_code == 403 and "has none" in r.text, r.text
    # Right, in the form field and in the header (a script's JSON post).
    r = http.post(srv.url + "/login", data={**creds, "_csrf": token}, timeout=TIMEOUT)
    assert r.status_code == 200 and "Signed in as ada" in r.text
    fresh = http.get(srv.url + "/csrf", timeout=TIMEOUT).json()["token"]
    assert fresh != token  # login renewed it with the id
    r = http.post(srv.url + "/note", data="hello", headers={"X-CSRF-Token": token},
                  timeout=TIMEOUT)
    assert r.status_code == 403
    r = http.post(srv.url + "/note", data="hello", headers={"X-CSRF-Token": fresh},
                  timeout=TIMEOUT)
    assert r.status_code == 204, r.text
    assert http.get(srv.url + "/whoami", timeout=TIMEOUT).json()["note"] == "hello"


def test_memory_store_bound_evicts_the_least_recently_used(login_app):
    srv = login_app("--max-sessions=3")
    visitors = [requests.Session() for _ in range(4)]
    for v in visitors[:3]:
        sign_in(v, srv.url)
    cookies = [v.cookies[COOKIE] for v in visitors[:3]]
    assert [whoami(srv.url, c)["user"] for c in cookies] == ["ada"] * 3
    # A form page (its CSRF token in the cookie) stores nothing and evicts none.
    visitors[3].get(srv.url + "/", timeout=TIMEOUT)
    assert [whoami(srv.url, c)["user"] for c in cookies] == ["ada"] * 3
    # Over the bound: the fourth visitor signs in; the least recently used of the three (the
    # first, looked up first above) is evicted. Each visit refreshes its own.
    sign_in(visitors[3], srv.url)
    assert whoami(srv.url, cookies[0])["user"] is None
    assert [whoami(srv.url, c)["user"] for c in cookies[1:]] == ["ada"] * 2


@pytest.mark.parametrize("kind", ["--cookie-sessions", "--encrypted-cookie-sessions"])
def test_cookie_sessions_are_size_limited_with_a_clear_error(login_app, kind):
    srv = login_app(kind)
    http = requests.Session()
    sign_in(http, srv.url)
    token = http.get(srv.url + "/csrf", timeout=TIMEOUT).json()["token"]
    r = http.post(srv.url + "/note", data="n" * 1000, headers={"X-CSRF-Token": token},
                  timeout=TIMEOUT)
    assert r.status_code == 204
    assert len(r.headers["Set-Cookie"]) <= 4096
    r = http.post(srv.url + "/note", data="n" * 5000, headers={"X-CSRF-Token": token},
                  timeout=TIMEOUT)
    assert r.status_code == 413 and "does not fit" in r.text, r.text
    assert http.get(srv.url + "/whoami", timeout=TIMEOUT).json()["note"] == "n" * 1000


def test_bad_cookie_values_never_reach_the_wire(login_app):
    srv = login_app()
    r = requests.get(srv.url + "/theme?value=dark", timeout=TIMEOUT)
    assert r.status_code == 200
    assert r.headers["Set-Cookie"].startswith("theme=dark; Path=/; Max-Age=31536000; SameSite=Lax")
    assert requests.get(srv.url + "/theme", cookies={"theme": "dark"},
                        timeout=TIMEOUT).json()["theme"] == "dark"
    for bad in ("a b", "a;Secure", "x%0d%0aSet-Cookie:%20evil=1", "caf%C3%A9", '"q"x'):
        r = requests.get(srv.url + "/theme?value=" + bad, timeout=TIMEOUT)
        assert r.status_code == 500, (bad, r.status_code)
        assert "Set-Cookie" not in r.headers, (bad, r.headers)
    assert requests.get(srv.url + "/whoami", timeout=TIMEOUT).status_code == 200  # still serving


@pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (scripts/setup.sh)")
def test_browser_signs_in_through_the_form_and_out(login_app, tmp_path):
    srv = login_app()
    with DevToolsPage(tmp_path / "profile") as page:
        try:
            page.navigate(srv.url + "/")
        except RuntimeError as e:
            pytest.skip(f"chromium cannot load the page here: {e}")
        page.wait_across_navigation("!!document.getElementById('login')")
        # Clicked after the evaluation returns, so that it does not race the navigation.
        page.evaluate("document.getElementById('username').value = 'ada';"
                      "document.getElementById('password').value = 'lovelace';"
                      "setTimeout(() => document.getElementById('login').click(), 0)")
        assert "Signed in as ada" in page.wait_across_navigation(
            "document.getElementById('user') && document.getElementById('user').textContent")
        assert page.evaluate("document.cookie") == ""  # HttpOnly: scripts never see them
        page.evaluate("setTimeout(() => document.getElementById('logout').click(), 0)")
        page.wait_across_navigation("!!document.getElementById('login')")
        # The form is filled in from the last_user cookie the browser kept.
        assert page.evaluate("document.getElementById('username').value") == "ada"
