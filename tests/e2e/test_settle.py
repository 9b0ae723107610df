"""A settle window (`settle`, per workload `kube-rehash.io/settle`): a rotation written in steps restarts
the pods once, after its last step. A workload whose changed sources changed less than the window ago is
`deferred` (reason `settle`, naming the newest change and when it may roll); once every changed source has
been quiet for the window, one pass rolls it. On both servers: the times are the sources' managedFields."""

from __future__ import annotations

import json
import time

import pytest

from tests.e2e.conftest import Backend, deployment, env_from, secret

pytestmark = pytest.mark.content_times

SETTLE = 8.0  # seconds: room for a pass on a loaded machine between a write and the pass that sees it
WITH_SETTLE = {"KUBE_REHASH_SETTLE": f"{SETTLE:g}s"}


def two_step_rotation(cluster: Backend, annotations: dict[str, str] | None = None) -> None:
    both = {"containers": [{**env_from("secret", "db")["containers"][0]}]}
    both["containers"][0]["envFrom"].append({"secretRef": {"name": "api-key"}})
    cluster.add(
        secret("db", {"username": "app", "password": "one"}),
        secret("api-key", {"key": "k1"}),
        deployment("web", both, annotations=annotations),
    )


def test_a_rotation_in_two_steps_restarts_once_after_the_last_step(cluster: Backend) -> None:
    two_step_rotation(cluster)
    assert cluster.run(env=WITH_SETTLE).actions() == {"Deployment/shop/web": "adopt"}
    started = time.monotonic()
    cluster.edit("secrets", "shop", "db", {"stringData": {"password": "two"}})
    first = cluster.run(env=WITH_SETTLE).row("Deployment", "web")
    assert first["action"] == "deferred" and "settling: secret/db changed" in first["reason"], first
    cluster.edit("secrets", "shop", "api-key", {"stringData": {"key": "k2"}})
    second = cluster.run(env=WITH_SETTLE)
    row = second.row("Deployment", "web")
    assert row["action"] == "deferred" and "settling: secret/api-key changed" in row["reason"], row
    assert time.monotonic() - started < SETTLE, (
        "the passes took longer than the window: the test proves nothing"
    )
    time.sleep(SETTLE + 1.5)
    rolled = cluster.run(env=WITH_SETTLE).row("Deployment", "web")
    assert rolled["action"] == "rollout", rolled
    assert "secret/api-key" in rolled["reason"] and "secret/db" in rolled["reason"]
    assert cluster.run(env=WITH_SETTLE).actions() == {"Deployment/shop/web": "in-sync"}


def test_without_a_window_a_change_rolls_at_once_and_the_annotation_overrides_the_config(
    cluster: Backend,
) -> None:
    two_step_rotation(cluster, {"kube-rehash.io/watch": "true", "kube-rehash.io/settle": "0s"})
    cluster.run(env=WITH_SETTLE)
    cluster.edit("secrets", "shop", "db", {"stringData": {"password": "two"}})
    assert cluster.run(env=WITH_SETTLE).actions() == {"Deployment/shop/web": "rollout"}
    cluster.edit("secrets", "shop", "db", {"stringData": {"password": "three"}})
    assert cluster.run().actions() == {"Deployment/shop/web": "rollout"}  # settle unset: rolls at once


def test_plan_and_explain_show_the_settle_deferral(cluster: Backend) -> None:
    two_step_rotation(cluster, {"kube-rehash.io/watch": "true", "kube-rehash.io/settle": "1h"})
    cluster.run()
    cluster.edit("secrets", "shop", "db", {"stringData": {"password": "two"}})
    explained = cluster.cli("explain", "deployment/web", "-n", "shop")
    assert "deferred" in explained.stdout and "settling: secret/db changed" in explained.stdout
    assert "quiet for 1h" in explained.stdout
    planned = json.loads(cluster.cli("plan", "-o", "json").stdout)
    (row,) = planned["workloads"]
    assert row["action"] == "deferred" and "settling: secret/db changed" in row["reason"]
