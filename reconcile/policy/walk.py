"""How a pass walks its scope, and what it estimates before it does: pure functions of the listing's counts.

Three walks hand the same batches to the same stages (pipeline/walk.py): a listing held whole (a namespace
scope, a shard, a cluster under `streamAbove`); a light whole-cluster pass that walks on from its listing's
open lists (`WalkPlan.one_listing`); and a heavy one that tallies its lists first and lists again, planned
from the tally (pipeline/streamed_walk.py). A pass whose reads may not fit its budget starts at a rotated
batch, so no namespace is starved (policy/triage.py, `rotation_start`), and a bounded share of the budget
is kept for the checks of the rollouts it watches (policy/priority.py).
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping

from reconcile.model.workload import Listed
from reconcile.policy.priority import health_hold
from reconcile.policy.reads import Costs, estimate_reads, request_seconds, requests_to_read
from reconcile.policy.tally import Tally, WalkPlan, plan_walk
from reconcile.policy.triage import Triage

ROTATE_ABOVE = 0.5
"""A pass whose reads are estimated to take more than this share of the budget left for reading starts at
a rotated batch: the estimate is rough (policy/reads.py), so passes that might not reach the end of the
walk spread their starts, and no namespace is starved (docs/large-clusters.md, "Time budget")."""


def may_not_fit(requests: int, *, qps: float, seconds_left: float) -> bool:
    """Whether `requests` may take more than `ROTATE_ABOVE` of the `seconds_left` for reading."""
    return requests * request_seconds(qps) > ROTATE_ABOVE * seconds_left


def choose_walk(
    sample: Tally, *, seen: int, total: int | None, by_name: bool, qps: float, seconds_left: float
) -> WalkPlan:
    """For a whole-cluster listing stopped at its sample: on from its lists where the sample says the
    pass is light and its reads, scaled to the cluster, fit; else a tally first (`policy.tally.plan_walk`)."""
    plan = plan_walk(sample, seen=seen, total=total, by_name=by_name, rate_limited=qps > 0)
    if plan.one_listing:
        reads = sample.reads_estimate([], recorded_by_name=False, content_by_name=False)
        estimate = round(reads * plan.scale)
        if may_not_fit(estimate, qps=qps, seconds_left=seconds_left):
            return WalkPlan(False, f"the sample's reads, scaled, are about {estimate} requests: may not fit")
    return plan


def held_estimate(
    listed: Iterable[Listed],
    triage: Triage,
    *,
    recorded_by_name: bool,
    content_by_name: bool,
    prefetched: Collection[str],
) -> int:
    """The requests the batches of a held listing need (`policy.reads.estimate_reads`): those of the
    workloads that need their spec and were not listed in full (`prefetched`), and, where sources are read
    by name, of every recorded source."""
    listed = list(listed)
    recorded = (w for w in listed if w.uid in triage.trusted)
    first_sight = [w for w in listed if w.uid in triage.need_spec]
    return estimate_reads(
        unread=sum(1 for w in first_sight if w.uid not in prefetched),
        first_sight=len(first_sight),
        by_name=sum(len(w.discovery.references) for w in recorded) if recorded_by_name else 0,
        namespaces=None if content_by_name else len({w.namespace for w in first_sight}),
    )


def health_seconds(
    watched: Mapping[tuple[str, str], int],
    census: Mapping[tuple[str, str], int],
    *,
    page_size: int,
    qps: float,
    timeout: float,
    scale: float = 1.0,
) -> float:
    """Seconds of the budget kept for the rollout checks after the pending work: their reads (per
    namespace and kind, a list or GETs) and a record update each, for `scale` times the `watched` counts
    (a sample's tally scaled to the cluster)."""
    groups = {key: round(n * scale) for key, n in watched.items()}
    costs = Costs(page_size)
    reads = sum(requests_to_read(n, census.get(key), costs=costs) for key, n in groups.items())
    return health_hold(reads + sum(groups.values()), request_seconds(qps), timeout)
