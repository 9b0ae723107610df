"""Restart by eviction (`restart: evict`): a rollout decision turned into the pods to evict in this pass.

Pure. For a workload whose pod template must not be patched, the decision table's `rollout` stands for
"its pods must restart": the read stage lists its pods (metadata only, pipeline/pod_reads.py), and this module
says which of them started before the last content change of every changed source (`model.pods`), and
picks a bounded number of them, oldest first. When none is old the hash is recorded on the workload's
metadata only and the workload is `in-sync`. Nothing is remembered between passes: the stored hash stays
the old one until every pod is new, so each pass finds the rollout again and continues it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from datetime import datetime

from reconcile.model.choices import Restart
from reconcile.model.pods import Eviction, PodsRead, evict_batch, old_pods
from reconcile.model.sources import NamespaceSources
from reconcile.model.workload import Target
from reconcile.policy.decision import Action, Decision, bounded_join, defer_for_budget


def evicts(target: Target, decision: Decision) -> bool:
    """Whether this decision is carried out by evicting pods: a rollout of a workload in evict mode."""
    return target.restart is Restart.EVICT and decision.action is Action.ROLLOUT and target.kind.rolls_pods


def pods_wanted(target: Target, decision: Decision) -> bool:
    """Whether the read stage must list this workload's pods for its decision."""
    return evicts(target, decision) and target.kind.revisions is not None and target.lineage is not None


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
    if target.kind.revisions is None or target.lineage is None:
        return Decision(
            Action.SKIPPED,
            f"restart: evict needs a kind whose controller records its templates, not a {target.kind.kind}; "
            "nothing written",
            configs=decision.configs,
        )
    if pods is None:
        return defer_for_budget("its pods were not listed before the budget ran out")
    if isinstance(pods, str):
        return replace(decision, action=Action.FAILED, reason=f"listing its pods failed: {pods}")
    changed = decision.changed or decision.configs
    at = last_change(changed, sources)
    if isinstance(at, str):
        return replace(
            decision,
            action=Action.FAILED,
            reason=f"restart: evict needs the time {at} changed (its managedFields), which the API "
            "server did not give; nothing evicted",
        )
    what = f"{', '.join(changed)} changed" if changed else "config content changed"
    old = old_pods(pods, at)
    if not old:
        return replace(
            decision,
            action=Action.IN_SYNC,
            reason=f"{what}; every pod started after the change (pods restarted by eviction): hash recorded",
            eviction=Eviction((), 0, len(pods)),
        )
    chosen = tuple(p.name for p in old[: evict_batch(target.max_unavailable, per_pass)])
    return replace(
        decision,
        reason=f"{what}; evicts {bounded_join(chosen)} "
        f"({len(old)} of {len(pods)} pods started before the change)",
        eviction=Eviction(chosen, len(old), len(pods)),
    )


def last_change(labels: Sequence[str], sources: NamespaceSources) -> datetime | str:
    """When the last of these sources' content changed, or the label of one whose time is unknown."""
    times = {key.label: hashed.changed_at for (key, _keys), hashed in sources.tokens.items()}
    newest: datetime | None = None
    for label in labels:
        at = times.get(label)
        if at is None:
            return label
        newest = at if newest is None else max(newest, at)
    return newest if newest is not None else "its sources"
