"""Topics shared through Redis (pubsub.share "redis", --pubsub redis): a redis-server started by
the test (a temp dir, a free port) and three rivet instances naming it. What a /ws/chat client
sends on instance 1 (the demo publishes it to the topic "chat") reaches /ws/chat clients and
/events (SSE) clients on instances 2 and 3, in order and once each, binary messages intact, and
the sender's own instance once (not a second time back from Redis). Each instance subscribes to the channels of the
topics it has subscribers to, and only those (Redis's PUBSUB NUMSUB shows them): one without
subscribers to a topic receives nothing of it, and a channel's subscription ends when the last
WebSocket or event stream on the instance leaves. Redis stopped mid-run: no crash, messages
published meanwhile reach their own instance only (counted), the outage logged once, and
sharing resumes when Redis is back (waited for by its log line and metric), every topic with
subscribers subscribed again."""
import re
import socket
import threading

import pytest
from websockets.sync.client import connect

from ops_e2e import wait_for, write_config
from redis_server import available
from rivet_e2e import BIN, SLOW
from test_config import run

pytestmark = pytest.mark.skipif(not available(), reason="needs redis-server")

SHARED = "pub/sub: topics shared through Redis at"


def instances(rivet, redis, n):
    args = ("--threads", "2", "--workers", "1", "--rate-limit-redis", f"127.0.0.1:{redis.port}",
            "--pubsub", "redis")
    servers = [rivet(args=args) for _ in range(n)]
    for s in servers:  # subscribed: from now on what others publish reaches it
        wait_for(lambda s=s: SHARED in s.stderr(), timeout=30, what="the Redis subscription")
    return servers


def metric(srv, name):
    m = re.search(rf"^{name} (\d+)$", srv.get("/metrics").text, re.M)
    return int(m.group(1)) if m else None


class Collector:
    """Everything one subscriber receives, gathered by a thread: WebSocket messages or the
    data of SSE `chat` events."""

    def __init__(self, srv, kind):
        self.items, self.lock, self.kind = [], threading.Lock(), kind
        if kind == "ws":
            # Entered as a context manager (websockets 17.1 deprecates a bare connect()).
            self.ws = connect(f"ws://{srv.host}:{srv.port}/ws/chat",
                              open_timeout=10 * SLOW).__enter__()
            target = self._read_ws
        else:  # HTTP/1.0: the body is the raw stream, no chunks
            self.sock = socket.create_connection((srv.host, srv.port), timeout=60 * SLOW)
            self.sock.sendall(b"GET /events?every=60000 HTTP/1.0\r\nHost: x\r\n\r\n")
            self.buf = b""
            while b"\r\n\r\n" not in self.buf:  # the head: the stream is subscribed by now
                piece = self.sock.recv(65536)
                assert piece, self.buf
                self.buf += piece
            self.buf = self.buf.split(b"\r\n\r\n", 1)[1]
            target = self._read_sse
        threading.Thread(target=target, daemon=True).start()

    def _add(self, item):
        with self.lock:
            self.items.append(item)

    def _read_ws(self):
        try:
            while True:
                self._add(self.ws.recv())
        except Exception:  # closed
            pass

    def _read_sse(self):
        try:
            while True:
                while b"\n\n" in self.buf:
                    block, self.buf = self.buf.split(b"\n\n", 1)
                    fields = dict(line.split(": ", 1) for line in block.decode().splitlines()
                                  if ": " in line and not line.startswith(":"))
                    if fields.get("event") == "chat":
                        self._add(fields["data"])
                piece = self.sock.recv(65536)
                if not piece:
                    return
                self.buf += piece
        except OSError:
            pass

    def got(self, prefix=""):
        with self.lock:
            return [m for m in self.items
                    if isinstance(m, str) and m.startswith(prefix) or isinstance(m, bytes)
                    and prefix == "bytes"]

    def close(self):
        if self.kind == "ws":
            self.ws.__exit__(None, None, None)  # closes it
            return
        try:  # the FIN now: a close() alone waits for the reading thread's recv to return
            self.sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self.sock.close()


def numsub(redis, topic="chat"):
    """How many instances subscribe to the topic's channel now."""
    return redis.cli("PUBSUB", "NUMSUB", f"rivet:topic:{topic}")[1]


def until_numsub(redis, n, what):
    wait_for(lambda: numsub(redis) == n, timeout=60, what=f"{n} subscribed to chat: {what}")


def until_shared(sender, receivers, tag):
    """Probes from `sender` until each receiver has one: every path is live."""
    def probed():
        sender.ws.send(f"{tag}-probe")
        return all(r.got(f"{tag}-probe") for r in receivers)
    wait_for(probed, timeout=30, what=f"{tag}: a probe on every receiver")


def numbered(tag, n):
    return [f"{tag}-{i:03d}" for i in range(n)]


