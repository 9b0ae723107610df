"""What `helm install` prints is true: the chart's NOTES.txt and its copy in the chart's README are one text
(scripts/gen-chart-notes.py), and the notes' commands and claims hold when run against the API simulator
with the CLI: the annotation opts a workload in, the plan command with `--hash-key-secret` plans with the
cluster's key, a plan without it leaves keyed hashes `skipped`, and a new key restarts nothing (`refresh`)
while a real change still rolls once. tests/test_chart.py checks that helm prints exactly this example.
"""

from __future__ import annotations

import base64
import re
import shlex
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from reconcile.cli.commands import build_parser
from reconcile.settings.table import BY_NAME
from rehash_simulator import Simulator
from tests.e2e.backends import Cluster
from tests.e2e.conftest import configmap, deployment, env_from, secret, template_hash
from tests.test_chart import ROOT, load_notes_generator

NOTES = load_notes_generator()
KEYS = ("key-1-0123456789abcdef0123456789", "key-2-0123456789abcdef0123456789", "key-3-0123456789abcdef01")


def said() -> str:
    """The example notes with their line breaks as spaces (claims span lines)."""
    return " ".join(NOTES.example().split())


def command(starts: str) -> list[str]:
    """The one command line of the example notes that starts with `starts`."""
    found = [line.strip() for line in NOTES.example().splitlines() if line.strip().startswith(starts)]
    assert len(found) == 1, f"expected one `{starts} ...` line in the notes, found {found}"
    return shlex.split(found[0])


def test_notes_and_chart_readme_are_generated_from_one_text() -> None:
    script = ROOT / "scripts" / "gen-chart-notes.py"
    result = subprocess.run(
        [sys.executable, str(script), "--check"], capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, (
        result.stderr
    )  # names the stale file: run python scripts/gen-chart-notes.py
    readme = (ROOT / "charts" / "kube-rehash" / "README.md").read_text(encoding="utf-8")
    assert NOTES.TEXT in readme


def test_the_flag_the_notes_plan_with_is_the_hash_key_secret_setting_of_plan() -> None:
    argv = command("kube-rehash plan")
    flag = argv[2]
    assert flag in BY_NAME["hash_key_secret"].flag.names
    parsed = build_parser().parse_args(argv[1:])
    assert parsed.command == "plan" and parsed.hash_key_secret == argv[3]


@pytest.fixture
def cluster(tmp_path: Path) -> Iterator[Cluster]:
    with Simulator().start() as sim:
        yield Cluster(sim, tmp_path)


def key_env(cluster: Cluster, key: str) -> dict[str, str]:
    """A pass hashing with `key`, as the CronJob does (its hashKeyFile)."""
    path = cluster.tmp / f"{key[:5]}.key"
    path.write_text(key)
    return {"KUBE_REHASH_HASH_KEY_FILE": str(path)}


def set_cluster_key(cluster: Cluster, namespace: str, name: str, key: str) -> None:
    """The chart's hash-key Secret holding `key` (what a new install or a re-created Secret does)."""
    if cluster.exists("secrets", namespace, name):
        cluster.edit("secrets", namespace, name, {"data": {"key": base64.b64encode(key.encode()).decode()}})
    else:
        cluster.add(secret(name, {"key": key}, ns=namespace))


def test_the_notes_commands_and_claims_hold_against_the_tool(cluster: Cluster) -> None:
    text = said()
    _, _, _, annotation = command("kubectl annotate deployment/web")
    opt_in, value = annotation.split("=", 1)
    plan = command("kube-rehash plan")
    namespace, name = plan[3].split("/")
    quoted = re.search(r'skipped \("([^"]+)"\), never rolled', text)
    assert quoted, text
    assert "A new key restarts nothing either" in text and "(action refresh)" in text
    assert "a source that changed as well still rolls its workloads, once" in text

    set_cluster_key(cluster, namespace, name, KEYS[0])
    cluster.add(configmap("app", {"a": "1"}), deployment("web", env_from("configmap", "app"), annotations={}))
    cluster.edit("deployments", "shop", "web", {"metadata": {"annotations": {opt_in: value}}})
    adopted = cluster.run(env=key_env(cluster, KEYS[0]))
    assert adopted.actions() == {"Deployment/shop/web": "adopt"}, adopted.stdout

    # The notes' plan command: the cluster's key, read from its Secret; nothing written.
    cluster.clear_log()
    planned = cluster.cli(*plan[1:], "-o", "json")
    assert planned.code == 0, planned.stderr
    assert planned.actions() == {"Deployment/shop/web": "in-sync"}
    # Without the key: skipped, saying what the notes quote, never rolled.
    unkeyed = cluster.cli("plan", "-o", "json")
    assert unkeyed.code == 0, unkeyed.stderr
    row = unkeyed.row("Deployment", "web")
    assert row["action"] == "skipped" and quoted.group(1) in row["reason"]
    assert cluster.writes() == []

    # A new key: refresh, the pod template untouched; the notes' plan then agrees with the CronJob.
    set_cluster_key(cluster, namespace, name, KEYS[1])
    rekeyed = cluster.run(env=key_env(cluster, KEYS[1]))
    assert rekeyed.row("Deployment", "web")["action"] == "refresh", rekeyed.stdout
    assert template_hash(cluster.get("deployments", "shop", "web")) is None
    assert cluster.cli(*plan[1:], "-o", "json").actions() == {"Deployment/shop/web": "in-sync"}

    # Another new key and a changed source together: one rollout, then in sync.
    set_cluster_key(cluster, namespace, name, KEYS[2])
    cluster.edit("configmaps", "shop", "app", {"data": {"a": "2"}})
    rolled = cluster.run(env=key_env(cluster, KEYS[2]))
    assert rolled.row("Deployment", "web")["action"] == "rollout", rolled.stdout
    assert template_hash(cluster.get("deployments", "shop", "web")) is not None
    assert cluster.run(env=key_env(cluster, KEYS[2])).actions() == {"Deployment/shop/web": "in-sync"}


def test_the_notes_name_no_key_file_to_decode_and_no_rollout_for_a_new_key() -> None:
    text = said()
    for stale in ("rolls every", "every workload look", "base64 -d", "KUBE_REHASH_HASH_KEY_FILE"):
        assert stale not in text
