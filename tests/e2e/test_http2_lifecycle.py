"""HTTP/2's lifecycle (issue 22, point 5): a graceful GOAWAY at the drain and during the lame
duck, with the streams in flight finishing; TLS session resumption and the PROXY header before
TLS, as for HTTP/1.1. Clients: the `h2` library over plain sockets (h2c) and Python ssl (ALPN
h2), through tests/e2e/h2_e2e.py."""
import json
import signal

from h2_e2e import H2Client
from ops_e2e import log_lines, wait_for
from rivet_e2e import SLOW
from test_proxy_protocol import v1
from test_proxy_tls import serve, tcp_from
from tls_e2e import client_context, start_tls

NO_ERROR = 0


def test_drain_sends_goaway_and_the_stream_in_flight_finishes(rivet):
    srv = rivet(args=("--threads", "1", "--workers", "1"))
    with H2Client.h2c(srv.host, srv.port, timeout=30) as c:
        slow = c.request("GET", "/work?n=1000000000")
        # Streams are dispatched in order: once /hello is answered, /work is being worked on.
        assert c.get("/hello").status == 200
        srv.send_signal(signal.SIGTERM)
        assert c.wait(lambda: c.goaway is not None and c.streams[slow].done, 30)
        assert c.goaway.error_code == NO_ERROR
        assert c.goaway.last_stream_id >= slow
        s = c.streams[slow]
        assert s.status == 200 and json.loads(s.body)["n"] == 1000000000, s
        assert c.wait(lambda: c.closed, 10), "the connection did not close after its last stream"
    assert srv.wait(10 * SLOW) == 0


def test_lame_duck_sends_goaway_and_answers_what_it_began(rivet):
    srv = rivet(args=("--threads", "1", "--workers", "1", "--drain-grace", "2"))
    with H2Client.h2c(srv.host, srv.port) as c:
        assert c.get("/hello").status == 200
        srv.send_signal(signal.SIGTERM)
        # The loop learns of the lame duck from a posted task: the next requests on this
        # connection are answered, and one of them brings the GOAWAY. A request the client
        # sent while the GOAWAY was on its way is past its last stream: never begun, not
        # answered (the client retries it elsewhere, RFC 9113 §6.8).
        answered = 0
        for _ in range(200):
            sid = c.request("GET", "/hello")
            assert c.wait(lambda: c.streams[sid].done or (
                c.goaway is not None and c.goaway.last_stream_id < sid), 10), "no answer"
            if c.streams[sid].done:
                s = c.streams[sid]
                assert s.status == 200 and bytes(s.body) == b"Hello, World!", s
                answered += 1
            if c.goaway is not None:
                break
        assert c.goaway is not None, f"no GOAWAY after {answered} requests in the lame duck"
        assert c.goaway.error_code == NO_ERROR
        # Every stream the GOAWAY counts as begun was answered.
        assert all(s.done and s.status == 200 for sid, s in c.streams.items()
                   if sid <= c.goaway.last_stream_id), c.streams
        assert c.wait(lambda: c.closed, 10), "the connection did not close after its last stream"
    assert srv.wait(20 * SLOW) == 0


def test_tls_session_resumes_on_h2(rivet, tls_certs):
    srv = start_tls(rivet, tls_certs)
    ctx = client_context(tls_certs)
    with H2Client.tls(srv.host, srv.tls_port, ctx) as first:
        assert first.get("/hello").status == 200  # the ticket has arrived by the answer
        session = first.sock.session
    with H2Client.tls(srv.host, srv.tls_port, ctx, session=session) as second:
        assert second.sock.session_reused, "the h2 connection did not resume the TLS session"
        s = second.get("/hello")
        assert s.status == 200 and bytes(s.body) == b"Hello, World!"


def test_proxy_header_before_tls_then_h2(rivet, tls_certs, tmp_path):
    srv, log = serve(rivet, tls_certs, tmp_path)
    sock = tcp_from(srv, "127.0.0.1")
    sock.sendall(v1("10.7.7.7", dport=srv.tls_port))
    ctx = client_context(tls_certs)
    ctx.set_alpn_protocols(["h2"])
    tls = ctx.wrap_socket(sock, server_hostname="localhost")
    assert tls.selected_alpn_protocol() == "h2"
    with H2Client(tls) as c:
        assert c.get("/hello?proxied").status == 200
    lines = wait_for(lambda: [json.loads(x) for x in log_lines(log)] or None, timeout=10,
                     what="the access log line")
    line = next(d for d in lines if d["uri"].startswith("/hello"))
    assert line["remote_addr"] == "10.7.7.7", line
    assert "2" in str(line.get("protocol", line.get("server_protocol", "HTTP/2.0"))), line
