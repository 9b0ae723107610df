"""The README's real-cluster Quick start, typed verbatim, against `kube-rehash simulate` and its kubectl.

Why: the block is what a newcomer types first; on the simulator it must run unchanged (kubectl 1.37 sends
its creates as protobuf and validates through OpenAPI). The block is read from README.md itself: the ```sh
block after "On a real control plane". Its export line points KUBECONFIG at `$PWD/.cache/cluster/kubeconfig`
and PATH at `$PWD/.venv/bin`, so the lines run in a directory where those are the simulator's kubeconfig and
this checkout's venv. Each line's outcome is checked: adopt on the first pass, the rollout pending in `plan`
(nothing written), the rollout in `run` (the pod template gets the hash annotation). The simulator starts
no ReplicaSets (its rollout controller is off under `simulate`): the comment's `kubectl get rs` shows none.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
VENV_BIN = REPO / ".venv" / "bin"
HASH = "kube-rehash.io/config-hash"


def quick_start_block() -> list[str]:
    """The command lines of the ```sh block that follows "On a real control plane" in README.md."""
    text = (REPO / "README.md").read_text()
    start = text.index("On a real control plane")
    match = re.search(r"^```sh\n(.*?)^```", text[start:], re.M | re.S)
    assert match, "README.md has no ```sh block after 'On a real control plane'"
    return [line for line in match[1].splitlines() if line.strip() and not line.startswith("#")]


@pytest.fixture
def workdir(tmp_path: Path) -> Iterator[Path]:
    """A directory laid out as the block expects, with `kube-rehash simulate` serving its kubeconfig."""
    (tmp_path / ".venv").symlink_to(REPO / ".venv")
    kubeconfig = tmp_path / ".cache" / "cluster" / "kubeconfig"
    log = (tmp_path / "simulate.out").open("w")
    server = subprocess.Popen(
        [str(VENV_BIN / "kube-rehash"), "simulate", "--kubeconfig-out", str(kubeconfig)],
        stdout=log,
        stderr=subprocess.STDOUT,
        cwd=tmp_path,
    )
    try:
        deadline = time.monotonic() + 30
        while "Ctrl-C stops it." not in (tmp_path / "simulate.out").read_text():
            assert server.poll() is None, (tmp_path / "simulate.out").read_text()
            assert time.monotonic() < deadline, "kube-rehash simulate did not come up in 30 s"
            time.sleep(0.1)
        yield tmp_path
    finally:
        server.terminate()
        server.wait(timeout=10)
        log.close()


def run_line(workdir: Path, export: str, line: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("KUBECONFIG", "KUBE_REHASH_CONFIG")}
    result = subprocess.run(
        ["bash", "-c", f"{export}\n{line}"],
        cwd=workdir,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 0, f"{line!r} failed ({result.returncode}): {result.stdout}{result.stderr}"
    return result


def rows(output: str) -> list[list[str]]:
    """The table rows (ACTION KIND NAMESPACE NAME REASON...) of a kube-rehash pass."""
    lines = output.splitlines()
    header = next(i for i, line in enumerate(lines) if line.startswith("ACTION"))
    table = []
    for line in lines[header + 1 :]:
        if not line.strip() or re.match(r"^\d+ workloads?:", line):
            break
        table.append(line.split(None, 4))
    return table


def pod_template(workdir: Path, export: str) -> dict[str, object]:
    """web's pod template (a rollout changes it: the hash annotation; adopt records the hash elsewhere)."""
    got = json.loads(run_line(workdir, export, "kubectl get deployment web -o json").stdout)
    template: dict[str, object] = got["spec"]["template"]
    return template


def test_readme_quick_start_runs_verbatim_on_the_simulator(workdir: Path) -> None:
    export, *lines = quick_start_block()
    assert export.startswith("export KUBECONFIG=$PWD/.cache/cluster/kubeconfig PATH=$PWD/.venv/bin:")
    expected = [
        "kubectl create configmap app --from-literal=color=blue",
        "kubectl create deployment web --image=nginx",
        "kubectl set env deployment/web --from=configmap/app",
        "kubectl annotate deployment web kube-rehash.io/watch=true",
        "kube-rehash run",
        'kubectl patch configmap app -p \'{"data":{"color":"green"}}\'',
        "kube-rehash plan",
        "kube-rehash run",
    ]
    assert [line.split("  #")[0].strip() for line in lines] == expected, "the README's block changed"
    outputs = [run_line(workdir, export, line) for line in lines[:4]]
    assert [o.stdout.strip() for o in outputs] == [
        "configmap/app created",
        "deployment.apps/web created",
        "deployment.apps/web env updated",
        "deployment.apps/web annotated",
    ]
    assert "Warning: key color transferred to COLOR" in outputs[2].stderr

    before = pod_template(workdir, export)
    adopt = rows(run_line(workdir, export, lines[4]).stdout)
    assert adopt == [
        ["adopt", "Deployment", "default", "web", "first sight: hash recorded without a rollout"]
    ]
    assert pod_template(workdir, export) == before  # nothing restarts

    assert run_line(workdir, export, lines[5]).stdout.strip() == "configmap/app patched"
    planned = run_line(workdir, export, lines[6]).stdout
    assert rows(planned) == [["rollout", "Deployment", "default", "web", "configmap/app changed"]]
    assert "(dry run: nothing written)" in planned
    assert pod_template(workdir, export) == before

    rolled = rows(run_line(workdir, export, lines[7]).stdout)
    assert rolled == [["rollout", "Deployment", "default", "web", "configmap/app changed"]]
    after = pod_template(workdir, export)
    assert after["spec"] == before["spec"]
    assert HASH in after["metadata"]["annotations"]  # type: ignore[index,operator]
    replica_sets = run_line(workdir, export, "kubectl get rs")
    assert replica_sets.stderr.strip() == "No resources found in default namespace."
