"""Fixtures of the robustness suite: a factory of fresh servers per history, on either server.

The simulator gets a fresh instance per history. The real control plane (the session's, with its
controllers and kwok) gets fresh namespaces per history, reached through one lossy proxy for the module
(tests/robustness/proxy.py), as kube-rehash's own ServiceAccount.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.cluster.controlplane import ControlPlane
from tests.e2e.backends import Identity, make_identity
from tests.robustness.proxy import LossyProxy, lossy_proxy
from tests.robustness.real import RealServer
from tests.robustness.servers import Server, SimServer

Factory = Callable[[bool], Server]
"""A fresh server for one history; its argument: whether controllers must finish rollouts (waves)."""


@pytest.fixture
def sim_servers(tmp_path: Path) -> Factory:
    return lambda controllers: SimServer(tmp_path, controllers=controllers)


@pytest.fixture(scope="module")
def real_identity(control: ControlPlane, tmp_path_factory: pytest.TempPathFactory) -> Identity:
    return make_identity(control, tmp_path_factory.mktemp("robustness-identity"))


@pytest.fixture(scope="module")
def proxy(control: ControlPlane) -> Iterator[LossyProxy]:
    with lossy_proxy(control.server, control.ca) as running:
        yield running


@pytest.fixture
def real_servers(
    control: ControlPlane, real_identity: Identity, proxy: LossyProxy, tmp_path: Path
) -> Factory:
    return lambda controllers: RealServer(control, real_identity, proxy, tmp_path)
