"""Which view of a workload a pass needs: its metadata, or the whole object.

Workloads are listed metadata-only (no pod specs). A workload whose recorded sources can be trusted
(its `metadata.generation` and discovery inputs are those recorded, see `targets.records_trusted`)
is confirmed in sync from the sources' metadata alone; only the others — first sight, a spec or
annotation change, a changed source — are read in full, by name or, when many of one kind in a
namespace need it, with one list of that namespace.
"""

from __future__ import annotations

import logging
from collections import defaultdict
from collections.abc import Collection, Iterable, Mapping
from concurrent.futures import Executor
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from reconcile.errors import NotFound, RehashError
from reconcile.fetch import NamespaceSources
from reconcile.kube.client import KubeClient
from reconcile.plan import Action, Decision, decide, observed_from
from reconcile.refs import DiscoverySettings, source_ignored
from reconcile.targets import Target, read_target

log = logging.getLogger(__name__)
# Above this many workloads of one kind in one namespace to read in full, one list of the namespace's
# objects of that kind costs fewer requests than a GET each (the list also returns the rest).
FULL_GET_THRESHOLD = 40


@dataclass
class FullViews:
    """Whole-object views read for one namespace, and the workloads settled while reading them."""

    targets: list[Target] = field(default_factory=list)
    settled: dict[str, tuple[Target, Decision]] = field(default_factory=dict)
    gone: set[str] = field(default_factory=set)
    """uids of workloads deleted or opted out since they were listed: no report row."""

    def merge(self, other: FullViews) -> None:
        self.targets += other.targets
        self.settled.update(other.settled)
        self.gone |= other.gone


def read_full(
    client: KubeClient, executor: Executor, listed: Iterable[Target], discovery: DiscoverySettings
) -> FullViews:
    """Read each listed workload in full; failures settle that workload alone as `failed`."""
    out = FullViews()
    listed = list(listed)
    groups: dict[tuple[str, str], list[Target]] = defaultdict(list)
    for target in listed:
        groups[(target.kind.plural, target.namespace)].append(target)
    objects: dict[str, Any] = {}
    one_by_one: list[Target] = []
    for group in groups.values():
        if len(group) > FULL_GET_THRESHOLD:
            objects.update(list_group(client, group))
        else:
            one_by_one.extend(group)
    paths = [t.kind.object_path(t.namespace, t.name) for t in one_by_one]
    got = executor.map(lambda path: get_one(client, path), paths)
    objects.update(zip([t.uid for t in one_by_one], got, strict=True))
    for target in listed:
        settle_one(target, objects.get(target.uid), discovery, out)
    return out


def get_one(client: KubeClient, path: str) -> dict[str, Any] | RehashError:
    try:
        return client.get(path)
    except RehashError as exc:  # NotFound included: the caller tells deleted from failed
        return exc


def list_group(client: KubeClient, group: list[Target]) -> dict[str, Any]:
    """One namespaced list for many workloads of one kind; a failed list fails each of them."""
    first = group[0]
    wanted = {t.uid for t in group}
    try:
        items = client.list_items(first.kind.collection_path(first.namespace))
        return {
            uid: item for item in items if (uid := str((item.get("metadata") or {}).get("uid"))) in wanted
        }
    except RehashError as exc:
        return dict.fromkeys(wanted, exc)


def settle_one(
    target: Target, got: Mapping[str, Any] | RehashError | None, discovery: DiscoverySettings, out: FullViews
) -> None:
    if got is None or isinstance(got, NotFound):
        log.info("%s was deleted since it was listed", target.ref)
        out.gone.add(target.uid)
    elif isinstance(got, RehashError):
        out.settled[target.uid] = (target, Decision(Action.FAILED, f"reading the workload failed: {got}"))
    else:
        fresh = read_target(got, target.kind, discovery)
        if not fresh.discovery.opted_in or fresh.uid != target.uid:
            log.info("%s changed identity or opted out since it was listed", target.ref)
            out.gone.add(target.uid)
        else:
            out.targets.append(fresh)


def confirm_recorded(
    target: Target,
    sources: NamespaceSources,
    unreadable: Collection[str],
    *,
    discovery: DiscoverySettings,
    hash_key: bytes | None,
    now: datetime,
) -> Decision | None:
    """`in-sync` when every recorded source still has its recorded identity; None when anything differs
    or could not be read (then the workload is read in full and decided from its content)."""
    records = target.bookkeeping.records or ()
    for record in records:
        if record.label in unreadable or f"{record.kind}/*" in unreadable:
            return None
        meta = sources.found.get((record.kind, record.name))
        if record.uid == "":  # recorded as an absent optional source
            if meta is not None:
                return None
            continue
        if meta is None or (meta.uid, meta.resource_version) != (record.uid, record.resource_version):
            return None
        if source_ignored(meta.annotations(), discovery):
            return None
    decision = decide(target, observed_from(records, hash_key), now=now)
    return decision if decision.action is Action.IN_SYNC else None
