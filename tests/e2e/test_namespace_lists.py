"""A large namespace is cut into several batches; reading its sources must not cost once per batch.

At the benchmark's size (80% of a cluster in one namespace), every batch of 50 workloads listing the
namespace's ConfigMaps and Secrets again, with content at first sight, would move 741 MB in one first pass.
So a batch reads content by name unless the namespace holds few objects per wanted one, and a namespace's
metadata list serves all of its batches in the pass. A namespace's size is not probed first: the first page
of its list asks for at most the bound's objects and tells the size (pipeline/bounded_list.py). Counted in
the simulator's request log.
"""

from __future__ import annotations

from typing import Any

import pytest

from reconcile.policy.reads import BOUNDS, Read
from reconcile.policy.triage import BATCH_SIZE
from tests.e2e.conftest import Backend, configmap, deployment, env_from

CONTENT_LIST_RATIO = BOUNDS[Read.SOURCE_CONTENT].ratio
METADATA_LIST_RATIO = BOUNDS[Read.SOURCE_METADATA].ratio

pytestmark = pytest.mark.sim_only("counts list pages and GETs in the simulator's request log")

NS = "big"
WORKLOADS = 3 * BATCH_SIZE - 10  # three batches
# Unreferenced ConfigMaps beside the referenced ones: a batch's content list would move far more than
# it uses, while one metadata list for the whole pass stays cheaper than a GET per referenced source.
UNREFERENCED = 4 * WORKLOADS
COLLECTION = f"/api/v1/namespaces/{NS}/configmaps"
UNLIMITED = {"KUBE_REHASH_QPS": "0"}
# A sparser namespace: more than 16 objects per wanted one of a batch.
SPARSE = CONTENT_LIST_RATIO * BATCH_SIZE + 1 - WORKLOADS


def seed(cluster: Backend, unreferenced: int = UNREFERENCED) -> None:
    cluster.add(*(configmap(f"cm-{i:03d}", {"k": str(i)}, ns=NS) for i in range(WORKLOADS)))
    cluster.add(*(configmap(f"other-{i:03d}", {"k": "v"}, ns=NS) for i in range(unreferenced)))
    cluster.add(
        *(deployment(f"app-{i:03d}", env_from("configmap", f"cm-{i:03d}"), ns=NS) for i in range(WORKLOADS))
    )


def collection_reads(cluster: Backend) -> list[Any]:
    """Every request for the namespace's ConfigMap collection (list pages)."""
    return [e for e in cluster.sim.log.entries(method="GET") if e.path == COLLECTION]


def configmap_gets(cluster: Backend) -> list[str]:
    return [e.path for e in cluster.sim.log.entries(method="GET") if e.path.startswith(COLLECTION + "/")]


@pytest.mark.slow
def test_first_sight_in_a_sparse_namespace_reads_content_by_name_after_one_bounded_page(
    cluster: Backend,
) -> None:
    """No content list wasting most of what it moves: the first batch's list asks for at most 16 objects per
    wanted one; its first page shows the namespace holds more, so the list stops there, and every batch
    reads what that page did not show by name."""
    assert (WORKLOADS + SPARSE) > CONTENT_LIST_RATIO * BATCH_SIZE  # a batch's list would be wasteful
    seed(cluster, SPARSE)
    result = cluster.run("-n", NS, env=UNLIMITED)
    assert result.code == 0, result.stderr
    assert set(result.actions().values()) == {"adopt"} and len(result.actions()) == WORKLOADS
    # Content: each referenced ConfigMap downloaded once; the first page (key order: cm-* before other-*)
    # held the first batch's 50, the rest came by name; the namespace never listed in full.
    limit = min(500, CONTENT_LIST_RATIO * BATCH_SIZE)  # at most a page (pageSize)
    assert [e.query for e in collection_reads(cluster)] == [{"limit": str(limit)}]
    gets = configmap_gets(cluster)
    assert sorted(gets) == [f"{COLLECTION}/cm-{i:03d}" for i in range(BATCH_SIZE, WORKLOADS)]
    assert result.report["configs_fetched"] == WORKLOADS
    # Workloads: one metadata list to find them, one full list for their specs; not one per batch.
    lists = [
        e
        for e in cluster.sim.log.entries(method="GET")
        if e.path == f"/apis/apps/v1/namespaces/{NS}/deployments"
    ]
    starts = [
        "meta" if "as=PartialObjectMetadataList" in e.accept else "full"
        for e in lists
        if "continue" not in e.query
    ]
    assert starts == ["meta", "full"]
    assert not [
        e
        for e in cluster.sim.log.entries(method="GET")
        if e.path.startswith(f"/apis/apps/v1/namespaces/{NS}/deployments/")
    ]


