"""Fixtures of the differential conformance suite: one simulator and the session's real control plane,
every case played once on each, the responses shared by the per-case tests.

The control plane is tests/conftest.py's session `control` fixture (shared with tests/real and
tests/e2e): without the binaries it skips locally and fails under CI=true or KUBE_REHASH_REAL=1.
"""

from __future__ import annotations

import secrets
from collections.abc import Iterator

import pytest

from rehash_simulator import Simulator
from tests.cluster.controlplane import TEST_USERS, ControlPlane

from .cases import CASES
from .harness import Response, Server, run_case

# A user both servers know and RBAC grants nothing to (a static-token user of the control plane).
NOBODY = TEST_USERS[-1]
# Turns the simulator's RBAC on (as the real server's is) without granting NOBODY anything.
UNRELATED_POLICY = {
    "apiVersion": "rbac.authorization.k8s.io/v1",
    "kind": "ClusterRole",
    "metadata": {"name": "conformance-unused"},
    "rules": [{"apiGroups": [""], "resources": ["pods"], "verbs": ["get"]}],
}

Played = dict[str, tuple[list[Response], list[Response]]]


@pytest.fixture(scope="session")
def played(control: ControlPlane) -> Iterator[Played]:
    """case name -> (real responses, simulator responses), each case in its own fresh namespace."""
    cp = control
    bogus = secrets.token_urlsafe(24)
    with Simulator().start() as sim:
        nobody_token = secrets.token_urlsafe(24)
        sim.add_token(nobody_token, NOBODY)
        sim.load_rbac(UNRELATED_POLICY)
        real = Server(
            "kube-apiserver",
            cp.server,
            cp.ca.read_text(),
            {"admin": cp.tokens["admin"], "nobody": cp.tokens[NOBODY], "bogus": bogus},
        )
        simulated = Server(
            "simulator",
            sim.url,
            sim.ca_pem.decode(),
            {"admin": sim.admin_token, "nobody": nobody_token, "bogus": bogus},
        )
        yield {case.name: (run_case(real, case), run_case(simulated, case)) for case in CASES}
