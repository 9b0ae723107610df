"""Argo Rollouts with `spec.workloadRef`, end to end on the simulator (no Argo controller there): the
references come from the referenced Deployment's template; a change rolls the Rollout by setting its
`spec.restartAt` (and never touches the Deployment); a missing Deployment fails that Rollout alone."""

from __future__ import annotations

from typing import Any

import pytest

from tests.e2e.conftest import Backend, configmap, deployment, env_from

pytestmark = pytest.mark.sim_only(
    "kube-rehash's writes; tests/real/test_argo_rollouts.py runs the real Argo Rollouts controller"
)


def referencing(name: str, target: str) -> dict[str, Any]:
    return {
        "apiVersion": "argoproj.io/v1alpha1",
        "kind": "Rollout",
        "metadata": {"name": name, "namespace": "shop", "annotations": {"kube-rehash.io/watch": "true"}},
        "spec": {
            "replicas": 2,
            "selector": {"matchLabels": {"app": target}},
            "workloadRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": target},
            "strategy": {"canary": {"steps": [{"setWeight": 50}]}},
        },
    }


def seeded(cluster: Backend) -> None:
    template_source = deployment("web", env_from("configmap", "app"), annotations={}, replicas=0)
    cluster.add(configmap("app", {"a": "1"}), configmap("other", {"a": "1"}), template_source)
    cluster.add(referencing("web-rollout", "web"))
    first = cluster.run()
    assert first.actions() == {"Rollout/shop/web-rollout": "adopt"}, first.stdout
    assert first.row("Rollout", "web-rollout")["configs"] == ["configmap/app"]


def test_a_change_of_the_referenced_templates_source_sets_restart_at_once(cluster: Backend) -> None:
    seeded(cluster)
    deployment_before = cluster.get("deployments", "shop", "web")
    assert cluster.run().actions() == {"Rollout/shop/web-rollout": "in-sync"}
    cluster.edit("configmaps", "shop", "app", {"data": {"a": "2"}})
    rolled = cluster.run()
    assert rolled.actions() == {"Rollout/shop/web-rollout": "rollout"}, rolled.stdout
    rollout = cluster.get("rollouts", "shop", "web-rollout")
    assert rollout["spec"]["restartAt"].endswith("Z")
    assert "template" not in rollout["spec"]
    assert (
        rollout["metadata"]["annotations"]["kube-rehash.io/config-hash"]
        == rolled.row("Rollout", "web-rollout")["hash"]
    )
    after = cluster.get("deployments", "shop", "web")
    assert after["spec"] == deployment_before["spec"]
    assert cluster.run().actions() == {"Rollout/shop/web-rollout": "in-sync"}
    cluster.edit("configmaps", "shop", "other", {"data": {"a": "2"}})
    assert cluster.run().actions() == {"Rollout/shop/web-rollout": "in-sync"}


def test_a_new_reference_in_the_deployments_template_counts_at_once(cluster: Backend) -> None:
    seeded(cluster)
    cluster.mutate(
        "deployments",
        "shop",
        "web",
        lambda d: d["spec"]["template"]["spec"]["containers"][0]["envFrom"].append(
            {"configMapRef": {"name": "other"}}
        ),
    )
    result = cluster.run()
    assert result.actions() == {"Rollout/shop/web-rollout": "rollout"}
    assert result.row("Rollout", "web-rollout")["configs"] == ["configmap/app", "configmap/other"]


def test_a_missing_referenced_deployment_fails_that_rollout_alone(cluster: Backend) -> None:
    cluster.add(configmap("app", {"a": "1"}), deployment("api", env_from("configmap", "app")))
    cluster.add(referencing("ghost", "nowhere"))
    result = cluster.run()
    assert result.code == 1
    assert result.actions() == {"Rollout/shop/ghost": "failed", "Deployment/shop/api": "adopt"}
    assert "workloadRef Deployment/nowhere" in result.row("Rollout", "ghost")["reason"]


def test_explain_shows_the_referenced_templates_sources(cluster: Backend) -> None:
    seeded(cluster)
    explained = cluster.cli("explain", "rollout/web-rollout", "-n", "shop", "-o", "json")
    assert explained.code == 0, explained.stderr
    assert "configmap/app" in explained.stdout and "configmap/other" not in explained.stdout
