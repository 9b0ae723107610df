"""etcd compacted between two pages of kube-rehash's workload list, on the real server.

Why: a paged list reads one etcd snapshot; when etcd compacts it away between pages (kube-apiserver's own
compactor runs every 5 minutes; a slow pass on a busy cluster meets it), the next `continue` answers 410
Expired. kube-rehash then starts the list again from its first page, still paged (reconcile/kube/lists.py;
never one unpaged list, which holds a whole collection at once), and skips what it already took: every
opted-in workload must still be reported, once.

How: etcd is compacted through its own gRPC gateway (`POST /v3/kv/compaction`, what `etcdctl compaction
--physical` sends, without building etcdctl on a 2-core machine) the moment the audit log shows the first
page answered. kube-apiserver 1.37 serves paged lists from its watch cache's snapshots, which outlive an
etcd compaction (checked below on ConfigMaps: the token still works); so this plane runs without the
watch cache for Deployments (`--watch-cache-sizes=deployments.apps#0`, as on servers started with
`--watch-cache=false`), and the continue request reaches etcd.
"""

from __future__ import annotations

import http.client
import json
import ssl
from typing import Any

from rehash_simulator import Simulator
from tests.chaos_real.harness import Cluster, Figures, configmap, deployment, seed

COUNT, SOURCES = 16, 4
PAGE = 4
BUDGET = 60.0
NO_DEPLOYMENT_CACHE = "--watch-cache-sizes=deployments.apps#0"


def _first_page(entry: Any) -> bool:
    return (
        entry.verb == "list"
        and entry.resource == "deployments"
        and f"limit={PAGE}" in entry.uri
        and "continue=" not in entry.uri
        and entry.code == 200
    )


def _expire(cluster: Cluster, ns: str, bump: int) -> None:
    """A write (so the snapshot's revision is no longer the newest), then a physical compaction."""
    cluster.cp.api(
        "PATCH",
        f"/api/v1/namespaces/{ns}/configmaps/unrelated",
        {"data": {"n": str(bump)}},
        content_type="application/merge-patch+json",
    )
    cluster.cp.compact_etcd()


def test_a_continue_token_expired_by_etcd_compaction_restarts_the_list_paged_and_reports_every_workload_once(
    planes: Any,
) -> None:
    cluster: Cluster = planes(NO_DEPLOYMENT_CACHE)
    ns = cluster.namespace("compact")
    names = seed(cluster, ns, COUNT, SOURCES)
    cluster.apply(configmap(ns, "unrelated", {"n": "0"}))
    assert set(cluster.run("-n", ns).actions().values()) == {"adopt"}
    figures = Figures("etcd compacted between two pages of the workload list (410 Expired)")

    # A pass that pages 4 at a time at 2 requests/s: there is half a second between two pages.
    config = cluster.config(pageSize=PAGE, qps=2)
    for attempt in range(2):
        offset = cluster.audit_offset()
        proc, started = cluster.start("-n", ns, "--config", str(config), timeout=BUDGET)
        cluster.wait_for_request(offset, _first_page, timeout=BUDGET, proc=proc)
        _expire(cluster, ns, attempt + 1)
        figures.injected += 1
        result = cluster.finish(proc, started, BUDGET)
        figures.count(result)
        assert result.code == 0, result.stderr

        lists = [e for e in cluster.audit_since(offset) if e.verb == "list" and e.resource == "deployments"]
        expired = [e for e in lists if e.code == 410]
        assert len(expired) == 1 and "continue=" in expired[0].uri, [(e.uri, e.code) for e in lists]
        after = lists[lists.index(expired[0]) + 1 :]
        # The list again from its first page, paged, to its end: no unpaged list, no retry of the token.
        pages = [("limit=" in e.uri, "continue=" in e.uri, e.code) for e in after]
        assert pages == [(True, False, 200)] + [(True, True, 200)] * (len(pages) - 1), pages
        assert len(pages) >= COUNT // PAGE, pages
        assert result.report["api"]["retries"].get("410") == 1, result.report["api"]
        # Every opted-in workload reported, once (the restart skips the items it already took).
        rows = [r for r in result.report["workloads"] if r["kind"] == "Deployment"]
        assert sorted(r["name"] for r in rows) == names
        assert {r["action"] for r in rows} == {"in-sync"}
        figures.notes.setdefault("workloads reported", []).append(len(rows))
    figures.save()
    _real_410_is_the_simulators(cluster, ns)


def _real_410_is_the_simulators(cluster: Cluster, ns: str) -> None:
    """The 410 of a compacted token against the simulator's expired token (ExpireContinue), and the watch
    cache's snapshot outliving the compaction (ConfigMaps keep their cache on this plane)."""
    deployments = f"/apis/apps/v1/namespaces/{ns}/deployments?limit=2"
    configmaps = f"/api/v1/namespaces/{ns}/configmaps?limit=2"
    tokens = {
        path: json.loads(cluster.sa_request("GET", path)[2])["metadata"]["continue"]
        for path in (deployments, configmaps)
    }
    _expire(cluster, ns, 1)
    status, _, body = cluster.sa_request("GET", f"{deployments}&continue={tokens[deployments]}")
    real = json.loads(body)
    assert status == 410, real
    # ConfigMaps keep their watch cache: its snapshot still answers the compacted token.
    assert cluster.sa_request("GET", f"{configmaps}&continue={tokens[configmaps]}")[0] == 200

    with Simulator() as sim:
        sim.store.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}})
        for name in [f"d{i:02d}" for i in range(COUNT)]:
            sim.store.create(deployment(ns, name, "cm0"))
        sim_page = _sim_get(sim, deployments)
        sim.faults.expire_continue()
        sim_status, sim_body = _sim_get_raw(sim, f"{deployments}&continue={sim_page['metadata']['continue']}")
    simulated = json.loads(sim_body)
    for key in ("kind", "apiVersion", "status", "reason", "code", "message"):
        assert simulated.get(key) == real.get(key), (key, real.get(key), simulated.get(key))
    assert sim_status == status
    # Known limit (docs/conformance.md): kube-apiserver also offers an "inconsistent" continue token in the
    # Status's metadata; the simulator offers none, and kube-rehash uses none (it starts the list again).
    assert set(real["metadata"]) == {"continue"} and simulated["metadata"] == {}


def _sim_get_raw(sim: Simulator, path: str) -> tuple[int, bytes]:
    context = ssl.create_default_context(cadata=sim.ca_pem.decode())
    conn = http.client.HTTPSConnection("127.0.0.1", sim.port, context=context, timeout=10)
    try:
        conn.request(
            "GET", path, headers={"Authorization": f"Bearer {sim.admin_token}", "Accept": "application/json"}
        )
        response = conn.getresponse()
        return response.status, response.read()
    finally:
        conn.close()


def _sim_get(sim: Simulator, path: str) -> dict[str, Any]:
    status, body = _sim_get_raw(sim, path)
    assert status == 200, body
    answer: dict[str, Any] = json.loads(body)
    return answer
