"""Shards split namespaces evenly and completely."""

from __future__ import annotations

import pytest

from reconcile.sharding import assign_shard


@pytest.mark.parametrize("count", [1, 2, 3, 4, 7])
def test_every_namespace_goes_to_exactly_one_shard_and_sizes_differ_by_at_most_one(count: int) -> None:
    names = [f"team-{i}" for i in range(103)]
    shards = [assign_shard(names, i, count) for i in range(count)]
    flat = [n for shard in shards for n in shard]
    assert sorted(flat) == sorted(names)
    sizes = [len(s) for s in shards]
    assert max(sizes) - min(sizes) <= 1


def test_assignment_is_stable_across_input_order() -> None:
    names = [f"ns{i}" for i in range(20)]
    assert assign_shard(names, 1, 4) == assign_shard(list(reversed(names)), 1, 4)


def test_an_index_out_of_range_is_rejected() -> None:
    with pytest.raises(ValueError, match=r"0\.\.3"):
        assign_shard(["a"], 4, 4)
