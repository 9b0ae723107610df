"""The audit trail on the real control plane: `kubectl rollout history` explains kube-rehash's revisions,
its Events name the changed Secret in `related`, and the audit log shows its field manager and User-Agent.

Why: only the real Deployment and StatefulSet controllers copy `kubernetes.io/change-cause` from the
workload onto the ReplicaSet or ControllerRevision that `kubectl rollout history` reads, and only the real
kube-apiserver converts an events.k8s.io/v1 Event and records each request's field manager.
"""

from __future__ import annotations

import json
from typing import Any

from reconcile import __version__
from tests.real.conftest import Kube, configmap, secret, wait_until, workload

CAUSE = "kubernetes.io/change-cause"
EXPECTED = "kube-rehash: secret/db changed (keys: password)"


def keyed_spec() -> dict[str, Any]:
    """One container reading the key `password` of Secret db and the whole ConfigMap app."""
    env = [{"name": "PASSWORD", "valueFrom": {"secretKeyRef": {"name": "db", "key": "password"}}}]
    container = {
        "name": "app",
        "image": "registry.invalid/app:1",
        "env": env,
        "envFrom": [{"configMapRef": {"name": "app"}}],
    }
    return {"containers": [container]}


def history(kube: Kube, kind: str, name: str) -> list[list[str]]:
    """`kubectl rollout history`'s rows after its header: [revision, change cause]."""
    out = kube.kubectl("rollout", "history", f"{kind.lower()}/{name}", "-n", kube.ns)
    lines = [line for line in out.splitlines() if line and line[0].isdigit()]
    return [line.split(None, 1) for line in lines]


def test_rollout_history_events_and_the_audit_log_name_the_changed_secret_and_kube_rehash(kube: Kube) -> None:
    kube.apply(
        configmap("app", {"mode": "blue"}),
        secret("db", {"password": "s3cr3t-before", "user": "app"}),
        workload("Deployment", "web", keyed_spec()),
        workload("StatefulSet", "store", keyed_spec()),
    )
    kube.wait_settled("Deployment", "web")
    assert kube.rehash().actions() == {"Deployment/web": "adopt", "StatefulSet/store": "adopt"}
    kube.apply(secret("db", {"password": "s3cr3t-after", "user": "app"}))
    mark = kube.cp.audit_mark()
    rolled = kube.rehash()
    assert rolled.actions() == {"Deployment/web": "rollout", "StatefulSet/store": "rollout"}, rolled.stderr

    kube.wait_settled("Deployment", "web")
    assert history(kube, "Deployment", "web") == [["1", "<none>"], ["2", EXPECTED]]
    newest = max(
        kube.replicasets("web"),
        key=lambda rs: int(rs["metadata"]["annotations"]["deployment.kubernetes.io/revision"]),
    )
    assert newest["metadata"]["annotations"][CAUSE] == EXPECTED
    kube.wait_observed("StatefulSet", "store")
    wait_until(
        "the StatefulSet's second revision", lambda: len(kube.revisions("StatefulSet", "store")) == 2, 30
    )
    assert history(kube, "StatefulSet", "store") == [["1", "<none>"], ["2", EXPECTED]]

    db = kube.obj("Secret", "db")
    events = kube.get("/apis/events.k8s.io/v1/namespaces/{ns}/events")["items"]
    ours = sorted(
        (e for e in events if e.get("reportingController") == "kube-rehash"),
        key=lambda e: e["regarding"]["name"],
    )
    assert [(e["reason"], e["action"], e["regarding"]["name"]) for e in ours] == [
        ("ConfigChanged", "Restart", "store"),
        ("ConfigChanged", "Restart", "web"),
    ]
    for event in ours:
        assert event["related"] == {
            "apiVersion": "v1",
            "kind": "Secret",
            "namespace": kube.ns,
            "name": "db",
            "uid": db["metadata"]["uid"],
        }
        assert event["note"] == "kube-rehash rolled out: secret/db changed"

    kube.cp.sync_audit()
    logged = [json.loads(line) for line in kube.cp.audit_lines()[mark:] if line.strip()]
    ours_logged = [
        e
        for e in logged
        if e.get("stage") == "ResponseComplete" and e.get("userAgent", "").startswith("kube-rehash/")
    ]
    writes = [e for e in ours_logged if e["verb"] in ("create", "patch", "update", "delete")]
    assert {(e["verb"], e["objectRef"]["resource"], e["objectRef"].get("apiGroup", "")) for e in writes} == {
        ("patch", "deployments", "apps"),
        ("patch", "statefulsets", "apps"),
        ("create", "events", "events.k8s.io"),
    }
    assert all("fieldManager=kube-rehash" in e["requestURI"] for e in writes)
    assert {e["userAgent"] for e in ours_logged} == {f"kube-rehash/{__version__}"}
    managers = {m["manager"] for m in kube.obj("Deployment", "web")["metadata"]["managedFields"]}
    assert "kube-rehash" in managers
    for e in logged:
        assert "s3cr3t" not in json.dumps(e.get("requestObject") or {})
