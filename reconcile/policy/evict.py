"""Restart by eviction (`restart: evict`): a rollout decision turned into the pods to evict in this pass.

Pure. For a workload whose pod template must not be patched, the decision table's `rollout` stands for
"its pods must restart": the read stage lists its pods (metadata only, pipeline/pod_reads.py), and this module
says which of them started before the last content change of every changed source (`model.pods`), and
picks a bounded number of them, oldest first. When none is old the hash is recorded on the workload's
metadata only and the workload is `in-sync`. Nothing is remembered between passes: the stored hash stays
the old one until every pod is new, so each pass finds the rollout again and continues it.

The same eviction is the fallback of a restart that did not take effect by its deadline (`onIneffective:
evict`): its content unchanged, the pods that started before that restart are evicted, a few a pass, and
when none is left the restart is recorded complete.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from datetime import datetime

from reconcile.model.pods import Eviction, PodsRead, evict_batch, old_pods
from reconcile.model.sources import NamespaceSources
from reconcile.model.times import format_time
from reconcile.model.verify import CAUSES, Cause
from reconcile.model.windows import RestartWindows, format_deferral
from reconcile.model.workload import Target
from reconcile.policy.decision import (
    Action,
    Decision,
    Deferral,
    Skip,
    bounded_join,
    defer,
    defer_for_budget,
    join,
    skip,
)
from reconcile.policy.table import windows_of


def evicts(target: Target, decision: Decision) -> bool:
    """Whether this decision is carried out by evicting pods: a rollout of a workload in evict mode (its
    annotation or setting, its kind's knob, an in-place update strategy), or the fallback of a restart
    not effective (`falls_back`)."""
    rollout = decision.action is Action.ROLLOUT and target.kind.rolls_pods
    return rollout and (target.evicts or falls_back(target, decision))


def falls_back(target: Target, decision: Decision) -> bool:
    """The decision restarts, by eviction, a workload whose last restart did not take effect, for the
    same content (`fallback_eviction` made it: nothing changed since)."""
    return target.listed.fallback_due and decision.config_hash == decision.previous


def pods_findable(target: Target) -> bool:
    """Its pods can be found: by its controller's selector (a kind that records its templates), or by
    its kind's pod selection (a selector it has, or the pods it controls)."""
    if target.kind.revisions is not None and target.lineage is not None:
        return True
    selection = target.kind.pod_selection
    return selection is not None and (target.pod_selector is not None or selection.owned)


def pods_wanted(target: Target, decision: Decision) -> bool:
    """Whether the read stage must list this workload's pods for its decision."""
    return evicts(target, decision) and pods_findable(target)


def fallback_eviction(target: Target, decision: Decision, windows: RestartWindows, now: datetime) -> Decision:
    """A workload whose last restart did not take effect, falling back to eviction (`onIneffective:
    evict`), with its content unchanged since: its old pods are evicted as a rollout (held by its restart
    window like one). Anything else is left as it is."""
    record = target.bookkeeping.rollout
    unchanged = decision.action in (Action.IN_SYNC, Action.REFRESH)  # a refresh: its spec moved meanwhile
    if not target.listed.fallback_due or not unchanged or record is None:
        return decision
    if not target.kind.rolls_pods or decision.config_hash != decision.previous:
        return decision
    cause = CAUSES.get(Cause(record.cause)) if record.cause in tuple(Cause) else None
    why = f"the restart of {format_time(record.at)} did not take effect ({cause or 'no evidence'})"
    rolled = replace(decision, action=Action.ROLLOUT, reason=f"{why}; restarting it by eviction")
    closed = format_deferral(windows_of(target.restart_window, windows), now)
    return rolled if closed is None else defer(rolled, Deferral.WINDOW, join(closed, rolled.reason))


def plan_eviction(
    target: Target,
    decision: Decision,
    pods: PodsRead | None,
    sources: NamespaceSources,
    *,
    per_pass: int = 1,
) -> Decision:
    """The decision of a workload in evict mode once its pods are known (others: unchanged). `per_pass`:
    the pods evicted in a pass where the workload's `maxUnavailable` is not an integer (`evictPerPass`)."""
    if not evicts(target, decision):
        return decision
    if not pods_findable(target):
        return skip(
            f"restart: evict needs a kind whose pods it can find (its controller's templates, or a pod "
            f"selection), not a {target.kind.kind}; nothing written",
            Skip.CANNOT_EVICT,
            configs=decision.configs,
        )
    if pods is None:
        return defer_for_budget("its pods were not listed before the budget ran out")
    if isinstance(pods, str):
        return replace(decision, action=Action.FAILED, reason=f"listing its pods failed: {pods}")
    fallback = falls_back(target, decision) and target.bookkeeping.rollout is not None
    changed = decision.changed or decision.configs
    at = (
        target.bookkeeping.rollout.at
        if fallback and target.bookkeeping.rollout
        else last_change(changed, sources)
    )
    if isinstance(at, str):
        return replace(
            decision,
            action=Action.FAILED,
            reason=f"restart: evict needs the time {at} changed (its managedFields), which the API "
            "server did not give; nothing evicted",
        )
    what = (
        decision.reason
        if fallback
        else f"{', '.join(changed)} changed"
        if changed
        else "config content changed"
    )
    old = old_pods(pods, at)
    if not old:
        done = "restart recorded complete" if fallback else "hash recorded"
        return replace(
            decision,
            action=Action.IN_SYNC,
            reason=f"{what}; every pod started after the change (pods restarted by eviction): {done}",
            eviction=Eviction((), 0, len(pods), fallback),
        )
    chosen = tuple(p.name for p in old[: evict_batch(target.max_unavailable, per_pass)])
    return replace(
        decision,
        reason=f"{what}; evicts {bounded_join(chosen)} "
        f"({len(old)} of {len(pods)} pods started before the change)",
        eviction=Eviction(chosen, len(old), len(pods), fallback),
    )


def last_change(labels: Sequence[str], sources: NamespaceSources) -> datetime | str:
    """When the last of these sources' content changed, or the label of one whose time is unknown."""
    hashed = sources.hashed_by_label()
    newest: datetime | None = None
    for label in labels:
        at = hashed[label].changed_at if label in hashed else None
        if at is None:
            return label
        newest = at if newest is None else max(newest, at)
    return newest if newest is not None else "its sources"
