"""Triage, the first stage of a pass: what each listed workload needs before it can be decided.

Pure. From the metadata-only list alone a workload is either settled (ignored, owned by an operator),
confirmable (its recorded sources can be trusted: only their metadata is needed), or in need of its
full object. Triage also cuts the scope into batches (a namespace, or a bounded slice of a large one)
and chooses where a pass starts, so that passes too short for the whole cluster still reach every
batch within a bounded number of passes (docs/large-clusters.md, "Time budget").
"""

from __future__ import annotations

import logging
import math
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from enum import Enum

from reconcile.model.kinds import Kind
from reconcile.model.workload import Listed, records_trusted
from reconcile.policy.decision import Decision
from reconcile.policy.reads import choose_kind_in_full
from reconcile.policy.table import settle_listed
from reconcile.values import value

log = logging.getLogger(__name__)
# Most workloads in one batch: a batch is read, decided and written before the next is read, so this
# bounds the work a cut budget can leave half done, and the writes waiting for the batch's reads.
BATCH_SIZE = 50
# The golden ratio's fractional part: successive slots start at points spread evenly over the cycle.
GOLDEN = (math.sqrt(5) - 1) / 2


class Need(Enum):
    """What an unsettled workload needs read: its recorded sources' metadata, or its whole object."""

    METADATA = "metadata"
    SPEC = "spec"


@value
class Triage:
    """Listed workloads by what they need: nothing more, source metadata, or the whole object."""

    settled: dict[str, Decision]
    trusted: frozenset[str]
    need_spec: frozenset[str]

    def need_of(self, uid: str) -> Decision | Need:
        """What `triage_one` said of this workload."""
        settled = self.settled.get(uid)
        if settled is not None:
            return settled
        return Need.METADATA if uid in self.trusted else Need.SPEC


@value
class Batch:
    """Workloads of one namespace, read, decided and written together."""

    namespace: str
    workloads: tuple[Listed, ...]


def triage_one(workload: Listed, key_fingerprint: str) -> Decision | Need:
    """What one listed workload needs: a decision the list alone settles, or what to read."""
    early = settle_listed(workload)
    if early is not None:
        return early
    if workload.fallback_due:  # its restart by eviction needs its spec: its selector and maxUnavailable
        return Need.SPEC
    return Need.METADATA if records_trusted(workload, key_fingerprint) else Need.SPEC


def triage_listed(listed: Iterable[Listed], key_fingerprint: str) -> Triage:
    return triage_of((workload.uid, triage_one(workload, key_fingerprint)) for workload in listed)


def triage_of(needs: Iterable[tuple[str, Decision | Need]]) -> Triage:
    """The triage of workloads (by uid) from what `triage_one` said of each."""
    settled: dict[str, Decision] = {}
    trusted: set[str] = set()
    need_spec: set[str] = set()
    for uid, need in needs:
        if isinstance(need, Decision):
            settled[uid] = need
        elif need is Need.METADATA:
            trusted.add(uid)
        else:
            need_spec.add(uid)
    return Triage(settled, frozenset(trusted), frozenset(need_spec))


def sort_key(workload: Listed) -> tuple[str, str, str]:
    return (workload.namespace, workload.kind.kind, workload.name)


def plan_batches(listed: Iterable[Listed], size: int = BATCH_SIZE) -> list[Batch]:
    """Namespaces in name order, each cut into slices of at most `size` workloads in stable order."""
    by_namespace: dict[str, list[Listed]] = defaultdict(list)
    for workload in listed:
        by_namespace[workload.namespace].append(workload)
    batches: list[Batch] = []
    for namespace in sorted(by_namespace):
        ordered = sorted(by_namespace[namespace], key=sort_key)
        batches += [Batch(namespace, tuple(ordered[i : i + size])) for i in range(0, len(ordered), size)]
    return batches


def rotation_start(count: int, epoch_seconds: float, slot_seconds: float) -> int:
    """Where a pass that may not reach every batch starts: the slot is the pass's budget, so passes that
    run out of budget fall in distinct slots; slot k starts at frac(k * golden ratio) of the cycle, so
    any run of passes spreads its starts evenly over the batches (docs/large-clusters.md, "Time budget")."""
    if count <= 1 or slot_seconds <= 0:
        return 0
    slot = int(epoch_seconds // slot_seconds)
    return int(((slot * GOLDEN) % 1.0) * count) % count


def rotate(batches: Sequence[Batch], start: int) -> list[Batch]:
    return [*batches[start:], *batches[:start]]


def choose_kinds_in_full(
    kinds: Mapping[str, Kind],
    opted: Mapping[str, int],
    needing: Mapping[str, int],
    *,
    rate_limited: bool = False,
) -> list[Kind]:
    """Of these kinds (by plural), those to list in full, from their opted-in and spec-needing counts."""
    chosen = []
    for plural in sorted(kinds):
        choice = choose_kind_in_full(needing.get(plural, 0), opted.get(plural, 0), rate_limited=rate_limited)
        log.info("%s in full, once for the pass: %s (%s)", plural, choice.way, choice.why)
        if choice.lists:
            chosen.append(kinds[plural])
    return chosen


def wanted_sources(listed: Iterable[Listed], triage: Triage) -> dict[tuple[str, str], frozenset[str]]:
    """Distinct recorded sources per (namespace, kind) of the workloads that may be confirmed from source
    metadata: what the pass will want to know of each namespace."""
    names: dict[tuple[str, str], set[str]] = defaultdict(set)
    for workload in listed:
        if workload.uid in triage.trusted:
            for ref in workload.discovery.references:
                names[(workload.namespace, ref.kind)].add(ref.name)
    return {key: frozenset(found) for key, found in names.items()}
