"""Splitting one pass between the N pods of an Indexed Job (`--shard I/N`) by workload, not by namespace.

Whole namespaces per shard cannot scale out a cluster that keeps most workloads in one namespace (a
common layout): 30 workloads in one namespace over 3 shards would give shard sizes 0, 30, 0. So the unit is
the workload.

Every shard lists the same opted-in workloads (cluster-wide, or every namespace given with `-n`), so each
computes the same split from what it listed, with no coordination:

1. Order the workloads: namespaces by a stable hash of their name, and within a namespace workloads by a
   stable hash of resource and name. A namespace's workloads are next to each other.
2. Cut that sequence into N ranges of equal size (cut k at floor(k * T / N) of T workloads); shard k takes
   range k. Every workload is in exactly one range, and the sizes differ by at most one.
3. A cut that falls inside a small namespace (at most a quarter of the average share T / N) moves to that
   namespace's nearer edge, so small namespaces stay whole. Each cut moves by at most an eighth of a share.

Why ranges of a hash order:
- Balance: equal sizes, off only by the moves of step 3 (in practice small: the namespaces they keep
  whole are small). A namespace bigger than a share is necessarily split, over as many shards as it needs.
- Sources: a shard reads the ConfigMaps/Secrets of each namespace where it keeps a workload, so a split
  namespace is read by more than one shard. Only namespaces that a cut falls inside are split: at most
  N - 1 extra namespace reads for the whole Job, however the cluster is shaped.
- Stability: a workload's place in the order does not depend on any other workload, and one workload
  created or deleted moves each cut by one position, so few workloads change shard (at most N - 1, plus a
  small namespace whose nearer edge flips). That matters because the pods of one Job list at slightly
  different moments: a change in between can make two shards disagree about the workloads next to a cut
  for that pass only; such a workload is handled twice (the patches are guarded by preconditions, so the
  second finds it in sync) or by the next pass. The same holds for a shard whose list of one kind failed
  (reported as a failed scope): its split is computed without that kind.
- Determinism: the split depends on the set of workloads only, never on list order.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import xxhash

WorkloadKey = tuple[str, str]
"""(namespace, identity of the workload within it, e.g. "apps/deployments/web")."""


def _hash(text: str) -> int:
    return xxhash.xxh3_64_intdigest(text.encode())


def shard_order(keys: Iterable[WorkloadKey]) -> list[WorkloadKey]:
    """The workloads in split order: grouped by namespace, both levels ordered by a stable hash."""
    return sorted(set(keys), key=lambda k: (_hash(k[0]), k[0], _hash(k[1]), k[1]))


@dataclass(frozen=True)
class ShardPlan:
    """The ranges of `order` each shard owns: shard k owns order[cuts[k]:cuts[k + 1]]."""

    order: tuple[WorkloadKey, ...]
    cuts: tuple[int, ...]

    @property
    def count(self) -> int:
        return len(self.cuts) - 1

    def members(self, index: int) -> frozenset[WorkloadKey]:
        _check(index, self.count)
        return frozenset(self.order[self.cuts[index] : self.cuts[index + 1]])

    def sizes(self) -> list[int]:
        return [b - a for a, b in zip(self.cuts, self.cuts[1:], strict=False)]

    def namespaces(self, index: int) -> set[str]:
        """The namespaces where shard `index` keeps at least one workload (whose sources it reads)."""
        return {namespace for namespace, _ in self.members(index)}

    def split_namespaces(self) -> dict[str, list[int]]:
        """Namespaces shared by more than one shard, with those shards."""
        shards: dict[str, list[int]] = {}
        for index in range(self.count):
            for namespace in sorted(self.namespaces(index)):
                shards.setdefault(namespace, []).append(index)
        return {ns: indices for ns, indices in shards.items() if len(indices) > 1}


def plan_shards(keys: Iterable[WorkloadKey], count: int) -> ShardPlan:
    """Split the workloads `keys` between `count` shards (see the module docstring for the rule)."""
    if count < 1:
        raise ValueError(f"shard count {count} is less than 1")
    order = shard_order(keys)
    total = len(order)
    starts, ends = _namespace_spans(order)
    cuts = [0]
    for k in range(1, count):
        cut = k * total // count
        span = bisect.bisect_right(starts, cut) - 1  # the namespace whose span holds position `cut`
        if 0 <= span < len(starts) and starts[span] < cut < ends[span]:
            start, end = starts[span], ends[span]
            if (end - start) * 4 * count <= total:  # small: at most a quarter of a share; keep it whole
                cut = start if cut - start <= end - cut else end
        cuts.append(max(cut, cuts[-1]))
    cuts.append(total)
    return ShardPlan(tuple(order), tuple(cuts))


def _namespace_spans(order: Sequence[WorkloadKey]) -> tuple[list[int], list[int]]:
    """Start and end positions of each namespace's run of workloads in `order`."""
    starts: list[int] = []
    ends: list[int] = []
    for position, (namespace, _) in enumerate(order):
        if not starts or order[position - 1][0] != namespace:
            if starts:
                ends.append(position)
            starts.append(position)
    if starts:
        ends.append(len(order))
    return starts, ends


def _check(index: int, count: int) -> None:
    if not 0 <= index < count:
        raise ValueError(f"shard {index}/{count}: the index must be in 0..{count - 1}")
