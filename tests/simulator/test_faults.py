"""Fault rules: matching, firing schedule, and each action over real HTTPS."""

from __future__ import annotations

import http.client
import ssl
import time
from typing import Any

import pytest
from simhelpers import call, configmap

from rehash_simulator import Simulator
from rehash_simulator.faults import FaultRule, Faults, Respond


def fire_pattern(
    faults: Faults,
    n: int,
    method: str = "GET",
    path: str = "/api/v1/configmaps",
    query: dict[str, str] | None = None,
) -> list[bool]:
    return [bool(faults.pick(method, path, query or {})) for _ in range(n)]


def test_nth_every_and_max_count() -> None:
    faults = Faults()
    faults.add(FaultRule(Respond(500), nth=2))
    assert fire_pattern(faults, 4) == [False, True, False, False]
    faults.clear()
    faults.add(FaultRule(Respond(500), nth=2, every=True, max_count=2))
    assert fire_pattern(faults, 5) == [False, True, True, False, False]
    faults.clear()
    rule = faults.add(FaultRule(Respond(500), max_count=3))
    assert fire_pattern(faults, 5) == [True, True, True, False, False]
    assert (rule.matched, rule.fired) == (5, 3)


def test_matching_by_method_path_query_and_param() -> None:
    faults = Faults()
    faults.add(FaultRule(Respond(500), method="PATCH", path=r"/deployments/"))
    assert fire_pattern(faults, 1, "GET", "/apis/apps/v1/namespaces/x/deployments/a") == [False]
    assert fire_pattern(faults, 1, "PATCH", "/apis/apps/v1/namespaces/x/deployments/a") == [True]
    faults.clear()
    faults.add(FaultRule(Respond(500), param="continue"))
    assert fire_pattern(faults, 1, query={"limit": "1"}) == [False]
    assert fire_pattern(faults, 1, query={"continue": "x"}) == [True]
    faults.clear()
    faults.add(FaultRule(Respond(500), query=lambda q: q.get("limit") == "500"))
    assert fire_pattern(faults, 2, query={"limit": "500"}) == [True, True]


def test_probability_is_seeded() -> None:
    first, second = Faults(seed=7), Faults(seed=7)
    for faults in (first, second):
        faults.add(FaultRule(Respond(500), probability=0.5))
    pattern = fire_pattern(first, 40)
    assert pattern == fire_pattern(second, 40)
    assert 5 < sum(pattern) < 35


def test_respond_with_retry_after(sim: Simulator) -> None:
    sim.faults.respond(429, retry_after=3, message="Too many requests, please try again later.", nth=1)
    reply = call(sim, "GET", "/api/v1/configmaps")
    assert reply.status == 429
    assert reply.headers["Retry-After"] == "3"
    body = reply.json()
    assert body["reason"] == "TooManyRequests" and body["details"] == {"retryAfterSeconds": 3}
    assert call(sim, "GET", "/api/v1/configmaps").status == 200


def _raw_get(sim: Simulator, path: str) -> Any:
    conn = http.client.HTTPSConnection(
        "127.0.0.1", sim.port, context=ssl.create_default_context(cadata=sim.ca_pem.decode()), timeout=10
    )
    conn.request("GET", path, headers={"Authorization": f"Bearer {sim.admin_token}"})
    return conn.getresponse()


def test_reset_connection(sim: Simulator) -> None:
    sim.faults.reset_connection(path="/configmaps", max_count=1)
    with pytest.raises((ConnectionError, http.client.RemoteDisconnected, ssl.SSLError, OSError)):
        _raw_get(sim, "/api/v1/configmaps")
    assert _raw_get(sim, "/api/v1/configmaps").status == 200
    assert sim.log.entries()[0].status == 0


def test_a_lost_answer_applies_the_write_and_resets_the_connection_before_any_answer(sim: Simulator) -> None:
    sim.store.create(configmap("c"))
    sim.faults.lose_answer(method="PATCH", max_count=1)
    with pytest.raises((ConnectionError, http.client.RemoteDisconnected, ssl.SSLError, OSError)):
        call(
            sim,
            "PATCH",
            "/api/v1/namespaces/shop/configmaps/c",
            {"data": {"k": "mine"}},
            content_type="application/merge-patch+json",
        )
    assert sim.store.get("configmaps", "shop", "c")["data"] == {"k": "mine"}
    (entry,) = sim.log.entries(method="PATCH")
    assert (entry.status, entry.bytes_out) == (200, 0)
    assert call(sim, "GET", "/api/v1/namespaces/shop/configmaps/c").status == 200


def test_delay(sim: Simulator) -> None:
    sim.faults.delay(0.3, max_count=1)
    started = time.perf_counter()
    assert call(sim, "GET", "/api/v1/configmaps").status == 200
    assert time.perf_counter() - started >= 0.3


def test_mutate_runs_before_the_request(sim: Simulator) -> None:
    sim.store.create(configmap("c"))
    sim.faults.mutate(
        lambda store: store.patch_merge("configmaps", "shop", "c", {"data": {"k": "changed"}}),
        method="PUT",
        max_count=1,
    )
    stale = sim.store.get("configmaps", "shop", "c")
    reply = call(sim, "PUT", "/api/v1/namespaces/shop/configmaps/c", {**stale, "data": {"k": "mine"}})
    assert reply.status == 409
    assert sim.store.get("configmaps", "shop", "c")["data"] == {"k": "changed"}


def test_throttle_answers_as_kube_apiservers_flow_control(sim: Simulator) -> None:
    """Not a Status: a text/plain body and Retry-After (checked against kube-apiserver 1.37 by
    tests/chaos_real/test_flow_control.py)."""
    sim.faults.throttle(retry_after=2, nth=1)
    reply = _raw_get(sim, "/api/v1/configmaps")
    assert reply.status == 429
    assert reply.getheader("Content-Type") == "text/plain; charset=utf-8"
    assert reply.getheader("Retry-After") == "2"
    assert reply.getheader("X-Content-Type-Options") == "nosniff"
    assert reply.read() == b"Too many requests, please try again later.\n"
    assert _raw_get(sim, "/api/v1/configmaps").status == 200


@pytest.mark.parametrize(("reason", "code"), [(None, 422), ("Forbidden", 403)])
def test_deny_answers_as_a_validating_admission_policy(sim: Simulator, reason: str | None, code: int) -> None:
    """kube-apiserver's status, reason, message and details (compared with 1.37 by
    tests/chaos_real/test_admission.py); the object is left unchanged."""
    sim.store.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "shop"}})
    sim.store.create(configmap("app"))
    sim.faults.deny("freeze", "freeze-binding", "frozen", reason, method="PATCH")
    reply = call(
        sim,
        "PATCH",
        "/api/v1/namespaces/shop/configmaps/app",
        {"data": {"k": "v2"}},
        content_type="application/merge-patch+json",
    )
    denial = "ValidatingAdmissionPolicy 'freeze' with binding 'freeze-binding' denied request: frozen"
    assert reply.status == code
    assert reply.json() == {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": f'configmaps "app" is forbidden: {denial}',
        "reason": reason or "Invalid",
        "details": {"name": "app", "group": "", "kind": "configmaps", "causes": [{"message": denial}]},
        "code": code,
    }
    assert call(sim, "GET", "/api/v1/namespaces/shop/configmaps/app").json()["data"] == {"k": "v"}
