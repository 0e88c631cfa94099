"""bench.py's scenario selection: the rivet-only hand-off scenarios (work_c100, wait_c100,
cpu_c100) run
only when named or in the smoke run, the "engine" set names issue 20's list, and every peer
but rivet and rivet_base reads n/a for them by design."""
import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

import bench  # noqa: E402
import peers  # noqa: E402


def ids(scenarios=None, smoke=False):
    a = argparse.Namespace(smoke=smoke, full=False, reps=None, duration=None, modes="percore",
                           servers="rivet,rivet_base,nginx", scenarios=scenarios)
    return [x["id"] for x in bench.build_settings(a)["scenarios"]]


def test_hand_off_scenarios_only_when_named_or_in_the_smoke_run():
    hand_offs = {"work_c100", "wait_c100", "cpu_c100"}
    assert not hand_offs & set(ids())
    assert hand_offs <= set(ids(smoke=True))
    assert ids("work,wait,cpu") == ["work_c100", "wait_c100", "cpu_c100"]


def test_the_engine_set():
    assert ids("engine") == ["hello_c100", "hello_c10000", "pipeline16_c100", "close_c100",
                             "static_1k_c100", "work_c100", "wait_c100", "cpu_c100"]


def test_only_rivet_serves_work_and_wait():
    for name in peers.KNOWN_SERVERS:
        for feature in ("work", "wait", "cpu"):
            why = peers.UNSUPPORTED[name].get(feature)
            assert (why is None) == (name in ("rivet", "rivet_base")), (name, feature)
