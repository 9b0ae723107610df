"""Which workloads a pass covers: in its namespace scope (pipeline/scope.py), the opted-in workloads of every
enabled kind, listed metadata-only, page by page, keeping only slim views, and, for a shard, its share of
them. A whole-cluster pass reads its lists in step, and may stop at a sample (pipeline/workload_lists.py).

A shard lists the same workloads as the unsharded pass and keeps its share (policy/sharding.py): every
shard must see every opted-in workload to compute the same split without coordination, and one
cluster-wide list per kind costs each shard as many requests as the whole pass's lists. With -n, every
shard lists every given namespace, for the same reason. The workloads of a namespace split between shards
are read (with their sources) by each shard that keeps some of them: the pass reads sources per namespace
from the workloads it keeps, so nothing else needs to know about shards.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Protocol, TypeVar

from reconcile.errors import NotFound, PassCut, RehashError, Stopped
from reconcile.kube.client import KubeClient
from reconcile.model.kinds import Kind
from reconcile.model.references import (
    PEER_DOMAINS,
    DiscoverySettings,
    foreign_peers,
    opt_in_keys,
    reads_template_annotations,
)
from reconcile.model.spelling import misspelt
from reconcile.model.workload import Listed, honoured_annotations, read_listed
from reconcile.pipeline.namespace_stream import namespace_of
from reconcile.pipeline.scope import (
    Scope,
    covers_whole_cluster,
    scope_namespaces,
    select_namespaces,
    workload_selector,
)
from reconcile.pipeline.workload_lists import WorkloadLists
from reconcile.policy.decision import Decision, Deferral
from reconcile.policy.outcome import Outcome
from reconcile.policy.sharding import WorkloadKey, plan_shards
from reconcile.policy.tally import Tally, tally_of
from reconcile.policy.triage import Need, Triage, triage_of, triage_one
from reconcile.settings.table import Settings
from reconcile.settings.values import Shard

log = logging.getLogger(__name__)


@dataclass
class Listing:
    """What listing the workloads established: the opted-in ones in scope (a shard: its share), a failed
    or deferred scope row per list that did not complete, and how many objects of each kind every
    namespace holds (opted in or not): the size of a list of them, for the read strategy.

    A whole-cluster pass with more than `streamAbove` opted-in workloads does not hold them: `streamed` is set
    and the listing stops at a sample (`workloads`, the lists still `open`); the walk goes on from them, or
    `finish` tallies the rest and the walk lists them again (pipeline/streamed_walk.py) from the kinds in
    `listed_kinds`, planned from the `tally`."""

    workloads: list[Listed] = field(default_factory=list)
    failures: list[Outcome] = field(default_factory=list)
    census: Counter[tuple[str, str]] = field(default_factory=Counter)
    """(namespace, plural) -> objects listed."""
    tally: Tally = field(default_factory=Tally)
    streamed: bool = False
    listed_kinds: list[Kind] = field(default_factory=list)
    """The kinds whose list completed."""
    open: WorkloadLists | None = None
    """A whole-cluster pass's lists, while open: the listing stopped at its sample of more than
    `hold_at_most` opted-in workloads (`workloads` holds it, `streamed` is set)."""
    hold_at_most: int | None = None
    needs: dict[str, Decision | Need] = field(default_factory=dict)
    """uid -> what triage said of each held view."""
    foreign: Counter[str] = field(default_factory=Counter)
    """Peer (compat rule) -> workloads listed carrying its annotations while the rule is off."""

    def keep(self, workload: Listed, need: Decision | Need) -> None:
        """Tally an opted-in workload, and hold its view (and what it needs) unless the listing streams."""
        self.tally.add(workload, need)
        if self.streamed:
            return
        self.workloads.append(workload)
        self.needs[workload.uid] = need

    def finish(self, key_fingerprint: str) -> None:
        """Drop the sample and tally the rest of the open lists: the walk will list the workloads again,
        planned from the whole tally."""
        self.workloads.clear()
        self.needs.clear()
        take_namespaces(self, key_fingerprint)

    def triage(self) -> Triage:
        """The triage of the held views, each triaged once as it was listed."""
        return triage_of(self.needs.items())

    def keep_share(self, shard: Shard) -> None:
        """Keep only `shard`'s share of the held views, and count only those."""
        self.workloads = shard_share(self.workloads, shard)
        self.needs = {w.uid: self.needs[w.uid] for w in self.workloads}
        self.tally = tally_of(self.workloads, self.triage())


