"""What a pass reports, records and logs.

One group of the settings table (reconcile/settings/table.py): each attribute is a row (`setting`), with
its doc, value rules, config-file key, environment variable and flag.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from reconcile.model.choices import DryRun, Format, Reports
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
    otlp_endpoint: str | None = setting(
        None,
        "OpenTelemetry metrics endpoint (OTLP over HTTP/protobuf, e.g. http://collector:4318/v1/metrics) to "
        "push the pass's metrics to, besides or instead of the Pushgateway; null disables.",
        v.URL,
        ("otlpEndpoint",),
        flag=Flag(
            ("--otlp-endpoint",),
            "push metrics over OTLP/HTTP to this URL (its full path, e.g. .../v1/metrics)",
            "pass",
            14,
            metavar="URL",
        ),
        details="The same metrics as the Pushgateway's, with the resource attributes `service.name` "
        "(kube-rehash), `k8s.cluster.name` (`clusterName`) and `kube_rehash.shard`; see "
        "[Audit and reporting](audit-and-reporting.md#opentelemetry-metrics).",
    )
    cluster_name: str | None = setting(
        None,
        "The cluster's name, for the OTLP resource attribute k8s.cluster.name; null leaves it out.",
        v.text(schema={"type": ["string", "null"], "minLength": 1}, nullable=True),
        ("clusterName",),
    )
    reports: Reports = setting(
        Reports.NONE,
        "Per-namespace reports for tenants: none, or openreports (one OpenReports Report named kube-rehash "
        "in each namespace the pass decided, listing its stale, deferred, notified, failed, not effective "
        "and skipped workloads).",
        v.choice_of(Reports),
        ("reports",),
        file_default="none",
        details="Needs the OpenReports CRD (`reports.openreports.io`) and `list`, `create` and `patch` on "
        "`reports` (chart value `openreports`, cronjob/components/openreports); see "
        "[Audit and reporting](audit-and-reporting.md#openreports).",
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
