"""`explain`, `plan` and the `run` that follows name one action and one reason.

Why: `explain` is what users run to ask "what will you do and why", and `plan` is the dry run they gate
on; both go through the pass's own batch path (pipeline/planner.py `plan_workload`, `plan_batch`), so for
every state a workload goes through they must agree with the run that follows on the same cluster state:
first sight, a change, notify mode, a cooldown and a closed restart window (the real server's sync that
changed template and config together: tests/real/test_fresh_pods.py).
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from tests.e2e.conftest import Backend, configmap, deployment, env_from

WATCH = "kube-rehash.io/watch"


def agree(cluster: Backend, *names: str) -> dict[str, tuple[str, str]]:
    """(action, reason) of each workload by `explain`, `plan` and the `run` after them, asserted equal."""
    said: dict[str, Any] = {}
    for name in names:
        explained = cluster.cli("explain", f"deployment/{name}", "-n", "shop", "-o", "json")
        assert explained.code in (0, 1), explained.stderr
        said[name] = json.loads(explained.stdout)
    planned = cluster.cli("plan", "-n", "shop", "-o", "json")
    assert planned.code == 0, planned.stderr
    ran = cluster.run("-n", "shop")
    out: dict[str, tuple[str, str]] = {}
    for name in names:
        plan_row = next(w for w in planned.report["workloads"] if w["name"] == name)
        run_row = ran.row("Deployment", name)
        seen = [(said[name]["action"], said[name]["reason"]), (plan_row["action"], plan_row["reason"])]
        assert seen == [(run_row["action"], run_row["reason"])] * 2, (name, seen, run_row)
        out[name] = (run_row["action"], run_row["reason"])
    return out


def closed_window() -> str:
    """A restart window that is closed all of today: one minute on another day of the week."""
    other = (datetime.now(UTC) + timedelta(days=3)).strftime("%a")
    return f"{other} 00:00-00:01"


@pytest.mark.slow
def test_explain_plan_and_run_agree_from_first_sight_through_changes(cluster: Backend) -> None:
    annotated = {
        "web": {WATCH: "true"},
        "notified": {WATCH: "true", "kube-rehash.io/on-change": "notify"},
        "cooled": {WATCH: "true", "kube-rehash.io/min-interval": "1h"},
        "windowed": {WATCH: "true", "kube-rehash.io/restart-window": closed_window()},
    }
    cluster.add(configmap("app", {"v": "1"}))
    for name, meta in annotated.items():
        cluster.add(deployment(name, env_from("configmap", "app"), annotations=meta))

    assert {n: a for n, (a, _) in agree(cluster, *annotated).items()} == dict.fromkeys(annotated, "adopt")

    cluster.edit("configmaps", "shop", "app", {"data": {"v": "2"}})
    first = agree(cluster, *annotated)
    assert first["web"] == ("rollout", "configmap/app changed")
    assert first["notified"][0] == "notify" and first["cooled"][0] == "rollout"
    assert first["windowed"][0] == "deferred" and "outside restart window" in first["windowed"][1]

    cluster.edit("configmaps", "shop", "app", {"data": {"v": "3"}})
    second = agree(cluster, "cooled", "web")
    assert second["cooled"][0] == "deferred" and "min-interval" in second["cooled"][1]
    assert second["web"][0] == "rollout"
    third = agree(cluster, "web", "notified")
    assert (third["web"][0], third["notified"][0]) == ("in-sync", "in-sync")
