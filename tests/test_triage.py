"""Triage: batches, where a pass starts, and the bound on passes before every batch is visited."""

from __future__ import annotations

import math

import pytest

from reconcile.model.kinds import DEPLOYMENT, STATEFULSET
from reconcile.model.references import DiscoverySettings
from reconcile.model.workload import Listed, read_listed
from reconcile.policy.reads import KIND_IN_FULL_MIN as FULL_LIST_MIN
from reconcile.policy.tally import tally_of
from reconcile.policy.triage import (
    BATCH_SIZE,
    Triage,
    plan_batches,
    rotate,
    rotation_start,
    triage_listed,
)

SETTINGS = DiscoverySettings()


def listed(name: str, ns: str = "shop", kind=DEPLOYMENT, **annotations: str) -> Listed:  # type: ignore[no-untyped-def]
    meta = {
        "name": name,
        "namespace": ns,
        "uid": f"{ns}-{kind.plural}-{name}",
        "generation": 1,
        "annotations": {"kube-rehash.io/watch": "true", **annotations},
    }
    return read_listed({"metadata": meta}, kind, SETTINGS)


def test_batches_are_namespaces_in_name_order_cut_into_bounded_slices_in_stable_order() -> None:
    workloads = [listed(f"w{i:03d}", "big") for i in range(BATCH_SIZE + 7)] + [listed("a", "alpha")]
    batches = plan_batches(reversed(workloads))
    sizes = [(b.namespace, len(b.workloads)) for b in batches]
    assert sizes == [("alpha", 1), ("big", BATCH_SIZE), ("big", 7)]
    assert [w.name for w in batches[1].workloads] == [f"w{i:03d}" for i in range(BATCH_SIZE)]


def test_triage_settles_ignored_workloads_from_metadata_and_sends_unrecorded_ones_to_a_full_read() -> None:
    ignored = listed("old", **{"kube-rehash.io/ignore": "true"})
    fresh = listed("new")
    result = triage_listed([ignored, fresh], "")
    assert result.settled[ignored.uid].action.value == "skipped"
    assert result.need_spec == {fresh.uid} and not result.trusted


def test_a_kind_is_listed_in_full_only_when_most_of_its_workloads_need_their_spec() -> None:
    many = [listed(f"d{i}") for i in range(FULL_LIST_MIN + 1)]
    few = [listed(f"s{i}", kind=STATEFULSET) for i in range(3)]
    every = frozenset(w.uid for w in many + few)
    assert tally_of(many + few, Triage({}, frozenset(), every)).kinds_in_full() == [DEPLOYMENT]
    half = len(many) // 2
    trusted, need_spec = (frozenset(w.uid for w in part) for part in (many[half:], many[:half]))
    assert tally_of(many, Triage({}, trusted, need_spec)).kinds_in_full() == []


def test_rotation_starts_at_zero_for_a_single_batch_and_stays_in_range() -> None:
    assert rotation_start(1, 12345.0, 240.0) == 0
    starts = {rotation_start(7, 240.0 * k, 240.0) for k in range(100)}
    assert starts == set(range(7))
    batches = plan_batches([listed("a", "n1"), listed("b", "n2"), listed("c", "n3")])
    assert [b.namespace for b in rotate(batches, 1)] == ["n2", "n3", "n1"]


def passes_to_cover(count: int, per_pass: int, first_slot: int, step: int) -> int:
    seen: set[int] = set()
    passes = 0
    slot = first_slot
    while len(seen) < count:
        start = rotation_start(count, slot * 10.0, 10.0)
        seen |= {(start + j) % count for j in range(per_pass)}
        slot += step
        passes += 1
    return passes


@pytest.mark.parametrize("count", [2, 6, 10, 37, 100])
@pytest.mark.parametrize("step", [1, 2, 3])
def test_every_batch_is_visited_within_the_documented_bound(count: int, step: int) -> None:
    """docs/large-clusters.md, "Time budget": passes in consecutive budget slots reach every batch within
    ceil(2/f) + 1 passes, passes every second or third slot within ceil(3/f) + 1 (f: the share one pass
    reaches)."""
    for per_pass in sorted({1, 2, max(1, count // 3), max(1, count // 2), count - 1, count}):
        share = per_pass / count
        bound = math.ceil((2 if step == 1 else 3) / share) + 1
        worst = max(passes_to_cover(count, per_pass, first, step) for first in range(0, 3000, 37))
        assert worst <= bound, (count, per_pass, step, worst, bound)
