"""The demo's chat page (public/chat.html) in headless Chromium, over ws:// and over wss:// (the
page picks the scheme after its own): the page and a Python WebSocket client chat on /ws/chat,
and the page's side panel shows the /events stream's `tick` and `chat` events."""

import pytest
from websockets.sync.client import connect as ws_connect

from chromium import CHROMIUM, DevToolsPage
from rivet_e2e import SLOW
from tls_e2e import client_context, start_tls

pytestmark = pytest.mark.skipif(CHROMIUM is None,
                                reason="chromium is not installed (scripts/setup.sh)")


def lines(page, list_id):
    """The texts of a list on the page, without their time stamps."""
    return page.evaluate(
        f"[...document.querySelectorAll('#{list_id} li')]"
        ".map(li => li.lastChild.textContent)")


def chat_between_page_and_client(page, page_url, ws_url, ssl_context=None):
    try:
        page.navigate(page_url)
    except RuntimeError as e:
        pytest.skip(f"chromium cannot load the page here: {e}")
    page.wait_for("document.body && document.body.dataset.ws === 'open'"
                  " && document.body.dataset.sse === 'open'")
    assert page.evaluate("document.body.dataset.wsUrl") == ws_url

    with ws_connect(ws_url, ssl=ssl_context, open_timeout=30 * SLOW) as peer:
        # The page sends through its form; the other client receives it.
        page.evaluate("document.getElementById('line').value = 'hello from the page';"
                      "document.getElementById('send-form').requestSubmit()")
        assert peer.recv(timeout=30 * SLOW) == "hello from the page"
        assert page.evaluate("document.getElementById('line').value") == ""
        # The other client answers; the page shows both lines, in order.
        peer.send('<b>hi</b> from "python"')
        page.wait_for("document.querySelectorAll('#messages li').length >= 2")
        assert lines(page, "messages") == ["hello from the page", '<b>hi</b> from "python"']
        # Text, not HTML: what others send never becomes markup.
        assert page.evaluate("document.querySelector('#messages b')") is None
        assert peer.recv(timeout=30 * SLOW) == '<b>hi</b> from "python"'

    # The side panel: both lines as `chat` events from /events, and the stream's ticks.
    page.wait_for("[...document.querySelectorAll('#events .ev-chat')].length >= 2 &&"
                  " document.querySelectorAll('#events .ev-tick').length >= 1")
    events = lines(page, "events")
    assert [e for e in events if e.startswith("chat ")] == [
        "chat hello from the page", 'chat <b>hi</b> from "python"'], events
    ticks = [e for e in events if e.startswith("tick ")]
    assert ticks and all(t.split(" ", 1)[1].isdigit() for t in ticks), events


def test_chat_page_over_ws(server, tmp_path):
    with DevToolsPage(tmp_path / "profile") as page:
        chat_between_page_and_client(page, f"http://{server.host}:{server.port}/chat.html",
                                     f"ws://{server.host}:{server.port}/ws/chat")


def test_chat_page_over_wss(rivet, tls_certs, tmp_path):
    srv = start_tls(rivet, tls_certs)
    origin = f"localhost:{srv.tls_port}"
    with DevToolsPage(tmp_path / "profile", "--ignore-certificate-errors") as page:
        chat_between_page_and_client(page, f"https://{origin}/chat.html", f"wss://{origin}/ws/chat",
                                     ssl_context=client_context(tls_certs))


def test_front_page_links_to_the_chat(server):
    r = server.get("/")
    assert r.status == 200 and b'href="/chat.html"' in r.body, r
    r = server.get("/chat.html")
    assert r.status == 200 and b"<title>rivet" in r.body, r
    # No outside resource: the page works offline.
    assert b"http://" not in r.body and b"https://" not in r.body
