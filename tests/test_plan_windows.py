"""Restart windows in the decision table, with an injected clock: what is held back, what never is."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest

from reconcile.model.annotations import WindowSetting
from reconcile.model.bookkeeping import Bookkeeping
from reconcile.model.kinds import CRONJOB, STATEFULSET
from reconcile.model.windows import ALWAYS_OPEN, WindowError, parse_windows
from reconcile.model.workload import Listed, Target
from reconcile.policy.decision import Action, Observed
from reconcile.policy.table import decide, decide_early, settle_listed
from tests.test_plan import DISC, REC_A, REC_A2, REC_A_LABEL, observed, target

# Saturday 21 November 2026, 12:00 UTC.
NOW = datetime(2026, 11, 21, 12, 0, tzinfo=UTC)
KEY = "kube-rehash.io/restart-window"
WEEKDAY_NIGHTS = parse_windows("Mon-Fri 22:00-06:00")  # closed at NOW; opens Mon 23 Nov 22:00
AROUND_NOON = parse_windows("Sat 11:00-13:00")  # open at NOW
CLOSED_REASON = "outside restart window; opens 2026-11-23T22:00:00Z"
CHANGED = Bookkeeping("v1:old", (REC_A,))


def annotated(value: str, **kw: object) -> Target:
    return target(restart_window=WindowSetting(KEY, value), **kw)


def test_outside_every_window_a_rollout_is_deferred_with_the_opening_and_what_changed() -> None:
    decision = decide(target(bookkeeping=CHANGED), observed(), now=NOW, windows=WEEKDAY_NIGHTS)
    assert decision.action is Action.DEFERRED
    assert decision.reason == f"{CLOSED_REASON}; configmap/app changed"
    assert decision.changed == ("configmap/app",) and decision.config_hash == "v1:new"


def test_inside_a_window_a_rollout_proceeds() -> None:
    decision = decide(target(bookkeeping=CHANGED), observed(), now=NOW, windows=AROUND_NOON)
    assert (decision.action, decision.reason) == (Action.ROLLOUT, "configmap/app changed")


def test_the_window_closes_at_its_exclusive_end() -> None:
    one_minute = parse_windows("Sat 11:00-12:00")
    assert decide(target(bookkeeping=CHANGED), observed(), now=NOW, windows=one_minute).action is (
        Action.DEFERRED
    )
    before = NOW - timedelta(seconds=1)
    assert decide(target(bookkeeping=CHANGED), observed(), now=before, windows=one_minute).action is (
        Action.ROLLOUT
    )


def test_the_annotation_overrides_the_config_default_both_ways() -> None:
    closed_by_annotation = annotated("Mon-Fri 22:00-06:00", bookkeeping=CHANGED)
    assert decide(closed_by_annotation, observed(), now=NOW, windows=ALWAYS_OPEN).reason.startswith(
        CLOSED_REASON
    )
    opened_by_annotation = annotated("Sat 11:00-13:00", bookkeeping=CHANGED)
    decision = decide(opened_by_annotation, observed(), now=NOW, windows=WEEKDAY_NIGHTS)
    assert decision.action is Action.ROLLOUT


def test_an_empty_annotation_is_always_open_and_lifts_the_default() -> None:
    decision = decide(annotated("", bookkeeping=CHANGED), observed(), now=NOW, windows=WEEKDAY_NIGHTS)
    assert decision.action is Action.ROLLOUT


def test_a_cronjob_template_change_restarts_nothing_and_is_never_held_back() -> None:
    cronjob = target(kind=CRONJOB, bookkeeping=CHANGED)
    decision = decide(cronjob, observed(), now=NOW, windows=WEEKDAY_NIGHTS)
    assert decision.action is Action.ROLLOUT


@pytest.mark.parametrize(
    ("name", "book", "obs", "expected"),
    [
        ("first sight adopts", Bookkeeping(), observed(), Action.ADOPT),
        (
            "a label-only change refreshes",
            Bookkeeping("v1:new", (REC_A,)),
            observed("v1:new", (REC_A_LABEL,)),
            Action.REFRESH,
        ),
        ("unchanged content is in sync", Bookkeeping("v1:new", (REC_A2,)), observed(), Action.IN_SYNC),
    ],
)
def test_adopt_refresh_and_in_sync_are_never_held_back(
    name: str, book: Bookkeeping, obs: Observed, expected: Action
) -> None:
    decision = decide(target(bookkeeping=book), obs, now=NOW, windows=WEEKDAY_NIGHTS)
    assert decision.action is expected, name


def test_a_first_sight_rollout_restarts_pods_and_waits_for_the_window() -> None:
    decision = decide(target(), observed(), now=NOW, first_sight_rollout=True, windows=WEEKDAY_NIGHTS)
    assert decision.action is Action.DEFERRED
    assert decision.reason.startswith(f"{CLOSED_REASON}; first sight")


def test_min_interval_holds_first_then_the_window_then_it_rolls() -> None:
    rolled = NOW - timedelta(minutes=5)
    held = target(bookkeeping=replace(CHANGED, last_rollout=rolled), min_interval=timedelta(minutes=10))
    inside = decide(held, observed(), now=NOW, windows=WEEKDAY_NIGHTS)
    assert inside.reason == "configmap/app changed; min-interval holds it until 2026-11-21T12:05:00Z"
    later = NOW + timedelta(minutes=6)
    assert decide(held, observed(), now=later, windows=WEEKDAY_NIGHTS).reason.startswith(CLOSED_REASON)
    monday_night = datetime(2026, 11, 23, 22, 0, tzinfo=UTC)
    assert decide(held, observed(), now=monday_night, windows=WEEKDAY_NIGHTS).action is Action.ROLLOUT
    assert decide(held, observed(), now=NOW, windows=AROUND_NOON).action is Action.DEFERRED


def test_a_window_in_another_time_zone_is_read_on_its_wall_clock() -> None:
    berlin = parse_windows("Sat 12:30-13:30 Europe/Berlin")  # 11:30-12:30 UTC in November
    assert decide(target(bookkeeping=CHANGED), observed(), now=NOW, windows=berlin).action is Action.ROLLOUT


MALFORMED = "Mon-Fri 25:00-06:00"


def malformed_reason() -> str:
    with pytest.raises(WindowError) as problem:
        parse_windows(MALFORMED)
    return f"malformed {KEY} {MALFORMED!r}: {problem.value}; nothing written"


def test_a_malformed_annotation_skips_the_workload_naming_annotation_value_and_problem() -> None:
    decision = decide_early(annotated(MALFORMED, bookkeeping=CHANGED))
    assert decision is not None and decision.action is Action.SKIPPED
    assert decision.reason == malformed_reason()
    assert "start time '25:00'" in decision.reason


def test_a_malformed_annotation_is_found_from_metadata_alone() -> None:
    listed = Listed(
        STATEFULSET, "shop", "db", "u2", DISC, Bookkeeping(), restart_window=WindowSetting(KEY, MALFORMED)
    )
    decision = settle_listed(listed)
    assert decision is not None and (decision.action, decision.reason) == (Action.SKIPPED, malformed_reason())
    fine = replace(listed, restart_window=WindowSetting(KEY, "Sat,Sun 00:00-00:00"))
    assert settle_listed(fine) is None and settle_listed(replace(listed, restart_window=None)) is None
