"""Rollout health on the real control plane: a config change whose new pods never become Ready is
reported `stalled`, and a fixing change rolls once more and is reported `complete`.

Why: health.py reads the controllers' status fields and conditions; only the real Deployment, StatefulSet
and DaemonSet controllers show what those fields say while a rollout is stuck and after it is fixed (the
simulator's status is set by hand). Pods "fail readiness" through a kwok Stage (tests/cluster/stages/
pod-never-ready.yaml) created at run time for the broken configuration's hash, so this module runs its own
control plane with kwok reading Stage objects (`control_plane(kwok_stage_crds=True)`).
"""

from __future__ import annotations

import json
import os
import secrets
import subprocess
import time
import urllib.request
from collections.abc import Iterator
from datetime import UTC, datetime
from functools import partial
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.cluster.controlplane import (
    REPO,
    STAGES_API,
    ControlPlane,
    binary_dir,
    control_plane,
    free_port,
    missing_binaries,
)
from tests.prerequisites import skip_or_fail
from tests.real.conftest import (
    CLI,
    HASH,
    Kube,
    configmap,
    pod_spec,
    secret,
    wait_until,
    workload,
)

NEVER_READY_STAGE = REPO / "tests" / "cluster" / "stages" / "pod-never-ready.yaml"
PUSHGATEWAY = Path("/usr/bin/prometheus-pushgateway")
PROGRESS_DEADLINE = 5  # seconds: the Deployment's progressDeadlineSeconds
ROLLOUT_DEADLINE = 3  # seconds: kube-rehash's rolloutDeadline for the StatefulSet and DaemonSet
# Values no report, log or Event may show (only the names of the sources may appear).
BROKEN_VALUE = "listen-on-port-99999-broken"
SECRET_VALUE = "s3cr3t-db-password-never-shown"


@pytest.fixture(scope="module")
def control() -> Iterator[ControlPlane]:
    """A control plane of this module's own whose kwok reads Stage objects (overrides the session's)."""
    if missing := missing_binaries():
        message = f"real control plane not built ({', '.join(missing)} missing in {binary_dir()})"
        skip_or_fail(message + ": run `make control-plane`")
    with control_plane(kwok_stage_crds=True) as cp:
        yield cp


