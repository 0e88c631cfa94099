"""Request bodies taken as streams (rivet/body_stream.hpp), through the demo's POST /upload: a
coroutine that reads the body piece by piece and answers its size and CRC-32. An upload far
larger than any buffer goes through in bounded memory; framing errors are 400s; the connection
goes on after it."""
import json
import zlib

from rivet_e2e import SANITIZED, build_request

BLOCK = bytes(range(256)) * 4096  # 1 MiB


def peak_rss_bytes(pid: int) -> int:
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    raise AssertionError("no VmHWM")


def test_a_1_gib_chunked_upload_stays_in_bounded_memory(rivet):
    srv = rivet(args=("--threads", "1", "--workers", "1"))
    # Under the sanitizers memory is theirs to spend: the size is checked, not the peak.
    mib = 64 if SANITIZED else 1024
    crc = 0
    with srv.connect(timeout=120) as c:
        c.send(b"POST /upload HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n")
        for i in range(mib):
            block = BLOCK[i % 256:] + BLOCK[:i % 256]  # not the same bytes every time
            crc = zlib.crc32(block, crc)
            c.send(b"%x\r\n" % len(block) + block + b"\r\n")
        c.send(b"0\r\n\r\n")
        r = c.read_response()
    assert r.status == 200, r
    assert json.loads(r.body) == {"bytes": mib << 20, "crc32": f"{crc:08x}"}, r.body
    if not SANITIZED:
        peak = peak_rss_bytes(srv.proc.pid)
        assert peak < 64 << 20, f"peak RSS {peak >> 20} MiB for a 1 GiB upload"


def test_pieces_arrive_whole_and_in_order_in_one_byte_writes_and_the_connection_goes_on(rivet):
    srv = rivet(args=("--threads", "1", "--workers", "1"))
    body = b"".join(bytes([i % 251]) * (i % 7 + 1) for i in range(3000))
    with srv.connect() as c:
        for byte in build_request("POST", "/upload", body=body):
            c.send(bytes([byte]))
        r = c.read_response()
        assert r.status == 200, r
        assert json.loads(r.body) == {"bytes": len(body), "crc32": f"{zlib.crc32(body):08x}"}
        # Pipelined after it: answered in order on the same connection.
        c.send(build_request("POST", "/upload", body=b"abc") + build_request("GET", "/hello"))
        rs = c.read_responses(2)
        assert json.loads(rs[0].body)["bytes"] == 3 and rs[1].body == b"Hello, World!", rs


def test_malformed_chunking_is_a_400_and_the_server_lives(rivet):
    srv = rivet(args=("--threads", "1", "--workers", "1"))
    with srv.connect() as c:
        c.send(b"POST /upload HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
               b"5\r\nhello\r\nzz\r\n")
        r = c.read_response()
        assert r.status == 400, r
    assert srv.get("/hello").status == 200
    # Without a body at all: an empty stream.
    r = srv.post("/upload", b"")
    assert r.status == 200 and json.loads(r.body) == {"bytes": 0, "crc32": "00000000"}, r


def upload_answer(body: bytes) -> dict:
    return {"bytes": len(body), "crc32": f"{zlib.crc32(body):08x}"}


def test_the_connections_last_request_still_reads_its_whole_body(rivet):
    """An answer that closes the connection (Connection: close, HTTP/1.0, the last request a
    connection may make) comes after the handler has read the body to its end; what follows the
    body is not served."""
    srv = rivet(args=("--threads", "1", "--workers", "1", "--max-requests-per-connection", "2"))
    body = bytes(range(256)) * 1200  # 300 kB: several reads
    cases = [
        [build_request("POST", "/upload", {"Connection": "close"}, body)],
        [build_request("POST", "/upload", body=body, version="HTTP/1.0")],
        [build_request("GET", "/hello"), build_request("POST", "/upload", body=body)],
    ]
    for requests in cases:
        with srv.connect() as c:
            for req in requests:
                for i in range(0, len(req), 100_000):
                    c.send(req[i:i + 100_000])
            # Pipelined after the last request: must not be answered.
            c.send(build_request("GET", "/hello"))
            rs = c.read_responses(len(requests))
            assert rs[-1].status == 200, (requests[-1][:80], rs[-1])
            assert json.loads(rs[-1].body) == upload_answer(body), rs[-1].body
            assert c.closed_by_peer(), "the connection stays open after its last request"
