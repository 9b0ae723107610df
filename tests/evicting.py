"""An operator-owned Deployment in evict mode, as the simulator holds it: its ReplicaSet and pods seeded
by hand (the simulator runs no controller), for tests/e2e/test_evict.py and the RBAC proof."""

from __future__ import annotations

import time
from typing import Any

from tests.e2e.conftest import Backend, configmap, deployment, env_from

EVICT = {"kube-rehash.io/watch": "true", "kube-rehash.io/restart": "evict"}
OPERATOR = [
    {"apiVersion": "db.example/v1", "kind": "Database", "name": "main", "uid": "op-1", "controller": True}
]


def owner(obj: dict[str, Any]) -> list[dict[str, Any]]:
    meta = obj["metadata"]
    return [
        {
            "apiVersion": obj["apiVersion"],
            "kind": obj["kind"],
            "name": meta["name"],
            "uid": meta["uid"],
            "controller": True,
        }
    ]


def pod(name: str, rs: dict[str, Any], labels: dict[str, str] | None = None) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": name,
            "namespace": "shop",
            "labels": labels or {"app": "web"},
            "ownerReferences": owner(rs),
        },
        "spec": {"containers": [{"name": "app", "image": "app:1"}]},
        "status": {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]},
    }


def seed(cluster: Backend, replicas: int = 3, *, stray: bool = True, **spec: Any) -> dict[str, Any]:
    """An operator-owned Deployment in evict mode, its ReplicaSet, its pods, and a pod it does not own."""
    cluster.add(configmap("app", {"a": "1"}))
    web = deployment("web", env_from("configmap", "app"), annotations=EVICT, replicas=replicas, **spec)
    web["metadata"]["ownerReferences"] = OPERATOR
    cluster.add(web)
    stored = cluster.get("deployments", "shop", "web")
    rs = {
        "apiVersion": "apps/v1",
        "kind": "ReplicaSet",
        "metadata": {
            "name": "web-1",
            "namespace": "shop",
            "labels": {"app": "web"},
            "ownerReferences": owner(stored),
        },
        "spec": {"selector": {"matchLabels": {"app": "web"}}, "template": stored["spec"]["template"]},
    }
    cluster.add(rs)
    rs = cluster.get("replicasets", "shop", "web-1")
    cluster.add(*(pod(f"web-1-{i}", rs) for i in range(replicas)))
    if stray:
        cluster.add(pod("stray", {**rs, "metadata": {**rs["metadata"], "uid": "someone-else"}}))
    return rs


def change(cluster: Backend) -> None:
    cluster.edit("configmaps", "shop", "app", {"data": {"a": "2"}})
    time.sleep(1.1)  # pods created from now on start in a later second than the change


def pods(cluster: Backend) -> list[str]:
    return sorted(p["metadata"]["name"] for p in cluster.list("pods", "shop"))
