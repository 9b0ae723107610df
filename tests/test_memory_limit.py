"""The shipped memory limit, checked: real passes of kube-rehash under the kernel-enforced
`limits.memory` of the shipped CronJob, against a cluster with the counts of the 4x benchmark shape.

The limit is read from cronjob/base/cronjob.yaml (and must equal the chart's default), never written here.
Each pass runs as `python -m reconcile` (the tree under test) in a fresh memory cgroup of exactly that size,
swap included (benchmarks/memlimit.py): an overrun is an OOM kill the cgroup counts, not a slow pass. The
cluster is `Shape().scaled(4)` — 12,000 workloads of which 4,000 opted in, 400 namespaces, 32,000 ConfigMaps
and 32,000 Secrets, 6,000 of them Helm releases — with the releases 1-2 KB instead of 50-300 KB: kube-rehash
never reads a release's content, so its peak is that of the full 4x shape (measured:
docs/engineering/performance-history.md, "The shipped limit, checked"), while the generated file is 0.48 GB
instead of 1.55 GB and the loaded simulator 1.3 GB instead of 2.8 GB.
Needs a writable memory cgroup (root on cgroup v1 or v2, as in CI); skips saying why otherwise, and
fails instead under CI=true (tests/prerequisites.py).
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
import yaml

from benchmarks.generate import Shape
from benchmarks.harness import SimulatorProcess, measure
from benchmarks.memlimit import (
    MemoryCgroup,
    passes_under_limit,
    quantity_bytes,
    shipped_limit,
    unavailable,
)
from tests.prerequisites import skip_or_fail

ROOT = Path(__file__).resolve().parents[1]
CHART_VALUES = ROOT / "charts" / "kube-rehash" / "values.yaml"
# The 4x benchmark shape with small Helm releases (see the module docstring).
SHAPE = replace(Shape().scaled(4), helm_min_kb=1, helm_max_kb=2)


@pytest.fixture
def cgroup() -> None:
    """A memory cgroup can be made here (locally a test without one skips; under CI=true it fails)."""
    if (why := unavailable()) is not None:
        skip_or_fail(f"no writable memory cgroup: {why}")


def test_the_shipped_limit_is_the_same_in_the_cronjob_and_the_chart() -> None:
    values: dict[str, Any] = yaml.safe_load(CHART_VALUES.read_text())
    assert shipped_limit() == values["resources"]["limits"]["memory"]
    assert quantity_bytes(shipped_limit()) > 0


def test_memory_quantities_are_read_as_kubernetes_reads_them() -> None:
    assert quantity_bytes("128Mi") == 128 * 1024**2
    assert quantity_bytes("1Gi") == 1024**3
    assert quantity_bytes("500M") == 500 * 1000**2
    assert quantity_bytes("64k") == 64_000
    assert quantity_bytes(1024) == 1024
    with pytest.raises(ValueError, match="not a memory quantity"):
        quantity_bytes("128 MB")


@pytest.mark.usefixtures("cgroup")
def test_a_child_over_the_limit_is_oom_killed_and_the_cgroup_counts_it() -> None:
    """The check below can fail: 3x the shipped limit in one child is killed, and counted."""
    limit = quantity_bytes(shipped_limit())
    grab = f"b = bytearray({3 * limit}); b[::4096] = b'x' * len(b[::4096])"
    with MemoryCgroup.create(limit) as group:
        child = subprocess.run([sys.executable, "-c", grab], preexec_fn=group.join, check=False)
        assert child.returncode == -9
        assert group.oom_kills() == 1
        assert 0 < group.peak_bytes() <= limit
    assert not group.path.exists()


@pytest.mark.slow
@pytest.mark.usefixtures("cgroup")
def test_every_pass_at_4x_completes_under_the_shipped_limit(tmp_path: Path) -> None:
    limit = quantity_bytes(shipped_limit())
    started = time.monotonic()
    result = passes_under_limit(
        SHAPE,
        tmp_path,
        limit_bytes=limit,
        kube_rehash=[sys.executable, "-m", "reconcile"],
        log=print,
    )
    print(f"wall {time.monotonic() - started:.0f}s under {shipped_limit()} ({limit} bytes)")
    passes = {p.name: p for p in result["passes"]}
    assert list(passes) == ["first", "steady", "change"]
    for p in passes.values():
        assert (p.name, p.exit, p.oom_kills) == (p.name, 0, 0), p.stderr_tail
        assert 0 < p.cgroup_peak_bytes <= limit
        # VmHWM also counts the interpreter's and libraries' shared pages, which the cgroup did not charge
        # (another process had read them first), as a container's cgroup would: it too fits the limit.
        assert 0 < p.vm_hwm_mb * 2**20 <= limit
        assert p.summary["workloads"] == SHAPE.opted_in
    # The passes did the work of a 4x cluster: every opted-in workload adopted, then nothing to do, then the
    # workloads of the changed sources rolled.
    assert passes["first"].summary["adopt"] == SHAPE.opted_in
    assert passes["steady"].summary["in-sync"] == SHAPE.opted_in
    assert passes["change"].summary["rollout"] > 0
    assert result["changed"] > 0


def oom_cluster() -> list[dict[str, Any]]:
    """Forty small namespaces, each one workload on one small ConfigMap; then one namespace whose workload
    uses thirty ConfigMaps of 900 KB each, whole: read as one page, far more than a small pod holds."""
    objects: list[dict[str, Any]] = []

    def workload(ns: str, sources: list[str]) -> dict[str, Any]:
        env = [{"configMapRef": {"name": name}} for name in sources]
        template = {
            "metadata": {"labels": {"app": "w"}},
            "spec": {"containers": [{"name": "c", "image": "x", "envFrom": env}]},
        }
        return {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {"name": "w", "namespace": ns, "annotations": {"kube-rehash.io/watch": "true"}},
            "spec": {"selector": {"matchLabels": {"app": "w"}}, "template": template},
        }

    def namespace(ns: str) -> dict[str, Any]:
        return {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}}

    def configmap(ns: str, name: str, size: int) -> dict[str, Any]:
        return {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": name, "namespace": ns},
            "data": {"v": "x" * size},
        }

    for i in range(40):
        ns = f"small-{i:02}"
        objects += [namespace(ns), configmap(ns, "app", 100), workload(ns, ["app"])]
    big = [f"big-{i:02}" for i in range(30)]
    objects += [
        namespace("zz-big"),
        *(configmap("zz-big", n, 900 * 1024) for n in big),
        workload("zz-big", big),
    ]
    return objects


@pytest.mark.slow
@pytest.mark.usefixtures("cgroup")
def test_a_pass_killed_for_memory_loses_nothing_and_the_next_pass_within_its_budget_goes_on(
    tmp_path: Path,
) -> None:
    """A pass told it may hold far more than its pod's limit (memoryBudget 2Gi, pages of 5000) is killed by
    the kernel when it reaches the big namespace; what it wrote before stands. The next pass, its budget
    taken from the same cgroup's limit, reads that namespace in pieces within it, adopts what was left and
    finds the rest in sync from what the first one recorded: nothing adopted twice, nothing rolled."""
    load = tmp_path / "cluster.json"
    load.write_text(json.dumps(oom_cluster()))
    limit = 80 * 1024 * 1024  # the greedy pass peaks at about 95 MiB, one within its budget at 44
    greedy = tmp_path / "greedy.yaml"
    greedy.write_text("qps: 0\nmemoryBudget: 2Gi\npageSize: 5000\n")
    with SimulatorProcess(load, tmp_path) as sim:
        argv = [sys.executable, "-m", "reconcile", "run", "-o", "json", "--kubeconfig", str(sim.kubeconfig)]

        def run(*extra: str) -> tuple[Any, int]:
            with MemoryCgroup.create(limit) as group:
                measured = measure("kube-rehash", [*argv, *extra], sim, preexec=group.join)
                return measured, group.oom_kills()

        killed, kills = run("--config", str(greedy))
        assert (killed.code, kills) == (-9, 1), killed.stderr[-2000:]
        adopted = [ns for ns in (f"small-{i:02}" for i in range(40)) if recorded(sim, ns)]
        assert adopted, "the killed pass wrote nothing before its kill"
        survived, kills = run()
        assert (survived.code, kills) == (0, 0), survived.stderr[-2000:]
        rows = {w["namespace"]: w["action"] for w in json.loads(survived.stdout)["workloads"]}
        assert rows == {ns: "in-sync" if ns in adopted else "adopt" for ns in rows}
        assert len(rows) == 41 and rows["zz-big"] == "adopt"
        assert all(recorded(sim, ns) for ns in rows)


def recorded(sim: SimulatorProcess, namespace: str) -> bool:
    got = sim.session.get(f"{sim.server}/apis/apps/v1/namespaces/{namespace}/deployments/w")
    return "kube-rehash.io/config-hash" in (got.json()["metadata"].get("annotations") or {})
