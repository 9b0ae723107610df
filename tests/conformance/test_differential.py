"""Every conformance case answers alike on the simulator and kube-apiserver, except the documented limits.

Why: a difference between the two servers is either a simulator bug (fixed in simulator/rehash_simulator)
or a known limit, listed in KNOWN_LIMITS here, in the simulator's module docstring and in
docs/conformance.md. A known-limit case asserts that exactly the documented difference remains, so a limit
that is fixed (or changes) fails until the table is updated.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from .cases import CASES
from .conftest import Played
from .harness import Response, Step, defaulted, difference, observe, under


def only_defaults(real: list[Response]) -> dict[int, dict[str, Any]]:
    """The difference the `defaulting` case must show: per create, exactly the DEFAULTED fields of the
    object's kind that kube-apiserver filled in, present on the real server only."""
    expected = {}
    for index, response in enumerate(real):
        paths = observe(response, Step("POST", ""), defaults=True)["shape"]
        filled = sorted(p for p in paths if under(p, defaulted(response.body)))
        assert filled, f"kube-apiserver defaulted nothing in {response.body.get('kind')}"
        expected[index] = {"shape": {"real": filled, "sim": []}}
    return expected


# case name -> (why, the exact difference `differences` must report, from the real server's responses).
KNOWN_LIMITS: dict[str, tuple[str, Callable[[list[Response]], dict[int, dict[str, Any]]]]] = {
    "defaulting": (
        "the simulator runs no API defaulting: workloads and Jobs are stored as sent, without the "
        "strategies, history limits, pod template fields and Job selector/labels kube-apiserver fills in "
        "(kube-rehash never reads them)",
        only_defaults,
    ),
    "watch": (
        "the simulator serves no watches (405 MethodNotAllowed); kube-rehash only lists",
        lambda _: {
            0: {
                "status": {"real": 200, "sim": 405},
                "json": {"real": False, "sim": True},
                "reason": {"real": None, "sim": "MethodNotAllowed"},
                "code": {"real": None, "sim": 405},
                "details": {"real": None, "sim": {}},
                "causes": {"real": None, "sim": []},
                "kinds": {"real": None, "sim": ["v1/Status"]},
                "shape": {"real": [], "sim": ["apiVersion", "code", "kind", "metadata", "reason", "status"]},
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
    assert found == expected(played[name][0]), (
        f"{name}: the documented limit changed:\n{json.dumps(found, indent=1)}"
    )


def test_every_case_sent_the_same_requests_to_both(played: Played) -> None:
    """Both servers answered every step of every case (no case was cut short on one side)."""
    for case in CASES:
        real, sim = played[case.name]
        assert len(real) == len(sim) == len(case.steps), case.name
