"""The writes of a pass, batch by batch: what holds a decision back applied (policy/limits.py), the writes
sent (pipeline/write.py), and every failed precondition read and decided again.

A failed precondition means someone changed the workload after we read it: it is read again and decided
from scratch through the planner's own entry point (`planner.redecide`), a bounded number of times, so
nobody's change is lost and two overlapping passes never roll a workload twice for one change. A
re-decision counts against `--max-rollouts` like the first decision. Notifications are held while a webhook
is configured: the pass delivers them after its batches (pipeline/notifier.py), then writes them here.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from reconcile.errors import PassCut, RehashError
from reconcile.model.workload import Target
from reconcile.pipeline.notifier import WEBHOOK_ROW_KIND, Delivery, Notifier
from reconcile.pipeline.planner import redecide
from reconcile.pipeline.read import ReadStage
from reconcile.pipeline.write import Writer, Written
from reconcile.policy.decision import Decision, defer_unwritten
from reconcile.policy.landed import shows_write
from reconcile.policy.limits import (
    RolloutLimit,
    changed_since_delivery,
    held_for_webhook,
    limit_rollouts,
    recount,
    undelivered,
)
from reconcile.policy.outcome import Outcome
from reconcile.policy.planned import Planned
from reconcile.policy.rules import Rules

log = logging.getLogger(__name__)
MAX_REDECIDE = 3
Redecide = Callable[[Target], tuple[Target, Decision]]


@dataclass(frozen=True)
class Delivered:
    """What became of the held notifications: their writes (or why nothing was written), the failed
    delivery's scope outcome, and the workloads whose records were not written."""

    written: list[Written]
    failures: list[Outcome]
    unwritten: frozenset[str]


class PassWrites:
    """One pass's writes: its rollout count, its held notifications, its conflicts re-decided."""

    def __init__(
        self,
        writer: Writer,
        stage: ReadStage,
        rules: Rules,
        *,
        max_rollouts: int | None,
        webhook: bool,
        again: Redecide | None = None,
    ) -> None:
        self.writer = writer
        self.stage = stage
        self.rules = rules
        self.redecide: Redecide = again or (lambda target: redecide(stage, target, rules))
        self.now = writer.now
        self.limit = RolloutLimit(max_rollouts)
        self.webhook = webhook and not writer.client_dry_run
        self.held: list[Planned] = []
        """Notifications waiting for the webhook's delivery, in batch order."""

    def write_batch(self, planned: Sequence[Planned]) -> list[Written]:
        """A batch's writes (rollouts past --max-rollouts deferred, notifications held), in order."""
        planned, self.limit = limit_rollouts(planned, self.limit)
        held = [held_for_webhook(p.decision, webhook=self.webhook) and p.full is not None for p in planned]
        self.held += [p for p, hold in zip(planned, held, strict=True) if hold]
        sent = iter(self.writer.write_all([p for p, hold in zip(planned, held, strict=True) if not hold]))
        written = [
            Written(p, p.decision) if hold else next(sent) for p, hold in zip(planned, held, strict=True)
        ]
        return [self.settle(w) if w.conflict is not None else w for w in written]

    def write_delivered(self, delivered: Sequence[Planned]) -> list[Written]:
        """The held notifications the webhook delivered: their records and Events, each written only if
        a re-decision after a conflict still finds the change that was delivered."""
        written = self.writer.write_all(delivered)
        return [
            self.settle(w, delivered=w.planned.decision.config_hash) if w.conflict is not None else w
            for w in written
        ]

    def take_held(self) -> list[Planned]:
        held, self.held = self.held, []
        return held

    def deliver_held(self, notifier: Notifier | None) -> Delivered:
        """After the batches, the notifications they held: one webhook POST, then, once delivered, their
        records and Events; when the delivery fails or is cut, nothing is written."""
        held = self.take_held()
        if notifier is None or not held:
            return Delivered([], [], frozenset())
        delivery = notifier.deliver(held)
        if delivery.delivered:
            return Delivered(self.write_delivered(held), [], frozenset())
        failures = []
        if delivery.error is not None:
            failures.append(Outcome.scope_failure(WEBHOOK_ROW_KIND, notifier.namespace, delivery.error))
        written = [Written(p, unsent(p.decision, delivery)) for p in held]
        return Delivered(written, failures, frozenset(p.listed.uid for p in held))

    def settle(self, written: Written, *, delivered: str | None = None) -> Written:
        """A write whose precondition failed: read again, decide again and write again, at most
        `MAX_REDECIDE` times. Where an earlier attempt of the patch went unanswered and the workload read
        again shows exactly what it wrote (`policy.landed`), the patch landed: its outcome is what it was."""
        for _attempt in range(MAX_REDECIDE):
            planned = written.planned
            assert planned.full is not None and written.conflict is not None
            try:
                target, decision = self.redecide(planned.full)
            except PassCut as exc:
                return Written(planned, defer_unwritten(planned.decision, stopped=exc.stops_pass))
            except RehashError as exc:
                return self.writer.fail(planned, f"re-reading after a conflict failed: {exc}")
            if written.conflict.unanswered_before and shows_write(
                target, planned.full, planned.decision, self.now
            ):
                return self.writer.landed(planned)  # our own write, whose answer was lost
            decision, self.limit = recount(target, planned.decision, decision, self.limit)
            again = Planned(target.listed, decision, target)
            newer = changed_since_delivery(decision, delivered)
            if newer is not None:
                return Written(again, newer)
            if delivered is None and held_for_webhook(decision, webhook=self.webhook):
                self.held.append(again)
                return Written(again, decision)
            written = self.writer.write(again)
            if written.conflict is None:
                return written
        assert written.conflict is not None
        return self.writer.fail(written.planned, f"the workload kept changing under us: {written.conflict}")


def unsent(decision: Decision, delivery: Delivery) -> Decision:
    """A held notification the webhook did not deliver: deferred where the pass could send nothing more,
    else unwritten, its reason saying why."""
    if delivery.cut is not None:
        return defer_unwritten(decision, stopped=delivery.cut.stops_pass)
    return undelivered(decision, delivery.error or "not delivered")
