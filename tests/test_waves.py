"""Waves as a decision table over one batch's decisions (policy/waves.py), and the wave annotation."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime

import pytest

from reconcile.model.bookkeeping import Bookkeeping, RolloutRecord
from reconcile.model.health import RolloutStatus
from reconcile.model.kinds import CRONJOB, DEPLOYMENT, Kind
from reconcile.model.references import Discovery, DiscoverySettings
from reconcile.model.rollouts import RolloutCheck
from reconcile.model.workload import Listed, read_listed
from reconcile.policy.decision import Action, Decision, Deferral, defer
from reconcile.policy.table import settle_listed
from reconcile.policy.waves import hold_waves

AT = datetime(2026, 11, 21, 12, 0, tzinfo=UTC)
DISC = Discovery(True, False, (), frozenset(), frozenset(), (), ("kube-rehash.io/watch",))
APP = "configmap/app"
OTHER = "configmap/other"


def workload(
    name: str, wave: int, *, rollout: RolloutRecord | None = None, kind: Kind = DEPLOYMENT
) -> Listed:
    return Listed(kind, "shop", name, f"uid-{name}", DISC, Bookkeeping(rollout=rollout), wave=wave)


def rolls(*changed: str) -> Decision:
    return Decision(Action.ROLLOUT, f"{', '.join(changed)} changed", "v1:new", "v1:old", changed, changed)


def in_sync(*configs: str, check: RolloutCheck | None = None) -> Decision:
    return Decision(Action.IN_SYNC, "content unchanged", "v1:new", "v1:new", configs, rollout=check)


def record(state: str, *changed: str) -> RolloutRecord:
    return RolloutRecord(7, AT, changed, state)


def actions(items: list[tuple[Listed, Decision]]) -> list[str]:
    return [d.action.value for d in hold_waves(items)]


def test_a_higher_wave_waits_while_a_lower_wave_rolls_for_the_same_source() -> None:
    held = hold_waves([(workload("db", 0), rolls(APP)), (workload("api", 1), rolls(APP))])
    assert held[0].action is Action.ROLLOUT
    assert held[1].action is Action.DEFERRED and held[1].deferral is Deferral.WAVE
    assert held[1].reason.startswith(
        "wave 1 waits for Deployment/db (wave 0), whose rollout for configmap/app"
    )
    assert held[1].changed == (APP,) and held[1].config_hash == "v1:new"  # what it found is kept


@pytest.mark.parametrize(
    ("lower", "expected", "says"),
    [
        ("progressing", "deferred", "is progressing"),
        ("stalled", "deferred", "is stalled"),
        ("complete", "rollout", None),
    ],
)
def test_a_lower_waves_recorded_rollout_holds_until_complete(
    lower: str, expected: str, says: str | None
) -> None:
    db = workload("db", 0, rollout=record(lower, APP))
    held = hold_waves([(db, in_sync(APP)), (workload("api", 1), rolls(APP))])
    assert held[1].action.value == expected
    if says is not None:
        assert says in held[1].reason


@pytest.mark.parametrize(
    ("status", "expected"),
    [
        (RolloutStatus.COMPLETE, "rollout"),
        (RolloutStatus.PROGRESSING, "deferred"),
        (RolloutStatus.STALLED, "deferred"),
    ],
)
def test_the_status_read_in_this_pass_overrides_the_record(status: RolloutStatus, expected: str) -> None:
    found = record("progressing", APP)
    db = workload("db", 0, rollout=found)
    held = hold_waves(
        [(db, in_sync(APP, check=RolloutCheck(found, status))), (workload("api", 1), rolls(APP))]
    )
    assert held[1].action.value == expected


def test_workloads_sharing_no_changed_source_never_wait() -> None:
    items = [(workload("db", 0), rolls(APP)), (workload("cache", 1), rolls(OTHER))]
    assert actions(items) == ["rollout", "rollout"]


def test_an_old_rollout_for_another_source_does_not_hold() -> None:
    db = workload("db", 0, rollout=record("stalled", OTHER))
    assert actions([(db, in_sync(APP, OTHER)), (workload("api", 1), rolls(APP))]) == ["in-sync", "rollout"]


def test_equal_waves_roll_together_and_lower_ones_never_wait_for_higher() -> None:
    items = [(workload("a", 1), rolls(APP)), (workload("b", 1), rolls(APP)), (workload("c", 2), rolls(APP))]
    assert actions(items) == ["rollout", "rollout", "deferred"]
    assert actions([(workload("api", 1), rolls(APP)), (workload("db", 0), rolls(APP))]) == [
        "deferred",
        "rollout",
    ]


def test_three_waves_wait_for_the_nearest_state_and_name_the_lowest() -> None:
    items = [
        (workload("db", 0), rolls(APP)),
        (workload("api", 1), rolls(APP)),
        (workload("web", 2), rolls(APP)),
    ]
    held = hold_waves(items)
    assert [d.action.value for d in held] == ["rollout", "deferred", "deferred"]
    assert "waits for Deployment/db (wave 0)" in held[2].reason


def test_a_lower_wave_held_back_by_its_window_holds_the_higher_wave() -> None:
    window = defer(rolls(APP), Deferral.WINDOW, "outside restart window")
    held = hold_waves([(workload("db", 0), window), (workload("api", 1), rolls(APP))])
    assert held[1].action is Action.DEFERRED and "held back (window)" in held[1].reason


def test_cronjobs_neither_wait_nor_hold() -> None:
    items = [(workload("job", 0, kind=CRONJOB), rolls(APP)), (workload("api", 1), rolls(APP))]
    assert actions(items) == ["rollout", "rollout"]
    items = [(workload("db", 0), rolls(APP)), (workload("job", 1, kind=CRONJOB), rolls(APP))]
    assert actions(items) == ["rollout", "rollout"]


def test_a_notification_never_waits() -> None:
    notify = replace(rolls(APP), action=Action.NOTIFY)
    assert actions([(workload("db", 0), rolls(APP)), (workload("api", 1), notify)]) == ["rollout", "notify"]


def listed_with(annotations: dict[str, str]) -> Listed:
    obj = {"metadata": {"name": "api", "namespace": "shop", "uid": "u", "annotations": annotations}}
    return read_listed(obj, DEPLOYMENT, DiscoverySettings())


@pytest.mark.parametrize(("value", "wave"), [("0", 0), ("3", 3), ("-1", -1), ("12", 12)])
def test_the_wave_annotation_is_a_plain_integer(value: str, wave: int) -> None:
    listed = listed_with({"kube-rehash.io/watch": "true", "kube-rehash.io/wave": value})
    assert listed.wave == wave and settle_listed(listed) is None


@pytest.mark.parametrize("value", ["", "one", "1.5", "1_0", " 1", "+1"])
def test_a_malformed_wave_skips_the_workload_naming_the_annotation(value: str) -> None:
    listed = listed_with({"kube-rehash.io/watch": "true", "kube-rehash.io/wave": value})
    decision = settle_listed(listed)
    assert decision is not None and decision.action is Action.SKIPPED
    assert "kube-rehash.io/wave" in decision.reason and "nothing written" in decision.reason
