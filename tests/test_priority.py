"""The order a pass spends its budget in (policy.priority): pending work first, bookkeeping last."""

from __future__ import annotations

import pytest

from reconcile.policy.decision import Action
from reconcile.policy.priority import HEALTH_SHARE, health_hold, write_rank


def test_rollouts_and_adoptions_are_written_before_refreshes() -> None:
    assert write_rank(Action.ROLLOUT) == write_rank(Action.ADOPT) < write_rank(Action.REFRESH)
    assert write_rank(Action.NOTIFY) == write_rank(Action.ROLLOUT)
    assert write_rank(Action.REFRESH) < write_rank(Action.IN_SYNC)


@pytest.mark.parametrize(
    ("requests", "seconds_each", "timeout", "held"),
    [
        (0, 0.05, 10, 0.0),  # nothing watched: nothing held
        (6, 0.05, 10, 0.3),  # what the checks need at the pass's rate
        (200, 0.05, 10, HEALTH_SHARE * 10),  # never more than the bounded share
        (3, 0.005, 240, 0.015),
    ],
)
def test_health_checks_hold_a_bounded_share(
    requests: int, seconds_each: float, timeout: float, held: float
) -> None:
    assert health_hold(requests, seconds_each, timeout) == pytest.approx(held)
