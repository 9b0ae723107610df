"""Argo Rollouts with the real Argo Rollouts controller (built by `make argo-rollouts`) on the real control
plane: what kube-rehash's patches make the controller do, counted in ReplicaSets and pods.

Why: the simulator stores Rollouts but runs no controller, so it cannot show that our pod-template patch makes
exactly one new ReplicaSet, that the Rollout's status then reads `Healthy`, or which write restarts the pods
of a Rollout whose template lives in a Deployment (`spec.workloadRef`). For those the controller resolves the
template from the Deployment on every sync and refuses a template of the Rollout's own ("template must be
empty for workload reference rollout"); a change of the Deployment's template would make a new ReplicaSet but
is another owner's object; `spec.restartAt` makes the controller evict every pod started before that time,
and the Rollout's ReplicaSet starts new ones (status.restartedAt then equals spec.restartAt). kube-rehash
writes `spec.restartAt` (model/workload_ref.py); these tests prove the pods really restart.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from datetime import datetime
from typing import Any

import pytest

from tests.cluster import argo_rollouts
from tests.cluster.controlplane import ControlPlane
from tests.prerequisites import skip_or_fail
from tests.real.conftest import (
    PREFIX,
    Kube,
    configmap,
    pod_spec,
    rollout,
    template_hash,
    wait_until,
    workload,
)

ROLLOUTS = "/apis/argoproj.io/v1alpha1/namespaces/{ns}/rollouts"
HASH_LABEL = "rollouts-pod-template-hash"


@pytest.fixture(scope="module", autouse=True)
def controller(control: ControlPlane, tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """The Rollout CRDs installed and the Argo Rollouts controller running for this module (its log:
    rollouts-controller.log in the module's temp dir); not built, it skips locally and fails under CI=true."""
    if reason := argo_rollouts.missing():
        skip_or_fail(reason)
    with argo_rollouts.rollouts_controller(control, tmp_path_factory.mktemp("argo-rollouts")) as component:
        yield
        component.check()  # it must still run: a crash mid-module is a failure, not a silent pass


def get_rollout(kube: Kube, name: str) -> dict[str, Any]:
    return kube.get(f"{ROLLOUTS}/{name}")


def rollout_replicasets(kube: Kube, name: str) -> list[dict[str, Any]]:
    return kube.owned("/apis/apps/v1/namespaces/{ns}/replicasets", get_rollout(kube, name))


def pods(kube: Kube, app: str) -> list[dict[str, Any]]:
    """The live (not terminating) pods of the Rollout's selector."""
    items = kube.get(f"/api/v1/namespaces/{{ns}}/pods?labelSelector=app%3D{app}")["items"]
    return [p for p in items if not p["metadata"].get("deletionTimestamp")]


def healthy(kube: Kube, name: str) -> bool:
    """The controller saw the latest spec, reports `Healthy`, every replica runs the current template and is
    ready, and any restart asked for (spec.restartAt) is done."""
    obj = get_rollout(kube, name)
    status = obj.get("status", {})
    restart = obj["spec"].get("restartAt")
    return bool(
        str(status.get("observedGeneration")) == str(obj["metadata"]["generation"])
        and status.get("phase") == "Healthy"
        and status.get("updatedReplicas") == 2
        and status.get("readyReplicas") == 2
        and status.get("availableReplicas") == 2
        and status.get("replicas") == 2
        and (restart is None or status.get("restartedAt") == restart)
    )


def wait_healthy(kube: Kube, name: str, timeout: float = 120.0) -> None:
    wait_until(f"Rollout/{name} to be Healthy", lambda: healthy(kube, name), timeout)


def workload_writes(kube: Kube, since: int) -> list[tuple[str, str, str]]:
    """Writes to Rollouts and Deployments by `admin` (kube-rehash; the controller has its own user, the
    test's kubectl writes only ConfigMaps afterwards) in the test's namespace since an audit mark."""
    kube.cp.sync_audit()
    ours = kube.cp.audit(since=since, user="admin")
    return [
        (e.verb, e.resource, e.name)
        for e in ours
        if e.is_write and e.namespace == kube.ns and e.resource in ("rollouts", "deployments")
    ]


def test_a_rollout_is_adopted_then_rolls_one_new_replicaset_per_change_and_reports_complete(
    kube: Kube,
) -> None:
    kube.apply(
        configmap("web-config", {"mode": "blue"}), rollout("web", pod_spec(configmaps=("web-config",)))
    )
    wait_healthy(kube, "web")
    assert len(rollout_replicasets(kube, "web")) == 1

    # Adoption records the hash on metadata only: no new ReplicaSet.
    first = kube.rehash()
    assert first.code == 0, first.stderr
    assert first.actions() == {"Rollout/web": "adopt"}
    assert first.row("Rollout", "web")["configs"] == ["configmap/web-config"]
    wait_healthy(kube, "web")
    assert len(rollout_replicasets(kube, "web")) == 1

    # A steady pass writes nothing.
    mark = kube.cp.audit_mark()
    assert kube.rehash().actions() == {"Rollout/web": "in-sync"}
    assert workload_writes(kube, mark) == []

    # A content change: exactly one new ReplicaSet, carrying the new hash, running every replica.
    kube.apply(configmap("web-config", {"mode": "green"}))
    rolled = kube.rehash()
    assert rolled.code == 0, rolled.stderr
    row = rolled.row("Rollout", "web")
    assert row["action"] == "rollout"
    wait_healthy(kube, "web")
    replicasets = rollout_replicasets(kube, "web")
    assert len(replicasets) == 2
    current = [rs for rs in replicasets if rs["status"].get("replicas", 0) == 2]
    assert [template_hash(rs["spec"]["template"]) for rs in current] == [row["hash"]]
    hashes = {p["metadata"]["labels"][HASH_LABEL] for p in pods(kube, "web")}
    assert hashes == {current[0]["metadata"]["labels"][HASH_LABEL]}

    # The next pass reads the Rollout's status: the rollout it started is complete; nothing more is written.
    mark = kube.cp.audit_mark()
    after = kube.rehash()
    assert after.actions() == {"Rollout/web": "in-sync"}, after.stdout
    assert after.row("Rollout", "web")["rollout_status"] == "complete"
    steady = kube.rehash()
    assert steady.actions() == {"Rollout/web": "in-sync"}
    assert "rollout_status" not in steady.row("Rollout", "web")  # finished: no longer watched
    # the finished record, once
    assert workload_writes(kube, mark) == [("patch", "rollouts", "web")]
    assert len(rollout_replicasets(kube, "web")) == 2


def test_a_workload_ref_rollout_restarts_its_pods_through_restart_at(kube: Kube) -> None:
    template_source = workload("Deployment", "web", pod_spec(configmaps=("app",)), replicas=0)
    del template_source["metadata"]["annotations"]  # only the Rollout is watched
    kube.apply(configmap("app", {"a": "1"}), configmap("other", {"a": "1"}), template_source)
    kube.apply(rollout("web-rollout", workload_ref="web"))
    wait_healthy(kube, "web-rollout")
    started = {p["metadata"]["uid"] for p in pods(kube, "web")}
    assert len(started) == 2
    replicasets = {rs["metadata"]["name"] for rs in rollout_replicasets(kube, "web-rollout")}
    assert len(replicasets) == 1
    deployment = kube.obj("Deployment", "web")

    # The references are the Deployment's template's; adoption restarts nothing.
    first = kube.rehash()
    assert first.actions() == {"Rollout/web-rollout": "adopt"}, first.stdout
    assert first.row("Rollout", "web-rollout")["configs"] == ["configmap/app"]
    mark = kube.cp.audit_mark()
    assert kube.rehash().actions() == {"Rollout/web-rollout": "in-sync"}
    kube.apply(configmap("other", {"a": "2"}))  # not referenced
    assert kube.rehash().actions() == {"Rollout/web-rollout": "in-sync"}
    assert workload_writes(kube, mark) == []
    assert {p["metadata"]["uid"] for p in pods(kube, "web")} == started

    # A change: kube-rehash sets the Rollout's spec.restartAt; the controller replaces every pod in place
    # (the same ReplicaSet) and records the restart; the Deployment is never written.
    kube.apply(configmap("app", {"a": "2"}))
    rolled = kube.rehash()
    assert rolled.actions() == {"Rollout/web-rollout": "rollout"}, rolled.stdout
    restart_at = get_rollout(kube, "web-rollout")["spec"]["restartAt"]
    wait_healthy(kube, "web-rollout")
    now_running = pods(kube, "web")
    assert len(now_running) == 2
    assert not {p["metadata"]["uid"] for p in now_running} & started, "a pod from before the change survived"
    assert all(started_at(p) >= started_at_text(restart_at) for p in now_running)
    assert {rs["metadata"]["name"] for rs in rollout_replicasets(kube, "web-rollout")} == replicasets
    assert kube.obj("Deployment", "web")["metadata"]["generation"] == deployment["metadata"]["generation"]
    assert kube.obj("Deployment", "web")["spec"] == deployment["spec"]

    after = kube.rehash()
    assert after.actions() == {"Rollout/web-rollout": "in-sync"}, after.stdout
    assert after.row("Rollout", "web-rollout")["rollout_status"] == "complete"


def started_at(pod: dict[str, Any]) -> datetime:
    return started_at_text(pod["metadata"]["creationTimestamp"])


def started_at_text(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def test_the_controller_honours_no_template_of_a_workload_ref_rollouts_own(kube: Kube) -> None:
    """Why kube-rehash restarts a workloadRef Rollout through spec.restartAt: the other writes that could roll
    it are a template on the Rollout, which the controller refuses, and a change of the Deployment's
    template, which does make a new ReplicaSet but writes an object another tool owns."""
    template_source = workload("Deployment", "api", pod_spec(configmaps=("app",)), replicas=0)
    del template_source["metadata"]["annotations"]
    kube.apply(configmap("app", {"a": "1"}), template_source, rollout("api-rollout", workload_ref="api"))
    wait_healthy(kube, "api-rollout")
    assert len(rollout_replicasets(kube, "api-rollout")) == 1

    stamped = {"metadata": {"annotations": {f"{PREFIX}/config-hash": "x"}}}
    kube.cp.api(
        "PATCH",
        f"{ROLLOUTS.format(ns=kube.ns)}/api-rollout",
        {"spec": {"template": stamped}},
        content_type="application/merge-patch+json",
    )

    def refused() -> bool:
        conditions = get_rollout(kube, "api-rollout").get("status", {}).get("conditions", [])
        return any(
            c["type"] == "InvalidSpec" and "template must be empty" in c.get("message", "")
            for c in conditions
        )

    wait_until("the controller to refuse the Rollout's own template", refused, 60)
    assert len(rollout_replicasets(kube, "api-rollout")) == 1
    kube.cp.api(
        "PATCH",
        f"{ROLLOUTS.format(ns=kube.ns)}/api-rollout",
        {"spec": {"template": None}},
        content_type="application/merge-patch+json",
    )
    wait_healthy(kube, "api-rollout")

    kube.patch("Deployment", "api", {"spec": {"template": stamped}})
    wait_until(
        "a ReplicaSet of the Deployment's new template",
        lambda: len(rollout_replicasets(kube, "api-rollout")) == 2,
        60,
    )
    wait_healthy(kube, "api-rollout")


def test_a_paused_rollout_is_not_effective_by_its_deadline_then_complete_once_the_controller_rolls_it(
    kube: Kube,
) -> None:
    """Verified restarts with the real controller: a Rollout paused (`spec.paused`) takes our template
    patch and replaces no pod, so by the rollout deadline the restart is not effective (held), with one
    RestartNotEffective Event and no second patch; resumed, the controller rolls it, and the next pass
    records it complete."""
    config = kube.tmp / "config.yaml"
    config.write_text("rolloutDeadline: 2s\n")
    kube.apply(
        configmap("web-config", {"mode": "blue"}), rollout("web", pod_spec(configmaps=("web-config",)))
    )
    wait_healthy(kube, "web")
    assert kube.rehash("--config", str(config)).actions() == {"Rollout/web": "adopt"}
    kube.cp.api(
        "PATCH",
        f"{ROLLOUTS.format(ns=kube.ns)}/web",
        {"spec": {"paused": True}},
        content_type="application/merge-patch+json",
    )
    old = {p["metadata"]["uid"] for p in pods(kube, "web")}
    kube.apply(configmap("web-config", {"mode": "green"}))
    assert kube.rehash("--config", str(config)).actions() == {"Rollout/web": "rollout"}
    time.sleep(2.5)  # past the rollout deadline
    mark = kube.cp.audit_mark()
    held = kube.rehash("--config", str(config)).row("Rollout", "web")
    assert (held["action"], held["rollout_status"]) == ("in-sync", "not-effective"), held
    events = kube.get("/api/v1/namespaces/{ns}/events?fieldSelector=reason%3DRestartNotEffective")["items"]
    assert [e["involvedObject"]["name"] for e in events] == ["web"]
    assert "it is paused" in events[0]["message"]
    assert {p["metadata"]["uid"] for p in pods(kube, "web")} == old  # the controller replaced no pod
    again = kube.rehash("--config", str(config)).row("Rollout", "web")
    assert again["rollout_status"] == "not-effective"
    assert workload_writes(kube, mark) == [("patch", "rollouts", "web")]  # its record, once; no new patch

    kube.cp.api(
        "PATCH",
        f"{ROLLOUTS.format(ns=kube.ns)}/web",
        {"spec": {"paused": False}},
        content_type="application/merge-patch+json",
    )
    wait_healthy(kube, "web")
    assert not {p["metadata"]["uid"] for p in pods(kube, "web")} & old
    done = kube.rehash("--config", str(config)).row("Rollout", "web")
    assert done["rollout_status"] == "complete", done
