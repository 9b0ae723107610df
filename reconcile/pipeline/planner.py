"""The one planner entry point for full views: read what they need, then decide.

A pass goes through it batch by batch (via `ReadStage.read_batch`); `explain` and the re-decision after a
failed write precondition go through `plan_targets` here, so all three decide with the same reads and
the same rules (`rules_for`, `open_stage`).
"""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime

from reconcile.policy.decide import Rules, content_needed, decide_target
from reconcile.pipeline.fetch import SourceReader
from reconcile.kube.client import KubeClient
from reconcile.model.kinds import Kind
from reconcile.policy.decision import Action, Decision
from reconcile.pipeline.read import ReadStage
from reconcile.model.references import DiscoverySettings
from reconcile.config.settings import Settings
from reconcile.model.workload import Target, read_target


def plan_targets(
    stage: ReadStage, namespace: str, targets: Sequence[Target]
) -> list[tuple[Target, Decision]]:
    """Read the sources of these full views of one namespace, then decide each."""
    sources = stage.read_sources(namespace, targets, [])
    if not sources.cut:
        sources.merge(stage.reader.contents(namespace, content_needed(targets, sources, stage.rules)))
    return [(t, decide_target(t, sources, stage.rules)) for t in targets]


def redecide(stage: ReadStage, target: Target) -> tuple[Target, Decision]:
    """After a failed precondition: read the workload again and decide from scratch."""
    fresh = read_workload(stage, target.kind, target.namespace, target.name)
    if not fresh.discovery.opted_in:
        return fresh, Decision(Action.SKIPPED, "no longer opted in")
    return plan_targets(stage, fresh.namespace, [fresh])[0]


def read_workload(stage: ReadStage, kind: Kind, namespace: str, name: str) -> Target:
    return read_target(stage.client.get(kind.object_path(namespace, name)), kind, stage.rules.discovery)


def rules_for(settings: Settings, hash_key: bytes | None, now: datetime) -> Rules:
    """The decision rules of one pass (or one `explain`): settings, hash key and clock."""
    discovery = DiscoverySettings(prefix=settings.prefix, compat=frozenset(settings.compat))
    return Rules(
        discovery,
        hash_key,
        now,
        first_sight_rollout=settings.first_sight == "rollout",
        notify=settings.on_change == "notify",
        windows=settings.restart_windows,
        rollout_deadline=settings.rollout_deadline,
    )


def open_stage(
    settings: Settings, client: KubeClient, executor: ThreadPoolExecutor, rules: Rules
) -> ReadStage:
    """The read stage of one pass (or one `explain`), with its source reader."""
    reader = SourceReader(
        client, executor, mode=settings.fetch, settings=rules.discovery, hash_key=rules.hash_key
    )
    return ReadStage(client, executor, reader, rules)
