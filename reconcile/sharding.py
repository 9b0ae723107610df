"""Splitting the namespaces of a cluster between the N pods of an Indexed Job.

Every shard lists the same namespaces, orders them by a stable hash and takes every N-th one, so the
shards get equal numbers of namespaces (within one) and each namespace goes to exactly one shard.
"""

from __future__ import annotations

from collections.abc import Iterable

import xxhash


def shard_order(names: Iterable[str]) -> list[str]:
    return sorted(set(names), key=lambda n: (xxhash.xxh3_64_intdigest(n.encode()), n))


def assign_shard(names: Iterable[str], index: int, count: int) -> list[str]:
    """The namespaces shard `index` of `count` owns (0-based)."""
    if not 0 <= index < count:
        raise ValueError(f"shard {index}/{count}: the index must be in 0..{count - 1}")
    return sorted(n for i, n in enumerate(shard_order(names)) if i % count == index)
