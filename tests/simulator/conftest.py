"""Fixtures for the simulator's own tests: a running `Simulator` and helpers to reach it."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from simhelpers import KUBECTL

from rehash_simulator import Simulator


@pytest.fixture
def simulator() -> Iterator[Simulator]:
    """A started simulator (fresh state), stopped after the test."""
    with Simulator().start() as sim:
        yield sim


@pytest.fixture
def sim(simulator: Simulator) -> Simulator:
    return simulator


@pytest.fixture
def kubectl(simulator: Simulator, tmp_path: Path) -> Any:
    """Run real kubectl against the simulator: `kubectl("get", "cm", "-n", "x")` -> CompletedProcess."""
    config = simulator.write_kubeconfig(tmp_path / "kubeconfig")
    cache = tmp_path / "kube-cache"

    def run(*args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        result = subprocess.run(
            [KUBECTL, "--kubeconfig", str(config), "--cache-dir", str(cache), *args],
            capture_output=True,
            text=True,
            timeout=30,
            check=False,
        )
        if check and result.returncode != 0:
            raise AssertionError(f"kubectl {' '.join(args)} failed: {result.stderr}")
        return result

    return run