def test_published_on_one_reaches_websocket_and_sse_on_the_others_in_order(rivet, redis):
    one, two, three = instances(rivet, redis, 3)
    sender = Collector(one, "ws")
    receivers = [Collector(s, kind) for s in (two, three) for kind in ("ws", "sse")]
    try:
        until_shared(sender, receivers, "warm")
        want = numbered("msg", 100)
        for m in want:
            sender.ws.send(m)
        for r in receivers + [sender]:
            wait_for(lambda r=r: len(r.got("msg-")) >= 100, timeout=30,
                     what=f"100 messages on a {r.kind} subscriber")
        for r in receivers:
            assert r.got("msg-") == want
        # The sender's own instance delivered each once: locally, not again from Redis.
        wait_for(lambda: metric(one, "rivet_pubsub_redis_received_total") is not None)
        assert sender.got("msg-") == want
        assert metric(one, "rivet_pubsub_redis_received_total") == 0
        assert metric(two, "rivet_pubsub_redis_received_total") >= 100

        # Binary messages cross Redis byte for byte (WebSockets only: SSE carries text).
        blobs = [bytes([0, 255, 13, 10, i]) + b"\x00" * i for i in range(10)]
        for b in blobs:
            sender.ws.send(b)
        for r in receivers[0::2]:  # the WebSocket ones
            wait_for(lambda r=r: len(r.got("bytes")) >= 10, timeout=30, what="binary messages")
            assert r.got("bytes") == blobs
        assert all(len(r.got("msg-")) == 100 for r in receivers)  # nothing twice, after all
        for s in (one, two, three):
            assert metric(s, "rivet_pubsub_redis_unshared_total") == 0
    finally:
        for c in [sender] + receivers:
            c.close()


def test_an_instance_without_subscribers_receives_nothing_of_the_topic(rivet, redis):
    one, two, idle = instances(rivet, redis, 3)
    assert numsub(redis) == 0
    sender, receiver = Collector(one, "ws"), Collector(two, "ws")
    try:
        until_shared(sender, [receiver], "warm")
        until_numsub(redis, 2, "one and two, whose /ws/chat clients subscribed")
        want = numbered("msg", 20)
        for m in want:
            sender.ws.send(m)
        wait_for(lambda: receiver.got("msg-") == want, timeout=30, what="20 messages on two")
        assert metric(two, "rivet_pubsub_redis_received_total") >= 20
        # Redis sent the idle instance nothing of "chat": not one message to drop.
        assert metric(idle, "rivet_pubsub_redis_received_total") == 0
    finally:
        sender.close()
        receiver.close()


def test_websocket_subscribers_make_and_end_the_subscription(rivet, redis):
    one, two = instances(rivet, redis, 2)
    sender = Collector(one, "ws")
    until_numsub(redis, 1, "the sender's instance")
    # Two clients on two (--threads 2: likely on two loops); one instance subscription.
    first, second = Collector(two, "ws"), Collector(two, "ws")
    try:
        until_shared(sender, [first, second], "both")
        assert numsub(redis) == 2
        first.close()  # two still has a subscriber: still subscribed, still receiving
        until_shared(sender, [second], "one left")
        assert numsub(redis) == 2
        second.close()
        until_numsub(redis, 1, "two's last WebSocket gone")
        third = Collector(two, "ws")  # and back
        until_shared(sender, [third], "again")
        third.close()
        sender.close()
        until_numsub(redis, 0, "every WebSocket gone")
        assert one.alive() and two.alive()
    finally:
        sender.close()


def test_event_streams_make_and_end_the_subscription(rivet, redis):
    one, two = instances(rivet, redis, 2)
    sender = Collector(one, "ws")
    until_numsub(redis, 1, "the sender's instance")
    stream = Collector(two, "sse")
    try:
        until_shared(sender, [stream], "sse")
        assert numsub(redis) == 2
        stream.close()  # the stream is met closed (the sweep), and its topic's channel ends
        until_numsub(redis, 1, "two's event stream gone")
        assert two.alive()
    finally:
        sender.close()
        stream.close()


def test_redis_stopped_mid_run_then_back(rivet, redis):
    one, two = instances(rivet, redis, 2)
    sender, receiver = Collector(one, "ws"), Collector(two, "ws")
    try:
        until_shared(sender, [receiver], "before")
        redis.stop()
        wait_for(lambda: "pub/sub: lost the subscription to Redis" in two.stderr(), timeout=30,
                 what="the outage's log line")
        down = numbered("down", 20)
        for m in down:
            sender.ws.send(m)
        # Delivered on the publishing instance only, and counted there as not shared.
        wait_for(lambda: sender.got("down-") == down, timeout=30, what="local delivery")
        # (A probe whose PUBLISH was still out when Redis stopped counts too.)
        wait_for(lambda: metric(one, "rivet_pubsub_redis_unshared_total") >= 20, timeout=30,
                 what="the unshared count")
        assert one.alive() and two.alive()

        redis.start()
        for s in (one, two):
            wait_for(lambda s=s: metric(s, "rivet_pubsub_redis_reconnects_total") == 1,
                     timeout=30, what="the subscription made again")
            assert "pub/sub: subscribed to Redis at" in s.stderr()
            # Once per outage, however many attempts failed meanwhile.
            assert s.stderr().count("pub/sub: lost the subscription to Redis") == 1
        until_numsub(redis, 2, "subscribed again after the restart")
        until_shared(sender, [receiver], "after")
        after = numbered("after", 30)
        for m in after:
            sender.ws.send(m)
        wait_for(lambda: len(receiver.got("after-0")) == 30, timeout=30, what="shared again")
        assert receiver.got("after-0") == after
        assert receiver.got("down-") == []  # not kept for later
    finally:
        sender.close()
        receiver.close()


def test_pubsub_redis_needs_the_redis_address(tmp_path):
    path = write_config(tmp_path / "p.json", {"pubsub": {"share": "redis"}})
    p = run("--config", path, "--check-config")
    assert p.returncode == 2, p
    assert 'pubsub: share "redis" needs rate_limiting.redis' in p.stderr, p.stderr
    p = run("--port", "0", "--pubsub", "redis")
    assert p.returncode != 0 and "pubsub Redis needs" in p.stderr, p
    p = run("--port", "0", "--pubsub", "shared")
    assert p.returncode == 2 and "--pubsub" in p.stderr, p
    assert BIN.exists()
