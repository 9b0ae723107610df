"""Read, then decide: the one path from workloads to decisions, for a pass's batches (`plan_batch`),
and, through the same batch path, for `explain` and the re-decision after a failed write precondition
(`plan_workload`, `redecide`).

Between the read stage's requests it asks `policy.needs` what to read next; the snapshot it builds is
handed to `policy.decide`. Stages never call each other: this module is where their values meet.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime

from reconcile.config.settings import Settings
from reconcile.errors import PassCut, RehashError
from reconcile.kube.client import KubeClient
from reconcile.model.bookkeeping import KEY_NAME_BYTES_MAX, KEY_NAMES_MAX, names_unkept
from reconcile.model.freshness import Origin
from reconcile.model.kinds import Kind
from reconcile.model.pods import PodsRead
from reconcile.model.references import DiscoverySettings
from reconcile.model.sources import NamespaceSources
from reconcile.model.workload import Listed, Target, read_target
from reconcile.pipeline.fetch import SourceReader
from reconcile.pipeline.read import ReadStage
from reconcile.pipeline.views import FullViews
from reconcile.policy.decide import Planned, decide_batch, target_from_records, undecided
from reconcile.policy.decision import Action, Decision
from reconcile.policy.needs import (
    confirm_trusted,
    content_needed,
    content_to_read,
    metadata_to_read,
    mounts_to_read,
    origins_to_read,
    pods_to_read,
)
from reconcile.policy.rules import Rules
from reconcile.policy.snapshot import Snapshot
from reconcile.policy.triage import Batch, Need, Triage, triage_of, triage_one

log = logging.getLogger(__name__)


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
            say_names_unkept(namespace, [w for w in stale if w.uid not in known])
            more = stage.read_views([w for w in stale if w.uid not in known])
            views.targets += unread
            views.merge(more)
            read_live = undecided(more.targets)
            live += undecided(unread) + read_live
            if read_live:
                sources.merge(stage.read_metadata(namespace, *metadata_to_read(read_live, [], sources)))
                sources.merge(stage.read_mounts(namespace, mounts_to_read(read_live, sources)))
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


def read_sources(
    stage: ReadStage, namespace: str, live: Sequence[Target], trusted: Sequence[Listed], rules: Rules
) -> NamespaceSources:
    """Content of the sources the undecided full views use that no record stands for, then the identities
    of every other source they and the trusted workloads reference."""
    sources = stage.read_contents(namespace, content_to_read(live, rules))
    if not sources.cut:
        sources.merge(stage.read_metadata(namespace, *metadata_to_read(live, trusted, sources)))
    if not sources.cut:
        sources.merge(stage.read_mounts(namespace, mounts_to_read(live, sources)))
    return sources


def plan_workload(
    stage: ReadStage, target: Target, rules: Rules, *, spec_read: bool = False
) -> tuple[Planned, Snapshot]:
    """One workload through the path of a pass's batch, from its whole object just read: triaged as a
    pass triages it (or as needing its spec, after a failed precondition: the spec moved), its snapshot
    read (the object is not read again), then decided. `explain` and `redecide` call this, so neither can
    decide differently from the pass."""
    listed = target.listed
    need = Need.SPEC if spec_read else triage_one(listed, rules.fingerprint)
    triage = triage_of([(listed.uid, need)])
    stage.prefetched[listed.uid] = target
    try:
        snapshot = read_snapshot(stage, Batch(listed.namespace, (listed,)), triage, rules)
    finally:
        stage.prefetched.pop(listed.uid, None)
    planned = decide_batch([listed], triage.settled, snapshot, rules)
    gone = Planned(listed, Decision(Action.SKIPPED, "no longer exists"))
    return (planned[0] if planned else gone), snapshot


def redecide(stage: ReadStage, target: Target, rules: Rules) -> tuple[Target, Decision]:
    """After a failed precondition: read the workload again and decide from scratch."""
    fresh = read_workload(stage, target.kind, target.namespace, target.name)
    if not fresh.discovery.wants_row:
        return fresh, Decision(Action.SKIPPED, "no longer opted in")
    planned, _snapshot = plan_workload(stage, fresh, rules, spec_read=True)
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
