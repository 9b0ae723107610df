"""Waves end to end: two Deployments sharing a ConfigMap roll in wave order, across passes, and a change
of a source they do not share is never held. On the simulator (no controller) the lower wave's rollout is
completed by writing its status by hand; on the real server its controller completes it."""

from __future__ import annotations

import json
from typing import Any

from tests.e2e.conftest import Backend, configmap, deployment, env_from, template_hash

WAVE = "kube-rehash.io/wave"


def watched(wave: str) -> dict[str, str]:
    return {"kube-rehash.io/watch": "true", WAVE: wave}


def seed(cluster: Backend) -> None:
    cluster.add(configmap("app", {"a": "1"}), configmap("other", {"b": "1"}))
    cluster.add(deployment("db", env_from("configmap", "app"), annotations=watched("0")))
    cluster.add(deployment("api", env_from("configmap", "app"), annotations=watched("1")))
    cluster.add(deployment("cache", env_from("configmap", "other"), annotations=watched("5")))


def finish(cluster: Backend, name: str) -> None:
    """The workload's controller completes its rollout (by hand on the simulator, which runs none)."""
    if cluster.name != "sim":
        cluster.wait_rolled_out("deployments", "shop", name)
        return

    def set_status(obj: dict[str, Any]) -> None:
        obj["status"] = {
            "observedGeneration": obj["metadata"]["generation"],
            "replicas": 1,
            "updatedReplicas": 1,
            "readyReplicas": 1,
            "availableReplicas": 1,
        }

    cluster.mutate("deployments", "shop", name, set_status)


def rows(result: Any) -> dict[str, dict[str, Any]]:
    return {w["name"]: w for w in result.report["workloads"]}


def test_a_higher_wave_rolls_only_after_the_lower_waves_rollout_is_complete(cluster: Backend) -> None:
    seed(cluster)
    assert set(cluster.run().actions().values()) == {"adopt"}
    api_template = template_hash(cluster.get("deployments", "shop", "api"))
    cluster.edit("configmaps", "shop", "app", {"data": {"a": "2"}})
    cluster.edit("configmaps", "shop", "other", {"data": {"b": "2"}})

    first = rows(cluster.run())
    assert first["db"]["action"] == "rollout" and first["cache"]["action"] == "rollout"
    assert first["api"]["action"] == "deferred"
    assert first["api"]["reason"].startswith("wave 1 waits for Deployment/db (wave 0)"), first["api"]
    assert template_hash(cluster.get("deployments", "shop", "api")) == api_template

    plan = rows(cluster.cli("plan", "-o", "json"))
    assert plan["api"]["action"] == "deferred" and "Deployment/db (wave 0)" in plan["api"]["reason"]
    explained = json.loads(cluster.cli("explain", "deployment/api", "-n", "shop", "-o", "json").stdout)
    assert (explained["action"], explained["reason"]) == (plan["api"]["action"], plan["api"]["reason"])

    finish(cluster, "db")
    passes = []
    for _ in range(3):
        passes.append(rows(cluster.run()))
        if passes[-1]["api"]["action"] != "deferred":
            break
    assert passes[-1]["api"]["action"] == "rollout", passes
    assert all(p["db"]["action"] == "in-sync" for p in passes)
    assert template_hash(cluster.get("deployments", "shop", "api")) != api_template


def test_a_change_the_lower_wave_does_not_share_is_never_held(cluster: Backend) -> None:
    seed(cluster)
    cluster.run()
    cluster.edit("configmaps", "shop", "app", {"data": {"a": "2"}})
    assert rows(cluster.run())["db"]["action"] == "rollout"
    cluster.edit("configmaps", "shop", "other", {"data": {"b": "2"}})
    result = rows(cluster.run())
    assert result["cache"]["action"] == "rollout", result["cache"]  # wave 5, but shares nothing with db
    if cluster.name == "sim":  # no controller: db's rollout is still progressing and holds api
        assert result["api"]["action"] == "deferred" and "is progressing" in result["api"]["reason"]
