"""The known HTTP/2 attacks, each with a script of its own over a raw connection
(h2_frames.RawH2, hand-made frames): rapid reset (CVE-2023-44487), the CONTINUATION flood
(CVE-2024-27316), SETTINGS, PING, PRIORITY and empty DATA floods, an HPACK bomb, a window held
at zero, more streams than MAX_CONCURRENT_STREAMS and a header list over the limit.

For each: the attacking connection gets the answer of the contract (GOAWAY ENHANCE_YOUR_CALM
then a close, or the RST_STREAM / status said), another client's GET /hello is answered while
the attack is under way and after it, the server's peak RSS grows by a bounded amount, and
/metrics counts it. Floods are sent in batches until the server answers (bounded by a count),
so a slow machine only makes the flood take longer.
"""
import pytest
from hyperframe.frame import (DataFrame, GoAwayFrame, HeadersFrame, PingFrame, PriorityFrame,
                              RstStreamFrame, SettingsFrame)

from h2_frames import (CANCEL, ENHANCE_YOUR_CALM, MAX_CONCURRENT_STREAMS, NO_ERROR,
                       REFUSED_STREAM, continuation, error_name, h2_metrics, h2_tls, h2c,
                       memory_kib, metric)
from tls_e2e import start_tls

BASE = ("--threads", "2", "--workers", "2")
# Peak RSS may grow by this much during one attack (KiB): what one connection and a few
# buffers may take, far below what any of the floods would cost if it were kept.
RSS_BOUND_KIB = 16 * 1024
BATCHES = 200  # floods stop after this many batches even if the server never answers


@pytest.fixture
def srv(rivet):
    return rivet(args=BASE)


def probe(srv):
    """Another client (HTTP/1.1, its own connection) gets /hello."""
    r = srv.get("/hello", timeout=20)
    assert r.status == 200 and r.body == b"Hello, World!", r


def handshake(c):
    """Waits for the server's SETTINGS (the connection is up)."""
    c.wait_for(lambda f: isinstance(f, SettingsFrame) and "ACK" not in f.flags,
               what="the server's SETTINGS")


def answered(c) -> bool:
    return c.closed or any(isinstance(f, GoAwayFrame) for f in c.frames)


def flood(c, batch: bytes, batches: int = BATCHES) -> int:
    """Sends batch again and again until the server sends GOAWAY or closes; the batches sent."""
    for i in range(batches):
        if answered(c) or not c.send(batch):
            return i
    return batches


class Watch:
    """What must hold around an attack: the server's peak RSS and the metrics before it."""

    def __init__(self, srv):
        self.srv = srv
        probe(srv)  # the server has served something: its steady memory
        self.mem = memory_kib(srv.proc.pid)
        self.before = h2_metrics(srv)

    def after(self, kind: str | None = None, goaway_code: int | None = None) -> dict:
        probe(self.srv)
        after = h2_metrics(self.srv)
        if kind:
            assert (metric(after, "rivet_http2_abuse_total", kind=kind)
                    >= metric(self.before, "rivet_http2_abuse_total", kind=kind) + 1), after
        if goaway_code is not None:
            name = "rivet_http2_goaways_sent_total"
            assert (metric(after, name, code=goaway_code)
                    >= metric(self.before, name, code=goaway_code) + 1), after
        mem = memory_kib(self.srv.proc.pid)
        grew = mem["VmHWM"] - self.mem["VmHWM"]
        assert grew < RSS_BOUND_KIB, f"peak RSS grew {grew} KiB during the attack: {mem}"
        return after


def expect_calm(c, kind: str, watch: Watch) -> None:
    """The attacking connection got GOAWAY ENHANCE_YOUR_CALM and was closed; metrics count it."""
    g = c.wait_goaway(timeout=30)
    assert g.error_code == ENHANCE_YOUR_CALM, (
        f"GOAWAY {error_name(g.error_code)}, expected ENHANCE_YOUR_CALM; {c.summary()}")
    c.wait_closed(timeout=30)
    watch.after(kind=kind, goaway_code=ENHANCE_YOUR_CALM)


