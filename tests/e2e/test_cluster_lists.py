"""Whole-cluster passes list a source kind once, cluster-wide, when that is the cheaper way to learn
the identities of the referenced sources; everything else keeps the namespace surveys. Seen in the
server's request log."""

from __future__ import annotations

from typing import Any

import pytest

from reconcile.model.kinds import SECRETS
from reconcile.policy.reads import CLUSTER_SOURCES
from tests.e2e.conftest import Backend, configmap, deployment, env_from, secret
from tests.reliability.test_scopes_and_signals import limited_kubeconfig, rbac

CLUSTER_LIST_RATIO = CLUSTER_SOURCES.ratio

pytestmark = pytest.mark.sim_only("a cluster-wide pass: the real server holds other tests' namespaces")

CLUSTER_PATHS = {"configmap": "/api/v1/configmaps", "secret": "/api/v1/secrets"}


def seeded(cluster: Backend) -> None:
    """Two namespaces, each with a ConfigMap and a Secret that a workload reads, then one adopting pass."""
    for ns in ("shop", "blog"):
        cluster.add(
            configmap("app", {"a": "1"}, ns=ns),
            secret("db", {"password": "x"}, ns=ns),
            deployment("web", env_from("configmap", "app"), ns=ns),
            deployment("api", env_from("secret", "db"), ns=ns),
        )
    assert set(cluster.run().actions().values()) == {"adopt"}
    cluster.clear_log()


def requests_to(cluster: Backend, path: str) -> list[Any]:
    return [e for e in cluster.sim.log.entries(method="GET") if e.path == path]


def source_gets(cluster: Backend) -> list[str]:
    return [
        e.path for e in cluster.sim.log.entries(method="GET", path=r"/namespaces/[^/]+/(configmaps|secrets)/")
    ]


def test_a_steady_pass_learns_source_identities_from_one_cluster_list_per_kind(cluster: Backend) -> None:
    seeded(cluster)
    result = cluster.run()
    assert set(result.actions().values()) == {"in-sync"} and result.code == 0
    for kind, path in CLUSTER_PATHS.items():
        probe, listed = requests_to(cluster, path)
        assert probe.query["limit"] == "1" and "fieldSelector" not in probe.query
        assert (
            "as=PartialObjectMetadataList" in probe.accept and "as=PartialObjectMetadataList" in listed.accept
        )
        assert listed.query.get("fieldSelector") == (SECRETS.list_filter if kind == "secret" else None)
    assert source_gets(cluster) == [] and cluster.writes() == []


def test_a_changed_source_found_by_the_cluster_list_is_downloaded_and_rolled(cluster: Backend) -> None:
    seeded(cluster)
    cluster.edit("configmaps", "blog", "app", {"data": {"a": "2"}})
    assert cluster.run().actions() == {
        "Deployment/blog/api": "in-sync",
        "Deployment/blog/web": "rollout",
        "Deployment/shop/api": "in-sync",
        "Deployment/shop/web": "in-sync",
    }
    assert source_gets(cluster) == ["/api/v1/namespaces/blog/configmaps/app"]


def test_a_kind_with_many_unreferenced_objects_is_read_by_name(cluster: Backend) -> None:
    seeded(cluster)
    # 2 referenced ConfigMaps: more than 16 objects per referenced one makes the list the dearer way.
    cluster.add(*(configmap(f"other-{i}", {"k": "v"}, ns="shop") for i in range(2 * CLUSTER_LIST_RATIO)))
    cluster.clear_log()
    assert set(cluster.run().actions().values()) == {"in-sync"}
    [probe] = requests_to(cluster, CLUSTER_PATHS["configmap"])
    assert probe.query["limit"] == "1"
    assert sorted(p for p in source_gets(cluster) if "/configmaps/" in p) == [
        "/api/v1/namespaces/blog/configmaps/app",
        "/api/v1/namespaces/shop/configmaps/app",
    ]
    assert len(requests_to(cluster, CLUSTER_PATHS["secret"])) == 2  # Secrets are still listed


def test_a_referenced_helm_release_secret_is_read_by_name_after_the_filtered_list(cluster: Backend) -> None:
    release = secret("sh.helm.release.v1.web.v1", {"release": "x"})
    release["type"] = "helm.sh/release.v1"
    cluster.add(release, deployment("helm", env_from("secret", release["metadata"]["name"])))
    seeded(cluster)
    assert set(cluster.run().actions().values()) == {"in-sync"}
    assert source_gets(cluster) == ["/api/v1/namespaces/shop/secrets/sh.helm.release.v1.web.v1"]


def test_excluded_namespaces_are_filtered_out_of_the_cluster_list_by_the_server(cluster: Backend) -> None:
    cluster.add(configmap("app", {"a": "1"}, ns="kube-system"))
    seeded(cluster)
    config = cluster.config("excludeNamespaces: [kube-system]\n")
    assert set(cluster.run("--config", str(config)).actions().values()) == {"in-sync"}
    listed = requests_to(cluster, CLUSTER_PATHS["configmap"])[-1]
    assert listed.query["fieldSelector"] == "metadata.namespace!=kube-system"


