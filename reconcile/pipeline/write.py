"""Write, the last stage of a batch: the guarded patch of each planned write, then its Events and
run-on-change Job; what was sent and what it came to is returned, nothing is decided here.

A batch's writes are done before the next batch is read, so every pass leaves durable progress. A failed
precondition (422 from a JSON-patch `test`, or 409) means someone changed the workload after we read it:
the write comes back as a conflict and the pass reads the workload again and decides again
(pipeline/writes.py); a write the budget no longer allows comes back deferred. What holds a decision back
(`--max-rollouts`, notifications waiting for the webhook) was applied before (policy/limits.py).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from datetime import datetime
from typing import Any

from reconcile.errors import ApiError, Conflict, Invalid, PassCut, RehashError
from reconcile.kube.client import KubeClient, PatchType
from reconcile.model.annotations import Annotations
from reconcile.model.choices import DryRun
from reconcile.model.workload import Listed, Target
from reconcile.pipeline.events import EventSender
from reconcile.pipeline.evictions import carry_out
from reconcile.policy.audit import related_source
from reconcile.policy.decision import WRITING_ACTIONS, Action, Decision, defer_unwritten
from reconcile.policy.patches import JsonPatch, build_job, build_patch, jobs_path
from reconcile.policy.planned import Planned
from reconcile.policy.priority import write_rank
from reconcile.values import value

log = logging.getLogger(__name__)


@value
class Written:
    """What writing one planned workload came to: its decision as written (the same; `failed`; deferred
    when the budget cut the write), a failed precondition to re-decide, an Event that could not be sent."""

    planned: Planned
    decision: Decision
    conflict: ApiError | None = None
    event_failure: tuple[str, str] | None = None
    """(namespace, error) of an Event the user relies on that the server refused."""


class Writer:
    """Sends one pass's writes: patches, evictions, Events and Jobs, as they were planned."""

    def __init__(
        self,
        client: KubeClient,
        *,
        dry_run: DryRun,
        events: bool,
        keys: Annotations,
        now: datetime,
        concurrency: int = 4,
    ) -> None:
        self.client = client
        self.keys = keys
        self.now = now
        self.events = events
        self.concurrency = max(1, concurrency)
        self.server_dry_run = dry_run is DryRun.SERVER
        self.client_dry_run = dry_run is DryRun.CLIENT
        self.sender = EventSender(client, now=now, dry_run=self.server_dry_run)

    def may_write(self, item: Planned) -> bool:
        """Whether writing this decision may send a patch: only a workload with a full view has one."""
        if self.client_dry_run:
            return False
        return item.decision.action in WRITING_ACTIONS and item.full is not None

    def write_all(self, planned: Sequence[Planned]) -> list[Written]:
        """Each planned write, in order of their results; rollouts and adoptions are sent before
        refreshes (policy.priority), several at once."""
        if not any(self.may_write(item) for item in planned):
            return [self.write(item) for item in planned]  # steady: no thread pool
        order = sorted(range(len(planned)), key=lambda i: write_rank(planned[i].decision.action))
        out: list[Written | None] = [None] * len(planned)
        with ThreadPoolExecutor(max_workers=self.concurrency, thread_name_prefix="rehash-write") as pool:
            for index, written in zip(order, pool.map(lambda i: self.write(planned[i]), order), strict=True):
                out[index] = written
        return [w for w in out if w is not None]

    def write(self, item: Planned) -> Written:
        """One planned workload's write: its eviction, or its guarded patch and what follows it."""
        target, decision = item.full, item.decision
        if target is not None and evicting(decision) and not self.client_dry_run:
            return self.evict(item, target)
        if target is None or not self.may_write(item):
            return Written(item, decision)
        try:
            updated = self.patch(target, decision)
        except PassCut as exc:
            return Written(item, defer_unwritten(decision, stopped=exc.stops_pass))
        except (Conflict, Invalid) as exc:
            log.info("%s changed since it was read (%s); reading it again", target.ref, exc.code)
            return Written(item, decision, conflict=exc)
        except RehashError as exc:  # an API error, or a connection that failed past its retries
            return self.fail(item, f"patch failed: {exc}")
        return self.after_write(item, target, updated)

    def evict(self, item: Planned, target: Target) -> Written:
        failures: list[tuple[str, str]] = []

        def emit(subject: Listed, reason: str, message: str) -> None:
            failure = self.emit(
                subject, reason, message, warning=False, action="Evict", decision=item.decision
            )
            failures.extend([failure] if failure else [])

        try:
            done = carry_out(
                self.client,
                target,
                item.decision,
                dry_run=self.server_dry_run,
                keys=self.keys,
                now=self.now,
                emit=emit,
            )
        except PassCut as exc:
            done = defer_unwritten(item.decision, stopped=exc.stops_pass)
        return Written(item, done, event_failure=failures[0] if failures else None)

    def patch(self, target: Target, decision: Decision) -> dict[str, Any]:
        assert decision.observed is not None
        ops = build_patch(target, decision, decision.observed, now=self.now, keys=self.keys)
        return self.send_patch(target.listed, ops)

    def send_patch(self, subject: Listed, ops: JsonPatch) -> dict[str, Any]:
        path = subject.kind.object_path(subject.namespace, subject.name)
        return self.client.patch(path, ops, patch_type=PatchType.JSON, dry_run=self.server_dry_run)

    def after_write(self, item: Planned, target: Target, updated: dict[str, Any]) -> Written:
        """The Event of a rollout or a notification, and a rollout's run-on-change Job. Events name the
        changed sources by kind and name, never content."""
        decision = item.decision
        changed = ", ".join(decision.changed) or "config"
        if decision.action is Action.NOTIFY:
            log.info("notified %s: %s", target.ref, decision.reason)
            message, action = f"kube-rehash notified: {changed} changed", "Notify"
        elif decision.action is Action.ROLLOUT:
            log.info("rolled %s: %s", target.ref, decision.reason)
            message, action = f"kube-rehash rolled out: {changed} changed", "Restart"
        else:
            return Written(item, decision)
        failure = self.emit(
            target.listed, "ConfigChanged", message, warning=False, action=action, decision=decision
        )
        problem = None
        if decision.action is Action.ROLLOUT and target.kind.runs_jobs and target.run_on_change:
            problem = self.create_job(target, updated, decision.config_hash or "")
        if problem:
            return self.fail(item, problem)
        return Written(item, decision, event_failure=failure)

    def landed(self, item: Planned) -> Written:
        """Our patch landed though its answer was lost: the outcome is what it was, and what follows a
        write follows (a run-on-change Job is made from the CronJob as it now is: one GET)."""
        target = item.full
        assert target is not None
        log.info("%s: the answer to our patch was lost; the workload shows it landed", target.ref)
        updated: dict[str, Any] = {}
        if item.decision.action is Action.ROLLOUT and target.kind.runs_jobs and target.run_on_change:
            try:
                updated = self.client.get(target.kind.object_path(target.namespace, target.name))
            except RehashError as exc:
                return self.fail(item, f"rolled out, but reading it for its Job failed: {exc}")
        return self.after_write(item, target, updated)

    def create_job(self, target: Target, cronjob: dict[str, Any], config_hash: str) -> str | None:
        job = build_job(cronjob, config_hash)
        if job is None:
            return "rolled out, but the CronJob has no job template to run"
        try:
            self.client.create(jobs_path(target.namespace), job, dry_run=self.server_dry_run)
        except PassCut:
            return (
                "job template updated, but the pass budget ran out before the run-on-change Job was created"
            )
        except Conflict:
            log.info("job %s already exists (another pass created it)", job["metadata"]["name"])
        except RehashError as exc:
            return f"job template updated, but creating the run-on-change Job failed: {exc}"
        return None

    def fail(self, item: Planned, reason: str) -> Written:
        """The workload failed: its row says why, and a RolloutFailed Event tells its owners."""
        subject = item.full.listed if item.full is not None else item.listed
        log.warning("%s failed: %s", subject.ref, reason)
        message = f"kube-rehash could not update the workload: {reason}"
        failure = self.emit(
            subject, "RolloutFailed", message, warning=True, action="Patch", decision=item.decision
        )
        decision = replace(item.decision, action=Action.FAILED, reason=reason)
        return Written(item, decision, event_failure=failure)

    def emit(
        self,
        subject: Listed,
        reason: str,
        message: str,
        *,
        warning: bool,
        action: str,
        decision: Decision | None = None,
        changed: tuple[str, ...] = (),
    ) -> tuple[str, str] | None:
        """One Event on the workload; `related` names the first changed source (of `decision`, else
        `changed`), the message all of them. (namespace, error) when the server refused it."""
        if not self.events or self.client_dry_run:
            return None
        records = decision.observed.records if decision and decision.observed else ()
        related = related_source(subject.namespace, decision.changed if decision else changed, records)
        try:
            self.sender.send(
                subject, reason=reason, message=message, warning=warning, action=action, related=related
            )
        except PassCut:
            log.info("no Event on %s: the pass may start no more requests", subject.ref)
        except RehashError as exc:
            log.warning("recording an Event on %s failed: %s", subject.ref, exc)
            return subject.namespace, str(exc)
        return None


def evicting(decision: Decision) -> bool:
    """A restart by eviction to carry out (pipeline/evictions.py): pods to evict, or the hash to record."""
    return decision.eviction is not None and decision.action in (Action.ROLLOUT, Action.IN_SYNC)
