"""Restart by eviction on a real control plane: an operator-owned Deployment annotated
`kube-rehash.io/restart: evict` gets new pods through the Eviction API, its pod template untouched and no new
ReplicaSet, and a PodDisruptionBudget that wants every replica keeps every pod, the row naming it.

Why real: only the real deployment controller replaces an evicted pod, only kube-apiserver (with
kube-controller-manager's disruption controller) says whether a budget allows an eviction, and only the
audit log shows that the tool never deleted a pod and evicted only pods that started before the change.
"""

from __future__ import annotations

import time
from datetime import datetime
from typing import Any

from tests.real.conftest import PREFIX, Kube, configmap, pod_spec, wait_until, workload

SELECTOR = "/api/v1/namespaces/{ns}/pods?labelSelector=app%3Dweb"


def evicting(kube: Kube, *, operator: bool) -> dict[str, Any]:
    """The Deployment `web` (two replicas) in evict mode, owned by an `operator` object when asked."""
    kube.apply(configmap("web-config", {"mode": "blue"}))
    web = workload("Deployment", "web", pod_spec(configmaps=("web-config",)), replicas=2)
    web["metadata"]["annotations"][f"{PREFIX}/restart"] = "evict"
    if operator:  # a real object, so the garbage collector keeps the Deployment
        kube.apply(configmap("operator", {"kind": "Database"}))
        uid = kube.obj("ConfigMap", "operator")["metadata"]["uid"]
        web["metadata"]["ownerReferences"] = [
            {"apiVersion": "v1", "kind": "ConfigMap", "name": "operator", "uid": uid, "controller": True}
        ]
    kube.apply(web)
    kube.wait_settled("Deployment", "web")
    wait_until("two running pods", lambda: len(running(kube)) == 2)
    first = kube.rehash()
    assert first.actions() == {"Deployment/web": "adopt"}, first.stdout
    return kube.obj("Deployment", "web")


def running(kube: Kube) -> list[dict[str, Any]]:
    """The Deployment's pods that are not terminating, ready."""
    pods = kube.get(SELECTOR)["items"]
    return [
        p
        for p in pods
        if not p["metadata"].get("deletionTimestamp")
        and any(
            c["type"] == "Ready" and c["status"] == "True" for c in p.get("status", {}).get("conditions", [])
        )
    ]


def created(pod: dict[str, Any]) -> datetime:
    return datetime.fromisoformat(pod["metadata"]["creationTimestamp"].replace("Z", "+00:00"))


def change(kube: Kube) -> datetime:
    """Change the ConfigMap; the second of its change, as the API server recorded it."""
    kube.apply(configmap("web-config", {"mode": "green"}))
    times = [e["time"] for e in kube.obj("ConfigMap", "web-config")["metadata"]["managedFields"]]
    time.sleep(1.1)
    return max(datetime.fromisoformat(t.replace("Z", "+00:00")) for t in times)


def test_an_operator_owned_deployment_gets_new_pods_by_eviction_without_a_new_replicaset(kube: Kube) -> None:
    before = evicting(kube, operator=True)
    old = sorted(p["metadata"]["name"] for p in running(kube))
    replicasets = sorted(rs["metadata"]["name"] for rs in kube.replicasets("web"))
    changed = change(kube)
    mark = kube.cp.audit_mark()
    rows = []
    for _ in range(6):
        rows.append(kube.rehash().row("Deployment", "web"))
        if rows[-1]["action"] != "rollout":
            break
        wait_until("the evicted pod replaced and ready", lambda: len(running(kube)) == 2, 90)
    assert rows[-1]["action"] == "in-sync" and "pods restarted by eviction" in rows[-1]["reason"], rows
    assert [r["action"] for r in rows[:-1]] == ["rollout", "rollout"], rows  # one pod per pass
    pods = running(kube)
    assert len(pods) == 2 and all(created(p) > changed for p in pods)
    after = kube.obj("Deployment", "web")
    assert after["spec"]["template"] == before["spec"]["template"]
    assert sorted(rs["metadata"]["name"] for rs in kube.replicasets("web")) == replicasets
    ours = kube.cp.audit(since=mark, user="admin")
    assert not [e for e in ours if e.resource == "pods" and e.verb in ("delete", "deletecollection")]
    evicted = sorted(e.name for e in ours if e.uri.split("?")[0].endswith("/eviction"))
    assert evicted == old  # each pod that started before the change, once
    steady = kube.rehash().row("Deployment", "web")
    assert steady["action"] == "in-sync"


def test_a_budget_wanting_every_replica_keeps_every_pod_and_the_row_names_it(kube: Kube) -> None:
    kube.apply(
        {
            "apiVersion": "policy/v1",
            "kind": "PodDisruptionBudget",
            "metadata": {"name": "web-budget"},
            "spec": {"minAvailable": 2, "selector": {"matchLabels": {"app": "web"}}},
        }
    )
    evicting(kube, operator=False)

    def processed() -> bool:
        budget = kube.get("/apis/policy/v1/namespaces/{ns}/poddisruptionbudgets/web-budget")
        status = budget.get("status", {})
        return bool(
            status.get("observedGeneration") == budget["metadata"]["generation"]
            and status.get("currentHealthy") == 2
        )

    wait_until("the disruption controller to count the budget's pods", processed)
    pods = sorted(p["metadata"]["name"] for p in running(kube))
    change(kube)
    for _ in range(2):
        result = kube.rehash()
        row = result.row("Deployment", "web")
        assert (row["action"], result.code) == ("deferred", 0), result.stdout
        assert "disruption budget web-budget" in row["reason"], row["reason"]
    assert sorted(p["metadata"]["name"] for p in running(kube)) == pods


def test_an_on_delete_statefulset_gets_new_pods_by_eviction(kube: Kube) -> None:
    kube.apply(configmap("db-config", {"mode": "blue"}))
    db = workload(
        "StatefulSet",
        "db",
        pod_spec(configmaps=("db-config",)),
        replicas=2,
        updateStrategy={"type": "OnDelete"},
    )
    db["metadata"]["annotations"][f"{PREFIX}/restart"] = "evict"
    kube.apply(db)
    kube.wait_settled("StatefulSet", "db")
    assert kube.rehash().actions() == {"StatefulSet/db": "adopt"}
    revisions = len(kube.revisions("StatefulSet", "db"))
    kube.apply(configmap("db-config", {"mode": "green"}))
    changed = max(
        datetime.fromisoformat(e["time"].replace("Z", "+00:00"))
        for e in kube.obj("ConfigMap", "db-config")["metadata"]["managedFields"]
    )
    time.sleep(1.1)
    pods_path = "/api/v1/namespaces/{ns}/pods?labelSelector=app%3Ddb"
    rows = []
    for _ in range(6):
        rows.append(kube.rehash().row("StatefulSet", "db"))
        if rows[-1]["action"] != "rollout":
            break
        kube.wait_settled("StatefulSet", "db")
    assert rows[-1]["action"] == "in-sync" and len(rows) == 3, rows
    pods = kube.get(pods_path)["items"]
    assert len(pods) == 2 and all(created(p) > changed for p in pods)
    assert len(kube.revisions("StatefulSet", "db")) == revisions  # the template never changed
