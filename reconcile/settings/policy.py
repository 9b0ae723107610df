"""When and how a changed workload is restarted: the rules every decision follows.

One group of the settings table (reconcile/settings/table.py): each attribute is a row (`setting`), with
its doc, value rules, config-file key, environment variable and flag.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from datetime import timedelta
from functools import cached_property
from typing import ClassVar

from reconcile.model.choices import FirstSight, OnChange, OnIneffective, Restart
from reconcile.model.references import COMPAT_NAMES
from reconcile.model.windows import RestartWindows, parse_windows
from reconcile.settings import values as v
from reconcile.settings.rows import POLICY, Flag, Group, SettingsGroup, setting


@dataclass(frozen=True)
class PolicySettings(SettingsGroup):
    GROUP: ClassVar[Group] = POLICY

    first_sight: FirstSight = setting(
        FirstSight.ADOPT,
        "First sight of a workload with no stored hash: adopt (record it, no restart) or rollout.",
        v.choice_of(FirstSight),
        ("firstSight",),
    )
    on_change: OnChange = setting(
        OnChange.ROLLOUT,
        "A content change of a workload without the kube-rehash.io/on-change annotation: rollout (restart "
        "it) or notify (record the hash, no restart; one ConfigChanged Event names the changed sources).",
        v.choice_of(OnChange),
        ("onChange",),
        details="Action `notify`; never held back by windows, `min-interval` or `--max-rollouts`, since "
        "nothing restarts.",
    )
    restart: Restart = setting(
        Restart.PATCH,
        "How a workload without the kube-rehash.io/restart annotation is restarted: patch (its pod "
        "template) or evict (its pods that started before the change, through pods/eviction).",
        v.choice_of(Restart),
        ("restart",),
        details="`evict` never patches the template and honours PodDisruptionBudgets; it needs `list` on "
        "pods and `create` on `pods/eviction` (chart value `evict`, cronjob/components/evict).",
    )
    on_ineffective: OnIneffective = setting(
        OnIneffective.REPORT,
        "A restart that has not taken effect by the rollout deadline, of a workload without the "
        "kube-rehash.io/on-ineffective annotation: report (rollout_status not-effective, one "
        "RestartNotEffective Event) or evict (also restart its pods that started before it by eviction).",
        v.choice_of(OnIneffective),
        ("onIneffective",),
        details="Never patched again for the same change. `evict` honours PodDisruptionBudgets and needs "
        "what `restart: evict` needs (`list` on pods, `create` on `pods/eviction`). See [Restarts that are "
        "verified](#restarts-that-are-verified).",
    )
    evict_per_pass: int = setting(
        1,
        "Pods evicted per workload per pass (restart: evict) when the workload's maxUnavailable is not an "
        "integer (a percentage, or none); an integer maxUnavailable above zero is used as it is (1-100).",
        v.integer(minimum=1, maximum=100),
        ("evictPerPass",),
    )
    max_rollouts: int | None = setting(
        None,
        "Most rollouts per pass, the rest deferred to later passes; null means unlimited.",
        v.integer(minimum=0, nullable=True),
        ("maxRollouts",),
        flag=Flag(
            ("--max-rollouts",), "roll at most N workloads; defer the rest", "pass", 10, metavar="N", type=int
        ),
    )
    restart_window: str = setting(
        "",
        "When rollouts may start, for workloads without the kube-rehash.io/restart-window annotation: "
        '"DAYS HH:MM-HH:MM [TIMEZONE]" windows joined by ";" (e.g. "Mon-Fri 22:00-06:00 Europe/Berlin"); '
        '"" is always open.',
        v.WINDOWS,
        ("restartWindow",),
        details="See [Restart windows](#restart-windows).",
    )
    rollout_deadline: timedelta = setting(
        timedelta(minutes=10),
        "How long a StatefulSet or DaemonSet rollout may take before it is reported stalled, and any "
        "restart before it is reported not effective without its kind's evidence (e.g. 10m, 1h30m).",
        v.DURATION,
        ("rolloutDeadline",),
        file_default="10m",
        details="Deployments and Argo Rollouts use their own progress deadline to stall. See [Restarts "
        "that are verified](#restarts-that-are-verified).",
    )
    settle: timedelta | None = setting(
        None,
        "Roll a changed workload only once each of its changed sources has been quiet this long (e.g. 2m): "
        "one restart for a rotation written in steps; null: roll at once. Per workload: the `settle` "
        "annotation.",
        v.OPTIONAL_DURATION,
        ("settle",),
        details="Stateless: a source's last content change is read from its own managedFields, so it holds "
        "across any restart of anything. See [Settle window](#settle-window).",
    )
    fail_on_stalled: bool = setting(
        False,
        "Exit 1 when a rollout kube-rehash started is stalled.",
        v.boolean(),
        ("failOnStalled",),
        flag=Flag(
            ("--fail-on-stalled",),
            "exit 1 when a rollout kube-rehash started is stalled",
            "pass",
            14,
            action="store_true",
        ),
    )
    skip_if_pods_newer: bool = setting(
        True,
        "Record a change without a rollout when the workload's current pods started after it (one restart, "
        "not two, when a sync changes a workload and its config together).",
        v.boolean(),
        ("skipIfPodsNewer",),
        flag=Flag(
            ("--skip-if-pods-newer",),
            "record a change without a rollout when the workload's pods started after it (default: on)",
            "pass",
            15,
            action=argparse.BooleanOptionalAction,
        ),
        details="See [Pods already newer than the change](#pods-already-newer-than-the-change).",
    )
    compat: frozenset[str] = setting(
        frozenset(),
        f"Also honour peer tools' annotations: {', '.join(COMPAT_NAMES)}.",
        v.COMPAT,
        ("compat",),
        file_default=[],
        details="With `reloader`, Reloader's annotations on the pod template count too, as in Reloader, so "
        "workloads are listed whole rather than metadata-only. A peer left out is named once per pass "
        "(a warning and the report's `foreign_annotations`) when workloads carry its annotations.",
    )

    def __post_init__(self) -> None:
        super().__post_init__()
        if not isinstance(self.rollout_deadline, timedelta):
            raise ValueError(f"rollout_deadline: {self.rollout_deadline!r} is not a timedelta")

    @cached_property
    def restart_windows(self) -> RestartWindows:
        """`restart_window`, parsed once: the windows of workloads without the restart-window annotation."""
        return parse_windows(self.restart_window)
