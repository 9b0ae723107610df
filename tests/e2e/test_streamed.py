"""A whole-cluster pass with more opted-in workloads than `streamAbove` does not hold its listing: it stops
at a sample, then walks the cluster namespace by namespace as its lists stream, on from the listing's own
lists when the sample says the pass is light, else after tallying them, with a second listing
(pipeline/workload_lists.py). It must decide exactly what a pass holding its listing decides, in every
state a cluster goes through. `KUBE_REHASH_STREAM_ABOVE=0` makes every pass stream."""

from __future__ import annotations

from typing import Any

import pytest

from tests.e2e.conftest import Backend, Result, configmap, deployment, env_from, secret

pytestmark = pytest.mark.sim_only("a cluster-wide pass: the real server holds other tests' namespaces")

STREAM = {"KUBE_REHASH_STREAM_ABOVE": "0"}
# "a-b" sorts before "a" in a cluster-wide list ("a-b/…" < "a/…"): etcd's key order, not the names'.
NAMESPACES = ("a", "a-b", "b", "team-1", "team-2", "zeta")
PER_NAMESPACE = 8  # 48 Deployments needing their spec: a first install lists them in full


def seed(cluster: Backend) -> None:
    for ns in NAMESPACES:
        cluster.add(configmap("app", {"v": "1"}, ns=ns), secret("db", {"p": "x"}, ns=ns))
        for i in range(PER_NAMESPACE):
            source = ("configmap", "app") if i % 2 else ("secret", "db")
            cluster.add(deployment(f"web-{i}", env_from(*source), ns=ns))
        cluster.add(deployment("store", env_from("configmap", "app"), ns=ns, kind="StatefulSet"))
    cluster.add(deployment("plain", env_from("configmap", "app"), ns="b", annotations={}))  # not opted in


def rows(result: Result) -> list[tuple[Any, ...]]:
    assert result.code in (0, 1), result.stderr
    fields = ("kind", "namespace", "name", "action", "reason", "hash", "previous")
    return sorted(tuple(w.get(f) for f in fields) for w in result.report["workloads"])


def fail_deployments_page(cluster: Backend, nth: int) -> None:
    """The `nth` continue request of the cluster-wide Deployments list is refused (403)."""
    cluster.sim.faults.respond(
        403, reason="Forbidden", method="GET", path="^/apis/apps/v1/deployments$", param="continue", nth=nth
    )


def assert_deployments_failed_after_a_b(result: Result, action: str) -> None:
    """The Deployments' list failed once `a-b` was taken: one failed row for the kind, `a-b`'s Deployments
    and every StatefulSet decided (`action`), no other Deployment."""
    failed = [w for w in result.report["workloads"] if w["action"] == "failed"]
    assert [(w["kind"], w["namespace"], w["name"]) for w in failed] == [("Deployment", "*", "*")]
    assert "list failed" in failed[0]["reason"] and "403" in failed[0]["reason"]
    decided = result.actions()
    assert all(decided[f"StatefulSet/{ns}/store"] == action for ns in NAMESPACES)
    deployments = {k.split("/")[1] for k in decided if k.startswith("Deployment/") and not k.endswith("/*")}
    assert deployments == {"a-b"} and len([k for k in decided if k.startswith("Deployment/a-b/")]) == 8


def same_decisions(cluster: Backend) -> list[tuple[Any, ...]]:
    """A held and a streamed dry run of the same state decide the same; the rows, sorted."""
    held = cluster.run("--dry-run", "client")
    streamed = cluster.run("--dry-run", "client", env=STREAM)
    assert rows(streamed) == rows(held)
    assert streamed.report["summary"] == held.report["summary"]
    return rows(held)


