"""Every conformance case answers alike on the simulator and kube-apiserver, except the documented limits.

Why: a difference between the two servers is either a simulator bug (fixed in simulator/rehash_simulator)
or a known limit, listed in KNOWN_LIMITS here, in the simulator's module docstring and in
docs/conformance.md. A known-limit case asserts that exactly the documented difference remains, so a limit
that is fixed (or changes) fails until the table is updated.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from .cases import CASES
from .conftest import Played
from .harness import difference, observe

# case name -> (why, {step index: the exact difference `difference(real, simulator)` reports}).
KNOWN_LIMITS: dict[str, tuple[str, dict[int, dict[str, Any]]]] = {
    "deployment-defaulting": (
        "the simulator runs no API defaulting: a Deployment is stored as sent, without the strategy, "
        "history and pod template defaults kube-apiserver fills in (kube-rehash never reads them)",
        {
            0: {
                "shape": {
                    "real": [
                        "spec.progressDeadlineSeconds",
                        "spec.revisionHistoryLimit",
                        "spec.strategy",
                        "spec.strategy.rollingUpdate",
                        "spec.strategy.rollingUpdate.maxSurge",
                        "spec.strategy.rollingUpdate.maxUnavailable",
                        "spec.strategy.type",
                        "spec.template.spec.containers[].imagePullPolicy",
                        "spec.template.spec.containers[].resources",
                        "spec.template.spec.containers[].terminationMessagePath",
                        "spec.template.spec.containers[].terminationMessagePolicy",
                        "spec.template.spec.dnsPolicy",
                        "spec.template.spec.restartPolicy",
                        "spec.template.spec.schedulerName",
                        "spec.template.spec.securityContext",
                        "spec.template.spec.terminationGracePeriodSeconds",
                    ],
                    "sim": [],
                }
            }
        },
    ),
}


def differences(played: Played, name: str) -> dict[int, dict[str, Any]]:
    """Per step of the case, what differs between the real server's and the simulator's answer."""
    case = next(c for c in CASES if c.name == name)
    real, sim = played[name]
    found = {}
    for index, step in enumerate(case.steps):
        diff = difference(
            observe(real[index], step, defaults=case.defaults),
            observe(sim[index], step, defaults=case.defaults),
        )
        if diff:
            found[index] = diff
    return found


@pytest.mark.parametrize("name", [c.name for c in CASES if c.name not in KNOWN_LIMITS])
def test_simulator_answers_like_kube_apiserver(played: Played, name: str) -> None:
    found = differences(played, name)
    assert not found, f"{name} differs (step: {{field: {{real, sim}}}}):\n{json.dumps(found, indent=1)}"


@pytest.mark.parametrize("name", sorted(KNOWN_LIMITS))
def test_known_limit_is_exactly_the_documented_difference(played: Played, name: str) -> None:
    _, expected = KNOWN_LIMITS[name]
    found = differences(played, name)
    assert found == expected, f"{name}: the documented limit changed:\n{json.dumps(found, indent=1)}"


def test_every_case_sent_the_same_requests_to_both(played: Played) -> None:
    """Both servers answered every step of every case (no case was cut short on one side)."""
    for case in CASES:
        real, sim = played[case.name]
        assert len(real) == len(sim) == len(case.steps), case.name
