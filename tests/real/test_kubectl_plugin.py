"""`kubectl rehash`: the real kubectl runs the kubectl-rehash console script (setup.cfg) as a plugin.

Why: users of the plugin pass kubectl's own flags (--kubeconfig, --context, -n) and short kind names
(deploy/web); kubectl hands them to the plugin untouched, so the CLI must honour them. Proven against the
real control plane: --context picks the right cluster out of a kubeconfig whose current context is dead.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from tests.real.conftest import BIN, KUBECTL, Kube, configmap, pod_spec, workload


def kubectl_rehash(*args: str) -> subprocess.CompletedProcess[str]:
    """The real kubectl with .venv/bin first on PATH (where kubectl-rehash is), as a user's shell has it."""
    env = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}"}
    env.pop("KUBECONFIG", None)
    return subprocess.run(
        [KUBECTL, "rehash", *args], capture_output=True, text=True, env=env, timeout=120, check=False
    )


def test_kubectl_rehash_version_runs_the_plugin() -> None:
    done = kubectl_rehash("version")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("kube-rehash ")


def _two_context_kubeconfig(kube: Kube, path: Path) -> Path:
    """The control plane's kubeconfig plus a current context `dead` pointing nowhere."""
    config = json.loads(kube.cp.kubeconfig.read_text())
    live = config["current-context"]
    config["clusters"].append({"name": "dead", "cluster": {"server": "https://127.0.0.1:1"}})
    config["contexts"].append({"name": "dead", "context": {"cluster": "dead", "user": live}})
    config["current-context"] = "dead"
    path.write_text(json.dumps(config))
    path.chmod(0o600)
    return path


def test_kubectl_rehash_plan_and_explain_honour_kubeconfig_context_and_namespace(
    kube: Kube, tmp_path: Path
) -> None:
    kube.apply(
        configmap("web-config", {"a": "1"}), workload("Deployment", "web", pod_spec(("web-config",), ()))
    )
    kubeconfig = _two_context_kubeconfig(kube, tmp_path / "kubeconfig")
    live = json.loads(kube.cp.kubeconfig.read_text())["current-context"]

    plan = kubectl_rehash("plan", "--kubeconfig", str(kubeconfig), "--context", live, "-n", kube.ns)
    assert plan.returncode == 0, plan.stderr
    assert "web" in plan.stdout and kube.ns in plan.stdout, plan.stdout

    explain = kubectl_rehash(
        "explain", "deploy/web", "--kubeconfig", str(kubeconfig), "--context", live, "-n", kube.ns
    )
    assert explain.returncode == 0, explain.stderr
    assert "web-config" in explain.stdout, explain.stdout

    # Without --context the kubeconfig's current context (dead) is used: the flag above was honoured.
    dead = kubectl_rehash("plan", "--kubeconfig", str(kubeconfig), "-n", kube.ns)
    assert dead.returncode != 0
