"""Transient API faults: the pass retries within its deadline, counts the retries, and converges.

Most runs are in-process (`run_pass` over real HTTPS to the simulator, fast backoff); one runs the CLI
to prove the retry counts reach the JSON report.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import replace
from typing import Any

import pytest

from reconcile.settings.table import Settings
from rehash_simulator import Faults
from tests.e2e.conftest import Cluster, configmap, deployment, env_from, secret
from tests.reliability.helpers import (
    FAST,
    actions,
    expected_hash,
    foreign_changes,
    in_process_pass,
    template_hash_changes,
    template_hash_of,
)

NAMES = [f"w{i}" for i in range(4)]


def seed(c: Cluster, names: list[str] = NAMES) -> None:
    pod = env_from("configmap", "app")
    pod["containers"][0]["envFrom"].append({"secretRef": {"name": "db"}})
    c.add(configmap("app", {"a": "1"}), secret("db", {"pw": "1"}), *(deployment(n, pod) for n in names))


def adopt_then_change(c: Cluster) -> None:
    seed(c)
    assert set(actions(in_process_pass(c.sim, c.kubeconfig)).values()) == {"adopt"}
    c.edit("configmaps", "shop", "app", {"data": {"a": "2"}})
    c.sim.log.clear()


def assert_converged_with_one_rollout_each(c: Cluster, names: list[str] = NAMES) -> None:
    want = expected_hash(c.sim, "shop", [("configmap", "app", None), ("secret", "db", None)])
    for name in names:
        obj = c.get("deployments", "shop", name)
        assert template_hash_of(obj) == want, name
        assert template_hash_changes(c.sim, "deployments", "shop", name) == 1, name
        assert foreign_changes(c.sim, "deployments", "shop", name) == [], name


FaultSetup = Callable[[Faults], Any]
TRANSIENT: dict[str, FaultSetup] = {
    # 429 as kube-apiserver's flow control answers it (text/plain, Retry-After; tests/chaos_real).
    "429-retry-after-on-source-reads": lambda f: f.throttle(
        retry_after=0, method="GET", path="/(configmaps|secrets)/", max_count=3
    ),
    "500-on-the-workload-list": lambda f: f.respond(500, method="GET", path="/deployments$", max_count=2),
    "503-on-patches": lambda f: f.respond(503, method="PATCH", max_count=3),
    "connection-reset-on-list-and-patch": lambda f: (
        f.reset_connection(method="GET", path="/deployments$", max_count=1),
        f.reset_connection(method="PATCH", max_count=2),
    ),
    "slow-responses": lambda f: f.delay(0.3, probability=0.5, max_count=6),
    "503-on-every-third-request": lambda f: f.respond(503, probability=0.33, max_count=10),
}


@pytest.mark.parametrize("fault", sorted(TRANSIENT))
def test_transient_faults_are_retried_and_every_workload_rolls_exactly_once(sim: Cluster, fault: str) -> None:
    adopt_then_change(sim)
    rule = TRANSIENT[fault](sim.sim.faults)
    report = in_process_pass(sim.sim, sim.kubeconfig)
    assert set(actions(report).values()) == {"rollout"}, report.rows
    assert not report.failed and not report.interrupted
    if fault != "slow-responses":
        assert report.api["retries_total"] >= 1
        fired = sum(r.fired for r in (rule if isinstance(rule, tuple) else (rule,)))
        assert report.api["retries_total"] == fired  # every injected failure retried once, nothing more
    assert_converged_with_one_rollout_each(sim)


def test_retry_after_is_honoured_before_the_next_attempt(sim: Cluster) -> None:
    seed(sim, ["w0"])
    sim.sim.faults.throttle(retry_after=1, method="GET", path="/deployments$", max_count=1)
    started = time.monotonic()
    report = in_process_pass(sim.sim, sim.kubeconfig)
    assert time.monotonic() - started >= 1.0
    lists = sim.sim.log.entries(method="GET", path="/deployments$")
    assert [e.status for e in lists] == [429, 200]
    assert lists[1].timestamp - lists[0].timestamp >= 0.95
    assert report.api["retries"] == {"429": 1} and actions(report) == {"Deployment/shop/w0": "adopt"}


def test_an_expired_continue_token_mid_list_restarts_it_paged_and_visits_each_workload_once(
    sim: Cluster,
) -> None:
    names = [f"w{i}" for i in range(7)]
    seed(sim, names)
    sim.sim.faults.expire_continue(method="GET", path="/deployments$", nth=2, max_count=1)
    report = in_process_pass(sim.sim, sim.kubeconfig, options=replace(FAST, page_size=2))
    rows = [r.name for r in report.rows]
    assert sorted(rows) == names  # no workload missing, none twice
    assert sim.sim.log.count(method="GET", path="/deployments$", status=410) == 1
    assert set(actions(report).values()) == {"adopt"}
    assert len(sim.sim.log.entries(method="PATCH")) == len(names)


def test_a_fault_that_outlasts_the_retries_fails_only_that_workload(sim: Cluster) -> None:
    adopt_then_change(sim)
    sim.sim.faults.respond(503, method="PATCH", path="/deployments/w1$")
    report = in_process_pass(sim.sim, sim.kubeconfig)
    got = actions(report)
    assert got.pop("Deployment/shop/w1") == "failed"
    assert set(got.values()) == {"rollout"}
    sim.sim.faults.clear()
    again = in_process_pass(sim.sim, sim.kubeconfig)
    assert actions(again)["Deployment/shop/w1"] == "rollout"
    assert_converged_with_one_rollout_each(sim)


def test_the_cli_reports_retry_counts_in_its_json_report(cluster: Cluster) -> None:
    seed(cluster, ["w0", "w1"])
    cluster.sim.faults.respond(503, method="PATCH", max_count=2)
    cluster.sim.faults.throttle(retry_after=0, method="GET", path="/deployments$", max_count=1)
    result = cluster.run()
    assert result.code == 0, result.stderr
    api = result.report["api"]
    assert api["retries_total"] == 3
    assert api["retries"] == {"429": 1, "503": 2}
    assert set(result.actions().values()) == {"adopt"}


def test_an_api_that_keeps_failing_fails_the_scope_after_bounded_retries(sim: Cluster) -> None:
    """A server that keeps answering 503 gets max_retries retries, then the scope is reported failed."""
    seed(sim, ["w0"])
    sim.sim.faults.respond(503, method="GET", path="/deployments$")
    started = time.monotonic()
    report = in_process_pass(sim.sim, sim.kubeconfig, settings=Settings.of(qps=0.0))
    assert sim.sim.log.count(method="GET", path="/deployments$", status=503) == FAST.max_retries + 1
    assert time.monotonic() - started < 10
    assert report.failed
    assert report.rows[0].name == "*" and "503" in report.rows[0].reason
