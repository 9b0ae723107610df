"""The value the pipeline hands to the decide stage for one batch: everything its decisions may need,
as the read stage found it (built by `pipeline.planner`, read by `policy.decide`)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import field

from reconcile.model.freshness import Origin
from reconcile.model.pods import PodsRead
from reconcile.model.sources import NamespaceSources
from reconcile.model.workload import Target
from reconcile.policy.decision import Decision
from reconcile.values import value


@value
class Snapshot:
    """What the read stage established for one batch."""

    sources: NamespaceSources
    full: Mapping[str, Target]
    """Full views by uid: workloads that needed their spec, and trusted ones found stale."""
    failed: Mapping[str, str]
    """uid -> why reading the workload failed."""
    gone: frozenset[str]
    """uids deleted or opted out since they were listed: no report row."""
    confirmed: Mapping[str, Decision]
    """Trusted workloads whose records still hold, confirmed in sync without reading them."""
    origins: Mapping[str, Origin] = field(default_factory=dict)
    """uid -> the object of its current pod template, for the workloads `decide.change_times` named."""
    pods: Mapping[str, PodsRead] = field(default_factory=dict)
    """uid -> the pods of a workload restarted by eviction whose rollout is due (`policy.evict`), or why
    listing them failed."""
    decided: Mapping[str, Decision] = field(default_factory=dict)
    """uid -> the decision of a full view, already made from these sources while asking which origins to
    read, that no origin can change (its origin was not wanted): decide reuses it instead of deciding
    again."""
