"""A restart that did not take effect is never patched again in a loop, and with `onIneffective: evict` it is
carried out by eviction (policy/table.py `reverted_template`, policy/evict.py `fallback_eviction`)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from reconcile.model.bookkeeping import NOT_EFFECTIVE, PROGRESSING, Bookkeeping, RolloutRecord, SourceRecord
from reconcile.model.freshness import Lineage
from reconcile.model.kinds import Revisions
from reconcile.model.pods import Eviction, Pod
from reconcile.model.sources import NamespaceSources
from reconcile.model.windows import ALWAYS_OPEN, parse_windows
from reconcile.policy.decision import Action, Deferral, observed_from
from reconcile.policy.evict import evicts, fallback_eviction, plan_eviction, pods_wanted
from reconcile.policy.table import decide
from tests.workloads import make_target

NOW = datetime(2026, 11, 21, 12, 30, tzinfo=UTC)
ROLLED = datetime(2026, 11, 21, 12, 0, tzinfo=UTC)
REC = SourceRecord("configmap", "app", "u1", "11", "*", "bbbb")
OBSERVED = observed_from([REC], None)
CURRENT = OBSERVED.config_hash
LINEAGE = Lineage(Revisions.DEPLOYMENT, "w1", 6, 6, (("app", "web"),), "3")


def book(state: str = PROGRESSING, **kw: object) -> Bookkeeping:
    record = RolloutRecord(5, ROLLED, ("configmap/app",), state, "held" if state == NOT_EFFECTIVE else "")
    fields: dict[str, object] = {
        "config_hash": CURRENT,
        "records": (REC,),
        "last_rollout": ROLLED,
        "rollout": record,
        "generation": 5,
    }
    return Bookkeeping(**{**fields, **kw})  # type: ignore[arg-type]


def test_a_template_an_owner_put_back_with_an_older_hash_is_not_rolled_again() -> None:
    target = make_target(template_hash="v1:an-older-one", bookkeeping=book(), generation=6)
    decision = decide(target, OBSERVED, now=NOW)
    assert (decision.action, decision.previous) == (Action.IN_SYNC, CURRENT)
    assert "reverted by its owner?" in decision.reason and "not rolled again" in decision.reason


def test_without_a_rollout_of_ours_an_older_template_hash_still_rolls() -> None:
    target = make_target(template_hash="v1:an-older-one", bookkeeping=book(rollout=None), generation=6)
    assert decide(target, OBSERVED, now=NOW).action is Action.ROLLOUT


def test_a_real_change_after_a_revert_rolls_once_as_usual() -> None:
    changed = SourceRecord("configmap", "app", "u1", "12", "*", "cccc")
    target = make_target(template_hash="v1:an-older-one", bookkeeping=book(), generation=6)
    decision = decide(target, observed_from([changed], None), now=NOW)
    assert (decision.action, decision.changed) == (Action.ROLLOUT, ("configmap/app",))


def fallback_target(state: str = NOT_EFFECTIVE, *, fallback: bool = True) -> object:
    return make_target(
        template_hash=CURRENT,
        bookkeeping=book(state),
        generation=6,
        fallback_evict=fallback,
        lineage=LINEAGE,
        max_unavailable=1,
    )


def test_a_restart_not_effective_falls_back_to_eviction_of_the_pods_older_than_it() -> None:
    target = fallback_target()
    refresh = decide(target, OBSERVED, now=NOW)  # type: ignore[arg-type]
    assert refresh.action is Action.REFRESH  # its spec moved since our record (an owner's revert, say)
    rolled = fallback_eviction(target, refresh, ALWAYS_OPEN, NOW)  # type: ignore[arg-type]
    assert rolled.action is Action.ROLLOUT
    assert rolled.reason == (
        "the restart of 2026-11-21T12:00:00Z did not take effect (it is paused: its controller replaces no "
        "pods until it is resumed); restarting it by eviction"
    )
    assert evicts(target, rolled) and pods_wanted(target, rolled)  # type: ignore[arg-type]
    pods = (Pod("old", ROLLED - timedelta(hours=1), False), Pod("new", ROLLED + timedelta(seconds=3), False))
    planned = plan_eviction(target, rolled, pods, NamespaceSources("shop"))  # type: ignore[arg-type]
    assert planned.eviction == Eviction(("old",), 1, 2, fallback=True)
    done = plan_eviction(target, rolled, pods[1:], NamespaceSources("shop"))  # type: ignore[arg-type]
    assert done.action is Action.IN_SYNC and done.eviction == Eviction((), 0, 1, fallback=True)
    assert done.reason.endswith(
        "every pod started after the change (pods restarted by eviction): restart recorded complete"
    )


def test_no_fallback_without_the_setting_before_the_verdict_or_when_the_content_changed() -> None:
    for target in (fallback_target(fallback=False), fallback_target(PROGRESSING)):
        decision = decide(target, OBSERVED, now=NOW)  # type: ignore[arg-type]
        assert fallback_eviction(target, decision, ALWAYS_OPEN, NOW) == decision  # type: ignore[arg-type]
    changed = observed_from([SourceRecord("configmap", "app", "u1", "12", "*", "cccc")], None)
    target = fallback_target()
    rollout = decide(target, changed, now=NOW)  # type: ignore[arg-type]
    assert rollout.action is Action.ROLLOUT and not evicts(target, rollout)  # type: ignore[arg-type]


def test_the_fallback_waits_for_the_restart_window_like_any_rollout() -> None:
    target = fallback_target()
    decision = decide(target, OBSERVED, now=NOW)  # type: ignore[arg-type]
    held = fallback_eviction(target, decision, parse_windows("Sun 03:00-04:00"), NOW)  # type: ignore[arg-type]
    assert (held.action, held.deferral) == (Action.DEFERRED, Deferral.WINDOW)
