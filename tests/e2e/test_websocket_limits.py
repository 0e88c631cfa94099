"""WebSocket limits and protocol violations on raw sockets, each with its answer: the handshake's
refusals (426 with the version the server speaks, 400, 405), and the close codes of RFC 6455
§7.4.1 for what a client must not send: a frame over the size bound (1009), text that is not
UTF-8 (1007), reserved bits, reserved opcodes, unmasked frames and broken control frames (1002).
Also a ping answered by its pong and the close handshake echoed.

The many-connection cases (idle connections, slow readers, shutdown, pub/sub fan-out) are in
test_websocket_scale.py.
"""
import threading

import pytest

from rivet_e2e import SLOW, Closed, Conn
from ws_e2e import (BINARY, CLOSE, CONT, PING, PONG, TEXT, close_payload, masked_zeros_frame,
                    new_key, upgrade_request, ws_connect)

MAX_MESSAGE = 16 << 20  # /ws/echo's bound on a frame and on a message (the demo's setting)


def refused_with(c, code: int, timeout: float = 10.0) -> None:
    """The server closes the WebSocket with `code`, answers nothing else, and after our close
    reply (the handshake's second half) ends the TCP connection."""
    got, _ = c.expect_close(timeout)
    assert got == code, f"close code {got}, expected {code}"
    try:
        c.send_frame(CLOSE, close_payload(code))
    except (BrokenPipeError, ConnectionResetError):
        pass  # it may have closed TCP at once: a violation needs no handshake
    try:
        assert c.eof_within(timeout), "the server kept the TCP connection open"
    except Closed:
        pass


# ---------------------------------------------------------------------------------------------
# The opening handshake


def refusal(server, request: bytes):
    """The server's answer to a handshake it refuses (the connection stays open: a refused
    upgrade is an ordinary HTTP answer)."""
    with Conn(server.host, server.port, 10 * SLOW) as c:
        c.send(request)
        return c.read_response()


def test_version_12_gets_426_with_the_version_spoken(server):
    r = refusal(server, upgrade_request("/ws/echo", new_key(), version="12"))
    assert r.status == 426, r
    assert r.header("Sec-WebSocket-Version") == "13", r


@pytest.mark.parametrize("key", ["", "abc", "dGhlIHNhbXBsZSBub25jZQ", "AAAAAAAAAAAAAAAAAAAAAAA=",
                                 None])
def test_bad_or_missing_key_gets_400(server, key):
    """A key must be 16 bytes in base64 (24 characters with padding)."""
    r = refusal(server, upgrade_request("/ws/echo", key))
    assert r.status == 400, r


def test_non_get_upgrade_refused(server):
    r = refusal(server, upgrade_request("/ws/echo", new_key(), method="POST"))
    assert r.status in (400, 405), r


def test_handshake_accepted_then_echo(server):
    with ws_connect(server) as c:
        c.send_text("one")
        assert c.recv_message() == (TEXT, b"one")
        c.send_frame(BINARY, b"\x00\xff" * 10)
        assert c.recv_message() == (BINARY, b"\x00\xff" * 10)


# ---------------------------------------------------------------------------------------------
# Size bounds: 1009


def send_in_background(c, data: bytes) -> threading.Thread:
    """Sends `data` from a thread (the server may refuse and close before it all arrives:
    errors are expected and ignored), so that this thread can read the close frame."""
    def run():
        try:
            c.sock.sendall(data)
        except OSError:
            pass

    t = threading.Thread(target=run, daemon=True)
    t.start()
    return t


def test_frame_over_the_bound_closes_1009(server):
    with ws_connect(server, timeout=30) as c:
        sender = send_in_background(c, masked_zeros_frame(BINARY, MAX_MESSAGE + 1))
        refused_with(c, 1009, timeout=30)
        sender.join(30 * SLOW)


def test_message_over_the_bound_across_fragments_closes_1009(server):
    half = MAX_MESSAGE // 2 + 1  # each frame within the bound, the message past it
    with ws_connect(server, timeout=30) as c:
        data = masked_zeros_frame(BINARY, half, fin=False) + masked_zeros_frame(CONT, half)
        sender = send_in_background(c, data)
        refused_with(c, 1009, timeout=30)
        sender.join(30 * SLOW)


def test_message_at_the_bound_is_echoed(server):
    """The bound itself is allowed: a 16 MiB message comes back whole."""
    with ws_connect(server, timeout=60) as c:
        sender = send_in_background(c, masked_zeros_frame(BINARY, MAX_MESSAGE))
        opcode, payload = c.recv_message()
        sender.join(60 * SLOW)
        assert opcode == BINARY and len(payload) == MAX_MESSAGE
        assert payload.count(0) == MAX_MESSAGE


# ---------------------------------------------------------------------------------------------
# UTF-8: 1007


