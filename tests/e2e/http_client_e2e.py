"""Upstream servers for the HTTP client's tests (test_http_client.py): a Python server whose
routes exercise each framing and failure, run in a thread of the test process so the tests can
see what it saw (which connections came, when a client went away); raw-socket servers for
answers no real server sends."""
from __future__ import annotations

import socket
import ssl
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlparse


class Upstream:
    """ThreadingHTTPServer on 127.0.0.1 speaking HTTP/1.1 with keep-alive; optionally TLS."""

    def __init__(self, cert=None, key=None):
        self.peers = []  # (client port) per request, in order
        self.hang_started = threading.Event()
        self.hang_client_left = threading.Event()
        self.drip_client_left = threading.Event()
        owner = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def send_body(self, body: bytes, status=200, headers=()):
                self.send_response(status)
                for name, value in headers:
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def do_GET(self):
                owner.peers.append(self.client_address[1])
                url = urlparse(self.path)
                q = {k: v[0] for k, v in parse_qs(url.query).items()}
                path = url.path
                if path == "/text":
                    self.send_body(b"hello")
                elif path == "/big":
                    self.send_body(b"x" * int(q["n"]))
                elif path == "/chunked":
                    n = int(q.get("n", "0"))
                    self.send_response(200)
                    self.send_header("Transfer-Encoding", "chunked")
                    self.end_headers()
                    pieces = [b"chunk one ", b"chunk two"] if n == 0 else \
                        [b"y" * 10000 for _ in range(n // 10000)] + [b"y" * (n % 10000)]
                    for p in pieces:
                        if p:
                            self.wfile.write(b"%x\r\n%s\r\n" % (len(p), p))
                    self.wfile.write(b"0\r\n\r\n")
                elif path == "/until_close":
                    n = int(q.get("n", "5"))
                    self.send_response(200)
                    self.send_header("Connection", "close")
                    self.end_headers()
                    self.wfile.write(b"z" * n)
                    self.close_connection = True
                elif path == "/slow":
                    time.sleep(int(q["ms"]) / 1000)
                    self.send_body(b"late")
                elif path == "/redirect":
                    self.send_body(b"", 302, [("Location", q.get("to", "/text"))])
                elif path == "/loop":
                    self.send_body(b"", 307, [("Location", "/loop")])
                elif path == "/drip":
                    # One chunk, then holds the rest until the client closes the connection.
                    self.send_response(200)
                    self.send_header("Transfer-Encoding", "chunked")
                    self.end_headers()
                    self.wfile.write(b"5\r\nfirst\r\n")
                    self.wfile.flush()
                    self.connection.settimeout(60)
                    try:
                        while self.connection.recv(1024):
                            pass
                    except OSError:
                        pass
                    owner.drip_client_left.set()
                    self.close_connection = True
                elif path == "/hang":
                    # Holds the request until the client closes the connection, and notes it.
                    owner.hang_started.set()
                    self.connection.settimeout(60)
                    try:
                        while self.connection.recv(1024):
                            pass
                        owner.hang_client_left.set()
                    except OSError:
                        owner.hang_client_left.set()
                    self.close_connection = True
                else:
                    self.send_body(b"not found", 404)

            def do_POST(self):
                owner.peers.append(self.client_address[1])
                n = int(self.headers.get("Content-Length", "0"))
                body = self.rfile.read(n)
                self.send_body(b"got " + body, 201)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        if cert:
            ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            ctx.load_cert_chain(str(cert), str(key))
            self.server.socket = ctx.wrap_socket(self.server.socket, server_side=True)
        self.port = self.server.server_address[1]
        self.scheme = "https" if cert else "http"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def url(self, path: str, host: str = "127.0.0.1") -> str:
        return f"{self.scheme}://{host}:{self.port}{path}"

    def close(self):
        self.server.shutdown()
        self.server.server_close()


class RawUpstream:
    """Answers every connection with the same bytes, then closes it."""

    def __init__(self, answer: bytes):
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.port = self.sock.getsockname()[1]
        self.answer = answer
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self):
        while True:
            try:
                c, _ = self.sock.accept()
            except OSError:
                return
            with c:
                c.settimeout(5)
                try:
                    c.recv(65536)
                    c.sendall(self.answer)
                except OSError:
                    pass

    def url(self, path: str = "/") -> str:
        return f"http://127.0.0.1:{self.port}{path}"

    def close(self):
        self.sock.close()
