"""A light streamed pass plans from its sample, the first namespaces in key order. When those are in sync
and the namespaces after them were never seen (a first install its budget cut, which adopted a stretch of
namespaces), the walk lists the heavy kind whole from where it is, instead of reading each namespace's
specs with a request of its own (pipeline/midway.py), and decides exactly what a held pass decides."""

from __future__ import annotations

from typing import Any

import pytest

from tests.e2e.conftest import Backend, configmap, deployment, env_from

pytestmark = pytest.mark.sim_only("a cluster-wide pass: the real server holds other tests' namespaces")

STREAM = {"KUBE_REHASH_STREAM_ABOVE": "0"}
NAMESPACES = [f"n{i:02}" for i in range(30)]
ADOPTED = NAMESPACES[:5]
PER_NAMESPACE = 3


def seed(cluster: Backend) -> None:
    for ns in NAMESPACES:
        cluster.add(configmap("app", {"v": "1"}, ns=ns))
        cluster.add(
            *(deployment(f"web-{i}", env_from("configmap", "app"), ns=ns) for i in range(PER_NAMESPACE))
        )


def rows(result: Any) -> list[tuple[Any, ...]]:
    assert result.code == 0, result.stderr
    fields = ("kind", "namespace", "name", "action", "reason", "hash")
    return sorted(tuple(w.get(f) for f in fields) for w in result.report["workloads"])


def deployment_reads(cluster: Backend) -> tuple[list[bool], set[str]]:
    """The cluster-wide Deployment lists in order (whether metadata-only), and the namespaces whose
    Deployments were read by a request of their own."""
    cluster_wide: list[bool] = []
    namespaced: set[str] = set()
    for e in cluster.requests("GET"):
        if e.path == "/apis/apps/v1/deployments" and "continue" not in e.query:
            cluster_wide.append("as=PartialObjectMetadataList" in e.accept)
        elif e.path.startswith("/apis/apps/v1/namespaces/") and "/deployments" in e.path:
            namespaced.add(e.path.split("/")[5])
    return cluster_wide, namespaced


def test_a_light_walk_that_meets_unseen_namespaces_lists_their_kind_whole_and_decides_as_a_held_pass(
    cluster: Backend,
) -> None:
    seed(cluster)
    for ns in ADOPTED:
        assert set(cluster.run("-n", ns).actions().values()) == {"adopt"}
    held = cluster.run("--dry-run", "client")
    cluster.clear_log()
    streamed = cluster.run("-v", "--dry-run", "client", env=STREAM)
    assert "one listing of the workloads: yes" in streamed.stderr
    assert "deployments listed whole from here on" in streamed.stderr
    assert rows(streamed) == rows(held)
    actions = {(r[1], r[3]) for r in rows(streamed)}
    assert actions == {(ns, "in-sync") for ns in ADOPTED} | {(ns, "adopt") for ns in NAMESPACES[5:]}

    cluster_wide, namespaced = deployment_reads(cluster)
    assert cluster_wide == [True, False]  # the listing's metadata, then the whole list opened midway
    # Reads per namespace until the rate of them says the whole list is cheaper, none after it.
    assert namespaced and namespaced <= set(NAMESPACES[5:20]), namespaced

    adopted = cluster.run(env=STREAM)
    assert rows(adopted) == rows(held)
    steady = cluster.run("-v", env=STREAM)
    assert {r[3] for r in rows(steady)} == {"in-sync"}
    assert "listed whole from here on" not in steady.stderr