@pytest.mark.slow
def test_a_streamed_pass_decides_what_a_held_pass_decides_from_first_install_to_changes(
    cluster: Backend,
) -> None:
    seed(cluster)
    first = same_decisions(cluster)
    assert {r[3] for r in first} == {"adopt"} and len(first) == len(NAMESPACES) * (PER_NAMESPACE + 1)
    adopted = cluster.run(env=STREAM)
    assert set(adopted.actions().values()) == {"adopt"} and rows(adopted) == first

    steady = same_decisions(cluster)
    assert {r[3] for r in steady} == {"in-sync"}

    cluster.edit("configmaps", "a-b", "app", {"data": {"v": "2"}})
    cluster.edit("secrets", "zeta", "db", {"stringData": {"p": "y"}})
    cluster.add(deployment("late", env_from("secret", "db"), ns="team-1"))
    changed = same_decisions(cluster)
    actions = {(r[1], r[2]): r[3] for r in changed}
    assert actions[("a-b", "web-1")] == "rollout" and actions[("a-b", "store")] == "rollout"
    assert actions[("zeta", "web-0")] == "rollout" and actions[("team-1", "late")] == "adopt"
    assert actions[("a", "web-1")] == "in-sync"
    rolled = cluster.run(env=STREAM)
    assert rows(rolled) == changed
    assert {r[3] for r in same_decisions(cluster)} == {"in-sync"}


WORKLOAD_LISTS = ("/apis/apps/v1/deployments", "/apis/apps/v1/statefulsets")


def workload_lists(cluster: Backend) -> dict[str, list[bool]]:
    """Per workload kind, its cluster-wide lists in order: whether each was metadata-only."""
    lists: dict[str, list[bool]] = {}
    for e in cluster.requests("GET"):
        if e.path in WORKLOAD_LISTS and "continue" not in e.query:
            lists.setdefault(e.path.rsplit("/", 1)[1], []).append("as=PartialObjectMetadataList" in e.accept)
    return lists


@pytest.mark.slow
def test_a_streamed_steady_pass_lists_each_workload_and_source_kind_once(cluster: Backend) -> None:
    """A first install is heavy: the listing's sample needs specs, so the rest is tallied and the walk
    lists the workloads again (in full where most need their spec). A steady pass is light: the walk goes
    on from the listing's own lists."""
    seed(cluster)
    cluster.clear_log()
    adopted = cluster.run("-v", env=STREAM)
    assert set(adopted.actions().values()) == {"adopt"}
    assert "one listing of the workloads: no" in adopted.stderr
    assert workload_lists(cluster) == {"deployments": [True, False], "statefulsets": [True, True]}
    cluster.clear_log()
    steady = cluster.run("-v", env=STREAM)
    assert set(steady.actions().values()) == {"in-sync"} and cluster.writes() == []
    assert "one listing of the workloads: yes" in steady.stderr
    gets = [e for e in cluster.requests("GET")]
    assert workload_lists(cluster) == {"deployments": [True], "statefulsets": [True]}
    for path in ("/api/v1/configmaps", "/api/v1/secrets"):
        listed = [e for e in gets if e.path == path and e.query.get("limit") != "1"]
        assert len(listed) == 1, path
    assert not [e for e in gets if "/namespaces/" in e.path], "a steady pass reads nothing by namespace"


SMALL_PAGES = "pageSize: 4\n"


# With 4 objects a page the tally lists the 49 Deployments in 13 pages (12 with a `continue` token), so the
# walk's page N is the (11 + N)th `continue` request of the Deployments. The walk lists them whole (a first
# install lists them in full), 4 a page: namespace `a-b` (8 of them) is pages 1-2, `a` pages 3-4.
def walk_page(n: int) -> int:
    return 11 + n


