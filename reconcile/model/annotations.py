"""The annotation keys kube-rehash reads and writes, named once for a prefix (default `kube-rehash.io`),
and the vocabulary of the few whose values are words.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache, cached_property

from reconcile.model.choices import OnChange, OnIneffective, Restart
from reconcile.values import value


@dataclass(frozen=True)
class Annotations:
    """The annotation keys of one prefix (default `kube-rehash.io`), each spelled once per object: every
    listed workload's view reads a dozen of them (`annotation_keys` gives one object per prefix)."""

    prefix: str = "kube-rehash.io"

    @cached_property
    def config_hash(self) -> str:
        return f"{self.prefix}/config-hash"

    @cached_property
    def sources(self) -> str:
        return f"{self.prefix}/sources"

    @cached_property
    def last_rollout(self) -> str:
        return f"{self.prefix}/last-rollout"

    @cached_property
    def min_interval(self) -> str:
        return f"{self.prefix}/min-interval"

    @cached_property
    def settle(self) -> str:
        return f"{self.prefix}/settle"

    @cached_property
    def run_on_change(self) -> str:
        return f"{self.prefix}/run-on-change"

    @cached_property
    def restart_window(self) -> str:
        return f"{self.prefix}/restart-window"

    @cached_property
    def rollout(self) -> str:
        return f"{self.prefix}/rollout"

    @cached_property
    def on_change(self) -> str:
        return f"{self.prefix}/on-change"

    @cached_property
    def superseded(self) -> str:
        return f"{self.prefix}/superseded-template-hash"

    @cached_property
    def restart(self) -> str:
        return f"{self.prefix}/restart"

    @cached_property
    def wave(self) -> str:
        return f"{self.prefix}/wave"

    @cached_property
    def on_ineffective(self) -> str:
        return f"{self.prefix}/on-ineffective"


@cache
def annotation_keys(prefix: str) -> Annotations:
    """The one `Annotations` of this prefix."""
    return Annotations(prefix)


ON_CHANGE = tuple(c.value for c in OnChange)
"""What a content change does: restart the pods, or record the hash and tell (Event, webhook)."""

RESTART = tuple(r.value for r in Restart)
"""How a rollout restarts pods: patch the pod template, or evict the pods that started before the change."""

ON_INEFFECTIVE = tuple(o.value for o in OnIneffective)
"""A restart not effective by its deadline: report it, or restart the pods by eviction too."""


@value
class WindowSetting:
    """A workload's restart-window annotation as written (parsed by the decision table)."""

    annotation: str
    value: str
