"""Decide or ask, in rounds: the one path from workloads to decisions, for a pass's batches (`plan_batch`)
and, through the same batch path, for `explain` and the re-decision after a failed write precondition
(`plan_workload`, `redecide`).

Each round asks every undecided workload of the batch what it needs (`policy.answer`), merges the wants,
hands them to the read stage in one call and merges what it read into what the batch knows, until every
workload is decided or the budget ends. The decision table runs at most once per workload per round, and
there are at most as many rounds as there are kinds of read. Stages never call each other: this module is
where their values meet.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from datetime import datetime

from reconcile.errors import PassCut, RehashError
from reconcile.kube.client import KubeClient
from reconcile.model.bookkeeping import KEY_NAME_BYTES_MAX, KEY_NAMES_MAX, names_unkept
from reconcile.model.kinds import Kind
from reconcile.model.workload import Listed, Target, read_target
from reconcile.pipeline.fetch import SourceReader
from reconcile.pipeline.read import ReadStage
from reconcile.pipeline.views import FullViews
from reconcile.policy.answer import GONE, Answer, answer
from reconcile.policy.decision import Action, Decision, Skip, defer_for_budget, skip
from reconcile.policy.known import Known
from reconcile.policy.planned import Planned
from reconcile.policy.rules import Rules
from reconcile.policy.triage import Batch, Need, Triage, triage_of, triage_one
from reconcile.policy.wants import Input, Wants, merge
from reconcile.policy.waves import hold_waves
from reconcile.settings.table import Settings

log = logging.getLogger(__name__)

MAX_ROUNDS = len(Input) + 2
"""Rounds of reads a batch may take: one per kind of input, and one more each for a workload whose records
no longer stand (its whole object, then what that object references). A batch still asking after them
fails the workloads that ask (`unsettled`): a loop that does not end is a defect, never a hang."""


def plan_batch(stage: ReadStage, batch: Batch, triage: Triage, rules: Rules) -> list[Planned]:
    """One batch's decisions, in order: the rounds of reads they need, then a rollout that waits for a
    lower wave deferred (`policy.waves`)."""
    planned, _known = plan_rounds(stage, batch, triage, rules)
    return planned


def plan_rounds(stage: ReadStage, batch: Batch, triage: Triage, rules: Rules) -> tuple[list[Planned], Known]:
    """The rounds of one batch: its planned workloads (none for a workload gone since it was listed) and
    what its reads established."""
    known = Known.of(batch.namespace)
    answers: dict[str, Answer] = {}
    asking = [w for w in batch.workloads if w.uid not in triage.settled]
    for _round in range(MAX_ROUNDS):
        for workload in asking:
            need = triage.need_of(workload.uid)
            assert isinstance(need, Need)
            answers[workload.uid] = answer(workload, need, known, rules)
        asking = [w for w in asking if isinstance(answers[w.uid], Wants)]
        if not asking or known.cut:
            break
        wanted = merge(a for w in asking if isinstance(a := answers[w.uid], Wants)).first()
        say_names_unkept(batch.namespace, wanted.views)
        try:
            known.merge(stage.read(batch.namespace, wanted))
        except PassCut:
            known.sources.cut = True
    planned: list[Planned] = []
    for workload in batch.workloads:
        settled = triage.settled.get(workload.uid)
        got = answers.get(workload.uid) if settled is None else Planned(workload, settled)
        if isinstance(got, Wants):
            planned.append(Planned(workload, unsettled(got, cut=known.cut)))
        elif got is not GONE:
            assert isinstance(got, Planned)
            planned.append(got)
    held = hold_waves([(p.listed, p.decision) for p in planned])
    kept = [p if d is p.decision else replace(p, decision=d) for p, d in zip(planned, held, strict=True)]
    return kept, known


def unsettled(wants: Wants, *, cut: bool) -> Decision:
    """The decision of a workload still asking when the rounds end: deferred, saying which read the
    budget did not reach; failed if the rounds ran out without a cut (they never should)."""
    if cut:
        return defer_for_budget(wants.waits_for.value)
    return Decision(
        Action.FAILED, f"its reads did not settle in {MAX_ROUNDS} rounds ({wants.waits_for.name})"
    )


def say_names_unkept(namespace: str, read: Sequence[Listed]) -> None:
    """At -v: why workloads whose sources changed are read in full where their records would not do
    (never a key name: only the source's kind and name)."""
    unkept = [label for w in read if (label := names_unkept(w.bookkeeping.records or ())) is not None]
    if unkept:
        log.info(
            "%s: %d workload(s) read in full: their records keep no key names of a source used in part "
            "(e.g. %s; recorded by an older version, or beyond the cap of %d names or %d bytes per workload)",
            namespace,
            len(unkept),
            unkept[0],
            KEY_NAMES_MAX,
            KEY_NAME_BYTES_MAX,
        )


def plan_workload(
    stage: ReadStage, target: Target, rules: Rules, *, spec_read: bool = False
) -> tuple[Planned, Known]:
    """One workload through the path of a pass's batch, from its whole object just read: triaged as a
    pass triages it (or as needing its spec, after a failed precondition: the spec moved), its rounds
    read (the object is not read again), then decided. `explain` and `redecide` call this, so neither can
    decide differently from the pass."""
    listed = target.listed
    need = Need.SPEC if spec_read else triage_one(listed, rules.fingerprint)
    triage = triage_of([(listed.uid, need)])
    stage.prefetched[listed.uid] = target
    try:
        planned, known = plan_rounds(stage, Batch(listed.namespace, (listed,)), triage, rules)
    finally:
        stage.prefetched.pop(listed.uid, None)
    gone = Planned(listed, skip("no longer exists", Skip.GONE))
    return (planned[0] if planned else gone), known


def redecide(stage: ReadStage, target: Target, rules: Rules) -> tuple[Target, Decision]:
    """After a failed precondition: read the workload again and decide from scratch."""
    fresh = read_workload(stage, target.kind, target.namespace, target.name)
    if not fresh.discovery.wants_row:
        return fresh, skip("no longer opted in", Skip.GONE)
    planned, _known = plan_workload(stage, fresh, rules, spec_read=True)
    return planned.full or fresh, planned.decision


def read_workload(stage: ReadStage, kind: Kind, namespace: str, name: str) -> Target:
    """One workload read by name (with the Deployment its workloadRef names); raises on a failed read."""
    views = FullViews(
        [read_target(stage.client.get(kind.object_path(namespace, name)), kind, stage.discovery)]
    )
    stage.follow_workload_refs(views)
    if views.failed:
        raise RehashError(next(iter(views.failed.values())))
    return views.targets[0]


def rules_for(settings: Settings, hash_key: bytes | None, now: datetime) -> Rules:
    """The decision rules of one pass (or one `explain`): its policy settings, hash key and clock."""
    return Rules(settings.discovery, hash_key, now, settings.policy)


def open_stage(
    settings: Settings, client: KubeClient, executor: ThreadPoolExecutor, rules: Rules
) -> ReadStage:
    """The read stage of one pass (or one `explain`), with its source reader."""
    reader = SourceReader(
        client, executor, mode=settings.reading.fetch, settings=rules.discovery, hash_key=rules.hash_key
    )
    return ReadStage(client, executor, reader, rules.discovery)
