"""The report's summary agrees with its rows by construction, scope failures included.

A scope that cannot be read is one `failed` row named `*`; `summary.workloads` is the number of rows and
each action's count is the number of rows with that action, so the arithmetic always adds up.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest

from tests.e2e.conftest import Backend, configmap, deployment, env_from

pytestmark = pytest.mark.sim_only("fault injection")


def assert_summary_matches_rows(report: dict[str, Any]) -> None:
    rows = report["workloads"]
    summary = report["summary"]
    assert summary["workloads"] == len(rows)
    by_action = Counter(row["action"] for row in rows)
    for action in ("rollout", "adopt", "in-sync", "refresh", "notify", "deferred", "skipped", "failed"):
        assert summary[action] == by_action.get(action, 0), action
    assert sum(by_action.values()) == summary["workloads"]


def test_a_forbidden_list_in_one_namespace_is_one_failed_row_counted_in_the_summary(cluster: Backend) -> None:
    for ns in ("a", "b"):
        cluster.add(
            configmap("app", {"k": "v"}, ns=ns), deployment("web", env_from("configmap", "app"), ns=ns)
        )
    cluster.sim.faults.respond(
        403, reason="Forbidden", method="GET", path=r"^/apis/apps/v1/namespaces/b/deployments$"
    )
    result = cluster.run("-n", "a", "-n", "b")
    assert result.code == 1
    report = result.report
    scope = [w for w in report["workloads"] if w["name"] == "*"]
    assert [(w["kind"], w["namespace"], w["action"]) for w in scope] == [("Deployment", "b", "failed")]
    assert "403" in scope[0]["reason"]
    assert_summary_matches_rows(report)
    assert report["summary"]["failed"] == 1 and report["summary"]["adopt"] == 1


@pytest.mark.slow
def test_a_list_that_keeps_failing_is_counted_once_as_a_failed_scope(cluster: Backend) -> None:
    cluster.add(configmap("app", {"k": "v"}), deployment("web", env_from("configmap", "app")))
    cluster.sim.faults.respond(500, method="GET", path=r"/statefulsets$")
    report = cluster.run().report
    assert [w["kind"] for w in report["workloads"] if w["action"] == "failed"] == ["StatefulSet"]
    assert_summary_matches_rows(report)
