"""The session's real control plane, shared by tests/e2e (its `real` backend) and tests/real.

Why here: starting etcd, kube-apiserver, the controllers and kwok costs seconds of wall time and about a core;
one `control` fixture at the root starts it once per pytest session, for whichever suite asks first. The
binaries come from `make control-plane`; without them `control` skips locally with a clear message but fails
under CI=true or KUBE_REHASH_REAL=1, so CI never silently skips. (pytest loads this file as the module
`conftest`: import nothing from it; shared helpers live in tests/e2e/backends.py.)
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.cluster.controlplane import (
    ControlPlane,
    binary_dir,
    control_plane,
    missing_binaries,
    pinned_version,
)
from tests.prerequisites import skip_or_fail

_SERVER_VERSION: dict[str, Any] = {}


def pytest_report_header() -> str:
    return f"real control plane: k8s.io/kubernetes {pinned_version()} from {binary_dir()}"


def pytest_terminal_summary(terminalreporter: Any) -> None:
    if _SERVER_VERSION:
        v = _SERVER_VERSION
        terminalreporter.write_line(
            f"tests/real and tests/e2e[real] ran against kube-apiserver {v.get('gitVersion')} "
            f"({v.get('goVersion')}, {v.get('platform')})"
        )


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Every test that uses the control plane is marked `real`, so `make quick` can leave them all out."""
    for item in items:
        if "control" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.real)


@pytest.fixture(scope="session")
def control() -> Iterator[ControlPlane]:
    """The session's control plane (etcd, kube-apiserver, controllers, scheduler, kwok with 3 nodes)."""
    if missing := missing_binaries():
        message = (
            f"real control plane not built ({', '.join(missing)} missing in {binary_dir()}): "
            "run `make control-plane`"
        )
        skip_or_fail(message)
    with control_plane() as cp:
        _SERVER_VERSION.update(cp.version())
        yield cp


@pytest.fixture(scope="session")
def helm() -> Path:
    """The pinned helm (`make helm`; tests/test_chart.py, tests/real/test_chart_install.py). Missing, it
    skips locally and fails under CI=true or KUBE_REHASH_REAL=1, as the control plane does."""
    from tests.test_chart import helm_binary

    binary = helm_binary()
    if not os.access(binary, os.X_OK):
        message = f"helm not built ({binary} missing): run `make helm`"
        skip_or_fail(message)
    return binary


@pytest.fixture(scope="session")
def promtool() -> Path:
    """The pinned promtool (`make promtool`; tests/test_monitoring.py). Missing, it skips locally and fails
    under CI=true or KUBE_REHASH_REAL=1, as helm does."""
    from tests.test_monitoring import promtool_binary

    binary = promtool_binary()
    if not os.access(binary, os.X_OK):
        skip_or_fail(f"promtool not built ({binary} missing): run `make promtool`")
    return binary


@pytest.fixture(scope="session")
def dist(helm: Path) -> Path:
    """dist/ as `make dist` leaves it (tests/test_dist.py, tests/test_krew_manifest.py), stamp-cached."""
    from tests.test_dist import build_dist

    return build_dist()


@pytest.fixture(scope="session")
def krew() -> Path:
    """The pinned krew (`make krew`; tests/test_dist.py). Missing: a skip locally, a failure under CI=true."""
    from tests.test_dist import krew_binary

    binary = krew_binary()
    if not os.access(binary, os.X_OK):
        skip_or_fail(f"krew not built ({binary} missing): run `make krew`")
    return binary


@pytest.fixture(scope="session")
def cosign() -> Path:
    """The pinned cosign (`make cosign`; tests/test_dist_signing.py). Missing: a skip locally, a failure under
    CI=true."""
    from tests.test_dist_signing import cosign_binary

    binary = cosign_binary()
    if not os.access(binary, os.X_OK):
        skip_or_fail(f"cosign not built ({binary} missing): run `make cosign`")
    return binary


@pytest.fixture(scope="session")
def syft() -> Path:
    """The pinned syft (`make syft`; the SBOMs of tests/test_sbom.py). Missing: a skip locally, a failure
    under CI=true."""
    from tests.release import EXTRAS

    binary: Path = EXTRAS.syft_binary()
    if not os.access(binary, os.X_OK):
        skip_or_fail(f"syft not built ({binary} missing): run `make syft`")
    return binary


@pytest.fixture(scope="session")
def release(helm: Path, syft: Path) -> Path:
    """dist/ as `make dist` leaves it: the artefacts, the image archive, an SBOM each, SHA256SUMS over all."""
    from tests.release import build_release

    return build_release()
