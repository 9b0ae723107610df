"""Read, then decide: the one path from workloads to decisions, for a pass's batches (`plan_batch`),
for `explain` and for the re-decision after a failed write precondition (`plan_targets`, `redecide`).

Between the read stage's requests it asks `policy.needs` what to read next; the snapshot it builds is
handed to `policy.decide`. Stages never call each other: this module is where their values meet.
"""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime

from reconcile.config.settings import Settings
from reconcile.errors import PassCut
from reconcile.kube.client import KubeClient
from reconcile.model.freshness import Origin
from reconcile.model.kinds import Kind
from reconcile.model.pods import PodsRead
from reconcile.model.references import DiscoverySettings
from reconcile.model.sources import NamespaceSources
from reconcile.model.workload import Listed, Target, read_target
from reconcile.pipeline.fetch import SourceReader
from reconcile.pipeline.read import ReadStage
from reconcile.pipeline.views import FullViews
from reconcile.policy.decide import Planned, decide_batch, decide_target, target_from_records, undecided
from reconcile.policy.decision import Action, Decision
from reconcile.policy.evict import plan_eviction
from reconcile.policy.needs import (
    confirm_trusted,
    content_needed,
    content_to_read,
    metadata_to_read,
    origins_to_read,
    pods_to_read,
)
from reconcile.policy.rules import Rules
from reconcile.policy.snapshot import Snapshot
from reconcile.policy.triage import Batch, Triage


def plan_batch(stage: ReadStage, batch: Batch, triage: Triage, rules: Rules) -> list[Planned]:
    """One batch's decisions: its snapshot read, then every workload decided from it."""
    snapshot = read_snapshot(stage, batch, triage, rules)
    return decide_batch(batch.workloads, triage.settled, snapshot, rules)


def read_snapshot(stage: ReadStage, batch: Batch, triage: Triage, rules: Rules) -> Snapshot:
    """For the batch's workloads, in this order: the whole objects triage said are needed (unless a full
    list of their kind was already read), the content of the sources they use that no record stands for
    (first sight: content straight away, never metadata first) and the metadata of the others; then the
    trusted workloads whose records the metadata no longer confirms are rebuilt from their records or read
    in full, and the content of the changed sources is hashed."""
    namespace = batch.namespace
    views = FullViews()
    sources = NamespaceSources(namespace)
    confirmed: dict[str, Decision] = {}
    origins: dict[str, Origin] = {}
    pods: dict[str, PodsRead] = {}
    decided: dict[str, Decision] = {}
    trusted = [w for w in batch.workloads if w.uid in triage.trusted]
    try:
        views = stage.read_views([w for w in batch.workloads if w.uid in triage.need_spec])
        live = undecided(views.targets)  # the decision table settles the others from the spec alone
        sources = read_sources(stage, namespace, live, trusted, rules)
        confirmed = confirm_trusted(trusted, sources, rules)
        if not sources.cut:
            stale = [w for w in trusted if w.uid not in confirmed]
            # Stale but still trusted: decided from the records, without reading the workload.
            unread = [t for w in stale if (t := target_from_records(w))]
            known = {t.uid for t in unread}
            more = stage.read_views([w for w in stale if w.uid not in known])
            views.targets += unread
            views.merge(more)
            read_live = undecided(more.targets)
            live += undecided(unread) + read_live
            if read_live:
                sources.merge(stage.read_metadata(namespace, *metadata_to_read(read_live, [], sources)))
            if not sources.cut:
                sources.merge(stage.read_contents(namespace, content_needed(live, sources, rules)))
            if not sources.cut:
                wanted, decided = origins_to_read(live, sources, rules)
                origins, refused, cut = stage.read_origins(wanted)
                if cut:  # a cut snapshot decides differently: nothing decided before it stands
                    decided = {}
                sources.cut |= cut
                views.failed.update(refused)
            if not sources.cut:
                pods, sources.cut = stage.read_pods(pods_to_read(live, decided, sources, rules))
    except PassCut:
        sources.cut = True
    return Snapshot(
        sources=sources,
        full={t.uid: t for t in views.targets},
        failed=dict(views.failed),
        gone=frozenset(views.gone),
        confirmed=confirmed,
        origins=origins,
        pods=pods,
        decided=decided,
    )


