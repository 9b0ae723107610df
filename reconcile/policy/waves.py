"""Waves: among workloads due for the same changed source, lower waves roll first.

"Restart the API only after the database's new pods are up": a workload annotated `wave: "1"` whose
rollout a source's change starts is `deferred` while a workload of a lower wave in its namespace, due
for that same source, has not completed its rollout — it rolls in this pass, is held back itself
(window, min-interval, a budget), or its recorded rollout of that source is still `progressing` or
`stalled`. Pure and stateless: a function over one batch's decisions, applied after they are made and
before --max-rollouts counts, so each pass decides again from the lower waves' decisions and rollout
records. Workloads sharing no changed source never wait on each other; CronJobs restart nothing and
take no part.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from reconcile.model.health import RolloutStatus
from reconcile.model.rollouts import watched
from reconcile.model.workload import Listed
from reconcile.policy.decision import Action, Decision, Deferral, defer, join


@dataclass(frozen=True)
class Pending:
    """A workload whose rollout for one source is not complete yet, and in what state it is."""

    wave: int
    label: str
    """`Kind/name` of the workload."""
    state: str


def hold_waves(items: Sequence[tuple[Listed, Decision]]) -> list[Decision]:
    """The decisions of one batch (in order), a rollout `deferred` while a lower wave sharing one of its
    changed sources has not completed its own."""
    pending: dict[str, list[Pending]] = {}
    for listed, decision in items:
        for source, state in unfinished(listed, decision):
            pending.setdefault(source, []).append(
                Pending(listed.wave, f"{listed.kind.kind}/{listed.name}", state)
            )
    out: list[Decision] = []
    for listed, decision in items:
        if decision.action is not Action.ROLLOUT or not listed.kind.rolls_pods:
            out.append(decision)
            continue
        waits = [
            (p.wave, p.label, source, p.state)
            for source in decision.changed or decision.configs
            for p in pending.get(source, ())
            if p.wave < listed.wave
        ]
        if not waits:
            out.append(decision)
            continue
        wave, label, source, state = min(waits)
        reason = f"wave {listed.wave} waits for {label} (wave {wave}), whose rollout for {source} is {state}"
        out.append(defer(decision, Deferral.WAVE, join(reason, decision.reason)))
    return out


def unfinished(listed: Listed, decision: Decision) -> Iterator[tuple[str, str]]:
    """(source, state) for each source whose rollout of this workload is not complete: one it starts or
    holds back in this pass, or the recorded rollout of ours still progressing or stalled."""
    if not listed.kind.rolls_pods:
        return
    if decision.action is Action.ROLLOUT:
        for source in decision.changed or decision.configs:
            yield source, "starting in this pass"
        return
    if decision.action is Action.DEFERRED and decision.changed:
        why = decision.deferral.value if decision.deferral is not None else "deferred"
        for source in decision.changed:
            yield source, f"held back ({why})"
        return
    if decision.rollout is not None:
        if decision.rollout.status is RolloutStatus.COMPLETE:
            return
        record, state = decision.rollout.record, decision.rollout.status.value
    else:
        found = watched(listed)
        if found is None:
            return
        record, state = found, found.state
    for source in record.changed:
        yield source, state