@pytest.mark.parametrize("payload", [b"\xff\xfe", b"\xc3\x28", b"\xed\xa0\x80",  # surrogate
                                     b"ok \xf4\x90\x80\x80"])  # past U+10FFFF
def test_text_not_utf8_closes_1007(server, payload):
    with ws_connect(server) as c:
        c.send_frame(TEXT, payload)
        refused_with(c, 1007)


def test_text_not_utf8_across_fragments_closes_1007(server):
    """The first fragment ends inside a valid sequence, the second breaks it."""
    with ws_connect(server) as c:
        c.send_frame(TEXT, "caf".encode() + b"\xc3", fin=False)
        c.send_frame(CONT, b"\x28")
        refused_with(c, 1007)


def test_utf8_split_across_fragments_is_echoed(server):
    text = "café ✓ 🎉".encode()
    with ws_connect(server) as c:
        c.send_frame(TEXT, text[:4], fin=False)  # ends inside "é"
        c.send_frame(CONT, text[4:12], fin=False)  # ends inside "🎉"
        c.send_frame(CONT, text[12:])
        assert c.recv_message() == (TEXT, text)


# ---------------------------------------------------------------------------------------------
# Framing violations: 1002


@pytest.mark.parametrize("rsv", [4, 2, 1], ids=["rsv1-without-deflate", "rsv2", "rsv3"])
def test_reserved_bits_close_1002(server, rsv):
    with ws_connect(server) as c:
        c.send_frame(TEXT, b"hi", rsv=rsv)
        refused_with(c, 1002)


@pytest.mark.parametrize("opcode", [0x3, 0x7, 0xB, 0xF])
def test_reserved_opcode_closes_1002(server, opcode):
    with ws_connect(server) as c:
        c.send_frame(opcode, b"x")
        refused_with(c, 1002)


def test_unmasked_client_frame_closes_1002(server):
    with ws_connect(server) as c:
        c.send_frame(TEXT, b"not masked", mask=False)
        refused_with(c, 1002)


def test_control_frame_too_long_closes_1002(server):
    with ws_connect(server) as c:
        c.send_frame(PING, b"x" * 126)
        refused_with(c, 1002)


def test_fragmented_control_frame_closes_1002(server):
    with ws_connect(server) as c:
        c.send_frame(PING, b"x", fin=False)
        refused_with(c, 1002)


def test_continuation_without_a_message_closes_1002(server):
    with ws_connect(server) as c:
        c.send_frame(CONT, b"x")
        refused_with(c, 1002)


def test_new_message_inside_a_fragmented_one_closes_1002(server):
    with ws_connect(server) as c:
        c.send_frame(TEXT, b"a", fin=False)
        c.send_frame(TEXT, b"b")
        refused_with(c, 1002)


# ---------------------------------------------------------------------------------------------
# Control frames: ping/pong and the close handshake


def test_ping_is_answered_by_its_pong(server):
    with ws_connect(server) as c:
        c.send_frame(PING, b"are you there?")
        assert c.recv_frame() == (True, 0, PONG, b"are you there?")
        c.send_frame(PING)
        assert c.recv_frame() == (True, 0, PONG, b"")


def test_ping_between_fragments_is_answered_and_the_message_echoed(server):
    with ws_connect(server) as c:
        c.send_frame(TEXT, b"frag", fin=False)
        c.send_frame(PING, b"p")
        c.send_frame(CONT, b"ments")
        assert c.recv_frame() == (True, 0, PONG, b"p")
        assert c.recv_message() == (TEXT, b"fragments")


def test_unsolicited_pong_is_ignored(server):
    with ws_connect(server) as c:
        c.send_frame(PONG, b"unsolicited")
        c.send_text("still here")
        assert c.recv_message() == (TEXT, b"still here")


@pytest.mark.parametrize("code", [1000, 1001, 3000, 4999])
def test_close_handshake_echoes_the_code(server, code):
    with ws_connect(server) as c:
        c.send_frame(CLOSE, close_payload(code, b"bye"))
        got, _ = c.expect_close()
        assert got == code
        assert c.eof_within(10), "the server did not close TCP after the close handshake"


def test_close_without_a_code_is_answered(server):
    with ws_connect(server) as c:
        c.send_frame(CLOSE)
        got, reason = c.expect_close()
        assert got in (None, 1000) and reason == b""
        assert c.eof_within(10)


@pytest.mark.parametrize("payload", [b"\x03", close_payload(999), close_payload(1005),
                                     close_payload(1006), close_payload(1015),
                                     close_payload(5000), close_payload(1000, b"\xff")],
                         ids=["one-byte", "999", "1005", "1006", "1015", "5000", "bad-reason"])
def test_invalid_close_frame_closes_1002_or_1007(server, payload):
    with ws_connect(server) as c:
        c.send_frame(CLOSE, payload)
        got, _ = c.expect_close()
        assert got == (1007 if payload.endswith(b"\xff") else 1002), got
        assert c.eof_within(10)
