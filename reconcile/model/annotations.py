"""The annotation keys kube-rehash reads and writes, named once for a prefix (default `kube-rehash.io`),
and the vocabulary of the few whose values are words.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Annotations:
    """The annotation keys of one prefix (default `kube-rehash.io`)."""

    prefix: str = "kube-rehash.io"

    @property
    def config_hash(self) -> str:
        return f"{self.prefix}/config-hash"

    @property
    def sources(self) -> str:
        return f"{self.prefix}/sources"

    @property
    def last_rollout(self) -> str:
        return f"{self.prefix}/last-rollout"

    @property
    def min_interval(self) -> str:
        return f"{self.prefix}/min-interval"

    @property
    def run_on_change(self) -> str:
        return f"{self.prefix}/run-on-change"

    @property
    def restart_window(self) -> str:
        return f"{self.prefix}/restart-window"

    @property
    def rollout(self) -> str:
        return f"{self.prefix}/rollout"

    @property
    def on_change(self) -> str:
        return f"{self.prefix}/on-change"

    @property
    def superseded(self) -> str:
        return f"{self.prefix}/superseded-template-hash"

    @property
    def restart(self) -> str:
        return f"{self.prefix}/restart"

    @property
    def wave(self) -> str:
        return f"{self.prefix}/wave"


ON_CHANGE = ("rollout", "notify")
"""What a content change does: restart the pods, or record the hash and tell (Event, webhook)."""

RESTART = ("patch", "evict")
"""How a rollout restarts pods: patch the pod template, or evict the pods that started before the change."""


@dataclass(frozen=True)
class WindowSetting:
    """A workload's restart-window annotation as written (parsed by the decision table)."""

    annotation: str
    value: str
