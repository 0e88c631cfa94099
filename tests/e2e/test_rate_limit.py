"""Rate limiting: a token bucket per client address, 429 with Retry-After, an allow-list, and
X-Forwarded-For only from trusted proxies; a flood of distinct addresses stays within bounds."""
import time

from ops_e2e import conn_from, get, rss_kib, statuses, write_config
from rivet_e2e import SLOW


def limited(rivet, tmp_path, **extra):
    rl = {"enabled": True, "requests_per_second": 4, "burst_size": 5, **extra}
    cfg = write_config(tmp_path / "rivet.json", {"rate_limiting": rl})
    return rivet(args=("--threads", "2", "--workers", "1", "--config", cfg))


def test_burst_then_steady_rate(rivet, tmp_path):
    srv = limited(rivet, tmp_path)
    with conn_from(srv, "127.0.0.1") as c:
        # A burst of 10 in one write: the bucket holds 5, so exactly 5 are refused.
        c.send(get("/hello") * 10)
        rs = [c.read_response() for _ in range(10)]
        assert [r.status for r in rs] == [200] * 5 + [429] * 5, rs
        for r in rs[5:]:
            assert r.header("Retry-After") == "1", r
        # Then a steady 2 per second, under the rate of 4: none refused.
        time.sleep(0.5)
        codes = []
        for _ in range(4):
            codes += statuses(c, [get("/hello")])
            time.sleep(0.5)
        assert codes == [200] * 4
    # Another address has its own bucket.
    with conn_from(srv, "127.0.0.2") as c:
        assert statuses(c, [get("/hello")] * 5) == [200] * 5
    m = srv.get("/metrics").text
    assert "rivet_rate_limited_total 5" in m, m


def test_allow_listed_address_is_never_limited(rivet, tmp_path):
    srv = limited(rivet, tmp_path, allow=["127.0.0.3", "10.0.0.0/8"])
    with conn_from(srv, "127.0.0.3") as c:
        assert statuses(c, [get("/hello")] * 50) == [200] * 50
    with conn_from(srv, "127.0.0.4") as c:
        assert statuses(c, [get("/hello")] * 6) == [200] * 5 + [429]


def test_forwarded_for_only_from_trusted_proxies(rivet, tmp_path):
    srv = limited(rivet, tmp_path, trusted_proxies=["127.0.0.1"])
    xff = lambda a: get("/hello", headers={"X-Forwarded-For": a})  # noqa: E731
    with conn_from(srv, "127.0.0.1") as c:  # the trusted proxy: each client its own bucket
        assert statuses(c, [xff("192.0.2.1")] * 6) == [200] * 5 + [429]
        assert statuses(c, [xff("192.0.2.2")] * 5) == [200] * 5
        assert statuses(c, [xff("198.51.100.7, 127.0.0.1")]) == [200]  # proxies skipped
    with conn_from(srv, "127.0.0.5") as c:  # not trusted: the header is ignored
        reqs = [xff(f"203.0.113.{i}") for i in range(6)]
        assert statuses(c, reqs) == [200] * 5 + [429]


def test_flood_of_distinct_addresses_stays_within_the_bound(rivet, tmp_path):
    cfg = write_config(tmp_path / "rivet.json", {"rate_limiting": {
        "enabled": True, "requests_per_second": 1000, "burst_size": 1000,
        "trusted_proxies": ["127.0.0.1"], "max_clients": 1000}})
    srv = rivet(args=("--threads", "2", "--workers", "1", "--config", cfg))

    def flood(first, count, batch=2000):
        # Raw bytes both ways: parsing 100,000 responses one by one would dominate the test.
        with srv.connect(timeout=60) as c:
            for start in range(first, first + count, batch):
                c.send(b"".join(
                    b"GET /hello HTTP/1.1\r\nHost: x\r\nX-Forwarded-For: 10.%d.%d.%d\r\n\r\n"
                    % ((i >> 16) & 255, (i >> 8) & 255, i & 255)
                    for i in range(start, start + batch)))
                data = bytearray(c.reader.buf)
                c.reader.buf.clear()
                while data.count(b"Hello, World!") < batch:
                    chunk = c.sock.recv(1 << 20)
                    assert chunk, "connection closed"
                    data += chunk
                assert data.count(b"HTTP/1.1 200 ") == batch, bytes(data[:300])

    flood(0, 5000)  # the table and buffers reach their working size
    before = rss_kib(srv.proc.pid)
    flood(5000, 100_000)
    after = rss_kib(srv.proc.pid)
    assert after - before < 4096 * SLOW, (before, after)  # KiB
    m = srv.get("/metrics").text
    clients = int(next(l.split()[1] for l in m.splitlines()
                       if l.startswith("rivet_rate_limit_clients ")))
    capacity = int(next(l.split()[1] for l in m.splitlines()
                        if l.startswith("rivet_rate_limit_capacity ")))
    assert capacity == 1024 and clients <= capacity, (clients, capacity)
