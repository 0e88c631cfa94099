"""Default thread counts follow the CPUs the process may use (issue 24): the affinity mask
(`taskset -c 0`) and a cgroup CPU quota of one CPU each start one I/O thread and one worker,
as the listening line says."""
import os
import shutil
import uuid
from pathlib import Path

import pytest

from rivet_e2e import BIN, PUBLIC, RivetServer

TASKSET = shutil.which("taskset")


def plain_command():
    return [str(BIN), "--port", "0", "--bind", "127.0.0.1", "--root", str(PUBLIC),
            "--drain-grace", "0"]


@pytest.mark.skipif(TASKSET is None, reason="taskset (util-linux) is not installed")
@pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2,
                    reason="this machine gives one CPU already: a mask of one proves nothing")
def test_taskset_one_cpu_starts_one_io_thread(rivet):
    cpu = min(os.sched_getaffinity(0))
    srv = rivet(command=[TASKSET, "-c", str(cpu)] + plain_command())
    assert (srv.threads, srv.workers) == (1, 1), srv.stdout()
    assert srv.get("/hello").status == 200


@pytest.mark.skipif(TASKSET is None, reason="taskset (util-linux) is not installed")
def test_flags_still_win_over_the_mask(rivet):
    cpu = min(os.sched_getaffinity(0))
    srv = rivet(command=[TASKSET, "-c", str(cpu)] + plain_command()
                + ["--io-threads", "3", "--workers", "2"])
    assert (srv.threads, srv.workers) == (3, 2), srv.stdout()


def cgroup_with_one_cpu():
    """A new cgroup limited to one CPU, as (directory, None), or (None, why not)."""
    mounts = Path("/proc/self/mountinfo").read_text().splitlines()
    v2 = v1 = None
    for line in mounts:
        head, _, tail = line.partition(" - ")
        fields, kinds = head.split(), tail.split()
        if len(fields) < 5 or len(kinds) < 3:
            continue
        if kinds[0] == "cgroup2" and v2 is None:
            v2 = Path(fields[4])
        if kinds[0] == "cgroup" and "cpu" in kinds[2].split(","):
            v1 = Path(fields[4])
    name = f"rivet-test-{uuid.uuid4().hex[:8]}"
    tried = []
    if v2 and "cpu" in (v2 / "cgroup.controllers").read_text().split():
        try:
            d = v2 / name
            d.mkdir()
            (d / "cpu.max").write_text("100000 100000")
            return d, None
        except OSError as e:
            tried.append(f"cgroup v2 at {v2}: {e}")
    elif v2:
        tried.append(f"cgroup v2 at {v2} has no cpu controller")
    if v1:
        try:
            d = v1 / name
            d.mkdir()
            (d / "cpu.cfs_period_us").write_text("100000")
            (d / "cpu.cfs_quota_us").write_text("100000")
            return d, None
        except OSError as e:
            tried.append(f"cgroup v1 cpu at {v1}: {e}")
    return None, "cannot make a cgroup with a CPU quota here (" + "; ".join(tried or ["no cgroup mount"]) + ")"


@pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2,
                    reason="this machine gives one CPU already: a quota of one proves nothing")
def test_cgroup_quota_of_one_cpu_starts_one_io_thread(tmp_path):
    group, why_not = cgroup_with_one_cpu()
    if group is None:
        pytest.skip(why_not)
    try:
        # The shell joins the cgroup, then becomes rivet: rivet reads its quota as it starts.
        command = " ".join(f"'{c}'" for c in plain_command())
        srv = RivetServer(tmp_path, command=[
            "/bin/sh", "-c", f"echo $$ > '{group}/cgroup.procs' && exec {command}"])
        srv.start()
        try:
            assert (srv.threads, srv.workers) == (1, 1), srv.stdout()
            assert srv.get("/hello").status == 200
        finally:
            assert srv.stop() == 0, srv.stderr()
    finally:
        group.rmdir()  # empty once rivet has exited
