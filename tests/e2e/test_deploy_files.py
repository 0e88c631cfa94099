"""The shipped deployment files (deploy/): the systemd units pass `systemd-analyze verify` with no
warning, and the Kubernetes manifests parse, hang together (probes on /livez and /readyz, the
ports, a termination grace longer than the drain) and carry a configuration rivet accepts."""
import json
import re
import shutil
import subprocess

import pytest
import yaml

from rivet_e2e import BIN, REPO

DEPLOY = REPO / "deploy"
SYSTEMD_ANALYZE = shutil.which("systemd-analyze")
KUBECTL = shutil.which("kubectl")


@pytest.mark.skipif(SYSTEMD_ANALYZE is None, reason="systemd-analyze is not installed")
def test_systemd_units_verify_without_warnings(tmp_path):
    for unit in ("rivet.service", "rivet.socket"):
        text = (DEPLOY / "systemd" / unit).read_text()
        # verify wants the binary to exist: the build's stands in for /usr/local/bin/rivet.
        (tmp_path / unit).write_text(text.replace("/usr/local/bin/rivet", str(BIN)))
    p = subprocess.run([SYSTEMD_ANALYZE, "verify", str(tmp_path / "rivet.socket"),
                        str(tmp_path / "rivet.service")], capture_output=True, text=True,
                       timeout=60)
    said = p.stdout + p.stderr
    assert p.returncode == 0, said
    # Unknown keys and bad values are only warnings to systemd ("..., ignoring"): none allowed.
    lines = [x for x in said.splitlines() if "rivet." in x]
    assert not lines, said


def test_systemd_stop_timeout_outlasts_the_drain():
    service = (DEPLOY / "systemd" / "rivet.service").read_text()
    stop = int(re.search(r"^TimeoutStopSec=(\d+)$", service, re.M)[1])
    assert stop > 7 + 10  # the default drain_grace + drain_timeout
    assert re.search(r"^ExecReload=/bin/kill -HUP \$MAINPID$", service, re.M)
    assert "Requires=rivet.socket" in service


def test_systemd_unit_waits_for_ready_and_watches_the_loops():
    """rivet speaks sd_notify (tests/e2e/test_sd_notify.py): the unit waits for READY=1, takes
    the new process's word after an in-place upgrade, and has a watchdog."""
    service = (DEPLOY / "systemd" / "rivet.service").read_text()
    assert re.search(r"^Type=notify$", service, re.M)
    assert re.search(r"^NotifyAccess=all$", service, re.M)
    # Pinged at half of it by a thread that also does reloads: room for a slow one.
    assert int(re.search(r"^WatchdogSec=(\d+)s$", service, re.M)[1]) >= 5


def manifests():
    docs = {}
    for path in sorted((DEPLOY / "kubernetes").glob("*.yaml")):
        for doc in yaml.safe_load_all(path.read_text()):
            docs[doc["kind"]] = doc
    return docs


def test_kubernetes_manifests_hang_together(tmp_path):
    docs = manifests()
    assert {"ConfigMap", "Deployment", "Service", "PodDisruptionBudget",
            "Kustomization"} <= docs.keys()
    config = json.loads(docs["ConfigMap"]["data"]["rivet.json"])
    # rivet accepts the configuration it is given.
    (tmp_path / "rivet.json").write_text(docs["ConfigMap"]["data"]["rivet.json"])
    p = subprocess.run([str(BIN), "--config", str(tmp_path / "rivet.json"), "--check-config"],
                       capture_output=True, text=True, timeout=30)
    assert p.returncode == 0, p.stdout + p.stderr

    pod = docs["Deployment"]["spec"]["template"]["spec"]
    rivet = pod["containers"][0]
    assert rivet["readinessProbe"]["httpGet"]["path"] == "/readyz"
    assert rivet["livenessProbe"]["httpGet"]["path"] == "/livez"
    assert {m["mountPath"] for m in rivet["volumeMounts"]} == {"/etc/rivet"}
    assert rivet["args"][:2] == ["--config", "/etc/rivet/rivet.json"]
    port = config["server"]["port"]
    assert rivet["ports"][0]["containerPort"] == port
    grace, drain = config["limits"]["drain_grace"], config["limits"]["drain_timeout"]
    assert pod["terminationGracePeriodSeconds"] > grace + drain
    ready = rivet["readinessProbe"]
    assert grace > ready["periodSeconds"] * ready["failureThreshold"]
    live = rivet["livenessProbe"]
    assert live["periodSeconds"] * live["failureThreshold"] > grace + drain
    labels = docs["Deployment"]["spec"]["selector"]["matchLabels"]
    assert docs["Service"]["spec"]["selector"] == labels
    assert docs["PodDisruptionBudget"]["spec"]["selector"]["matchLabels"] == labels
    assert docs["Service"]["spec"]["ports"][0]["targetPort"] == rivet["ports"][0]["name"]
    listed = set(docs["Kustomization"]["resources"])
    assert listed == {p.name for p in (DEPLOY / "kubernetes").glob("*.yaml")} - {
        "kustomization.yaml"}


@pytest.mark.skipif(KUBECTL is None, reason="kubectl is not installed")
def test_kustomize_builds_the_manifests():
    p = subprocess.run([KUBECTL, "kustomize", str(DEPLOY / "kubernetes")], capture_output=True,
                       text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    kinds = {d["kind"] for d in yaml.safe_load_all(p.stdout)}
    assert kinds == {"ConfigMap", "Deployment", "Service", "PodDisruptionBudget"}


@pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")
def test_make_run_builds_only_the_server(tmp_path):
    """`make run` builds the target it runs, not all of them (the unit tests took most of a
    fresh clone's build; issue 26, item 20). `make -n` prints the commands without running them."""
    p = subprocess.run(["make", "-n", "run", f"BUILD={tmp_path / 'build'}"], cwd=REPO,
                       capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    ninja = [line.split() for line in p.stdout.splitlines() if line.startswith("ninja ")]
    assert ninja, p.stdout
    assert all(words[-1] == "rivet" for words in ninja), p.stdout
    runs = [line for line in p.stdout.splitlines() if "/build/rivet " in line]
    assert runs, p.stdout  # and what it builds is what it runs