def rapid_reset_pairs(c, n: int, path: str = "/wait?ms=30000") -> bytes:
    out = b""
    for _ in range(n):
        sid = c.new_stream_id()
        out += c.headers_frame(sid, c.request_headers(path)).serialize()
        out += RstStreamFrame(sid, error_code=CANCEL).serialize()
    return out


@pytest.mark.parametrize("transport", ["h2c", "tls"])
def test_rapid_reset(rivet, tls_certs, transport):
    """CVE-2023-44487: streams opened and reset at once, in a loop."""
    srv = start_tls(rivet, tls_certs) if transport == "tls" else rivet(args=BASE)
    watch = Watch(srv)
    with (h2_tls(srv, tls_certs) if transport == "tls" else h2c(srv)) as c:
        handshake(c)
        c.send(rapid_reset_pairs(c, 50))
        probe(srv)
        batches = 0
        while not answered(c) and batches < BATCHES and c.next_stream_id < (1 << 30):
            c.send(rapid_reset_pairs(c, 100))
            batches += 1
        expect_calm(c, "rapid_reset", watch)


@pytest.mark.parametrize("variant", ["empty_frames", "large_block"])
def test_continuation_flood(srv, variant):
    """CVE-2024-27316: a header block that never ends (no END_HEADERS), continued by CONTINUATION
    frames that are empty or full of valid header fields (each field within HPACK decoders'
    own per-field limits, so that only the block's length can stop it)."""
    watch = Watch(srv)
    with h2c(srv) as c:
        handshake(c)
        sid = c.new_stream_id()
        c.send(HeadersFrame(sid, c.encoder.encode(c.request_headers("/hello"))).serialize())
        if variant == "empty_frames":
            frame = continuation(sid, b"", end=False).serialize()
            c.send(frame * 4)
            probe(srv)
            flood(c, frame * 100)
        else:
            # Literal fields without indexing, new name, 4000-byte values: 4 to a frame.
            field = b"\x00\x07x-flood" + hpack_length(4000) + b"f" * 4000
            frame = continuation(sid, field * 4, end=False).serialize()
            c.send(continuation(sid, field, end=False).serialize())
            probe(srv)
            flood(c, frame * 8)
        expect_calm(c, "continuation", watch)


def hpack_length(n: int) -> bytes:
    """An HPACK string length (7-bit prefix integer, Huffman off)."""
    if n < 127:
        return bytes([n])
    out = bytearray([127])
    n -= 127
    while n >= 128:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def test_settings_flood(srv):
    watch = Watch(srv)
    with h2c(srv) as c:
        handshake(c)
        frame = SettingsFrame(0).serialize()
        c.send(frame * 500)
        probe(srv)
        flood(c, frame * 1000)
        expect_calm(c, "settings", watch)


def test_ping_flood(srv):
    watch = Watch(srv)
    with h2c(srv) as c:
        handshake(c)
        frame = PingFrame(0, opaque_data=b"12345678").serialize()
        c.send(frame * 500)
        probe(srv)
        flood(c, frame * 1000)
        expect_calm(c, "ping", watch)


def test_priority_flood(srv):
    """PRIORITY frames, each on another idle stream (a server that keeps state per idle stream
    would grow with them)."""
    watch = Watch(srv)
    with h2c(srv) as c:
        handshake(c)
        next_id = [1001]

        def batch(n):
            out = b""
            for _ in range(n):
                out += PriorityFrame(next_id[0], depends_on=0, stream_weight=15).serialize()
                next_id[0] += 2
            return out

        c.send(batch(500))
        probe(srv)
        for _ in range(BATCHES):
            if answered(c) or not c.send(batch(1000)):
                break
        expect_calm(c, "priority", watch)


def test_empty_data_flood(srv):
    """DATA frames with no payload and no END_STREAM on a streamed upload: no progress, work."""
    watch = Watch(srv)
    with h2c(srv) as c:
        handshake(c)
        sid = c.request("/upload", method="POST", end_stream=False)
        frame = DataFrame(sid, b"").serialize()
        c.send(frame * 50)
        probe(srv)
        flood(c, frame * 100)
        expect_calm(c, "empty_data", watch)


