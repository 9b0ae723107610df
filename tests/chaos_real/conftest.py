"""Harness of tests/chaos_real: faults produced for real on a real control plane, not by our simulator.

Why: the faults rehash_simulator injects are our own model of how a server fails. Here kube-apiserver is
SIGKILLed and restarted, etcd is compacted between two pages, API Priority and Fairness answers 429, a
ValidatingAdmissionPolicy denies patches, and other writers race the passes. Each case runs on a control
plane of this suite's own (never the session's `control`: these cases restart, compact and reconfigure
it), the tool runs as the `kube-rehash` ServiceAccount bound to the shipped ClusterRole, and every
invariant is read from the API (ReplicaSets per Deployment, annotations, managedFields) and the audit log,
never from kube-rehash's own report alone.

The figures of every case (faults injected, passes, rollouts expected / done / doubled / lost, exit codes,
longest pass against its budget) are written to `.cache/chaos-real/figures.json` (or
$KUBE_REHASH_CHAOS_REAL_OUT) at the end of the session: docs/reliability.md's table comes from that file.
"""

from __future__ import annotations

import contextlib
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.chaos_real.harness import Cluster, write_figures
from tests.cluster.controlplane import binary_dir, control_plane, missing_binaries
from tests.prerequisites import skip_or_fail


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Every test of this directory is `chaos_real` and `real` (make quick leaves it out)."""
    here = Path(__file__).parent
    for item in items:
        if here in Path(str(item.fspath)).parents:
            item.add_marker(pytest.mark.chaos_real)
            item.add_marker(pytest.mark.real)


def pytest_sessionfinish() -> None:
    write_figures()


def _need_binaries() -> None:
    if missing := missing_binaries():
        message = f"real control plane not built ({', '.join(missing)} missing in {binary_dir()})"
        skip_or_fail(message + ": run `make control-plane`")


@pytest.fixture
def planes(tmp_path: Path) -> Iterator[Callable[..., Cluster]]:
    """Start control planes of this test's own: `planes(*apiserver_flags)` (a few seconds each; stopped
    at the end of the test). Never the session's `control`: these cases kill its apiserver, compact its
    etcd, and configure its flow control and admission."""
    _need_binaries()
    with contextlib.ExitStack() as stack:

        def start(*flags: str) -> Cluster:
            cp = stack.enter_context(control_plane(nodes=1, apiserver_flags=flags))
            return Cluster(cp, Path(tempfile.mkdtemp(dir=tmp_path)))

        yield start


@pytest.fixture
def plane(planes: Callable[..., Cluster]) -> Cluster:
    """A control plane of this test's own, with kube-apiserver's default flags."""
    return planes()
