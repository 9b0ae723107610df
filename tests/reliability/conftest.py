"""Fixtures of the reliability suite: the e2e `cluster` (CLI against the simulator) and an in-process one."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from rehash_simulator import Simulator
from tests.e2e.conftest import Cluster, cluster

__all__ = ["cluster", "sim"]


@pytest.fixture
def sim(tmp_path: Path) -> Iterator[Cluster]:
    """A running simulator wrapped like the e2e `Cluster` (for seeding), used for in-process passes."""
    with Simulator().start() as simulator:
        yield Cluster(simulator, tmp_path)
