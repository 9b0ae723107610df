"""Long lists and shards, end to end on the simulator through the CLI: a list whose continue tokens keep
expiring still covers every workload (one full list instead of a failed scope), and `--shard I/N` splits
one big namespace between shards, every workload handled by exactly one of them."""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest

from tests.e2e.conftest import Backend, configmap, deployment, env_from

META_LIST = "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json"


def seed(cluster: Backend, counts: dict[str, int], kind: str = "Deployment") -> list[str]:
    """`counts[ns]` workloads of `kind` reading ConfigMap `app` of their namespace; their report keys."""
    keys = []
    for ns, count in counts.items():
        if not cluster.exists("configmaps", ns, "app"):
            cluster.add(configmap("app", {"a": "1"}, ns=ns))
        for i in range(count):
            name = f"{kind.lower()}-{i:02d}"
            cluster.add(deployment(name, env_from("configmap", "app"), ns=ns, kind=kind))
            keys.append(f"{kind}/{ns}/{name}")
    return keys


@pytest.mark.sim_only("fault injection")
def test_an_expired_token_restarts_the_list_paged_and_every_workload_is_handled_once(
    cluster: Backend,
) -> None:
    keys = seed(cluster, {"shop": 7, "web": 4})
    config = cluster.config("pageSize: 2\n")  # 11 Deployments: 6 pages if nothing expired
    # The cluster-wide list only (a first pass may also list a namespace's Deployments in full).
    cluster.sim.faults.expire_continue(method="GET", path="^/apis/apps/v1/deployments$", nth=2)
    result = cluster.run("--config", str(config))
    assert result.code == 0, result.stderr
    assert result.actions() == dict.fromkeys(keys, "adopt")  # no failed scope row, none missing, none twice
    lists = cluster.sim.log.entries(method="GET", path="/apis/apps/v1/deployments$")
    assert [e.status for e in lists[:4]] == [200, 200, 410, 200]
    assert lists[3].query == {"limit": "2"}  # the first page again: no answer larger than a page
    assert all(e.query.get("limit") == "2" for e in lists)
    assert all(e.accept == META_LIST for e in lists)  # metadata-only throughout


@pytest.mark.sim_only("fault injection")
def test_continue_tokens_that_keep_expiring_fail_the_list_visibly_and_the_next_pass_handles_it(
    cluster: Backend,
) -> None:
    """A server whose every continue token expires (etcd compacting faster than a list pages): the list
    restarts once, gets no further, and its scope fails (exit 1) rather than one unpaged answer of the
    whole collection; once tokens last, the next pass handles every workload."""
    keys = seed(cluster, {"shop": 7, "web": 4})
    config = cluster.config("pageSize: 2\n")
    cluster.sim.faults.expire_continue(method="GET", path="^/apis/apps/v1/deployments$", every=True)
    failed = cluster.run("--config", str(config))
    assert failed.code == 1, failed.stderr
    scopes = [w for w in failed.report["workloads"] if w["name"] == "*"]
    assert [(w["kind"], w["action"]) for w in scopes] == [("Deployment", "failed")]
    lists = cluster.sim.log.entries(method="GET", path="/apis/apps/v1/deployments$")
    assert all(e.query.get("limit") == "2" for e in lists)
    cluster.sim.faults.clear()
    result = cluster.run("--config", str(config))
    assert result.code == 0, result.stderr
    assert result.actions() == dict.fromkeys(keys, "adopt")


def handled(reports: list[dict[str, Any]]) -> Counter[str]:
    """How many shards' reports name each workload."""
    return Counter(f"{w['kind']}/{w['namespace']}/{w['name']}" for r in reports for w in r["workloads"])


def test_three_shards_split_one_big_namespace_evenly_and_handle_each_workload_once(cluster: Backend) -> None:
    keys = seed(cluster, {"shop": 30, "tools": 2}) + seed(cluster, {"shop": 3}, kind="StatefulSet")
    reads: list[set[str]] = []
    patched: Counter[str] = Counter()
    reports = []
    for index in range(3):
        cluster.clear_log()
        result = cluster.run("--shard", f"{index}/3")
        assert result.code == 0, result.stderr
        reports.append(result.report)
        # Applied writes: on a real server a controller's status update may conflict with a first try.
        patched.update(e.path for e in cluster.writes() if e.status < 300)
        reads.append({e.path.split("/")[4] for e in cluster.requests("GET") if "/configmaps" in e.path})
    counts = handled(reports)
    assert sorted(counts) == sorted(keys) and set(counts.values()) == {1}  # each exactly once
    assert {w["action"] for r in reports for w in r["workloads"]} == {"adopt"}
    sizes = [len(r["workloads"]) for r in reports]
    assert max(sizes) - min(sizes) <= 2, sizes  # 35 workloads: 11-12 each (not 0, 33, 2 by namespace)
    assert len(patched) == len(keys) and set(patched.values()) == {1}  # one adopting PATCH each, in all
    # Each shard reads the sources of the namespaces it keeps workloads in: shop in all three, tools in one.
    assert all("shop" in r for r in reads)
    assert sum("tools" in r for r in reads) == 1


def test_namespaces_given_with_n_are_split_the_same_way(cluster: Backend) -> None:
    keys = seed(cluster, {"shop": 12, "tools": 1, "other": 5})
    wanted = [k for k in keys if "/other/" not in k]
    reports = []
    for index in range(2):
        cluster.clear_log()
        result = cluster.run("-n", "shop", "-n", "tools", "--shard", f"{index}/2", "--dry-run")
        assert result.code == 0, result.stderr
        reports.append(result.report)
        lists = [e.path for e in cluster.requests("GET") if e.path.startswith("/apis/")]
        assert lists and all("/namespaces/shop/" in p or "/namespaces/tools/" in p for p in lists)
    counts = handled(reports)
    assert sorted(counts) == sorted(wanted) and set(counts.values()) == {1}
    assert sorted(len(r["workloads"]) for r in reports) == [6, 7]
