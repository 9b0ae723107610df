"""The one value a pass returns: what became of every workload and scope, and what the pass spent.

Every stage hands its values down (decisions, what the writes came to, deliveries, rollout checks); the pass
assembles them once into this result, and the report, the exit code, the metrics and the tenant reports are
all made from it (output/).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from reconcile.policy.outcomes import Outcomes


@dataclass(frozen=True)
class PassResult:
    outcomes: Outcomes = field(default_factory=Outcomes)
    """One per opted-in workload in scope, and one per scope that failed or was not reached (name `*`)."""
    dry_run: bool = False
    server_dry_run: bool = False
    """The dry run sent its writes with `dryRun=All`: the server checked them and persisted none."""
    duration: float = 0.0
    contents_fetched: int = 0
    """ConfigMaps and Secrets whose content was downloaded and hashed."""
    interrupted: bool = False
    """Stopped by SIGTERM: the rest was not reached."""
    budget_exhausted: bool = False
    """The time budget ran out: what it did not reach is deferred with the reason `pass budget`."""
    api: Mapping[str, Any] = field(default_factory=dict)
    """The client's request counts (`ApiStats.snapshot`)."""
    foreign_annotations: Mapping[str, int] = field(default_factory=dict)
    """Peer (compat rule) -> workloads carrying its annotations, which this pass ignored (the rule is off)."""
