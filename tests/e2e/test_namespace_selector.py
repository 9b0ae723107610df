"""`namespaceSelector`: a pass reconciles only the namespaces whose labels match, reads their labels with
one list per pass, writes nothing elsewhere, and is refused (exit 2) in a namespaced pass.

Simulator only: the real backend scopes every pass to the test's namespaces with `-n` (other tests'
namespaces share that server), and a namespaced pass is exactly what the selector refuses."""

from __future__ import annotations

from typing import Any

import pytest

from tests.e2e.conftest import Backend, configmap, deployment, env_from

pytestmark = pytest.mark.sim_only("a cluster-wide pass: the real backend scopes each pass with -n")


def namespace(name: str, **labels: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name, "labels": labels}}


def seed(cluster: Backend) -> None:
    """Three teams' namespaces: payments (in scope), search (labelled out), legacy (no label)."""
    cluster.add(
        namespace("payments", team="payments", reload="enabled"),
        namespace("search", team="search", reload="disabled"),
        namespace("legacy"),
    )
    for ns in ("payments", "search", "legacy"):
        cluster.add(
            configmap("app", {"a": "1"}, ns=ns), deployment("web", env_from("configmap", "app"), ns=ns)
        )


def test_only_workloads_of_matching_namespaces_are_reconciled(cluster: Backend) -> None:
    seed(cluster)
    first = cluster.run("--namespace-selector", "reload=enabled")
    assert first.code == 0, first.stderr
    assert first.actions() == {"Deployment/payments/web": "adopt"}
    for ns in ("payments", "search", "legacy"):
        cluster.edit("configmaps", ns, "app", {"data": {"a": "2"}})
    cluster.clear_log()
    second = cluster.run("--namespace-selector", "reload=enabled")
    assert second.actions() == {"Deployment/payments/web": "rollout"}
    assert {w.path.split("/namespaces/")[1].split("/")[0] for w in cluster.writes()} == {
        "payments"
    }  # nothing written elsewhere
    namespace_lists = [r for r in cluster.requests("GET") if r.path == "/api/v1/namespaces"]
    assert len(namespace_lists) == 1 and namespace_lists[0].query.get("labelSelector") == "reload=enabled"


def test_set_based_selector_and_exclusions_intersect(cluster: Backend) -> None:
    seed(cluster)
    config = cluster.config(
        'namespaceSelector: "team in (payments,search),reload"\nexcludeNamespaces: [search]\n'
    )
    result = cluster.run("--config", str(config))
    assert result.actions() == {"Deployment/payments/web": "adopt"}
    negated = cluster.run("--namespace-selector", "!team")
    assert negated.actions() == {"Deployment/legacy/web": "adopt"}
    assert cluster.exists("deployments", "search", "web")
    assert "kube-rehash.io/config-hash" not in (
        cluster.get("deployments", "search", "web")["metadata"].get("annotations") or {}
    )


def test_a_selector_matching_no_namespace_reconciles_nothing(cluster: Backend) -> None:
    seed(cluster)
    result = cluster.run("--namespace-selector", "team=nobody")
    assert result.code == 0 and result.report["workloads"] == []
    assert cluster.writes() == []


def test_refused_in_a_namespaced_pass(cluster: Backend) -> None:
    seed(cluster)
    result = cluster.cli("run", "-n", "payments", "--namespace-selector", "reload=enabled")
    assert result.code == 2
    assert "namespaceSelector" in result.stderr and "namespaced pass" in result.stderr
    assert cluster.requests() == []


@pytest.mark.parametrize("selector", ["team in (a", "team=a,,b", "a b", "team=@bad"])
def test_invalid_selector_syntax_exits_2_naming_the_field(cluster: Backend, selector: str) -> None:
    result = cluster.cli("run", "--namespace-selector", selector)
    assert result.code == 2, result.stderr
    assert "--namespace-selector" in result.stderr
    env = cluster.cli("run", env={"KUBE_REHASH_NAMESPACE_SELECTOR": selector})
    assert env.code == 2 and "KUBE_REHASH_NAMESPACE_SELECTOR" in env.stderr
    assert cluster.requests() == []


def test_a_streamed_pass_keeps_to_the_selected_namespaces(cluster: Backend) -> None:
    seed(cluster)
    config = cluster.config("streamAbove: 1\n")  # hold no listing: walk namespace by namespace
    result = cluster.run("--config", str(config), "--namespace-selector", "team")
    assert result.code == 0, result.stderr
    assert result.actions() == {"Deployment/payments/web": "adopt", "Deployment/search/web": "adopt"}
    assert {w.path.split("/namespaces/")[1].split("/")[0] for w in cluster.writes()} == {"payments", "search"}