def list_targets(
    settings: Settings, client: KubeClient, discovery: DiscoverySettings, *, key_fingerprint: str = ""
) -> Listing:
    """Opted-in workloads of every enabled kind in scope (a shard: its share of them), a failed scope row
    for each list that failed, and the tally of what they need (triaged with `key_fingerprint`)."""
    scope = scope_namespaces(settings)
    listing = Listing(hold_at_most=settings.reading.stream_above if covers_whole_cluster(settings) else None)
    if settings.scope.namespace_selector:
        try:
            scope = Scope(selected=select_namespaces(client, settings.scope.namespace_selector))
        except PassCut as exc:
            why = Deferral.STOPPED if isinstance(exc, Stopped) else Deferral.BUDGET
            listing.failures.append(Outcome.scope_deferred("Namespace", "*", f"{exc}; not listed", why))
            return listing
        except RehashError as exc:
            reason = f"namespaceSelector: the namespaces list failed: {exc}"
            listing.failures.append(Outcome.scope_failure("Namespace", "*", reason))
            return listing
    if covers_whole_cluster(settings):
        listing.open = WorkloadLists(
            settings,
            client,
            discovery,
            field_selector=workload_selector(settings),
            covers=scope.covers,
            note=lambda item, kind, namespace: note_listed(listing, item, kind, namespace, discovery),
            failures=listing.failures,
        )
        take_namespaces(listing, key_fingerprint)
        return listing
    for kind in settings.scope.kinds:
        if list_kind(settings, client, discovery, kind, scope, into=listing, key_fingerprint=key_fingerprint):
            listing.listed_kinds.append(kind)
    if settings.scope.shard is not None:
        listing.keep_share(settings.scope.shard)
    return listing


def take_namespaces(listing: Listing, key_fingerprint: str) -> None:
    """Take namespaces from the listing's open lists until it holds more than `hold_at_most` opted-in
    workloads (its sample: `streamed` is set and the lists stay open) or the lists are over."""
    lists = listing.open
    if lists is None:
        return
    try:
        while (namespace := lists.upcoming()) is not None:
            for workload in lists.take(namespace):
                listing.keep(workload, triage_one(workload, key_fingerprint))
            at_most = listing.hold_at_most
            if not listing.streamed and at_most is not None and len(listing.workloads) > at_most:
                log.info(
                    "more than %d opted-in workloads (streamAbove): the pass walks the cluster namespace by "
                    "namespace as its lists stream",
                    at_most,
                )
                listing.streamed = True
                return
    except PassCut as exc:
        lists.cut(exc)
    listing.listed_kinds = lists.listed_kinds
    listing.open = None


def note_listed(
    listing: Listing, item: dict[str, object], kind: Kind, namespace: str, discovery: DiscoverySettings
) -> Listed | None:
    """Count one listed object of a namespace in scope (its kind's size there, other tools' annotations it
    carries) and give its view, if it opted in."""
    listing.census[(namespace, kind.plural)] += 1
    peers = foreign_peers(annotations_of(item), discovery.compat)
    if peers:  # most workloads carry no other tool's annotations: no Counter update
        listing.foreign.update(peers)
    return opted_in_view(item, kind, discovery)


def annotations_of(item: dict[str, object]) -> Iterable[str]:
    metadata = item.get("metadata")
    annotations = metadata.get("annotations") if isinstance(metadata, dict) else None
    return annotations if isinstance(annotations, dict) else ()


