"""What a decision depends on besides the cluster: the settings of the pass and its clock, as one value
built once per pass (`pipeline.planner.rules_for`) and handed to every pure function that decides."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from reconcile.model.hashing import key_fingerprint
from reconcile.model.references import DiscoverySettings
from reconcile.model.windows import ALWAYS_OPEN, RestartWindows


@dataclass(frozen=True)
class Rules:
    """What a decision depends on besides the cluster: settings of the pass and its clock."""

    discovery: DiscoverySettings
    hash_key: bytes | None
    now: datetime
    first_sight_rollout: bool = False
    notify: bool = False
    """`onChange: notify`: a change of a workload without the on-change annotation is notified, not rolled."""
    windows: RestartWindows = ALWAYS_OPEN
    """`restartWindow`: the windows of workloads without the restart-window annotation."""
    rollout_deadline: timedelta = timedelta(minutes=10)
    """`rolloutDeadline`: when a StatefulSet's or DaemonSet's unfinished rollout counts as stalled."""
    skip_if_pods_newer: bool = True
    """`skipIfPodsNewer`: a change older than the workload's current template is recorded, not rolled."""
    evict_per_pass: int = 1
    """`evictPerPass`: pods evicted per pass of a workload without an integer `maxUnavailable`."""

    @property
    def fingerprint(self) -> str:
        return key_fingerprint(self.hash_key)