@pytest.mark.slow
def test_an_expired_token_in_the_walk_resumes_after_the_last_object_taken(cluster: Backend) -> None:
    seed(cluster)
    config = cluster.config(SMALL_PAGES)
    expected = rows(cluster.run("--dry-run", "client", "--config", str(config)))
    cluster.sim.faults.expire_continue(
        method="GET", path="^/apis/apps/v1/deployments$", param="continue", nth=walk_page(2)
    )
    result = cluster.run("--dry-run", "client", "--config", str(config), env=STREAM)
    assert sum(r.fired for r in cluster.sim.faults.rules()) == 1
    assert rows(result) == expected and result.code == 0
    # The fault drops every list's snapshot: a list whose next page was asked after it (the Deployments', and
    # any other list sent ahead at that moment) is read again once, whole.
    expired = [e for e in cluster.requests("GET") if e.status == 410]
    assert any(e.path == "/apis/apps/v1/deployments" for e in expired)
    assert result.report["api"]["retries"].get("410") == len(expired)


def test_a_list_that_fails_in_the_walk_fails_its_kind_and_the_walk_goes_on(cluster: Backend) -> None:
    seed(cluster)
    config = cluster.config(SMALL_PAGES)
    fail_deployments_page(cluster, walk_page(4))  # while the walk takes `a`: `a-b` was taken whole before
    result = cluster.run("--dry-run", "client", "--config", str(config), env=STREAM)
    assert result.code == 1
    assert_deployments_failed_after_a_b(result, "adopt")


@pytest.mark.slow
def test_lists_out_of_key_order_lose_no_workload_when_streamed(cluster: Backend) -> None:
    """A server whose lists are not in key order (an older watch cache, an aggregated API): the streamed
    walk sees the disorder, lists again and decides what it passed by, so every opted-in workload gets
    its row, is adopted, and after a change to all of them, rolls exactly once."""
    seed(cluster)
    sorted_rows = rows(cluster.run("--dry-run", "client"))
    cluster.sim.store.unsorted_lists = True
    listed = cluster.run("--dry-run", "client", env=STREAM)
    assert rows(listed) == sorted_rows and listed.code == 0
    held = cluster.run("--dry-run", "client")  # a held walk never relied on the order
    assert rows(held) == sorted_rows and held.code == 0
    adopted = cluster.run(env=STREAM)
    assert len(adopted.report["workloads"]) == len(NAMESPACES) * (PER_NAMESPACE + 1)
    assert set(adopted.actions().values()) == {"adopt"} and adopted.code == 0
    assert "not in key order" in adopted.stderr
    for ns in NAMESPACES:
        cluster.edit("configmaps", ns, "app", {"data": {"v": "2"}})
        cluster.edit("secrets", ns, "db", {"stringData": {"p": "y"}})
    cluster.clear_log()
    rolled = cluster.run(env=STREAM)
    assert rolled.code == 0 and len(rolled.report["workloads"]) == len(NAMESPACES) * (PER_NAMESPACE + 1)
    assert set(rolled.actions().values()) == {"rollout"}
    patched = [e.path for e in cluster.writes() if e.method == "PATCH"]
    assert len(patched) == len(set(patched))  # nothing patched twice
    assert {r[3] for r in rows(cluster.run(env=STREAM))} == {"in-sync"}


def test_a_list_that_fails_after_the_sample_fails_its_kind_and_the_light_walk_goes_on(
    cluster: Backend,
) -> None:
    """A steady pass walks on from the listing's lists. The Deployments' list fails once the sample (the
    first namespace in key order, `a-b`) was taken: one failed row for the kind, the sample's Deployments
    and every StatefulSet still decided."""
    seed(cluster)
    config = cluster.config(SMALL_PAGES)
    cluster.run("--config", str(config))
    cluster.clear_log()
    fail_deployments_page(cluster, 4)  # `a-b` is pages 1-2 (the sample), `a` pages 3-4: page 5 fails in `a`
    result = cluster.run("-v", "--config", str(config), env=STREAM)
    assert "one listing of the workloads: yes" in result.stderr
    assert result.code == 1 and cluster.writes() == []
    assert_deployments_failed_after_a_b(result, "in-sync")
    assert set(result.actions().values()) == {"in-sync", "failed"}