def say_foreign(foreign: Counter[str]) -> None:
    """One line naming the peers' annotations the pass ignores, and the setting that would honour them."""
    if not foreign:
        return
    counts = ", ".join(f"{foreign[p]} carry {' / '.join(PEER_DOMAINS[p])} ({p})" for p in sorted(foreign))
    log.warning(
        "workloads with annotations of other tools, ignored with compat off: %s; set compat: [%s] "
        "(config compat, or KUBE_REHASH_COMPAT) to honour them",
        counts,
        ", ".join(sorted(foreign)),
    )


def opted_in_view(item: dict[str, object], kind: Kind, discovery: DiscoverySettings) -> Listed | None:
    """The slim view of a listed workload, if it opted in (or tried to, with a malformed annotation or a
    key under our prefix that kube-rehash does not read)."""
    keys = opt_in_keys(discovery)
    annotations = annotations_of(item)
    if (
        not keys.intersection(annotations)  # no opt-in annotation at all
        and not (
            reads_template_annotations(discovery)
            and keys.intersection(honoured_annotations(item, kind, discovery, {}))
        )
        and not misspelt(annotations, discovery)  # nor one meant to be, perhaps
    ):
        return None
    target = read_listed(item, kind, discovery)
    return target if target.discovery.wants_row or target.misspelt else None


class Workload(Protocol):
    """What the shard split reads of a listed workload."""

    @property
    def kind(self) -> Kind: ...
    @property
    def namespace(self) -> str: ...
    @property
    def name(self) -> str: ...


W = TypeVar("W", bound=Workload)


def workload_key(workload: Workload) -> WorkloadKey:
    kind = workload.kind
    return workload.namespace, f"{kind.group}/{kind.plural}/{workload.name}"


def shard_share(targets: list[W], shard: Shard) -> list[W]:
    """The targets `shard` owns of all the opted-in `targets` every shard listed."""
    plan = plan_shards((workload_key(t) for t in targets), shard.count)
    mine = plan.members(shard.index)
    kept = [t for t in targets if workload_key(t) in mine]
    split = {ns: shards for ns, shards in plan.split_namespaces().items() if shard.index in shards}
    log.info(
        "shard %d/%d: %d of %d opted-in workloads (shard sizes %s); namespaces shared with other shards: %s",
        shard.index,
        shard.count,
        len(kept),
        len(targets),
        plan.sizes(),
        ", ".join(f"{ns} (shards {', '.join(map(str, s))})" for ns, s in sorted(split.items())) or "none",
    )
    return kept


def list_kind(
    settings: Settings,
    client: KubeClient,
    discovery: DiscoverySettings,
    kind: Kind,
    scope: Scope,
    *,
    into: Listing,
    key_fingerprint: str = "",
) -> bool:
    """One kind's opted-in workloads in scope, page by page, keeping only their slim views (none once the
    listing streams) and tallying them; whether every list of the kind completed."""
    listing = into
    failures = listing.failures
    scopes: list[str | None] = list(scope.namespaces) if scope.namespaces is not None else [None]
    complete = True
    for namespace in scopes:
        try:
            for item in client.list_items(
                kind.collection_path(namespace),
                field_selector=None if namespace else workload_selector(settings),
                metadata_only=not reads_template_annotations(discovery),
                read_ahead=True,
            ):
                namespace_at = namespace_of(item)
                if not scope.covers(namespace_at):
                    continue
                target = note_listed(listing, item, kind, namespace_at, discovery)
                if target is not None:
                    listing.keep(target, triage_one(target, key_fingerprint))
        except NotFound:
            log.info("%s are not served by this cluster; skipping the kind", kind.plural)
            return False
        except PassCut as exc:  # not reached: the budget ran out, or the pass was stopped
            why = Deferral.STOPPED if isinstance(exc, Stopped) else Deferral.BUDGET
            failures.append(Outcome.scope_deferred(kind.kind, namespace or "*", f"{exc}; not listed", why))
            complete = False
        except RehashError as exc:
            failures.append(Outcome.scope_failure(kind.kind, namespace or "*", f"list failed: {exc}"))
            complete = False
    return complete
