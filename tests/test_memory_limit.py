"""The shipped memory limit, checked (issue 24): real passes of kube-rehash under the kernel-enforced
`limits.memory` of the shipped CronJob, against a cluster with the counts of the 4x benchmark shape.

The limit is read from cronjob/base/cronjob.yaml (and must equal the chart's default), never written here.
Each pass runs as `python -m reconcile` (the tree under test) in a fresh memory cgroup of exactly that size,
swap included (benchmarks/memlimit.py): an overrun is an OOM kill the cgroup counts, not a slow pass. The
cluster is `Shape().scaled(4)` — 12,000 workloads of which 4,000 opted in, 400 namespaces, 32,000 ConfigMaps
and 32,000 Secrets, 6,000 of them Helm releases — with the releases 1-2 KB instead of 50-300 KB: kube-rehash
never reads a release's content, so its peak is that of the full 4x shape (measured: docs/performance.md,
"Memory"), while the generated file is 0.48 GB instead of 1.55 GB and the loaded simulator 1.3 GB instead
of 2.8 GB.
Needs a writable memory cgroup (root on cgroup v1 or v2, as in CI); skips saying why otherwise, and
fails instead under CI=true (tests/prerequisites.py).
"""

from __future__ import annotations

import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
import yaml

from benchmarks.generate import Shape
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
