"""The shipped examples, built with the project, on a real socket: what a new user copies must
answer a client's mistakes with a 4xx, never a 500."""
import json

import pytest

from rivet_e2e import BIN

EXAMPLES = BIN.parent


@pytest.fixture
def hello_api(rivet):
    return rivet(command=[EXAMPLES / "example_hello_api", 0], root=None)


def test_hello_api_answers_and_refuses_bad_input_with_400(hello_api):
    r = hello_api.post("/sum", '{"numbers": [1, 2.5, 3]}')
    assert r.status == 200 and json.loads(r.body) == {"sum": 6.5}, r
    for body in ('{"numbers":[1,', '{"numbers": [1, "x"]}', '{"values": []}', "[1, 2]"):
        r = hello_api.post("/sum", body)
        assert r.status == 400, (body, r)
        assert r.header("Content-Type") == "application/json", r
        assert json.loads(r.body)["error"], r
    r = hello_api.get("/primes?below=100")
    assert r.status == 200 and json.loads(r.body) == {"below": 100, "primes": 25}, r
    for below in ("abc", "-5", "1e9", "99999999999"):
        r = hello_api.get(f"/primes?below={below}")
        assert r.status == 400, (below, r)
    assert hello_api.get("/nope").status == 404
