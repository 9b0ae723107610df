"""Notify mode in the decision table: a change of a workload in notify mode is recorded, never rolled,
and neither min-interval, restart windows nor --max-rollouts hold it back (it restarts nothing)."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta

from reconcile.model.annotations import Annotations, WindowSetting
from reconcile.model.bookkeeping import Bookkeeping
from reconcile.model.choices import OnChange
from reconcile.model.kinds import DEPLOYMENT
from reconcile.model.references import DiscoverySettings
from reconcile.model.windows import parse_windows
from reconcile.model.workload import read_target, revise
from reconcile.policy.decision import Action
from reconcile.policy.limits import apply_budget
from reconcile.policy.patches import build_patch
from reconcile.policy.table import decide
from tests.test_plan import NOW, REC_A, REC_A2, observed, target

STORED = Bookkeeping("v1:old", (REC_A,), "", NOW - timedelta(hours=1))
CHANGED = target(template_hash="v1:old", bookkeeping=STORED)
CLOSED = parse_windows("Sat 01:00-02:00 UTC")  # NOW is a Saturday at 12:00


def test_a_change_of_a_workload_annotated_notify_is_notified_naming_the_changed_sources() -> None:
    decision = decide(revise(CHANGED, on_change=OnChange.NOTIFY), observed(), now=NOW)
    assert decision.action is Action.NOTIFY
    assert decision.reason == "configmap/app changed; notified without a rollout"
    assert decision.changed == ("configmap/app",)
    assert (decision.config_hash, decision.previous) == ("v1:new", "v1:old")


def test_the_config_default_notify_applies_to_workloads_without_the_annotation() -> None:
    assert decide(CHANGED, observed(), now=NOW, notify=True).action is Action.NOTIFY
    assert decide(CHANGED, observed(), now=NOW).action is Action.ROLLOUT


def test_the_annotation_rollout_overrides_a_notify_default() -> None:
    decision = decide(revise(CHANGED, on_change=OnChange.ROLLOUT), observed(), now=NOW, notify=True)
    assert decision.action is Action.ROLLOUT


def test_steady_and_first_sight_workloads_in_notify_mode_are_never_notified_or_rolled() -> None:
    synced = target(template_hash="v1:new", bookkeeping=Bookkeeping("v1:new", (REC_A2,), "", NOW))
    assert decide(synced, observed(), now=NOW, notify=True).action is Action.IN_SYNC
    assert decide(target(), observed(), now=NOW, notify=True).action is Action.ADOPT
    first = decide(target(), observed(), now=NOW, notify=True, first_sight_rollout=True)
    assert first.action is Action.ADOPT


def test_restart_windows_and_min_interval_do_not_hold_a_notification_back() -> None:
    windowed = revise(
        CHANGED, on_change=OnChange.NOTIFY, restart_window=WindowSetting("w", "Sat 01:00-02:00 UTC")
    )
    assert decide(windowed, observed(), now=NOW, windows=CLOSED).action is Action.NOTIFY
    assert decide(CHANGED, observed(), now=NOW, windows=CLOSED, notify=True).action is Action.NOTIFY
    recent = revise(
        CHANGED,
        on_change=OnChange.NOTIFY,
        min_interval=timedelta(hours=2),
        bookkeeping=replace(STORED, last_rollout=NOW - timedelta(minutes=5)),
    )
    decision = decide(recent, observed(), now=NOW)
    assert decision.action is Action.NOTIFY and decision.deferral is None


def test_max_rollouts_does_not_count_or_defer_notifications() -> None:
    notified = revise(CHANGED, on_change=OnChange.NOTIFY)
    rolled = revise(CHANGED, name="zz")
    planned = [(t, decide(t, observed(), now=NOW)) for t in (notified, rolled)]
    assert [d.action for _, d in apply_budget(planned, 0)] == [Action.NOTIFY, Action.DEFERRED]


def test_a_notification_writes_metadata_only_and_never_the_pod_template() -> None:
    t = revise(CHANGED, on_change=OnChange.NOTIFY)
    decision = decide(t, observed(), now=NOW)
    assert decision.observed is not None
    ops = build_patch(t, decision, decision.observed, now=NOW, keys=Annotations())
    written = [op["path"] for op in ops if op["op"] == "add"]
    assert written == [
        "/metadata/annotations/kube-rehash.io~1config-hash",
        "/metadata/annotations/kube-rehash.io~1sources",
    ]
    assert not any("/spec/" in op["path"] for op in ops if op["op"] != "test")


def test_the_on_change_annotation_follows_the_prefix_and_a_bad_value_is_a_problem() -> None:
    settings = DiscoverySettings(prefix="example.com")
    obj = {"metadata": {"name": "w", "namespace": "n", "annotations": {"example.com/on-change": "notify"}}}
    assert read_target(obj, DEPLOYMENT, settings).on_change == "notify"
    bad = {"metadata": {"name": "w", "namespace": "n", "annotations": {"example.com/on-change": "page"}}}
    view = read_target(bad, DEPLOYMENT, settings)
    assert view.on_change is None
    assert view.problems == ("example.com/on-change: 'page' is not one of rollout, notify",)


def test_a_notified_change_is_not_notified_again_when_the_template_keeps_an_older_rollouts_hash() -> None:
    # Rolled once (template v1:old), then switched to notify mode and notified of v1:new on metadata only.
    notified_before = revise(
        CHANGED,
        on_change=OnChange.NOTIFY,
        bookkeeping=replace(STORED, config_hash="v1:new", records=(REC_A2,)),
    )
    decision = decide(notified_before, observed(), now=NOW)
    assert decision.action is not Action.NOTIFY
    assert decision.action in (Action.IN_SYNC, Action.REFRESH)
    assert decision.previous == "v1:new"
