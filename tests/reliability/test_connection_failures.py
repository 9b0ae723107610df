"""A connection that keeps failing mid-pass (after the retries) fails the affected workload or scope;
it never crashes the pass, so the report is still produced and the rest is processed."""

from __future__ import annotations

from tests.e2e.conftest import Cluster, configmap, deployment, env_from
from tests.reliability.helpers import actions, in_process_pass


def seed_changed(c: Cluster) -> None:
    c.add(
        configmap("app", {"a": "1"}), *(deployment(n, env_from("configmap", "app")) for n in ("web", "api"))
    )
    in_process_pass(c.sim, c.kubeconfig)
    c.edit("configmaps", "shop", "app", {"data": {"a": "2"}})


def test_a_reset_event_post_does_not_crash_the_pass_and_the_rollouts_are_reported(sim: Cluster) -> None:
    seed_changed(sim)
    sim.sim.faults.reset_connection(method="POST", path="/events$")
    report = in_process_pass(sim.sim, sim.kubeconfig)
    got = actions(report)
    assert got["Deployment/shop/web"] == "rollout" and got["Deployment/shop/api"] == "rollout"


def test_patches_that_never_get_through_fail_their_workloads_not_the_pass(sim: Cluster) -> None:
    seed_changed(sim)
    sim.sim.faults.reset_connection(method="PATCH", path="/deployments/web$")
    report = in_process_pass(sim.sim, sim.kubeconfig)
    got = actions(report)
    assert got["Deployment/shop/web"] == "failed" and got["Deployment/shop/api"] == "rollout"
    row = next(r for r in report.rows if r.name == "web")
    assert "cannot reach" in row.reason


def test_a_workload_list_that_never_gets_through_fails_its_scope_not_the_pass(sim: Cluster) -> None:
    seed_changed(sim)
    sim.sim.faults.reset_connection(method="GET", path="/statefulsets$")
    report = in_process_pass(sim.sim, sim.kubeconfig)
    got = actions(report)
    assert got["StatefulSet/*/*"] == "failed"
    assert got["Deployment/shop/web"] == "rollout" and got["Deployment/shop/api"] == "rollout"


def test_a_source_read_that_never_gets_through_fails_its_own_row_and_skips_its_workloads(
    sim: Cluster,
) -> None:
    seed_changed(sim)
    sim.sim.faults.reset_connection(method="GET", path="/configmaps/app$")
    report = in_process_pass(sim.sim, sim.kubeconfig)
    got = actions(report)
    assert got.pop("ConfigMap/shop/app") == "failed"
    assert got and set(got.values()) == {"skipped"}
