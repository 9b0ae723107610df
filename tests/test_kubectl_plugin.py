"""kube-rehash as a kubectl plugin: `kubectl rehash plan|run|explain …`, found by the real kubectl on PATH.

kubectl runs any executable named `kubectl-<name>` on PATH for `kubectl <name>` and passes it the arguments
that follow; the distribution installs the CLI a second time as `kubectl-rehash`. The plugin honours the
flags kubectl users type (`--kubeconfig`, `--context`, `-n`) and names itself `kubectl rehash` in its usage
and errors.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from rehash_simulator import Simulator
from tests.e2e.conftest import configmap, deployment, env_from

BIN = Path(sys.executable).parent
KUBECTL = str(BIN / "kubectl")


def kubectl(*args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("KUBECONFIG", "KUBE_REHASH_"))}
    env["PATH"] = f"{BIN}{os.pathsep}{env.get('PATH', '')}"
    return subprocess.run([KUBECTL, *args], capture_output=True, text=True, timeout=60, env=env, check=False)


@pytest.fixture
def seeded(tmp_path: Path) -> Iterator[Path]:
    """A simulator with one opted-in Deployment and its ConfigMap; its kubeconfig."""
    with Simulator().start() as sim:
        sim.store.create(configmap("app", {"a": "1"}))
        sim.store.create(deployment("web", env_from("configmap", "app")))
        yield sim.write_kubeconfig(tmp_path / "kubeconfig")


def test_kubectl_finds_the_plugin_on_path() -> None:
    listed = kubectl("plugin", "list", "--name-only")
    assert "kubectl-rehash" in listed.stdout.split(), listed.stdout + listed.stderr
    version = kubectl("rehash", "version")
    assert version.returncode == 0 and version.stdout.startswith("kube-rehash "), version.stderr


def test_plan_and_explain_through_kubectl_with_its_flags(seeded: Path) -> None:
    plan = kubectl("rehash", "plan", "--kubeconfig", str(seeded), "-n", "shop", "-o", "json")
    assert plan.returncode == 0, plan.stderr
    (row,) = json.loads(plan.stdout)["workloads"]
    assert (row["name"], row["action"]) == ("web", "adopt")
    explain = kubectl("rehash", "explain", "deploy/web", "-n", "shop", "--kubeconfig", str(seeded))
    assert explain.returncode == 0, explain.stderr
    assert "configmap/app" in explain.stdout


def test_an_unknown_context_is_refused_as_kubectl_would(seeded: Path) -> None:
    done = kubectl("rehash", "plan", "--kubeconfig", str(seeded), "--context", "nope")
    assert done.returncode in (2, 4) and "nope" in done.stderr, done.stderr


def test_usage_and_errors_name_kubectl_rehash() -> None:
    done = kubectl("rehash")
    assert done.returncode == 2 and done.stderr.startswith("kubectl rehash: error:"), done.stderr
    helped = kubectl("rehash", "plan", "--help")
    assert helped.returncode == 0 and "usage: kubectl rehash plan" in helped.stdout, helped.stdout
