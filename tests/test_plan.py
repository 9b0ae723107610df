"""The decision table: every action and the rules that pick it, without any server."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest

from reconcile.model.bookkeeping import Bookkeeping, SourceRecord
from reconcile.model.kinds import CRONJOB, STATEFULSET
from reconcile.model.references import Discovery
from reconcile.model.workload import Target, revise
from reconcile.policy.decision import Action, Decision, Observed
from reconcile.policy.limits import apply_budget
from reconcile.policy.table import decide, decide_early
from tests.workloads import make_target

NOW = datetime(2026, 11, 21, 12, 0, tzinfo=UTC)
REC_A = SourceRecord("configmap", "app", "u1", "10", "*", "aaaa")
REC_A2 = SourceRecord("configmap", "app", "u1", "11", "*", "bbbb")
REC_A_LABEL = SourceRecord("configmap", "app", "u1", "12", "*", "aaaa")
DISC = Discovery(True, False, (), frozenset(), frozenset(), (), ("kube-rehash.io/watch",))


def target(**kw: object) -> Target:
    return make_target(**{"discovery": DISC, **kw})


def observed(h: str = "v1:new", records: tuple[SourceRecord, ...] = (REC_A2,), **kw: object) -> Observed:
    return replace(Observed(h, records), **kw)  # type: ignore[arg-type]


SYNCED = Bookkeeping("v1:new", (REC_A2,), "", NOW - timedelta(hours=1))

CASES = [
    ("first sight adopts without rollout", target(), observed(), Action.ADOPT),
    (
        "changed content rolls out",
        target(template_hash="v1:old", bookkeeping=Bookkeeping("v1:old", (REC_A,))),
        observed(),
        Action.ROLLOUT,
    ),
    (
        "metadata-only stored hash that differs rolls out",
        target(bookkeeping=Bookkeeping("v1:old", (REC_A,))),
        observed(),
        Action.ROLLOUT,
    ),
    (
        "equal hash and records is in sync",
        target(template_hash="v1:new", bookkeeping=SYNCED),
        observed(),
        Action.IN_SYNC,
    ),
    (
        "adopted workload without template annotation is in sync",
        target(bookkeeping=SYNCED),
        observed(),
        Action.IN_SYNC,
    ),
    (
        "stripped template annotation with unchanged content does not roll",
        target(template_hash=None, bookkeeping=SYNCED),
        observed(),
        Action.IN_SYNC,
    ),
    (
        "label-only source change refreshes bookkeeping",
        target(template_hash="v1:new", bookkeeping=Bookkeeping("v1:new", (REC_A,))),
        observed("v1:new", (REC_A_LABEL,)),
        Action.REFRESH,
    ),
    (
        "template ahead of stale metadata refreshes",
        target(template_hash="v1:new", bookkeeping=Bookkeeping("v1:old", (REC_A2,))),
        observed(),
        Action.REFRESH,
    ),
    (
        "template takes precedence over metadata",
        target(template_hash="v1:old", bookkeeping=Bookkeeping("v1:new", (REC_A2,))),
        observed(),
        Action.ROLLOUT,
    ),
    ("missing required source skips", target(), observed(missing_required=("secret/db",)), Action.SKIPPED),
    (
        "min-interval defers a rollout that comes too soon",
        target(
            template_hash="v1:old",
            min_interval=timedelta(minutes=10),
            bookkeeping=Bookkeeping("v1:old", (REC_A,), "", NOW - timedelta(minutes=3)),
        ),
        observed(),
        Action.DEFERRED,
    ),
    (
        "min-interval passed rolls",
        target(
            template_hash="v1:old",
            min_interval=timedelta(minutes=10),
            bookkeeping=Bookkeeping("v1:old", (REC_A,), "", NOW - timedelta(minutes=30)),
        ),
        observed(),
        Action.ROLLOUT,
    ),
    (
        "key rotation changes the fingerprint and refreshes when the hash matches",
        target(template_hash="v1:new", bookkeeping=Bookkeeping("v1:new", (REC_A2,), "oldkey")),
        observed(key_fingerprint="newkey"),
        Action.REFRESH,
    ),
]


@pytest.mark.parametrize(("t", "o", "expected"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_decision_table(t: Target, o: Observed, expected: Action) -> None:
    assert decide(t, o, now=NOW).action is expected


def test_first_sight_rollout_setting_rolls_instead_of_adopting() -> None:
    assert decide(target(), observed(), now=NOW, first_sight_rollout=True).action is Action.ROLLOUT


def test_rollout_reason_names_the_changed_configs_only() -> None:
    two = (REC_A2, SourceRecord("secret", "db", "u2", "5", "*", "ssss"))
    before = (REC_A, SourceRecord("secret", "db", "u2", "5", "*", "ssss"))
    d = decide(
        target(template_hash="v1:old", bookkeeping=Bookkeeping("v1:old", before)),
        observed(records=two),
        now=NOW,
    )
    assert d.changed == ("configmap/app",)
    assert d.reason.startswith("configmap/app changed")
    assert d.configs == ("configmap/app", "secret/db")
    assert (d.config_hash, d.previous) == ("v1:new", "v1:old")


@pytest.mark.parametrize(
    ("t", "note"),
    [
        (target(kind=STATEFULSET, on_delete=True), "pods restart only when deleted"),
        (target(paused=True), "paused: the rollout happens on resume"),
        (target(kind=CRONJOB), "next Jobs use the new config"),
    ],
    ids=[
        "OnDelete says pods restart only when deleted",
        "paused Deployment is patched",
        "CronJob records on the job template",
    ],
)
def test_rollout_notes(t: Target, note: str) -> None:
    t = revise(t, template_hash="v1:old", bookkeeping=Bookkeeping("v1:old", (REC_A,)))
    d = decide(t, observed(), now=NOW)
    assert d.action is Action.ROLLOUT
    assert note in d.reason


@pytest.mark.parametrize(
    ("t", "words"),
    [
        (target(discovery=replace(DISC, ignored=True)), "ignored"),
        (target(owner="Database/main"), "owned by Database/main"),
        (target(kind=CRONJOB, suspended=True), "suspended"),
    ],
    ids=["ignore annotation skips", "operator-owned skips", "suspended CronJob skips"],
)
def test_early_skips(t: Target, words: str) -> None:
    d = decide_early(t)
    assert d is not None and d.action is Action.SKIPPED and words in d.reason


def test_nothing_early_for_a_plain_workload() -> None:
    assert decide_early(target()) is None


def test_budget_defers_in_stable_order_and_ignores_cronjobs() -> None:
    roll = Decision(Action.ROLLOUT, "x")
    planned = [
        (target(namespace="b", name="z"), roll),
        (target(kind=CRONJOB, namespace="a", name="cj"), roll),
        (target(namespace="a", name="y"), roll),
        (target(namespace="a", name="x"), Decision(Action.IN_SYNC, "")),
        (target(namespace="c", name="w"), roll),
    ]
    result = apply_budget(planned, 1)
    actions = {(t.namespace, t.name): d.action for t, d in result}
    assert actions == {
        ("b", "z"): Action.DEFERRED,
        ("a", "cj"): Action.ROLLOUT,
        ("a", "y"): Action.ROLLOUT,
        ("a", "x"): Action.IN_SYNC,
        ("c", "w"): Action.DEFERRED,
    }
    assert "--max-rollouts 1" in result[0][1].reason
    assert apply_budget(planned, None) == planned