def test_hpack_bomb(srv):
    """One 4000-byte header inserted into the dynamic table, then referenced 2000 times in one
    header block: a block of about 6 KB that decodes to 8 MB."""
    watch = Watch(srv)
    with h2c(srv) as c:
        handshake(c)
        sid = c.new_stream_id()
        block = c.encoder.encode(c.request_headers("/hello"))
        # Literal with incremental indexing, new name: it becomes dynamic entry 62.
        block += b"\x40\x06x-bomb" + hpack_length(4000) + b"b" * 4000
        block += b"\xbe" * 2000  # indexed field 62, again and again
        f = HeadersFrame(sid, block)
        f.flags.add("END_HEADERS")
        f.flags.add("END_STREAM")
        c.send(f.serialize())
        probe(srv)
        expect_calm(c, "hpack", watch)


def test_window_held_at_zero(rivet):
    """A client that opens no window: its stream is reset (CANCEL) after --write-timeout, the
    server meanwhile answers others, and the connection, idle then, ends after the keep-alive
    timeout with GOAWAY NO_ERROR."""
    srv = rivet(args=(*BASE, "--write-timeout", "2", "--keepalive-timeout", "3"))
    watch = Watch(srv)
    with h2c(srv, settings={SettingsFrame.INITIAL_WINDOW_SIZE: 0}) as c:
        handshake(c)
        sid = c.request("/hello")
        c.wait_for(lambda f: isinstance(f, HeadersFrame) and f.stream_id == sid,
                   what="the response's HEADERS")
        probe(srv)
        rst = c.wait_for(lambda f: isinstance(f, RstStreamFrame) and f.stream_id == sid,
                         timeout=60, what=f"RST_STREAM on stream {sid}")
        assert rst.error_code == CANCEL, c.summary()
        sent = [f for f in c.frames if isinstance(f, DataFrame) and f.stream_id == sid]
        assert sum(len(f.data) for f in sent) == 0, "DATA past a zero window"
        g = c.wait_goaway(timeout=60)
        assert g.error_code == NO_ERROR, c.summary()
        c.wait_closed(timeout=30)
    after = watch.after()
    assert (metric(after, "rivet_http2_flow_control_stalls_total")
            >= metric(watch.before, "rivet_http2_flow_control_stalls_total") + 1), after


def test_max_concurrent_streams(srv):
    """MAX_CONCURRENT_STREAMS (100) streams held open (each waits 60 s), one more is refused
    with RST_STREAM REFUSED_STREAM; the others live on."""
    watch = Watch(srv)
    with h2c(srv) as c:
        handshake(c)
        ids = [c.request("/wait?ms=60000") for _ in range(MAX_CONCURRENT_STREAMS)]
        extra = c.request("/hello")
        rst = c.wait_for(lambda f: isinstance(f, RstStreamFrame), timeout=30,
                         what="RST_STREAM of the 101st stream")
        assert rst.stream_id == extra and rst.error_code == REFUSED_STREAM, c.summary()
        assert metric(h2_metrics(srv), "rivet_http2_streams_open") >= MAX_CONCURRENT_STREAMS
        probe(srv)
        assert not any(isinstance(f, (GoAwayFrame, RstStreamFrame)) and f.stream_id in ids
                       for f in c.frames), c.summary()
        # Once one stream is cancelled by the client, a new one is served.
        c.send(RstStreamFrame(ids[0], error_code=CANCEL).serialize())
        headers, body = c.response(c.request("/hello"), timeout=30)
        assert headers[":status"] == "200" and body == b"Hello, World!"
    watch.after()


def test_header_list_over_the_limit(srv):
    """A header list past MAX_HEADER_LIST_SIZE (16 KiB) in a block that fits one frame
    (Huffman): a 431 on that stream, and the connection serves the next request."""
    watch = Watch(srv)
    with h2c(srv) as c:
        handshake(c)
        big = [(f"x-h{i}", "0" * 1100) for i in range(16)]  # about 18 KiB as a header list
        sid = c.new_stream_id()
        block = c.encoder.encode(c.request_headers("/hello", extra=big), huffman=True)
        assert len(block) < 16384
        f = HeadersFrame(sid, block)
        f.flags.add("END_HEADERS")
        f.flags.add("END_STREAM")
        c.send(f.serialize())
        headers, _ = c.response(sid, timeout=30)
        assert headers[":status"] == "431", headers
        probe(srv)
    watch.after()