@pytest.mark.slow
def test_first_sight_at_the_shipped_rate_lists_content_where_that_saves_the_budget_requests(
    cluster: Backend,
) -> None:
    """At the shipped qps a GET costs the budget 50 ms and a wasted object a few KB: each batch lists the
    namespace's content (at most 16 objects per wanted one) instead of a GET per referenced source."""
    assert (WORKLOADS + UNREFERENCED) <= CONTENT_LIST_RATIO * BATCH_SIZE
    seed(cluster)
    result = cluster.run("-n", NS)
    assert result.code == 0, result.stderr
    assert set(result.actions().values()) == {"adopt"} and len(result.actions()) == WORKLOADS
    # The two full batches (50 wanted of 700: 14 per wanted one) list; the last (40 wanted: 17.5) reads
    # its 40 by name.
    last = range(2 * BATCH_SIZE, WORKLOADS)
    assert sorted(configmap_gets(cluster)) == [f"{COLLECTION}/cm-{i:03d}" for i in last]
    reads = collection_reads(cluster)
    starts = [e.query for e in reads if "continue" not in e.query]
    assert starts == [{"limit": "500"}] * 2  # a list per full batch; the first's pages told the size
    assert len(reads) + len(last) <= 2 * 2 + 40 < WORKLOADS  # 700 objects: two pages a list
    assert result.report["configs_fetched"] == WORKLOADS


@pytest.mark.slow
def test_a_steady_pass_lists_a_large_namespace_once_for_all_its_batches(cluster: Backend) -> None:
    seed(cluster)
    assert set(cluster.run("-n", NS).actions().values()) == {"adopt"}
    for _ in range(2):  # every steady pass, not only the first
        cluster.clear_log()
        result = cluster.run("-n", NS)
        assert result.code == 0, result.stderr
        assert set(result.actions().values()) == {"in-sync"}
        reads = collection_reads(cluster)
        starts = [e.query for e in reads if "continue" not in e.query]
        assert starts == [{"limit": "500"}]  # one paged metadata list, no size probe before it
        assert WORKLOADS + UNREFERENCED <= METADATA_LIST_RATIO * WORKLOADS
        assert all("as=PartialObjectMetadataList" in e.accept for e in reads)
        assert configmap_gets(cluster) == [] and cluster.writes() == []


@pytest.mark.slow
def test_a_change_in_a_large_namespace_downloads_only_the_changed_source(cluster: Backend) -> None:
    seed(cluster)
    cluster.run("-n", NS)
    cluster.edit("configmaps", NS, "cm-123", {"data": {"k": "changed"}})
    cluster.clear_log()
    result = cluster.run("-n", NS)
    assert result.code == 0, result.stderr
    assert [k for k, a in result.actions().items() if a != "in-sync"] == [f"Deployment/{NS}/app-123"]
    assert result.actions()[f"Deployment/{NS}/app-123"] == "rollout"
    assert configmap_gets(cluster) == [f"{COLLECTION}/cm-123"]
    assert len([e for e in collection_reads(cluster) if "continue" not in e.query]) == 1
