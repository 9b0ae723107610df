"""Label-selected sources (`kube-rehash.io/configmap-selector`, `secret-selector`), end to end: every
matching ConfigMap/Secret of the workload's namespace is in its hash with the pod spec's references, so a
member that changes, appears or disappears rolls it once and a non-member rolls nothing; an invalid
selector fails that workload only; `explain` lists the members; and each selector costs one metadata list
of its namespace per pass, shared by the workloads using it."""

from __future__ import annotations

from typing import Any

import pytest

from tests.e2e.conftest import Backend, configmap, deployment, env_from, secret, template_hash

SELECTOR = "kube-rehash.io/configmap-selector"
DASHBOARD = {"grafana_dashboard": "1"}


def dashboards(cluster: Backend, *names: str) -> None:
    cluster.add(*(configmap(n, {"json": f"{n}-1"}, labels=DASHBOARD) for n in names))


def grafana(name: str = "grafana", annotations: dict[str, str] | None = None) -> dict[str, Any]:
    return deployment(
        name, env_from("configmap", "app"), annotations=annotations or {SELECTOR: "grafana_dashboard=1"}
    )


def seeded(cluster: Backend) -> str:
    """Two dashboards, a non-member, the app's own ConfigMap, and Grafana adopted: its template hash."""
    dashboards(cluster, "cpu", "memory")
    cluster.add(
        configmap("app", {"a": "1"}), configmap("other", {"x": "1"}, labels={"grafana_dashboard": "0"})
    )
    cluster.add(grafana())
    first = cluster.run()
    assert first.code == 0 and first.actions() == {"Deployment/shop/grafana": "adopt"}, first.stdout
    assert first.row("Deployment", "grafana")["configs"] == [
        "configmap/app",
        "configmap/cpu",
        "configmap/memory",
    ]
    return first.row("Deployment", "grafana")["hash"]  # type: ignore[no-any-return]


def rolls_once(cluster: Backend) -> dict[str, Any]:
    """The next pass rolls Grafana, the one after it is in sync: its rollout row."""
    rolled = cluster.run()
    assert rolled.actions() == {"Deployment/shop/grafana": "rollout"}, rolled.stdout
    cluster.wait_rolled_out("deployments", "shop", "grafana")
    assert cluster.run().actions() == {"Deployment/shop/grafana": "in-sync"}
    return rolled.row("Deployment", "grafana")


def test_a_member_that_changes_rolls_once(cluster: Backend) -> None:
    seeded(cluster)
    cluster.edit("configmaps", "shop", "memory", {"data": {"json": "memory-2"}})
    row = rolls_once(cluster)
    assert "configmap/memory" in row["reason"]
    assert template_hash(cluster.get("deployments", "shop", "grafana")) == row["hash"]


def test_a_member_that_appears_rolls_once(cluster: Backend) -> None:
    seeded(cluster)
    dashboards(cluster, "network")
    row = rolls_once(cluster)
    assert "configmap/network" in row["configs"]


def test_a_member_that_loses_its_label_rolls_once(cluster: Backend) -> None:
    seeded(cluster)
    cluster.edit("configmaps", "shop", "cpu", {"metadata": {"labels": {"grafana_dashboard": None}}})
    row = rolls_once(cluster)
    assert row["configs"] == ["configmap/app", "configmap/memory"]


@pytest.mark.sim_only("deletes a ConfigMap (the backends share no delete helper)")
def test_a_member_that_is_deleted_rolls_once(cluster: Backend) -> None:
    seeded(cluster)
    cluster.sim.store.delete("configmaps", "shop", "memory")
    row = rolls_once(cluster)
    assert row["configs"] == ["configmap/app", "configmap/cpu"]


