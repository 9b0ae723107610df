"""Shards split the opted-in workloads completely, disjointly and evenly; a large namespace is split
between shards, a small one stays whole, and the split is the same in every shard."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reconcile.policy.sharding import WorkloadKey, assign_shard, plan_shards


def cluster(counts: dict[str, int]) -> list[WorkloadKey]:
    """`counts[namespace]` Deployments in each namespace."""
    return [(ns, f"apps/deployments/app-{i}") for ns, n in counts.items() for i in range(n)]


def shard_of(keys: list[WorkloadKey], count: int) -> dict[WorkloadKey, int]:
    owner: dict[WorkloadKey, int] = {}
    for index in range(count):
        for key in assign_shard(keys, index, count):
            assert key not in owner, f"{key} in shards {owner[key]} and {index}"
            owner[key] = index
    return owner


shapes = st.dictionaries(
    st.text("abcdefghij-", min_size=1, max_size=6), st.integers(0, 60), min_size=0, max_size=25
)


@settings(max_examples=300, deadline=None)
@given(counts=shapes, count=st.integers(1, 8))
def test_every_workload_goes_to_exactly_one_shard_for_any_cluster_shape(
    counts: dict[str, int], count: int
) -> None:
    keys = cluster(counts)
    assert set(shard_of(keys, count)) == set(keys)


@settings(max_examples=300, deadline=None)
@given(counts=shapes, count=st.integers(1, 8))
def test_shard_sizes_stay_within_a_quarter_share_of_even_and_small_namespaces_stay_whole(
    counts: dict[str, int], count: int
) -> None:
    keys = cluster(counts)
    plan = plan_shards(keys, count)
    total = len(keys)
    share = total / count
    assert sum(plan.sizes()) == total
    # Each cut moves by at most an eighth of a share to keep a small namespace whole.
    assert all(abs(size - share) <= share / 4 + 1 for size in plan.sizes()), plan.sizes()
    split = plan.split_namespaces()
    assert all(counts[ns] * 4 * count > total for ns in split)  # only namespaces above a quarter share
    # Only the namespaces a cut falls inside are read by more than one shard: N - 1 extra reads at most.
    assert sum(len(shards) - 1 for shards in split.values()) <= count - 1


@settings(max_examples=100, deadline=None)
@given(counts=shapes, count=st.integers(1, 6), seed=st.integers(0, 1000))
def test_the_split_depends_on_the_set_of_workloads_only_not_on_list_order(
    counts: dict[str, int], count: int, seed: int
) -> None:
    keys = cluster(counts)
    shuffled = list(keys)
    random.Random(seed).shuffle(shuffled)
    assert all(assign_shard(keys, i, count) == assign_shard(shuffled, i, count) for i in range(count))


def test_thirty_workloads_in_one_namespace_over_three_shards_are_ten_each() -> None:
    plan = plan_shards(cluster({"shop": 30}), 3)
    assert plan.sizes() == [10, 10, 10]
    assert plan.split_namespaces() == {"shop": [0, 1, 2]}


def test_a_small_namespace_beside_a_big_one_stays_whole() -> None:
    counts = {"shop": 30, "tools": 2, "batch": 1}
    plan = plan_shards(cluster(counts), 3)
    assert set(plan.split_namespaces()) == {"shop"}
    assert max(plan.sizes()) - min(plan.sizes()) <= 2  # the small namespaces may tip a cut by one
    assert sum(1 for i in range(3) if "tools" in plan.namespaces(i)) == 1


@pytest.mark.parametrize("count", [1, 2, 3, 4, 7])
def test_many_one_workload_namespaces_stay_whole_and_sizes_differ_by_at_most_one(count: int) -> None:
    plan = plan_shards(cluster({f"team-{i}": 1 for i in range(103)}), count)
    assert max(plan.sizes()) - min(plan.sizes()) <= 1
    assert plan.split_namespaces() == {}


def test_even_namespaces_that_fit_the_shares_are_never_split() -> None:
    plan = plan_shards(cluster({f"team-{i}": 50 for i in range(20)}), 4)
    assert plan.sizes() == [250] * 4
    assert plan.split_namespaces() == {}


def test_one_workload_created_moves_at_most_one_other_workload_per_cut() -> None:
    counts = {"shop": 300, "web": 200, "batch": 120}
    before = shard_of(cluster(counts), 4)
    after = shard_of([*cluster(counts), ("web", "apps/deployments/new")], 4)
    moved = [key for key, shard in before.items() if after[key] != shard]
    assert len(moved) <= 3


def test_no_workloads_give_empty_shards() -> None:
    assert plan_shards([], 3).sizes() == [0, 0, 0]
    assert assign_shard([], 2, 3) == frozenset()


def test_an_index_out_of_range_is_rejected() -> None:
    with pytest.raises(ValueError, match=r"0\.\.3"):
        assign_shard([("a", "apps/deployments/x")], 4, 4)