def test_scoped_sharded_and_non_auto_passes_never_list_sources_cluster_wide(cluster: Backend) -> None:
    seeded(cluster)
    for args in (("-n", "shop"), ("--shard", "0/2"), ("--fetch", "get"), ("--fetch", "list")):
        cluster.clear_log()
        assert set(cluster.run(*args).actions().values()) <= {"in-sync"}, args
        assert not any(requests_to(cluster, path) for path in CLUSTER_PATHS.values()), args


def test_a_refused_cluster_list_falls_back_to_reads_by_name(cluster: Backend) -> None:
    seeded(cluster)
    docs = rbac(namespaces=None, workload_resources=("deployments", "statefulsets", "daemonsets"))
    docs[0]["rules"][4] = {"apiGroups": [""], "resources": ["configmaps", "secrets"], "verbs": ["get"]}
    cluster.sim.load_rbac(docs)
    cluster.clear_log()
    result = cluster.cli("run", "-o", "json", "--kubeconfig", limited_kubeconfig(cluster), kubeconfig=False)
    assert result.code == 0, result.stderr
    assert set(result.actions().values()) == {"in-sync"}
    refused = cluster.sim.log.entries(status=403)
    assert sorted(e.path for e in refused) == sorted(CLUSTER_PATHS.values())  # one probe each, no retry
    assert len(source_gets(cluster)) == 4
    assert "may not list secrets cluster-wide" in result.stderr and "fetch: get" in result.stderr


MANY = CLUSTER_SOURCES.blind_more_than + 1
"""More wanted sources of a kind than a `limit=1` size probe is worth: the list's first page tells."""


SPREAD = ("b", "c", "d")


def seeded_many(cluster: Backend) -> None:
    """MANY workloads, each reading a ConfigMap and a Secret of its own, then one adopting pass."""
    for i in range(MANY):
        ns = SPREAD[i % len(SPREAD)]
        refs = [{"configMapRef": {"name": f"cm-{i}"}}, {"secretRef": {"name": f"s-{i}"}}]
        spec = {"containers": [{"name": "app", "image": "app:1", "envFrom": refs}]}
        cluster.add(
            configmap(f"cm-{i}", {"k": "v"}, ns=ns),
            secret(f"s-{i}", {"k": "v"}, ns=ns),
            deployment(f"w-{i}", spec, ns=ns),
        )
    assert set(cluster.run().actions().values()) == {"adopt"}
    cluster.clear_log()


def test_many_wanted_sources_are_listed_cluster_wide_with_no_size_probe_before(cluster: Backend) -> None:
    seeded_many(cluster)
    result = cluster.run("-v")
    assert set(result.actions().values()) == {"in-sync"} and result.code == 0
    for kind, path in CLUSTER_PATHS.items():
        [listed] = requests_to(cluster, path)  # the list alone: its first page tells the size
        assert listed.query["limit"] == "500" and "as=PartialObjectMetadataList" in listed.accept
        assert listed.query.get("fieldSelector") == (SECRETS.list_filter if kind == "secret" else None)
    assert source_gets(cluster) == [] and cluster.writes() == []
    for kind in CLUSTER_PATHS:  # one page and no continue token: the whole list, whatever its selector
        assert f"{kind}s cluster-wide: list ({MANY} wanted of {MANY}: one list of 1 page(s))" in result.stderr


@pytest.mark.parametrize("unrelated_in", ["a", "z"])
def test_a_list_of_unknown_size_past_its_cap_leaves_the_rest_to_namespace_reads(
    cluster: Backend, unrelated_in: str
) -> None:
    """The Secrets list (a field selector: no size told) passes 16 objects per wanted one in its second
    page: it is read no further, the namespaces it showed in full keep what it showed, and the others are
    read by namespace, so a change behind the cut is still found. Secrets nobody references sort before
    every workload's namespace ("a": none shown in full) or after them ("z": all of them shown)."""
    seeded_many(cluster)
    unrelated = CLUSTER_LIST_RATIO * MANY + 50 - MANY
    cluster.add(*(secret(f"other-{i:04}", {"k": "v"}, ns=unrelated_in) for i in range(unrelated)))
    last = SPREAD[(MANY - 1) % len(SPREAD)]
    cluster.edit("secrets", last, f"s-{MANY - 1}", {"stringData": {"k": "changed"}})
    cluster.clear_log()
    result = cluster.run("-v")
    assert result.code == 0, result.stderr
    actions = result.actions()
    assert actions.pop(f"Deployment/{last}/w-{MANY - 1}") == "rollout"
    assert set(actions.values()) == {"in-sync"}
    listed = requests_to(cluster, CLUSTER_PATHS["secret"])
    assert [e.query.get("continue") is None for e in listed] == [True, False]  # page 3 never asked
    assert f"secrets cluster-wide: list ({MANY} wanted of a collection of unknown size" in result.stderr
    changed = f"/api/v1/namespaces/{last}/secrets/s-{MANY - 1}"
    by_name = [p for p in source_gets(cluster) if "/secrets/" in p]
    assert f"the list passed {CLUSTER_LIST_RATIO * MANY} objects" in result.stderr
    if unrelated_in == "a":
        assert "kept for the 0 namespaces it showed in full" in result.stderr
        assert len(by_name) == MANY + 1  # each wanted Secret's metadata, and the changed one's content
    else:
        assert f"kept for the {len(SPREAD)} namespaces it showed in full" in result.stderr
        assert by_name == [changed]  # its content only: the list showed every wanted Secret
