"""What a decision depends on besides the cluster: the rollout policy settings of the pass, its annotation
vocabulary, its hash key and its clock, as one value built once per pass (`pipeline.planner.rules_for`) and
handed to every pure function that decides."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from reconcile.model.choices import FirstSight, OnChange
from reconcile.model.hashing import key_fingerprint
from reconcile.model.references import DiscoverySettings
from reconcile.settings.policy import PolicySettings


@dataclass(frozen=True)
class Rules:
    """What a decision depends on besides the cluster."""

    discovery: DiscoverySettings
    hash_key: bytes | None
    now: datetime
    policy: PolicySettings = field(default_factory=PolicySettings)
    """The settings of the rollout policy group, as the pass resolved them."""

    @property
    def fingerprint(self) -> str:
        return key_fingerprint(self.hash_key)

    @property
    def first_sight_rollout(self) -> bool:
        """`firstSight: rollout`: a workload seen for the first time is rolled, not adopted."""
        return self.policy.first_sight is FirstSight.ROLLOUT

    @property
    def notify(self) -> bool:
        """`onChange: notify`: a change of a workload without the on-change annotation is notified."""
        return self.policy.on_change is OnChange.NOTIFY
