"""What holds a decision back between the decision table and the write: `--max-rollouts` over the pass, and
the notifications held for the webhook's delivery.

Pure. The pass counts its rollouts in a `RolloutLimit` value it hands from batch to batch (and through the
re-decisions after a conflict), so the order rollouts are taken in is stable across passes and a queue
longer than the limit finishes in later passes; nothing here sends anything.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from reconcile.model.workload import Target
from reconcile.policy.decision import Action, Decision, Deferral, defer
from reconcile.policy.planned import Planned
from reconcile.values import value


@value
class RolloutLimit:
    """`--max-rollouts` and the rollouts this pass has planned so far (None: unlimited)."""

    limit: int | None = None
    used: int = 0

    @property
    def left(self) -> int | None:
        return None if self.limit is None else max(0, self.limit - self.used)


def counts(target: Target, decision: Decision) -> bool:
    """Whether a decision takes a rollout slot: a rollout of a kind that restarts pods (not a CronJob)."""
    return decision.action is Action.ROLLOUT and target.kind.rolls_pods


def apply_budget(
    planned: Sequence[tuple[Target, Decision]], max_rollouts: int | None, *, limit: int | None = None
) -> list[tuple[Target, Decision]]:
    """Defer rollouts past `max_rollouts`, in a stable order so later passes finish the queue.

    CronJobs are not counted: changing their job template restarts nothing. `limit` is the
    --max-rollouts the reason names when `max_rollouts` is what is left of it in this pass.
    """
    if max_rollouts is None:
        return list(planned)
    limit = max_rollouts if limit is None else limit
    order = sorted(range(len(planned)), key=lambda i: sort_key(planned[i][0]))
    result = list(planned)
    budget = max_rollouts
    for index in order:
        target, decision = planned[index]
        if not counts(target, decision):
            continue
        if budget > 0:
            budget -= 1
            continue
        result[index] = (target, over_limit(decision, limit))
    return result


def over_limit(decision: Decision, limit: int) -> Decision:
    reason = f"over --max-rollouts {limit}; rolls in a later pass ({decision.reason})"
    return defer(decision, Deferral.MAX_ROLLOUTS, reason)


def sort_key(target: Target) -> tuple[str, str, str]:
    return (target.namespace, target.kind.kind, target.name)


def limit_rollouts(planned: Sequence[Planned], limit: RolloutLimit) -> tuple[list[Planned], RolloutLimit]:
    """A batch's decisions with the rollouts past what is left of the limit deferred, and the limit with
    the rollouts this batch takes counted. Only a planned workload with a full view can roll."""
    if limit.limit is None:
        return list(planned), limit
    full = [(i, item.full, item.decision) for i, item in enumerate(planned) if item.full is not None]
    limited = apply_budget([(t, d) for _, t, d in full], limit.left, limit=limit.limit)
    out = list(planned)
    used = limit.used
    for (index, _, _), (target, decision) in zip(full, limited, strict=True):
        out[index] = replace(out[index], decision=decision)
        used += counts(target, decision)
    return out, replace(limit, used=used)


def recount(
    target: Target, before: Decision, after: Decision, limit: RolloutLimit
) -> tuple[Decision, RolloutLimit]:
    """--max-rollouts over a re-decision: one that became a rollout takes a slot, or is deferred when
    none is left; one that no longer rolls gives its slot back."""
    if limit.limit is None or not target.kind.rolls_pods:
        return after, limit
    was, now = counts(target, before), counts(target, after)
    if now and not was:
        if limit.used >= limit.limit:
            return over_limit(after, limit.limit), limit
        return after, replace(limit, used=limit.used + 1)
    if was and not now:
        return after, replace(limit, used=limit.used - 1)
    return after, limit


def held_for_webhook(decision: Decision, *, webhook: bool) -> bool:
    """Whether a decision is a notification left unwritten until the webhook's delivery (pipeline/
    notifier.py): its record tells the next pass it was notified, so it is written only once delivered."""
    return webhook and decision.action is Action.NOTIFY


def undelivered(decision: Decision, error: str) -> Decision:
    """A held notification whose delivery failed: nothing written, the next pass notifies again."""
    return replace(decision, reason=f"{decision.reason}; not recorded: {error}; the next pass notifies again")


def changed_since_delivery(decision: Decision, delivered: str | None) -> Decision | None:
    """A delivered notification re-decided after a conflict into a newer change than the webhook told of:
    left unwritten for the next pass (None: write it)."""
    if delivered is None or decision.action is not Action.NOTIFY or decision.config_hash == delivered:
        return None
    reason = f"{decision.reason}; changed again after the webhook was sent: the next pass notifies it"
    return replace(decision, reason=reason)
