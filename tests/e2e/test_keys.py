"""Keys never restart anything, end to end: a pass under another hash key than the one a stored hash was
made with re-records it (or, without a key, leaves it) and never rolls for that reason; a real change after
it still rolls exactly once. And the laptop's way to plan with the cluster's key: `--hash-key-secret`."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.e2e.conftest import Backend, configmap, deployment, env_from, secret, template_hash

ROW = "Deployment/shop/web"


def key_file(cluster: Backend, name: str, key: str) -> dict[str, str]:
    """The environment of a pass hashing with `key` (config hashKeyFile, through its env variable)."""
    path = Path(cluster.tmp) / f"{name}.key"
    path.write_text(key)
    return {"KUBE_REHASH_HASH_KEY_FILE": str(path)}


def seed(cluster: Backend) -> None:
    cluster.add(configmap("app", {"a": "1"}), deployment("web", env_from("configmap", "app")))


def change_and_roll_once(cluster: Backend, env: dict[str, str]) -> None:
    """A real content change under the pass's key rolls exactly once, then the workload is in sync."""
    before = template_hash(cluster.get("deployments", "shop", "web"))
    cluster.edit("configmaps", "shop", "app", {"data": {"a": "2"}})
    rolled = cluster.run(env=env)
    assert rolled.row("Deployment", "web")["action"] == "rollout", rolled.stdout
    assert rolled.row("Deployment", "web")["reason"].startswith("configmap/app changed")
    after = template_hash(cluster.get("deployments", "shop", "web"))
    assert after is not None and after != before
    assert cluster.run(env=env).actions() == {ROW: "in-sync"}
    assert template_hash(cluster.get("deployments", "shop", "web")) == after


def test_adopted_unkeyed_then_run_keyed_re_records_without_a_rollout(cluster: Backend) -> None:
    seed(cluster)
    assert cluster.run().actions() == {ROW: "adopt"}
    keyed = key_file(cluster, "a", "key-a-0123456789abcdef0123456789")
    result = cluster.run(env=keyed)
    row = result.row("Deployment", "web")
    assert row["action"] == "refresh", result.stdout
    assert row["reason"].startswith("hash key changed (unkeyed → fingerprint ")
    assert row["reason"].endswith("sources unchanged: re-recorded")
    assert row["hash"].startswith("v1k:")
    assert template_hash(cluster.get("deployments", "shop", "web")) is None  # the pod template untouched
    assert cluster.run(env=keyed).actions() == {ROW: "in-sync"}
    change_and_roll_once(cluster, keyed)


@pytest.mark.slow
def test_rolled_under_key_a_then_run_under_key_b_names_the_key_and_never_rolls(cluster: Backend) -> None:
    seed(cluster)
    key_a = key_file(cluster, "a", "key-a-0123456789abcdef0123456789")
    key_b = key_file(cluster, "b", "key-b-0123456789abcdef0123456789")
    assert cluster.run(env=key_a).actions() == {ROW: "adopt"}
    cluster.edit("configmaps", "shop", "app", {"data": {"a": "1", "b": "1"}})
    assert cluster.run(env=key_a).actions() == {ROW: "rollout"}
    rolled = template_hash(cluster.get("deployments", "shop", "web"))
    result = cluster.run(env=key_b)
    row = result.row("Deployment", "web")
    assert row["action"] == "refresh", result.stdout
    assert row["reason"].startswith("hash key changed (fingerprint ")
    assert " → fingerprint " in row["reason"]
    assert template_hash(cluster.get("deployments", "shop", "web")) == rolled
    assert cluster.run(env=key_b).actions() == {ROW: "in-sync"}
    unkeyed = cluster.cli("plan", "-o", "json")
    assert unkeyed.code == 0, unkeyed.stderr
    row = unkeyed.row("Deployment", "web")
    assert row["action"] == "skipped"
    assert "run with the cluster's key (--hash-key-secret NAMESPACE/NAME" in row["reason"]
    explained = cluster.cli("explain", "deployment/web", "-n", "shop")
    assert "decision:     skipped: stored hash was made with a hash key" in explained.stdout
    change_and_roll_once(cluster, key_b)


def test_plan_with_the_clusters_key_from_its_secret_agrees_with_the_keyed_run(cluster: Backend) -> None:
    seed(cluster)
    key = "key-s-0123456789abcdef0123456789"
    cluster.add(secret("rehash-key", {"key": key}))
    keyed = key_file(cluster, "s", key)
    cluster.run(env=keyed)
    cluster.edit("configmaps", "shop", "app", {"data": {"a": "3"}})
    ref = f"{cluster.ns('shop')}/rehash-key"
    cluster.clear_log()
    planned = cluster.cli("plan", "-o", "json", "--hash-key-secret", ref)
    assert planned.code == 0, planned.stderr
    assert planned.row("Deployment", "web")["action"] == "rollout"
    assert planned.row("Deployment", "web")["reason"] == "configmap/app changed"
    assert cluster.writes() == []
    assert cluster.run(env=keyed).row("Deployment", "web")["hash"] == planned.row("Deployment", "web")["hash"]


def test_hash_key_secret_errors_name_the_secret_and_exit_2(cluster: Backend) -> None:
    seed(cluster)
    cluster.add(secret("short", {"key": "too-short"}))
    missing = cluster.cli("plan", "--hash-key-secret", f"{cluster.ns('shop')}/absent")
    assert missing.code == 2 and "hashKeySecret shop/absent: cannot read it" in missing.stderr
    short = cluster.cli("plan", "--hash-key-secret", f"{cluster.ns('shop')}/short")
    assert short.code == 2 and "the key must have at least 16 bytes" in short.stderr
    assert "too-short" not in short.stderr
    both = cluster.cli(
        "plan", "--hash-key-secret", "shop/short", env=key_file(cluster, "f", "key-f-0123456789abcdef")
    )
    assert both.code == 2 and "not both" in both.stderr
