"""API Priority and Fairness on a real kube-apiserver: the documented FlowSchema, then kube-rehash starved.

Why: on a busy cluster the API server itself sheds load, with 429 and `Retry-After`, per priority level.
docs/install.md tells admins to give kube-rehash a priority level of its own; this applies that exact
manifest (read from the doc), checks the server classifies the ServiceAccount's requests into it and that
passes converge. Then the level is cut to one seat with queuing disabled (reject), so the passes meet real
429s: they must wait the `Retry-After` the server sent before asking again (audit-log timestamps), end
within their budget, and roll each change exactly once (ReplicaSets). The real 429 is also compared with
the simulator's `Throttle` fault, which the reliability suite injects.
"""

from __future__ import annotations

import http.client
import re
import ssl
import threading
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime
from typing import Any

import yaml

from rehash_simulator import Simulator
from tests.chaos_real.harness import REPO, Cluster, Figures, configmap, seed, wait_until

COUNT, SOURCES = 16, 4
BUDGET = 60.0
FLOWCONTROL = "/apis/flowcontrol.apiserver.k8s.io/v1"
# A smaller server (150 seats instead of 600): the documented level's 10 shares are a few seats, and one
# share is one seat.
SMALL_SERVER = ("--max-requests-inflight=100", "--max-mutating-requests-inflight=50")


def documented_manifest() -> list[dict[str, Any]]:
    """The YAML block of docs/install.md that holds the FlowSchema (and its PriorityLevelConfiguration)."""
    text = (REPO / "docs" / "install.md").read_text()
    blocks = [b for b in re.findall(r"```yaml\n(.*?)```", text, re.S) if "kind: FlowSchema" in b]
    assert len(blocks) == 1, "docs/install.md documents one FlowSchema"
    return [doc for doc in yaml.safe_load_all(blocks[0]) if doc]


def _time(event: dict[str, Any], key: str) -> float:
    return datetime.fromisoformat(event[key].replace("Z", "+00:00")).timestamp()


def _retry_gaps(events: list[dict[str, Any]]) -> list[float]:
    """For each 429, the seconds until the same request (verb and URI) was received again. Creates are
    left out: every Event is POSTed to the same URI, so the next one there may be another Event."""
    gaps = []
    for i, event in enumerate(events):
        if (event.get("responseStatus") or {}).get("code") != 429 or event["verb"] == "create":
            continue
        sent = _time(event, "stageTimestamp")
        again = [
            _time(e, "requestReceivedTimestamp")
            for e in events[i + 1 :]
            if e["verb"] == event["verb"] and e["requestURI"] == event["requestURI"]
        ]
        if again:  # else the request gave up (counted by the caller)
            gaps.append(min(again) - sent)
    return gaps


def _starved_429(cluster: Cluster) -> tuple[int, dict[str, str], bytes]:
    """A 429 of the starved level, provoked with 24 concurrent lists as the ServiceAccount."""
    with ThreadPoolExecutor(24) as pool:
        answers = list(pool.map(lambda _: cluster.sa_request("GET", "/api/v1/configmaps"), range(24)))
    rejected = [a for a in answers if a[0] == 429]
    assert rejected, [a[0] for a in answers]
    return rejected[0]


class Neighbour(threading.Thread):
    """Another client of kube-rehash's priority level (the same ServiceAccount, as a second shard would
    be; its own User-Agent): one list at a time with pauses, so a pass's request finds the one seat taken
    now and then. Bounded: at most 60 s and 1500 requests."""

    def __init__(self, cluster: Cluster, ns: str) -> None:
        super().__init__(daemon=True)
        self.cluster, self.ns = cluster, ns
        self.done = threading.Event()

    def __enter__(self) -> Neighbour:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.done.set()
        self.join(30)

    def run(self) -> None:
        deadline = time.monotonic() + 60
        path = f"/api/v1/namespaces/{self.ns}/configmaps"
        for _ in range(1500):
            if self.done.is_set() or time.monotonic() > deadline:
                return
            self.cluster.sa_request("GET", path)
            self.done.wait(0.05)


