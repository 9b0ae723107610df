"""What the reads of one batch have established so far: the input of every answer (`policy.answer`).

The planner starts a batch with nothing known, asks each workload what it still needs, has the read stage
read it, and merges what came back here, round after round. Only the read stage adds to it; the answers
read it and nothing else, so every decision is a function of this value.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from reconcile.model.freshness import Origin
from reconcile.model.pods import PodsRead
from reconcile.model.sources import NamespaceSources
from reconcile.model.workload import Target


@dataclass
class Known:
    """One batch's reads: whole objects, source identities and digests, template origins, pods."""

    sources: NamespaceSources
    views: dict[str, Target] = field(default_factory=dict)
    """uid -> the workload's full view (read whole)."""
    failed: dict[str, str] = field(default_factory=dict)
    """uid -> why reading the workload (or what its decision needs of it) failed."""
    gone: set[str] = field(default_factory=set)
    """uids deleted or opted out since they were listed: no report row."""
    origins: dict[str, Origin | None] = field(default_factory=dict)
    """uid -> the object of its current pod template (None: read, and not known)."""
    pods: dict[str, PodsRead] = field(default_factory=dict)
    """uid -> the pods of a workload restarted by eviction, or why listing them failed."""

    @classmethod
    def of(cls, namespace: str) -> Known:
        return cls(NamespaceSources(namespace))

    @property
    def cut(self) -> bool:
        """The budget stopped a read: what was not read stays unknown for this pass."""
        return self.sources.cut

    def merge(self, other: Known) -> None:
        self.sources.merge(other.sources)
        self.views.update(other.views)
        self.failed.update(other.failed)
        self.gone |= other.gone
        self.origins.update(other.origins)
        self.pods.update(other.pods)
