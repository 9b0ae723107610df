"""Whether a write whose answer was lost landed: the re-read workload shows exactly what our patch wrote.

A patch can be applied by the server and its answer lost (the connection drops after the server served
it). The client sends it again, its precondition now fails, and a re-decision finds the workload in sync:
without this check the row would say `in-sync` for a restart this pass caused. The patch sets the hash,
the source records with their generation stamp and, for a rollout, the pass's clock as the last-rollout
time: a re-read workload carrying all of them carries this pass's write. The clock is second-granular,
so an overlapping pass that started in the same second writes the same: the caller asks only when an
earlier attempt of the request went unanswered (`ApiError.unanswered_before`). A patch refused at its
first attempt (an overlapping pass rolled first) is therefore never taken for ours; what is left is a pass
whose attempt was lost before the server served it while an overlapping pass of the same second wrote the
same values meanwhile (docs/reliability.md, "Known limits").
"""

from __future__ import annotations

from datetime import datetime

from reconcile.model.bookkeeping import PROGRESSING
from reconcile.model.times import format_time
from reconcile.model.workload import Target, facts_after
from reconcile.policy.decision import WRITING_ACTIONS, Action, Decision, generation_after, stamp_generation
from reconcile.policy.patches import new_rollout


def shows_write(fresh: Target, sent: Target, decision: Decision, now: datetime) -> bool:
    """Whether `fresh` (the workload read again after a failed precondition) shows the write of
    `decision` to `sent` that this pass, with clock `now`, sent (`patches.build_patch`)."""
    observed = decision.observed
    if decision.action not in WRITING_ACTIONS or observed is None or decision.config_hash is None:
        return False
    rollout = decision.action is Action.ROLLOUT
    book = fresh.bookkeeping
    generation = generation_after(sent.listed, stamp_generation(sent, observed), rollout=rollout)
    recorded = (book.config_hash, book.records, book.key_fingerprint, book.generation)
    if recorded != (decision.config_hash, observed.records, observed.key_fingerprint, generation):
        return False
    if generation is not None and (
        book.inputs != sent.inputs or book.facts != facts_after(sent, decision.config_hash, rollout=rollout)
    ):
        return False
    if not rollout:
        return True
    if book.last_rollout is None or format_time(book.last_rollout) != format_time(now):
        return False
    restarts_elsewhere = sent.workload_ref is not None and sent.kind.restart_at is not None
    if not restarts_elsewhere and fresh.template_hash != decision.config_hash:
        return False
    if sent.kind.health is None:
        return True
    record, wrote = book.rollout, new_rollout(sent, decision, now)
    if record is None:
        return False
    stored = (record.generation, format_time(record.at), record.changed, record.state)
    return stored == (wrote.generation, format_time(wrote.at), wrote.changed, PROGRESSING)