@pytest.fixture(scope="module")
def gateway(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A real Prometheus Pushgateway on loopback (Debian package prometheus-pushgateway)."""
    if not PUSHGATEWAY.is_file():
        pytest.fail(f"{PUSHGATEWAY} is absent (`make debian-deps` installs it)", pytrace=False)
    url = f"http://127.0.0.1:{free_port()}"
    process = subprocess.Popen(
        [str(PUSHGATEWAY), f"--web.listen-address={url.removeprefix('http://')}", "--persistence.file="],
        cwd=tmp_path_factory.mktemp("pushgateway"),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_until("the pushgateway to be ready", lambda: _http_ok(f"{url}/-/ready"), 10)
        yield url
    finally:
        process.terminate()
        process.wait(timeout=10)


def _http_ok(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=1) as resp:
            return bool(resp.status == 200)
    except OSError:
        return False


def stalled_gauge(url: str) -> float:
    """`kube_rehash_rollouts_stalled` as the Pushgateway serves it for the pass's group (shard `all`)."""
    with urllib.request.urlopen(f"{url}/metrics", timeout=5) as resp:
        text = resp.read().decode()
    values = [
        float(line.rsplit(" ", 1)[1])
        for line in text.splitlines()
        if line.startswith("kube_rehash_rollouts_stalled{") and 'job="kube-rehash"' in line
    ]
    assert len(values) == 1, text
    return values[0]


# -- helpers -------------------------------------------------------------------------------------------------


def never_ready(kube: Kube, hashes: set[str]) -> None:
    """Create a kwok Stage that keeps every pod whose config hash is one of `hashes` from becoming Ready."""
    stage = yaml.safe_load(NEVER_READY_STAGE.read_text())
    stage["metadata"]["name"] = f"never-ready-{kube.ns}-{secrets.token_hex(3)}"
    (expression,) = [
        e for e in stage["spec"]["selector"]["matchExpressions"] if e["key"].endswith(f'["{HASH}"]')
    ]
    expression["values"] = sorted(hashes)
    kube.cp.api("POST", STAGES_API, stage)


def pods(kube: Kube, name: str) -> list[dict[str, Any]]:
    items = kube.get(f"/api/v1/namespaces/{{ns}}/pods?labelSelector=app%3D{name}")["items"]
    return list(items)


def ready(pod: dict[str, Any]) -> bool:
    conditions = pod.get("status", {}).get("conditions", [])
    return any(c["type"] == "Ready" and c["status"] == "True" for c in conditions)


def age(obj: dict[str, Any]) -> float:
    """Seconds since the object was created (the server's clock is this machine's)."""
    created = datetime.strptime(obj["metadata"]["creationTimestamp"], "%Y-%m-%dT%H:%M:%SZ")
    return (datetime.now(UTC) - created.replace(tzinfo=UTC)).total_seconds()


def pod_hash(pod: dict[str, Any]) -> str | None:
    value = pod["metadata"].get("annotations", {}).get(HASH)
    return None if value is None else str(value)


def events(kube: Kube, reason: str) -> list[dict[str, Any]]:
    path = f"/api/v1/namespaces/{{ns}}/events?fieldSelector=reason%3D{reason}"
    return list(kube.get(path)["items"])


def broken_hashes(kube: Kube, *args: str) -> dict[str, str]:
    """The hash each workload will get from the pending change, as a dry run reports it (nothing written)."""
    planned = kube.rehash("--dry-run", *args)
    assert planned.code == 0, planned.stderr
    return {f"{w['kind']}/{w['name']}": w["hash"] for w in planned.report["workloads"]}


def plan(kube: Kube, *args: str) -> tuple[int, dict[str, Any]]:
    """`kube-rehash plan -o json` in the test's namespace: (exit code, report)."""
    argv = [CLI, "plan", "-o", "json", "--kubeconfig", str(kube.cp.kubeconfig), "-n", kube.ns, *args]
    env = {k: v for k, v in os.environ.items() if not k.startswith(("KUBE_REHASH_", "KUBECONFIG"))}
    done = subprocess.run(argv, capture_output=True, text=True, timeout=120, env=env, check=False)
    assert done.stdout.startswith("{"), f"no report (exit {done.returncode}): {done.stderr}"
    return done.returncode, json.loads(done.stdout)


def statuses(report: dict[str, Any]) -> dict[str, str | None]:
    """Each row's `rollout_status` (None: the pass read no status for it), by kind/name."""
    return {f"{w['kind']}/{w['name']}": w.get("rollout_status") for w in report["workloads"]}


def workload_reads(kube: Kube, since: int) -> list[tuple[str, str]]:
    """(resource, name) of each read of one workload object (or its status) logged after `since`."""
    return [
        (e.resource, e.name)
        for e in kube.cp.audit(since=since, user="admin")
        if e.namespace == kube.ns
        and e.resource in ("deployments", "statefulsets", "daemonsets")
        and e.name
        and e.verb == "get"
    ]


def assert_no_values(text: str) -> None:
    for value in (BROKEN_VALUE, SECRET_VALUE):
        assert value not in text, "a ConfigMap/Secret value leaked"


# -- Deployment ----------------------------------------------------------------------------------------------


def test_deployment_whose_new_pods_fail_readiness_is_stalled_then_fixed_and_complete(
    kube: Kube, gateway: str
) -> None:
    spec = pod_spec(configmaps=("web-config",), secrets_=("web-secret",))
    kube.apply(
        configmap("web-config", {"listen": "8080"}),
        secret("web-secret", {"password": SECRET_VALUE}),
        workload("Deployment", "web", spec, replicas=1, progressDeadlineSeconds=PROGRESS_DEADLINE),
    )
    kube.wait_settled("Deployment", "web")
    assert kube.rehash().actions() == {"Deployment/web": "adopt"}
    assert len(kube.replicasets("web")) == 1

    # The broken change: its pods run but never become Ready.
    kube.apply(configmap("web-config", {"listen": BROKEN_VALUE}))
    broken = broken_hashes(kube)["Deployment/web"]
    never_ready(kube, {broken})
    rolled = kube.rehash("--pushgateway", gateway)
    assert rolled.actions() == {"Deployment/web": "rollout"}
    assert rolled.row("Deployment", "web")["hash"] == broken
    assert "rollout_status" not in rolled.row("Deployment", "web")  # this pass's own rollout: not read yet
    assert stalled_gauge(gateway) == 0

    def deadline_exceeded() -> bool:
        conditions = kube.obj("Deployment", "web").get("status", {}).get("conditions", [])
        return any(c.get("reason") == "ProgressDeadlineExceeded" for c in conditions)

    wait_until("the Deployment's progress deadline to pass", deadline_exceeded, 60)
    new_pods = [p for p in pods(kube, "web") if pod_hash(p) == broken]
    assert new_pods, "the rollout created no pod with the broken config's hash"
    for pod in new_pods:  # running, NotReady for longer than the deadline
        assert pod["status"]["phase"] == "Running" and not ready(pod)
        assert age(pod) >= PROGRESS_DEADLINE

    # The stalled pass: reported, counted, pushed, one Event naming the ConfigMap (never a value), exit 0.
    stalled = kube.rehash("--pushgateway", gateway)
    assert stalled.code == 0, stalled.stderr
    row = stalled.row("Deployment", "web")
    assert (row["action"], row["rollout_status"]) == ("in-sync", "stalled"), stalled.stdout
    assert stalled.report["summary"]["stalled"] == 1
    assert stalled_gauge(gateway) == 1
    (event,) = events(kube, "RolloutStalled")
    assert event["type"] == "Warning"
    assert (event["involvedObject"]["kind"], event["involvedObject"]["name"]) == ("Deployment", "web")
    assert "configmap/web-config" in event["message"], event["message"]
    assert "secret/" not in event["message"]  # only the source whose change started the rollout
    assert_no_values(event["message"] + stalled.stdout + stalled.stderr)

    # --fail-on-stalled fails the pass (run and plan), with the same report; no second Event.
    failing = kube.rehash("--fail-on-stalled")
    (plan_failing, failing_plan_report), (plan_plain, plain_plan_report) = (
        plan(kube, "--fail-on-stalled"),
        plan(kube),
    )
    assert (failing.code, plan_failing, plan_plain) == (1, 1, 0), failing.stderr
    for report in (failing.report, failing_plan_report, plain_plan_report):
        assert statuses(report) == {"Deployment/web": "stalled"}
        assert report["summary"]["stalled"] == 1
    assert len(events(kube, "RolloutStalled")) == 1

    # The fix rolls exactly once more and completes.
    kube.apply(configmap("web-config", {"listen": "8081"}))
    fixed = kube.rehash()
    assert fixed.actions() == {"Deployment/web": "rollout"}
    assert fixed.row("Deployment", "web")["hash"] != broken
    kube.wait_settled("Deployment", "web")
    assert len(kube.replicasets("web")) == 3  # the original, the broken, the fixed one
    mark = kube.cp.audit_mark()
    complete = kube.rehash("--pushgateway", gateway, "--fail-on-stalled")
    assert complete.code == 0, complete.stderr
    assert statuses(complete.report) == {"Deployment/web": "complete"}
    assert workload_reads(kube, mark) == [("deployments", "web")], "an unfinished rollout's status is read"
    assert complete.report["summary"]["stalled"] == 0
    assert stalled_gauge(gateway) == 0

    # Finished: the next pass reads no workload status, reports none and writes nothing.
    mark = kube.cp.audit_mark()
    steady = kube.rehash()
    assert statuses(steady.report) == {"Deployment/web": None}
    assert steady.actions() == {"Deployment/web": "in-sync"}
    assert workload_reads(kube, mark) == []
    assert [e for e in kube.cp.audit(since=mark, user="admin") if e.is_write] == []
    assert len(kube.replicasets("web")) == 3


# -- StatefulSet and DaemonSet -------------------------------------------------------------------------------


def test_statefulset_and_daemonset_not_ready_by_the_rollout_deadline_are_stalled_then_fixed(
    kube: Kube,
) -> None:
    config = kube.tmp / "config.yaml"
    config.write_text(f"rolloutDeadline: {ROLLOUT_DEADLINE}s\n")
    spec = pod_spec(configmaps=("shared",))
    kube.apply(
        configmap("shared", {"feature": "off"}),
        workload("StatefulSet", "db", spec, replicas=1),
        workload("DaemonSet", "agent", spec),
    )
    names = (("StatefulSet", "db"), ("DaemonSet", "agent"))
    for kind, name in names:
        kube.wait_settled(kind, name)
    assert set(kube.rehash("--config", str(config)).actions().values()) == {"adopt"}
    revisions = {name: len(kube.revisions(kind, name)) for kind, name in names}
    assert revisions == {"db": 1, "agent": 1}

    kube.apply(configmap("shared", {"feature": BROKEN_VALUE}))
    broken = broken_hashes(kube, "--config", str(config))
    never_ready(kube, set(broken.values()))
    rolled = kube.rehash("--config", str(config))
    assert rolled.actions() == {"StatefulSet/db": "rollout", "DaemonSet/agent": "rollout"}
    rolled_at = time.monotonic()

    # Each controller started a pod from the broken template, which stays NotReady past the deadline.
    def broken_pods(kind: str, name: str) -> list[dict[str, Any]]:
        return [p for p in pods(kube, name) if pod_hash(p) == broken[f"{kind}/{name}"]]

    def broken_pod_running(kind: str, name: str) -> bool:
        return any(p.get("status", {}).get("phase") == "Running" for p in broken_pods(kind, name))

    for kind, name in names:
        wait_until(f"a running broken pod of {kind}/{name}", partial(broken_pod_running, kind, name), 30)
    time.sleep(max(0.0, ROLLOUT_DEADLINE + 0.5 - (time.monotonic() - rolled_at)))
    for kind, name in names:
        assert broken_pods(kind, name) and not any(ready(p) for p in broken_pods(kind, name))

    stalled = kube.rehash("--config", str(config))
    assert stalled.code == 0, stalled.stderr
    assert statuses(stalled.report) == {"StatefulSet/db": "stalled", "DaemonSet/agent": "stalled"}, (
        stalled.stdout
    )
    assert stalled.report["summary"]["stalled"] == 2
    stall_events = events(kube, "RolloutStalled")
    assert sorted((e["involvedObject"]["kind"], e["involvedObject"]["name"]) for e in stall_events) == [
        ("DaemonSet", "agent"),
        ("StatefulSet", "db"),
    ]
    for event in stall_events:
        assert "configmap/shared" in event["message"], event["message"]
        assert_no_values(event["message"])
    assert_no_values(stalled.stdout + stalled.stderr)
    assert kube.rehash("--config", str(config), "--fail-on-stalled").code == 1

    # The fix: exactly one more ControllerRevision each. The DaemonSet replaces its NotReady pod and finishes.
    kube.apply(configmap("shared", {"feature": "on"}))
    fixed = kube.rehash("--config", str(config))
    assert fixed.actions() == {"StatefulSet/db": "rollout", "DaemonSet/agent": "rollout"}
    fixed_at = time.monotonic()
    kube.wait_settled("DaemonSet", "agent", timeout=60)
    for kind, name in names:
        kube.wait_observed(kind, name)
        assert len(kube.revisions(kind, name)) == 3, f"{kind}/{name}"

    # The StatefulSet does not: with the default OrderedReady policy the controller waits for the NotReady
    # broken pod before it replaces anything (Kubernetes' documented "forced rollback": a person deletes the
    # pod; kubernetes/kubernetes#67250). kube-rehash reports exactly that: the fix's rollout stalls too.
    time.sleep(max(0.0, ROLLOUT_DEADLINE + 0.5 - (time.monotonic() - fixed_at)))
    assert [pod_hash(p) for p in pods(kube, "db")] == [broken["StatefulSet/db"]]
    stuck = kube.rehash("--config", str(config))
    assert statuses(stuck.report) == {"StatefulSet/db": "stalled", "DaemonSet/agent": "complete"}
    assert stuck.report["summary"]["stalled"] == 1
    db_events = [e for e in events(kube, "RolloutStalled") if e["involvedObject"]["name"] == "db"]
    assert len(db_events) == 2  # one per stalled rollout: the broken change's and the fix's

    kube.kubectl("delete", "pod", "db-0", "-n", kube.ns, "--wait=false")
    kube.wait_settled("StatefulSet", "db", timeout=60)
    assert [pod_hash(p) for p in pods(kube, "db")] == [fixed.row("StatefulSet", "db")["hash"]]
    mark = kube.cp.audit_mark()
    complete = kube.rehash("--config", str(config), "--fail-on-stalled")
    assert complete.code == 0, complete.stderr
    assert statuses(complete.report) == {"StatefulSet/db": "complete", "DaemonSet/agent": None}
    assert workload_reads(kube, mark) == [("statefulsets", "db")], "read the unfinished rollout's only"
    assert len(kube.revisions("StatefulSet", "db")) == 3

    # Both finished: the next pass reads no workload status.
    mark = kube.cp.audit_mark()
    steady = kube.rehash("--config", str(config))
    assert statuses(steady.report) == {"StatefulSet/db": None, "DaemonSet/agent": None}
    assert workload_reads(kube, mark) == []
    assert len(events(kube, "RolloutStalled")) == 3
