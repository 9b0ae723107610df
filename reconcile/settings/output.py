"""What a pass reports, records and logs.

One group of the settings table (reconcile/settings/table.py): each attribute is a row (`setting`), with
its doc, value rules, config-file key, environment variable and flag.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from reconcile.model.choices import DryRun, Format
from reconcile.settings import values as v
from reconcile.settings.rows import OUTPUT, Flag, Group, SettingsGroup, setting


@dataclass(frozen=True)
class OutputSettings(SettingsGroup):
    GROUP: ClassVar[Group] = OUTPUT

    dry_run: DryRun = setting(
        DryRun.NONE,
        "client: send no writes; server: send writes with dryRun=All (the run command's --dry-run).",
        v.choice_of(DryRun),
        flag=Flag(
            ("--dry-run",),
            "client (default): send no writes; server: send writes with dryRun=All",
            "run",
            20,
            choices=("client", "server"),
            nargs="?",
            const="client",
        ),
    )
    output: Format = setting(
        Format.TEXT,
        "Report format on stdout.",
        v.choice_of(Format),
        flag=Flag(("--output", "-o"), "report format on stdout", "common", 4),
    )
    events: bool = setting(
        True, "Record Kubernetes Events on the workloads rolled or failed.", v.boolean(), ("events",)
    )
    log_format: Format = setting(
        Format.TEXT,
        "Log format on stderr: text or json.",
        v.choice_of(Format),
        ("logging", "format"),
        flag=Flag(("--log-format",), "log format on stderr", "common", 5),
    )
    verbosity: int = setting(
        0,
        "Log verbosity: 0 (warnings and a summary) and up (at most 10).",
        v.integer(minimum=0, maximum=10),
        ("logging", "verbosity"),
        flag=Flag(("-v", "--verbose"), "more logging (-vv for debug)", "common", 6, action="count"),
    )
    pushgateway: str | None = setting(
        None,
        "Prometheus Pushgateway URL (http or https) to push the pass's metrics to; null disables.",
        v.URL,
        ("pushgateway",),
        flag=Flag(
            ("--pushgateway",), "push metrics to this Prometheus Pushgateway", "pass", 13, metavar="URL"
        ),
    )
    metrics_per_workload: bool = setting(
        False,
        "Also push kube_rehash_workload_last_rollout_timestamp_seconds{namespace,kind,name}: one series per "
        "workload the pass rolled (opt in where the number of rolled workloads stays bounded).",
        v.boolean(),
        ("metricsPerWorkload",),
        details="It feeds the restart-loop alert `KubeRehashWorkloadRestartLoop` of "
        "[deploy/monitoring/](../deploy/monitoring/README.md): a workload rolled more than 3 times in an "
        "hour.",
    )
