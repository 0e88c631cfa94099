"""Pipelining: many requests in one write are answered in request order, also when inline and
offloaded routes mix and when later requests finish first."""
import sys

from rivet_e2e import SLOW, build_request, fib, work_result

if hasattr(sys, "set_int_max_str_digits"):
    sys.set_int_max_str_digits(0)

FIB_30000 = str(fib(30000))


def mixed_request(k: int):
    """(request bytes, is_head, checker) for the k-th request of a mixed pipeline."""
    kind = k % 4
    if kind == 0:
        return (build_request("GET", "/hello"), False,
                lambda r: r.status == 200 and r.body == b"Hello, World!")
    if kind == 1:
        n = 1_000_000 + k
        return (build_request("GET", f"/work?n={n}"), False,
                lambda r: r.status == 200 and r.json() == {"n": n, "result": work_result(n)})
    if kind == 2:
        return (build_request("GET", "/fibonacci?number=30000"), False,
                lambda r: r.status == 200 and r.json() == {"number": 30000,
                                                           "fibonacci": FIB_30000})
    return (build_request("GET", f"/echo?i={k}"), False,
            lambda r: r.status == 200 and r.json() == {"i": str(k)})


def run_pipeline(server, requests, timeout=30):
    with server.connect(timeout=timeout) as c:
        c.send(b"".join(req for req, _, _ in requests))
        heads = {i for i, (_, head, _) in enumerate(requests) if head}
        responses = c.read_responses(len(requests), head_requests=heads)
        assert c.nothing_within(0.2), "more responses than requests"
    for i, ((_, _, check), r) in enumerate(zip(requests, responses)):
        assert check(r), f"response {i} out of order or wrong: {r}"
        assert not r.closes, r
    return responses


def test_fifty_pipelined_mixed_in_one_write(server):
    run_pipeline(server, [mixed_request(k) for k in range(50)])


def test_pipeline_longer_than_the_in_flight_window(server):
    # More requests than the server keeps in flight per connection: reading pauses and resumes.
    reqs = []
    for k in range(300):
        if k % 3 == 0:
            n = 1000 + k
            reqs.append((build_request("GET", f"/work?n={n}"), False,
                         lambda r, n=n: r.json() == {"n": n, "result": work_result(n)}))
        else:
            reqs.append((build_request("GET", f"/echo?k={k}"), False,
                         lambda r, k=k: r.json() == {"k": str(k)}))
    run_pipeline(server, reqs, timeout=60)


def test_slow_offloaded_first_fast_ones_wait(server):
    slow = 300_000_000 if not SLOW > 1 else 50_000_000
    reqs = [
        (build_request("GET", f"/work?n={slow}"), False,
         lambda r: r.json() == {"n": slow, "result": work_result(slow)}),
        (build_request("GET", "/work?n=10"), False,
         lambda r: r.json() == {"n": 10, "result": work_result(10)}),
        (build_request("GET", "/hello"), False, lambda r: r.body == b"Hello, World!"),
        (build_request("HEAD", "/work?n=5"), True,
         lambda r: r.status == 200 and r.body == b"" and
         int(r.header("Content-Length")) == len(b'{"n":5,"result":%d}' % work_result(5))),
        (build_request("GET", "/fibonacci?number=25000"), False,
         lambda r: r.json()["fibonacci"] == str(fib(25000))),
        (build_request("POST", "/echo", body=b"tail"), False, lambda r: r.body == b"tail"),
    ]
    run_pipeline(server, reqs)


def test_pipelined_heads_and_gets(server):
    reqs = []
    for k in range(20):
        if k % 2:
            reqs.append((build_request("HEAD", f"/echo?v={k}"), True,
                         lambda r, k=k: r.status == 200 and r.body == b"" and
                         r.header("Content-Length") == str(len(b'{"v":"%d"}' % k))))
        else:
            reqs.append((build_request("GET", f"/echo?v={k}"), False,
                         lambda r, k=k: r.json() == {"v": str(k)}))
    run_pipeline(server, reqs)


def test_pipelined_large_bodies_with_a_slow_reader(server):
    # Responses larger than the server's output high-water mark, read only after a pause.
    bodies = [bytes([65 + i]) * (3 << 20) for i in range(4)]
    reqs = [(build_request("POST", "/echo", body=b), False, lambda r, b=b: r.body == b)
            for b in bodies]
    reqs.append((build_request("GET", "/hello"), False, lambda r: r.body == b"Hello, World!"))
    with server.connect(timeout=60) as c:
        import threading
        sender = threading.Thread(target=c.send, args=(b"".join(r for r, _, _ in reqs),))
        sender.start()
        import time
        time.sleep(0.5)
        responses = c.read_responses(len(reqs))
        sender.join(30)
    for (_, _, check), r in zip(reqs, responses):
        assert check(r), r


def test_pipelined_errors_from_handlers_keep_order(server):
    # 4xx answers from handlers (inline and offloaded) do not end the connection or reorder.
    reqs = [
        (build_request("GET", "/work?n=abc"), False, lambda r: r.status == 400),
        (build_request("GET", "/nope"), False, lambda r: r.status == 404),
        (build_request("GET", "/work?n=7"), False,
         lambda r: r.json() == {"n": 7, "result": work_result(7)}),
        (build_request("GET", "/fibonacci?number=-1"), False, lambda r: r.status == 400),
        (build_request("GET", "/calc?value=5&terms=3"), False, lambda r: r.status == 400),
        (build_request("POST", "/hello", body=b""), False, lambda r: r.status == 405),
        (build_request("GET", "/calc?value=0.5&terms=3"), False,
         lambda r: r.status == 200 and r.json()["terms"] == 3),
        (build_request("GET", "/healthz"), False, lambda r: r.body == b"ok"),
    ]
    run_pipeline(server, reqs)
