"""Hostile JSON bodies (issue 26, items 6 and 7) on the real binary: nesting and size are refused
before anything is parsed, a large body is parsed on a worker and never on the I/O loop, a number
beyond a double is a 400 that the error log does not copy, and 2^64 - 1 is read as what it is."""
import json

import pytest

from ops_e2e import rss_kib
from rivet_e2e import SANITIZED, SLOW, build_request


def refused(r, status):
    assert r.status == status, r
    return r.json()["error"]


def nested_document(arrays):
    """An object holding `arrays` arrays inside one another: arrays + 1 levels deep."""
    return '{"value": 1, "deep": ' + "[" * arrays + "]" * arrays + "}"


# ---------------------------------------------------------------------------------------------
# 6. Deeply nested or huge JSON


def test_nesting_is_refused_past_128_levels(server):
    assert server.post("/json", nested_document(127)).status == 200
    message = refused(server.post("/json", nested_document(128)), 400)
    assert message == "invalid JSON body: nested deeper than 128 levels (at byte 148)", message
    message = refused(server.post("/fibonacci", '{"number": 5, "x": [[' + "[" * 200), 400)
    assert "nested deeper than 128 levels" in message, message


def test_a_huge_nested_body_is_refused_before_it_costs_memory(rivet):
    srv = rivet(args=("--threads", "1", "--workers", "1"))
    before = rss_kib(srv.proc.pid, "VmHWM")
    # 8 MiB of "[" (the server's max_body): before the fix parsing it took some 600 MB and a
    # second of CPU. Now it is over req.json()'s 1 MiB, refused by its size.
    for target, body in (("/json", b"[" * (8 << 20)), ("/fibonacci", b"{" + b"[" * ((8 << 20) - 1))):
        message = refused(srv.post(target, body, timeout=60), 413)
        assert message == "JSON body over max_bytes (1048576): 8388608 bytes", (target, message)
    # Under 1 MiB, refused by its depth at the 129th bracket (before: a level built per byte).
    for target, body in (("/json", b"[" * 1_000_000), ("/fibonacci", b"{" + b"[" * 999_999)):
        message = refused(srv.post(target, body, timeout=60), 400)
        assert "nested deeper than 128 levels" in message, (target, message)
    if not SANITIZED:  # the sanitizers' quarantine holds freed memory: their peak says nothing
        growth_mib = (rss_kib(srv.proc.pid, "VmHWM") - before) // 1024
        # The bodies themselves are held (8 MiB, and an offloaded request's copy): well under 100.
        assert growth_mib < 100, f"peak RSS grew {growth_mib} MiB"


def test_a_large_fibonacci_body_is_parsed_on_a_worker(rivet):
    # One worker, busy with a long job. A small body is parsed on the loop to see whether the
    # number is heavy; a large one is not parsed there but sent to the worker, where it waits
    # behind the long job: its answer cannot come first (before the fix it did, parsed inline).
    srv = rivet(args=("--threads", "1", "--workers", "1"))
    body = '{"number": 5}' + " " * (100 * 1024)
    with srv.connect(timeout=60) as busy, srv.connect(timeout=60) as c:
        busy.send(build_request("GET", "/calc?value=0.5&terms=20000000"))
        # The one loop answers a request sent after the long job's: it has read that one too,
        # and handed it to the worker.
        assert srv.get("/hello").status == 200
        c.send(build_request("POST", "/fibonacci", body=body.encode()))
        r = c.read_response()
        assert r.status == 200 and r.json() == {"number": 5, "fibonacci": "5"}, r
        # Both answers leave the same I/O loop in the order the worker finished them.
        assert not busy.nothing_within(0), "the large body was not parsed on the worker"
        assert busy.read_response().json()["terms"] == 20000000


# ---------------------------------------------------------------------------------------------
# 7. Oversized numbers


@pytest.mark.parametrize("number", ["1e400", "-1e400", "9" * 400])
def test_a_number_beyond_a_double_is_a_400(server, number):
    message = refused(server.post("/json", '{"value": ' + number + "}"), 400)
    assert message.startswith("invalid JSON body: number overflow"), message
    assert len(message) < 300, len(message)


def test_a_huge_number_is_neither_a_500_nor_copied_into_the_error_log(rivet):
    srv = rivet(args=("--threads", "1", "--workers", "1"))
    logged = len(srv.stderr())
    body = '{"value": ' + "9" * 500_000 + "}"  # offloaded (over 64 KiB), as an attacker's would be
    for _ in range(5):
        message = refused(srv.post("/json", body, timeout=30 * SLOW), 400)
        assert len(message) < 300, len(message)
    # Before the fix: a 500 and a log line of the whole number each time (2.5 MB here).
    grown = len(srv.stderr()) - logged
    assert grown < 4096, srv.stderr()[logged:logged + 300]


@pytest.mark.parametrize("value,word", [
    ("18446744073709551615", "out of range"),  # 2^64 - 1: read as -1 before the fix
    ("9223372036854775808", "out of range"),   # 2^63: the first that nlohmann keeps unsigned
    ("18446744073709551616", "out of range"),  # 2^64: a double
    ("-9223372036854775809", "out of range"),  # below INT64_MIN: a double
    ("2147483648", "out of range"),
    ("-2147483649", "out of range"),
])
def test_values_beyond_the_range_are_refused_as_such(server, value, word):
    message = refused(server.post("/json", '{"value": ' + value + "}"), 400)
    assert word in message, message


@pytest.mark.parametrize("value", [2147483647, -2147483648])
def test_the_ends_of_the_range_are_served(server, value):
    r = server.post("/json", json.dumps({"value": value}))
    assert r.status == 200 and r.json()["plus"] == value + 20, r


def test_fibonacci_reads_an_unsigned_64_bit_number_exactly(server):
    message = refused(server.post("/fibonacci", '{"number": 18446744073709551615}'), 400)
    assert message == "number must be at most 1000000", message
