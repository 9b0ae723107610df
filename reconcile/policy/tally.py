"""What a pass plans from before its walk, as counts: the same whether it holds its listing or streams it.

A pass plans before it walks: which kinds to list in full, whether it may not fit its budget (and so
starts at a rotated namespace), how much budget the rollout checks keep, how many sources the cluster-wide
surveys want. A pass that holds its listing could count from the views; one too large to hold them (the
`streamAbove` setting) counts as it lists and drops the views, so the plan is made from this tally alone:
numbers per kind and per namespace, never per workload. Pure.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from reconcile.model.kinds import Kind
from reconcile.model.order import namespace_order
from reconcile.model.rollouts import watched
from reconcile.model.workload import Listed
from reconcile.policy.decision import Decision
from reconcile.policy.reads import KIND_IN_FULL_SHARE_LIMITED, estimate_reads
from reconcile.policy.triage import Need, Triage, choose_kinds_in_full


@dataclass
class Tally:
    """Counts of the opted-in workloads a listing saw, by what triage says each needs."""

    workloads: Counter[str] = field(default_factory=Counter)
    """namespace -> opted-in workloads."""
    kinds: dict[str, Kind] = field(default_factory=dict)
    opted: Counter[str] = field(default_factory=Counter)
    """kind plural -> opted-in workloads."""
    need_spec: Counter[str] = field(default_factory=Counter)
    """kind plural -> workloads that need their whole object."""
    spec_namespaces: set[str] = field(default_factory=set)
    """The namespaces holding a workload that needs its whole object."""
    recorded: Counter[str] = field(default_factory=Counter)
    """source kind -> recorded references of the workloads confirmable from metadata (a source shared by
    several of them counts for each: the tally keeps no names)."""
    watched: Counter[tuple[str, str]] = field(default_factory=Counter)
    """(namespace, kind plural) -> confirmable workloads with a rollout of ours still watched."""

    def add(self, workload: Listed, need: Decision | Need) -> None:
        plural = workload.kind.plural
        self.workloads[workload.namespace] += 1
        self.kinds[plural] = workload.kind
        self.opted[plural] += 1
        if need is Need.SPEC:
            self.need_spec[plural] += 1
            self.spec_namespaces.add(workload.namespace)
        elif need is Need.METADATA:
            self.recorded.update(ref.kind for ref in workload.discovery.references)
            if watched(workload) is not None:
                self.watched[(workload.namespace, plural)] += 1

    @property
    def total(self) -> int:
        return sum(self.workloads.values())

    def namespaces(self) -> list[str]:
        """The namespaces with opted-in workloads, in the order a cluster-wide list meets them."""
        return sorted(self.workloads, key=namespace_order)

    def kinds_in_full(self, *, rate_limited: bool = False) -> list[Kind]:
        return choose_kinds_in_full(self.kinds, self.opted, self.need_spec, rate_limited=rate_limited)

    def reads_estimate(self, in_full: list[Kind], *, recorded_by_name: bool, content_by_name: bool) -> int:
        """The requests the walk's reads need (`policy.reads.estimate_reads`), where the kinds `in_full`
        are listed in full and, if `recorded_by_name`, recorded sources are read by name (and, if
        `content_by_name`, the content of first-sight workloads' sources too)."""
        listed = {k.plural for k in in_full}
        return estimate_reads(
            unread=sum(n for plural, n in self.need_spec.items() if plural not in listed),
            first_sight=sum(self.need_spec.values()),
            by_name=sum(self.recorded.values()) if recorded_by_name else 0,
            namespaces=None if content_by_name else len(self.spec_namespaces),
        )


def tally_of(listed: Iterable[Listed], triage: Triage) -> Tally:
    """The tally of held views, as triaged."""
    tally = Tally()
    for workload in listed:
        tally.add(workload, triage.need_of(workload.uid))
    return tally


@dataclass(frozen=True)
class WalkPlan:
    """How a pass too large to hold its listing walks the cluster, decided from the sample its listing
    stopped at: on from the listing's own lists (`one_listing`), or after tallying the rest of them, with
    a second listing planned from the whole tally."""

    one_listing: bool
    why: str
    scale: float = 1.0
    """The cluster's workload objects per object the sample covered: its counts times this estimate the
    whole pass's."""

    def scaled(self, counts: Mapping[str, int]) -> dict[str, int]:
        return {key: round(n * self.scale) for key, n in counts.items()}


def plan_walk(sample: Tally, *, seen: int, total: int | None, by_name: bool, rate_limited: bool) -> WalkPlan:
    """One listing where the sample (the opted-in workloads of the `seen` first objects of `total`) says
    the pass is light: sources are surveyed (not read by name), no kind is worth listing in full, and at
    most a quarter need their spec. Otherwise the whole tally plans the pass (kinds listed in full, a
    rotated start), which needs the rest of the lists first. Whether the light pass fits its budget is
    the caller's to weigh, from `reads` of the sample times `scale`."""
    if by_name:
        return WalkPlan(False, "recorded sources are read by name (fetch mode)")
    if total is None or seen <= 0:
        return WalkPlan(False, "a workload list did not tell its size: the sample cannot be scaled")
    if sample.kinds_in_full(rate_limited=rate_limited):
        return WalkPlan(False, "the sample has a kind worth listing in full")
    needing = sum(sample.need_spec.values())
    if needing * KIND_IN_FULL_SHARE_LIMITED > sample.total:
        return WalkPlan(False, f"{needing} of the sample's {sample.total} opted-in workloads need their spec")
    return WalkPlan(
        True,
        f"{sample.total} opted in of the first {seen} of {total} workloads, {needing} needing their spec",
        max(1.0, total / seen),
    )