def test_a_change_to_a_non_member_rolls_nothing(cluster: Backend) -> None:
    stored = seeded(cluster)
    cluster.edit("configmaps", "shop", "other", {"data": {"x": "2"}})
    assert cluster.run().actions() == {"Deployment/shop/grafana": "in-sync"}
    assert (
        cluster.get("deployments", "shop", "grafana")["metadata"]["annotations"]["kube-rehash.io/config-hash"]
        == stored
    )


def test_the_pod_spec_references_still_count(cluster: Backend) -> None:
    seeded(cluster)
    cluster.edit("configmaps", "shop", "app", {"data": {"a": "2"}})
    assert "configmap/app" in rolls_once(cluster)["reason"]


def test_secret_selector_selects_secrets(cluster: Backend) -> None:
    cluster.add(
        secret("tls-a", {"crt": "1"}, labels={"certs": "edge"}),
        secret("tls-b", {"crt": "1"}, labels={"certs": "internal"}),
        deployment("edge", annotations={"kube-rehash.io/secret-selector": "certs in (edge)"}),
    )
    first = cluster.run()
    assert first.row("Deployment", "edge")["configs"] == ["secret/tls-a"]
    cluster.edit("secrets", "shop", "tls-b", {"stringData": {"crt": "2"}})
    assert cluster.run().actions() == {"Deployment/shop/edge": "in-sync"}
    cluster.edit("secrets", "shop", "tls-a", {"stringData": {"crt": "2"}})
    assert cluster.run().actions() == {"Deployment/shop/edge": "rollout"}


def test_an_invalid_selector_fails_that_workload_and_the_pass_goes_on(cluster: Backend) -> None:
    cluster.add(
        configmap("app", {"a": "1"}),
        grafana("broken", {SELECTOR: "grafana_dashboard in (1"}),
        deployment("web", env_from("configmap", "app")),
    )
    result = cluster.run()
    assert result.code == 1
    assert result.actions() == {"Deployment/shop/broken": "failed", "Deployment/shop/web": "adopt"}
    reason = result.row("Deployment", "broken")["reason"]
    assert SELECTOR in reason and "invalid label selector" in reason
    assert (
        "kube-rehash.io/config-hash"
        not in cluster.get("deployments", "shop", "broken")["metadata"]["annotations"]
    )
    assert cluster.run().actions()["Deployment/shop/broken"] == "failed"  # said every pass


def test_explain_lists_the_members(cluster: Backend) -> None:
    seeded(cluster)
    explained = cluster.cli("explain", "deployment/grafana", "-n", "shop", "-o", "json")
    assert explained.code == 0, explained.stderr
    body = explained.stdout
    assert all(f"configmap/{n}" in body for n in ("app", "cpu", "memory")) and "configmap/other" not in body


@pytest.mark.sim_only("counts the requests of one pass in the simulator's request log")
def test_one_list_per_namespace_and_selector_shared_by_its_workloads(cluster: Backend) -> None:
    seeded(cluster)
    cluster.add(grafana("grafana-2"), grafana("grafana-3"))
    cluster.run()
    cluster.clear_log()
    steady = cluster.run()
    assert set(steady.actions().values()) == {"in-sync"}
    selector_lists = [r for r in cluster.requests("GET") if r.query.get("labelSelector")]
    assert [(r.path, r.query["labelSelector"]) for r in selector_lists] == [
        ("/api/v1/namespaces/shop/configmaps", "grafana_dashboard=1")
    ]


def test_a_secret_selector_under_fetch_get_fails_its_workload_saying_why(cluster: Backend) -> None:
    cluster.add(
        secret("tls-a", {"crt": "1"}, labels={"certs": "edge"}),
        deployment("edge", annotations={"kube-rehash.io/secret-selector": "certs=edge"}),
    )
    result = cluster.run("--fetch", "get")
    assert result.code == 1 and result.actions() == {"Deployment/shop/edge": "failed"}
    assert "fetch: get never lists Secrets" in result.row("Deployment", "edge")["reason"]
    assert not [r for r in cluster.requests("GET") if r.path.endswith("/secrets")]
