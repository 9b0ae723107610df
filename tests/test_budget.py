"""The pass's one time budget: which requests may start, when, and by when they must be over."""

from __future__ import annotations

import pytest

from reconcile.pipeline.budget import GRACE, Budget
from reconcile.errors import BudgetExhausted, Stopped


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def budget(timeout: float) -> tuple[Budget, Clock]:
    clock = Clock()
    return Budget(timeout, clock=clock), clock


def test_reads_stop_a_reserve_before_the_end_and_writes_at_the_end() -> None:
    b, clock = budget(240.0)
    assert b.reserve == 10.0
    clock.now += 229.9
    assert b.admit("get") == b.end + GRACE and b.admit("list") == b.end + GRACE
    clock.now += 0.2  # inside the write reserve
    with pytest.raises(BudgetExhausted, match="pass budget: no time left for another read"):
        b.admit("get")
    assert b.exhausted
    assert b.admit("patch") == b.end + GRACE and b.admit("create") == b.end + GRACE
    clock.now += 10.0  # past the end: nothing starts any more
    with pytest.raises(BudgetExhausted, match="another write"):
        b.admit("patch")


def test_a_short_budget_keeps_a_proportionally_short_reserve() -> None:
    b, clock = budget(3.0)
    assert b.reserve == pytest.approx(0.6)  # a fixed 10 s reserve would forbid every read
    assert b.may_read() and b.may_write()
    clock.now += 2.5
    assert not b.may_read() and b.may_write()


def test_every_admitted_request_is_over_within_the_budget_plus_five_seconds() -> None:
    b, clock = budget(6.0)
    clock.now += 5.99
    # The client cuts an attempt's timeout to this: over by 6 + 4.5 s, the report printed by 6 + 5.
    assert b.admit("patch") - b.started < 6.0 + 5.0


def test_a_stop_refuses_every_request_at_once_and_is_not_a_spent_budget() -> None:
    b, _clock = budget(240.0)
    b.stop.set()
    for verb in ("get", "list", "patch", "create"):
        with pytest.raises(Stopped):
            b.admit(verb)
    assert not b.exhausted