def test_the_documented_flowschema_classifies_kube_rehash_and_a_starved_level_429s_it_into_retry_after(
    planes: Any,
) -> None:
    cluster: Cluster = planes(*SMALL_SERVER)
    manifest = documented_manifest()
    cluster.apply(*manifest)
    level = cluster.cp.api("GET", f"{FLOWCONTROL}/prioritylevelconfigurations/kube-rehash")

    def classified() -> bool:
        status, headers, _ = cluster.sa_request("GET", "/version")
        return status == 200 and headers.get("X-Kubernetes-Pf-Prioritylevel-Uid") == level["metadata"]["uid"]

    wait_until("kube-rehash's requests to be served by its own priority level", classified, 30)

    ns = cluster.namespace("apf")
    names = seed(cluster, ns, COUNT, SOURCES)
    documented = Figures("API Priority and Fairness: the documented FlowSchema (docs/install.md)")
    for version in ("adopt", "1"):
        if version != "adopt":
            cluster.apply(*(configmap(ns, f"cm{j}", {"v": version}) for j in range(SOURCES)))
        result = cluster.run("-n", ns, timeout=BUDGET)
        documented.count(result)
        assert result.code == 0, result.stderr
        assert set(result.actions().values()) == {"adopt" if version == "adopt" else "rollout"}
    cluster.wait_observed(ns)
    counts = cluster.rs_counts(ns)
    documented.expected = COUNT
    documented.done = sum(1 for n in names if counts[n] >= 2)
    documented.lost = sum(max(0, 2 - counts[n]) for n in names)
    documented.doubled = sum(max(0, counts[n] - 2) for n in names)
    documented.save()
    assert counts == dict.fromkeys(names, 2)

    # Starve it: one seat (1 share of a 150-seat server), no borrowing, queuing disabled.
    starved = {
        "nominalConcurrencyShares": 1,
        "lendablePercent": 0,
        "borrowingLimitPercent": 0,
        "limitResponse": {"type": "Reject", "queuing": None},  # merge patch: drop the documented queue
    }
    cluster.cp.api(
        "PATCH",
        f"{FLOWCONTROL}/prioritylevelconfigurations/kube-rehash",
        {"spec": {"limited": starved}},
        content_type="application/merge-patch+json",
    )
    wait_until("the starved level to reject", lambda: _starved_429(cluster)[0] == 429, 30)

    # The real 429 against the simulator's Throttle fault: status, media type, body and Retry-After.
    status, headers, body = _starved_429(cluster)
    with Simulator() as sim:
        sim.faults.throttle(retry_after=int(headers["Retry-After"]), nth=1)
        sim_status, sim_headers, sim_body = _sim_get(sim, "/api/v1/configmaps")
    assert (sim_status, sim_body) == (status, body), (body, sim_body)
    for header in ("Content-Type", "Retry-After", "X-Content-Type-Options"):
        assert sim_headers.get(header) == headers.get(header), (header, headers, sim_headers)

    figures = Figures("API Priority and Fairness: one seat, queuing disabled (real 429s)")
    expected = 0
    by_verb: Counter[str] = Counter()
    for version in ("2",):
        cluster.apply(*(configmap(ns, f"cm{j}", {"v": version}) for j in range(SOURCES)))
        expected += COUNT
        for _ in range(3):  # a pass, and at most two more to converge
            offset = cluster.audit_offset()
            with Neighbour(cluster, ns):  # another client of the level keeps its one seat busy at times
                result = cluster.run("-n", ns, timeout=BUDGET)
            figures.count(result)
            # A request that met a 429 at every one of its attempts fails (its row, or its Event): exit 1,
            # and the next pass does it. Nothing else may fail.
            failures = [r["reason"] for r in result.report["workloads"] if r["action"] == "failed"]
            assert all("429" in reason for reason in failures), failures
            assert result.code == (1 if failures else 0), result.stderr
            events = cluster.audit_events(offset)
            rejected = [e for e in events if (e.get("responseStatus") or {}).get("code") == 429]
            figures.injected += len(rejected)
            by_verb.update(e["verb"] for e in rejected)
            # Every real 429 was retried (and counted in the report as such) but the last of a request that
            # gave up: one whose last audit entry is a 429.
            last = {(e["verb"], e["requestURI"]): e for e in events if e["verb"] != "create"}
            gave_up = sum(1 for e in last.values() if (e.get("responseStatus") or {}).get("code") == 429)
            retried = result.report["api"]["retries"].get("429", 0)
            assert len(rejected) - retried <= gave_up + sum(1 for e in rejected if e["verb"] == "create")
            assert retried <= len(rejected), (retried, len(rejected))
            # ... no sooner than the server's Retry-After (1 s; a little clock slack between stamps).
            gaps = _retry_gaps(events)
            assert all(gap >= 0.9 for gap in gaps), sorted(gaps)[:5]
            if set(result.actions().values()) <= {"in-sync"}:
                break
        else:
            raise AssertionError(f"no convergence in 3 passes: {result.actions()}")
        cluster.wait_observed(ns)
    assert figures.injected > 0, "the starved level never answered 429"
    counts = cluster.rs_counts(ns)
    figures.expected = expected
    figures.lost = sum(max(0, 3 - counts[n]) for n in names)
    figures.doubled = sum(max(0, counts[n] - 3) for n in names)
    figures.done = expected - figures.lost
    figures.notes["429s by verb"] = dict(by_verb)
    figures.save()
    assert counts == dict.fromkeys(names, 3), counts


def _sim_get(sim: Simulator, path: str) -> tuple[int, dict[str, str], bytes]:
    context = ssl.create_default_context(cadata=sim.ca_pem.decode())
    conn = http.client.HTTPSConnection("127.0.0.1", sim.port, context=context, timeout=10)
    try:
        conn.request("GET", path, headers={"Authorization": f"Bearer {sim.admin_token}"})
        response = conn.getresponse()
        return response.status, dict(response.getheaders()), response.read()
    finally:
        conn.close()
