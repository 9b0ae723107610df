"""Carrying out the plan: guarded patches, Events and run-on-change Jobs, with re-decisions on conflict.

A failed precondition (422 from a JSON-patch `test`, or 409) means someone changed the workload
after we read it: read it again and decide again, a bounded number of times, so nobody's change is
lost and two overlapping passes never roll a workload twice for one change.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from reconcile.errors import Conflict, Invalid, RehashError
from reconcile.kube.client import PatchType
from reconcile.patches import build_event, build_job, build_patch, events_path, jobs_path
from reconcile.plan import WRITING_ACTIONS, Action, Decision
from reconcile.report import Row
from reconcile.targets import Target

if TYPE_CHECKING:
    from reconcile.run import PassContext

log = logging.getLogger(__name__)
MAX_REDECIDE = 3
Redecide = Callable[[Target], tuple[Target, Decision]]


class Writer:
    """Applies decisions for one pass; rows go to the pass report."""

    def __init__(self, ctx: PassContext, redecide: Redecide) -> None:
        self.ctx = ctx
        self.redecide = redecide
        self.server_dry_run = ctx.settings.dry_run == "server"
        self.client_dry_run = ctx.settings.dry_run == "client"
        self._lock = threading.Lock()
        self.event_failures: dict[str, str] = {}

    def write_all(
        self, planned: Sequence[tuple[Target, Decision]], progress: Callable[[int, int], None] | None = None
    ) -> None:
        total = len(planned)
        workers = max(1, self.ctx.settings.concurrency)
        with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="rehash-write") as pool:
            rows = pool.map(lambda item: self.write_one(*item), planned)
            for done, row in enumerate(rows, 1):
                self.ctx.report.add(row)
                if progress is not None:
                    progress(done, total)
        # Events the user relies on but could not get are a failed scope, not a footnote in a log.
        for namespace, error in sorted(self.event_failures.items()):
            self.ctx.report.add(Row.scope_failure("Event", namespace, f"recording Events failed: {error}"))

    def write_one(self, target: Target, decision: Decision) -> Row:
        for attempt in range(MAX_REDECIDE + 1):
            if decision.action not in WRITING_ACTIONS or self.client_dry_run:
                return Row.of(target, decision)
            if self.ctx.stopping():
                self.ctx.report.interrupted = True
                reason = f"pass stopped (SIGTERM or --timeout) before writing: {decision.reason}"
                return Row.of(target, replace(decision, action=Action.DEFERRED, reason=reason))
            try:
                updated = self.patch(target, decision)
            except (Conflict, Invalid) as exc:
                if attempt == MAX_REDECIDE:
                    return self.fail(target, decision, f"the workload kept changing under us: {exc}")
                log.info("%s changed since it was read (%s); reading it again", target.ref, exc.code)
                try:
                    target, decision = self.redecide(target)
                except RehashError as again:
                    return self.fail(target, decision, f"re-reading after a conflict failed: {again}")
                continue
            except RehashError as exc:  # an API error, or a connection that failed past its retries
                return self.fail(target, decision, f"patch failed: {exc}")
            problem = self.after_write(target, decision, updated)
            if problem:
                return self.fail(target, decision, problem)
            return Row.of(target, decision)
        raise AssertionError("unreachable")

    def patch(self, target: Target, decision: Decision) -> dict[str, Any]:
        assert decision.observed is not None
        ops = build_patch(target, decision, decision.observed, now=self.ctx.now, keys=self.ctx.keys)
        path = target.kind.object_path(target.namespace, target.name)
        return self.ctx.client.patch(path, ops, patch_type=PatchType.JSON, dry_run=self.server_dry_run)

    def after_write(self, target: Target, decision: Decision, updated: dict[str, Any]) -> str | None:
        """Event and run-on-change Job after a rollout; returns a problem that fails the workload."""
        if decision.action is not Action.ROLLOUT:
            return None
        log.info("rolled %s: %s", target.ref, decision.reason)
        changed = ", ".join(decision.changed) or "config"
        self.emit(target, "ConfigChanged", f"kube-rehash rolled out: {changed} changed", warning=False)
        if target.kind.kind == "CronJob" and target.run_on_change and decision.config_hash:
            return self.create_job(target, updated, decision.config_hash)
        return None

    def create_job(self, target: Target, cronjob: dict[str, Any], config_hash: str) -> str | None:
        job = build_job(cronjob, config_hash)
        if job is None:
            return "rolled out, but the CronJob has no job template to run"
        try:
            self.ctx.client.create(jobs_path(target.namespace), job, dry_run=self.server_dry_run)
        except Conflict:
            log.info("job %s already exists (another pass created it)", job["metadata"]["name"])
        except RehashError as exc:
            return f"job template updated, but creating the run-on-change Job failed: {exc}"
        return None

    def fail(self, target: Target, decision: Decision, reason: str) -> Row:
        log.warning("%s failed: %s", target.ref, reason)
        self.emit(
            target, "RolloutFailed", f"kube-rehash could not update the workload: {reason}", warning=True
        )
        return Row.of(target, replace(decision, action=Action.FAILED, reason=reason))

    def emit(self, target: Target, reason: str, message: str, *, warning: bool) -> None:
        if not self.ctx.settings.events or self.client_dry_run:
            return
        event = build_event(target, reason=reason, message=message, warning=warning, now=self.ctx.now)
        try:
            self.ctx.client.create(events_path(target), event, dry_run=self.server_dry_run)
        except RehashError as exc:
            log.warning("recording an Event on %s failed: %s", target.ref, exc)
            with self._lock:
                self.event_failures.setdefault(target.namespace, str(exc))