def read_sources(
    stage: ReadStage, namespace: str, live: Sequence[Target], trusted: Sequence[Listed], rules: Rules
) -> NamespaceSources:
    """Content of the sources the undecided full views use that no record stands for, then the identities
    of every other source they and the trusted workloads reference."""
    sources = stage.read_contents(namespace, content_to_read(live, rules))
    if not sources.cut:
        sources.merge(stage.read_metadata(namespace, *metadata_to_read(live, trusted, sources)))
    return sources


def plan_targets(
    stage: ReadStage, namespace: str, targets: Sequence[Target], rules: Rules
) -> list[tuple[Target, Decision]]:
    """Read the sources of these full views of one namespace, then decide each."""
    sources = read_for(stage, namespace, targets, rules)
    origins: dict[str, Origin] = {}
    refused: dict[str, str] = {}
    decided: dict[str, Decision] = {}
    pods: dict[str, PodsRead] = {}
    if not sources.cut:
        live = undecided(targets)
        wanted, decided = origins_to_read(live, sources, rules)
        origins, refused, _cut = stage.read_origins(wanted)
        pods, _cut = stage.read_pods(pods_to_read(live, decided, sources, rules))
    return [
        (t, Decision(Action.FAILED, refused[t.uid]))
        if t.uid in refused
        else (
            t,
            plan_eviction(
                t,
                decided.get(t.uid) or decide_target(t, sources, rules, origin=origins.get(t.uid)),
                pods.get(t.uid),
                sources,
                per_pass=rules.evict_per_pass,
            ),
        )
        for t in targets
    ]


def read_for(stage: ReadStage, namespace: str, targets: Sequence[Target], rules: Rules) -> NamespaceSources:
    """Everything deciding these full views of one namespace needs to know of its sources."""
    live = undecided(targets)
    sources = read_sources(stage, namespace, live, [], rules)
    if not sources.cut:
        sources.merge(stage.read_contents(namespace, content_needed(live, sources, rules)))
    return sources


def redecide(stage: ReadStage, target: Target, rules: Rules) -> tuple[Target, Decision]:
    """After a failed precondition: read the workload again and decide from scratch."""
    fresh = read_workload(stage, target.kind, target.namespace, target.name)
    if not fresh.discovery.opted_in:
        return fresh, Decision(Action.SKIPPED, "no longer opted in")
    return plan_targets(stage, fresh.namespace, [fresh], rules)[0]


def read_workload(stage: ReadStage, kind: Kind, namespace: str, name: str) -> Target:
    return read_target(stage.client.get(kind.object_path(namespace, name)), kind, stage.discovery)


def rules_for(settings: Settings, hash_key: bytes | None, now: datetime) -> Rules:
    """The decision rules of one pass (or one `explain`): settings, hash key and clock."""
    discovery = DiscoverySettings(
        prefix=settings.prefix, compat=frozenset(settings.compat), restart=settings.restart
    )
    return Rules(
        discovery,
        hash_key,
        now,
        first_sight_rollout=settings.first_sight == "rollout",
        notify=settings.on_change == "notify",
        windows=settings.restart_windows,
        rollout_deadline=settings.rollout_deadline,
        skip_if_pods_newer=settings.skip_if_pods_newer,
        evict_per_pass=settings.evict_per_pass,
    )


def open_stage(
    settings: Settings, client: KubeClient, executor: ThreadPoolExecutor, rules: Rules
) -> ReadStage:
    """The read stage of one pass (or one `explain`), with its source reader."""
    reader = SourceReader(
        client, executor, mode=settings.fetch, settings=rules.discovery, hash_key=rules.hash_key
    )
    return ReadStage(client, executor, reader, rules.discovery)
