"""The one table of settings: every setting of a pass written once, with all that is derived from it.

Each attribute of `Settings` below is one row: its Python type and default (the dataclass field), and through
`setting(...)` its one-line doc, its group, its value rules (reconcile/config/values.py: the parser and the
schema fragment), its config-file key path, its environment variable and its flag. From this table come the
frozen `Settings` (defaults and validation), the loader (reconcile/config/settings.py), the CLI flags
(reconcile/cli/commands.py) and, through `scripts/gen-config.py` (`make config`), config/schema.json, the
shipped config files (config/default.yaml, cronjob/*/config.yaml, the chart's `config` values), their
packaged copies and the settings tables of docs/configuration.md; `make test` fails when one is stale. So a
new setting is one row here, the code that reads it and its test.

A few keys of the file are not attributes (`customKinds` joins `kinds`, `shards` becomes `shard`): they are
rows of `FILE_ONLY`, so the schema and the shipped files list them too.
"""

from __future__ import annotations

import argparse
from dataclasses import MISSING, dataclass, field, fields
from datetime import timedelta
from enum import StrEnum
from functools import cached_property
from typing import Any, Literal

from reconcile.config import values as v
from reconcile.config.values import Shard, Value
from reconcile.kube.page_size import PAGE_SIZE
from reconcile.model.kinds import BUILTIN_KINDS, PRESET_KINDS, Kind
from reconcile.model.references import COMPAT_NAMES
from reconcile.model.windows import RestartWindows, parse_windows

ENV_PREFIX = "KUBE_REHASH_"


class ReportsOutput(StrEnum):
    """Where a pass writes per-namespace reports for tenants (setting `reports`)."""

    NONE = "none"
    OPENREPORTS = "openreports"


Commands = Literal["common", "pass", "run"]
"""Which commands take a flag: common (run, plan, explain), pass (run, plan) or run only."""


@dataclass(frozen=True)
class Flag:
    """A setting's command-line flag, as argparse takes it (the dest is the setting's name)."""

    names: tuple[str, ...]
    help: str
    commands: Commands
    rank: int
    """Its place in `--help` among the flags of its commands."""
    metavar: str | None = None
    choices: tuple[str, ...] | None = None
    """The flag's own choices; by default those of a `choice` value."""
    action: str | type[argparse.Action] | None = None
    type: type[int] | type[float] | None = None
    nargs: str | None = None
    const: object = None


@dataclass(frozen=True)
class Group:
    """A heading of the table: settings that belong together in the docs, the schema and the shipped file."""

    title: str
    doc: str


SCOPE = Group("Scope", "what a pass reconciles.")
POLICY = Group("Rollout policy", "when and how a changed workload is restarted.")
NOTIFY = Group("Notify", "where the changes of workloads in notify mode are sent.")
READING = Group("Reading", "how the pass reads and hashes.")
LIMITS = Group("Pass limits", "what one pass may spend.")
OUTPUT = Group("Output and logging", "what a pass reports, records and logs.")
CONNECTION = Group("Connection", "the API server to talk to (flags and environment only).")
GROUPS = (SCOPE, POLICY, NOTIFY, READING, LIMITS, OUTPUT, CONNECTION)


@dataclass(frozen=True)
class Section:
    """A mapping of the config file that holds settings (`logging`, `notify`, `notify.webhook`)."""

    doc: str
    nullable: bool = False
    """Null (the default) turns the whole section off; the shipped file then shows its keys as comments."""
    required: tuple[str, ...] = ()


SECTIONS: dict[tuple[str, ...], Section] = {
    ("logging",): Section("Logging on stderr."),
    ("notify",): Section(
        "Notifications of the changes of workloads in notify mode, besides their ConfigChanged Events."
    ),
    ("notify", "webhook"): Section(
        "POST one JSON document per pass listing the notified changes (docs/notify-webhook.schema.json) "
        "to the URL held in a Secret; null or absent: no webhook.",
        nullable=True,
        required=("secret",),
    ),
}


@dataclass(frozen=True)
class Setting:
    """One row of the table (see `setting`)."""

    name: str
    default: object
    doc: str
    group: Group
    value: Value
    key: tuple[str, ...] | None
    flag: Flag | None
    file_default: object
    details: str = ""
    """More for docs/configuration.md (Markdown, links to its sections), after `doc`."""
    attribute: bool = True
    """A `Settings` attribute; False for the file-only rows of `FILE_ONLY`."""
    has_env: bool = True
    """Set by `env` as well (only `customKinds` is not)."""

    @property
    def env(self) -> str:
        return ENV_PREFIX + self.name.upper()

    @property
    def flag_name(self) -> str:
        """How errors name the flag: its long spelling (`-v` for the counted verbosity)."""
        if self.flag is None:
            return "--" + self.name.replace("_", "-")
        if self.flag.action == "count":
            return self.flag.names[0]
        return next(n for n in self.flag.names if n.startswith("--"))

    @property
    def choices(self) -> tuple[str, ...] | None:
        if self.flag and self.flag.choices is not None:
            return self.flag.choices
        enum = self.value.schema.get("enum")
        return tuple(enum) if enum is not None else None


def setting(
    default: object,
    doc: str,
    group: Group,
    value: Value,
    key: tuple[str, ...] | None = None,
    *,
    flag: Flag | None = None,
    file_default: object = MISSING,
    details: str = "",
) -> Any:
    """One row: the dataclass field of `Settings`, carrying the rest of the row in its metadata.

    `file_default` is the default as the config file writes it, when that differs from the Python value
    (durations, kinds); a test checks that it parses to `default`.
    """
    row = {
        "doc": doc,
        "group": group,
        "value": value,
        "key": key,
        "flag": flag,
        "file_default": file_default,
        "details": details,
    }
    return field(default=default, metadata={"setting": row})


@dataclass(frozen=True)
class Settings:
    """The resolved settings of one pass: the table (rows grouped as in docs/configuration.md)."""

    # --- scope ------------------------------------------------------------------------------------------
    prefix: str = setting(
        "kube-rehash.io",
        "Prefix of every annotation read and written (kube-rehash.io/watch, kube-rehash.io/config-hash, "
        "...).",
        SCOPE,
        v.PREFIX,
        ("annotationPrefix",),
    )
    namespaces: tuple[str, ...] = setting(
        (),
        "Namespaces to reconcile; an empty list means all namespaces.",
        SCOPE,
        v.NAMESPACES,
        ("namespaces",),
        flag=Flag(
            ("-n", "--namespace"),
            "namespace to reconcile (repeatable; default: all). Never lists cluster-wide when given",
            "common",
            3,
            metavar="NS",
            action="append",
        ),
        file_default=[],
    )
    exclude_namespaces: tuple[str, ...] = setting(
        (),
        "Namespaces never reconciled (applied after `namespaces`).",
        SCOPE,
        v.NAMESPACES,
        ("excludeNamespaces",),
        file_default=[],
        details="A namespace may not be both included and excluded.",
    )
    namespace_selector: str = setting(
        "",
        'Only namespaces whose labels match this label selector (e.g. "team=payments,tier in (web,api)"); '
        '"" selects every namespace.',
        SCOPE,
        v.SELECTOR,
        ("namespaceSelector",),
        flag=Flag(
            ("--namespace-selector",),
            "reconcile only namespaces whose labels match this selector (cluster scope only)",
            "pass",
            9,
            metavar="SELECTOR",
        ),
        details="The namespaces' labels are read once per pass (one metadata list of namespaces, filtered "
        "by the API server: `list` on namespaces, which the chart grants when the value is set). Cluster "
        "scope only: with `namespaces` (`-n`, a namespaced install) the pass exits 2. `excludeNamespaces` "
        "still applies. See [Namespace selector](#namespace-selector).",
    )
    kinds: tuple[Kind, ...] = setting(
        BUILTIN_KINDS,
        f"Target kinds to enable: built-in and preset ({', '.join(v.BUILTIN_KIND_NAMES)}; the presets, "
        f"off by default: {', '.join(k.kind for k in PRESET_KINDS)}).",
        SCOPE,
        v.KINDS,
        ("kinds",),
        file_default=[k.kind for k in BUILTIN_KINDS],
    )
    shard: Shard | None = setting(
        None,
        "This pod's shard I/N (0-based); else `shards` with JOB_COMPLETION_INDEX.",
        SCOPE,
        v.SHARD,
        flag=Flag(
            ("--shard",),
            "process shard I of N (0-based): an even share of the opted-in workloads",
            "pass",
            11,
            metavar="I/N",
        ),
    )

    # --- rollout policy ---------------------------------------------------------------------------------
    first_sight: Literal["adopt", "rollout"] = setting(
        "adopt",
        "First sight of a workload with no stored hash: adopt (record it, no restart) or rollout.",
        POLICY,
        v.choice("adopt", "rollout"),
        ("firstSight",),
    )
    on_change: Literal["rollout", "notify"] = setting(
        "rollout",
        "A content change of a workload without the kube-rehash.io/on-change annotation: rollout (restart "
        "it) or notify (record the hash, no restart; one ConfigChanged Event names the changed sources).",
        POLICY,
        v.choice("rollout", "notify"),
        ("onChange",),
        details="Action `notify`; never held back by windows, `min-interval` or `--max-rollouts`, since "
        "nothing restarts.",
    )
    restart: Literal["patch", "evict"] = setting(
        "patch",
        "How a workload without the kube-rehash.io/restart annotation is restarted: patch (its pod "
        "template) or evict (its pods that started before the change, through pods/eviction).",
        POLICY,
        v.choice("patch", "evict"),
        ("restart",),
        details="`evict` never patches the template and honours PodDisruptionBudgets; it needs `list` on "
        "pods and `create` on `pods/eviction` (chart value `evict`, cronjob/components/evict).",
    )
    evict_per_pass: int = setting(
        1,
        "Pods evicted per workload per pass (restart: evict) when the workload's maxUnavailable is not an "
        "integer (a percentage, or none); an integer maxUnavailable above zero is used as it is (1-100).",
        POLICY,
        v.integer(minimum=1, maximum=100),
        ("evictPerPass",),
    )
    max_rollouts: int | None = setting(
        None,
        "Most rollouts per pass, the rest deferred to later passes; null means unlimited.",
        POLICY,
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
        POLICY,
        v.WINDOWS,
        ("restartWindow",),
        details="See [Restart windows](#restart-windows).",
    )
    rollout_deadline: timedelta = setting(
        timedelta(minutes=10),
        "How long a StatefulSet or DaemonSet rollout may take before it is reported stalled (e.g. 10m, "
        "1h30m).",
        POLICY,
        v.DURATION,
        ("rolloutDeadline",),
        file_default="10m",
        details="Deployments and Argo Rollouts use their own progress deadline.",
    )
    fail_on_stalled: bool = setting(
        False,
        "Exit 1 when a rollout kube-rehash started is stalled.",
        POLICY,
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
        POLICY,
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
        POLICY,
        v.COMPAT,
        ("compat",),
        file_default=[],
        details="With `reloader`, Reloader's annotations on the pod template count too, as in Reloader, so "
        "workloads are listed whole rather than metadata-only. A peer left out is named once per pass "
        "(a warning and the report's `foreign_annotations`) when workloads carry its annotations.",
    )

    # --- notify -----------------------------------------------------------------------------------------
    webhook_secret: str | None = setting(
        None,
        "NAMESPACE/NAME of the Secret holding the webhook's URL (read once per pass, only when a "
        "notification is pending; the Secret needs a Role granting get on it).",
        NOTIFY,
        v.SECRET_REF,
        ("notify", "webhook", "secret"),
        details="The [notify webhook](#notify-webhook) posts one document per pass listing the notified "
        "changes; the URL is never a setting.",
    )
    webhook_key: str = setting(
        "url", "The Secret's key holding the URL.", NOTIFY, v.SECRET_KEY, ("notify", "webhook", "key")
    )
    webhook_timeout: float = setting(
        10.0,
        "Timeout of one POST: seconds, or a duration such as 10s (at most 5m).",
        NOTIFY,
        v.SECONDS,
        ("notify", "webhook", "timeout"),
    )
    webhook_cluster: str | None = setting(
        None,
        "A name for the cluster, carried in the document and its text.",
        NOTIFY,
        v.NAME,
        ("notify", "webhook", "cluster"),
    )

    # --- reading ----------------------------------------------------------------------------------------
    fetch: Literal["auto", "list", "get"] = setting(
        "auto",
        "How ConfigMaps/Secrets are read: auto, list, or get (by name only; needs only `get` on secrets).",
        READING,
        v.choice("auto", "list", "get"),
        ("fetch",),
        flag=Flag(
            ("--fetch",), "how ConfigMaps/Secrets are read; 'get' needs only get permission", "pass", 12
        ),
        details="See [Fetch modes](#fetch-modes).",
    )
    page_size: int | None = setting(
        None,
        "Objects per list page (1-5000); null: 500, and 1000 in a metadata-only list read to its end once "
        "its pages show that 1000 of its objects fit in 1 MiB, and in 512 KiB without their managedFields.",
        READING,
        v.integer(minimum=1, maximum=5000, nullable=True),
        ("pageSize",),
        details="See [Pages that grow](performance.md#pages-that-grow-issue-33).",
    )
    stream_above: int = setting(
        1000,
        "Opted-in workloads a whole-cluster pass holds from its listing; above this many it walks the "
        "cluster namespace by namespace as its lists stream (0: always).",
        READING,
        v.integer(minimum=0),
        ("streamAbove",),
        details="Memory then stays flat in cluster size, for one more listing of the workloads where the "
        "first ones a pass lists say it is heavy (a first install). "
        "See [Large clusters](#large-clusters).",
    )
    hash_key_file: str | None = setting(
        None,
        "File holding the secret key of the keyed hash; null means unkeyed hashing.",
        READING,
        v.FILE,
        ("hashKeyFile",),
        details="Must exist, be readable and non-empty when the pass starts. "
        "See [The hash key](#the-hash-key).",
    )
    hash_key_secret: str | None = setting(
        None,
        "NAMESPACE/NAME of a Secret holding the hash key under `key` (the chart's: "
        "RELEASE-NAMESPACE/kube-rehash-hash-key), read with the caller's own access; not with hashKeyFile.",
        READING,
        v.OPTIONAL_SECRET_REF,
        ("hashKeySecret",),
        flag=Flag(
            ("--hash-key-secret",),
            "hash with the key in this Secret (data key 'key'), e.g. the chart's: plan from a laptop with "
            "the cluster's key",
            "common",
            8,
            metavar="NAMESPACE/NAME",
        ),
        details="How a laptop plans and explains with the key the CronJob hashes with (a pass without it "
        "leaves keyed hashes alone). See [The hash key](#the-hash-key).",
    )

    # --- pass limits ------------------------------------------------------------------------------------
    timeout: float = setting(
        240.0,
        "Budget of the whole pass in seconds (keep it below the Job's activeDeadlineSeconds).",
        LIMITS,
        v.number(exclusive_minimum=0),
        ("timeout",),
        flag=Flag(
            ("--timeout",), "time budget of the whole pass", "common", 7, metavar="SECONDS", type=float
        ),
        details="Listing, reading and writing; the pass ends within `timeout` + 5 s. "
        "See [Time budget](#time-budget).",
    )
    request_timeout: float = setting(
        10.0,
        "Timeout of one API request in seconds.",
        LIMITS,
        v.number(exclusive_minimum=0),
        ("requestTimeout",),
    )
    qps: float = setting(
        20.0, "Most API requests per second; 0 means unlimited.", LIMITS, v.number(minimum=0), ("qps",)
    )
    concurrency: int = setting(
        4,
        "API requests in flight at once (1-32).",
        LIMITS,
        v.integer(minimum=1, maximum=32),
        ("concurrency",),
    )

    # --- output and logging -----------------------------------------------------------------------------
    dry_run: Literal["none", "client", "server"] = setting(
        "none",
        "client: send no writes; server: send writes with dryRun=All (the run command's --dry-run).",
        OUTPUT,
        v.choice("none", "client", "server"),
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
    output: Literal["text", "json"] = setting(
        "text",
        "Report format on stdout.",
        OUTPUT,
        v.choice("text", "json"),
        flag=Flag(("--output", "-o"), "report format on stdout", "common", 4),
    )
    events: bool = setting(
        True, "Record Kubernetes Events on the workloads rolled or failed.", OUTPUT, v.boolean(), ("events",)
    )
    log_format: Literal["text", "json"] = setting(
        "text",
        "Log format on stderr: text or json.",
        OUTPUT,
        v.choice("text", "json"),
        ("logging", "format"),
        flag=Flag(("--log-format",), "log format on stderr", "common", 5),
    )
    verbosity: int = setting(
        0,
        "Log verbosity: 0 (warnings and a summary) and up (at most 10).",
        OUTPUT,
        v.integer(minimum=0, maximum=10),
        ("logging", "verbosity"),
        flag=Flag(("-v", "--verbose"), "more logging (-vv for debug)", "common", 6, action="count"),
    )
    pushgateway: str | None = setting(
        None,
        "Prometheus Pushgateway URL (http or https) to push the pass's metrics to; null disables.",
        OUTPUT,
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
        OUTPUT,
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
        OUTPUT,
        v.text(schema={"type": ["string", "null"], "minLength": 1}, nullable=True),
        ("clusterName",),
    )
    reports: ReportsOutput = setting(
        ReportsOutput.NONE,
        "Per-namespace reports for tenants: none, or openreports (one OpenReports Report named kube-rehash "
        "in each namespace the pass decided, listing its stale, deferred, notified, failed, not effective "
        "and skipped workloads).",
        OUTPUT,
        v.enum_choice(ReportsOutput),
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
        OUTPUT,
        v.boolean(),
        ("metricsPerWorkload",),
        details="It feeds the restart-loop alert `KubeRehashWorkloadRestartLoop` of "
        "[deploy/monitoring/](../deploy/monitoring/README.md): a workload rolled more than 3 times in an "
        "hour.",
    )

    # --- connection -------------------------------------------------------------------------------------
    kubeconfig: str | None = setting(
        None,
        "Kubeconfig file (KUBECONFIG and the in-cluster service account are handled by the client).",
        CONNECTION,
        v.NAME,
        flag=Flag(
            ("--kubeconfig",),
            "kubeconfig file (default: $KUBECONFIG, ~/.kube/config, in-cluster)",
            "common",
            1,
            metavar="FILE",
        ),
    )
    context: str | None = setting(
        None,
        "Kubeconfig context (default: the current one).",
        CONNECTION,
        v.NAME,
        flag=Flag(("--context",), "kubeconfig context to use", "common", 2, metavar="NAME"),
    )

    def __post_init__(self) -> None:
        """Reject impossible values even when a Settings is built directly (tests, other callers)."""
        for row in ATTRIBUTES:
            try:
                row.value.parse(getattr(self, row.name), False)
            except ValueError as exc:
                raise ValueError(f"{row.name}: {exc}") from None
        if not isinstance(self.rollout_deadline, timedelta):
            raise ValueError(f"rollout_deadline: {self.rollout_deadline!r} is not a timedelta")
        if not all(isinstance(k, Kind) for k in self.kinds):
            raise ValueError("kinds: every entry must be a Kind")

    @property
    def list_page_size(self) -> int:
        """Objects a list page asks for: `page_size`, or where unset the first page of a growing list."""
        return self.page_size if self.page_size is not None else PAGE_SIZE

    @cached_property
    def restart_windows(self) -> RestartWindows:
        """`restart_window`, parsed once: the windows of workloads without the restart-window annotation."""
        return parse_windows(self.restart_window)


def _row(
    name: str, default: object, row: dict[str, Any], *, attribute: bool = True, has_env: bool = True
) -> Setting:
    file_default = row["file_default"]
    if file_default is MISSING:
        file_default = default
    return Setting(
        name=name,
        default=default,
        attribute=attribute,
        has_env=has_env,
        **{**row, "file_default": file_default},
    )


ATTRIBUTES: tuple[Setting, ...] = tuple(
    _row(f.name, f.default, dict(f.metadata["setting"])) for f in fields(Settings)
)
"""The rows that are `Settings` attributes, in table order."""

FILE_ONLY: tuple[Setting, ...] = (
    _row(
        "custom_kinds",
        (),
        {
            "doc": "Further kinds: {kind, group, version, resource, namespaced, podTemplate | annotations, "
            "suspend, paused}; added to the enabled built-in kinds.",
            "group": SCOPE,
            "value": v.CUSTOM_KINDS,
            "key": ("customKinds",),
            "flag": None,
            "file_default": [],
            "details": "See [Custom kinds](#custom-kinds).",
        },
        attribute=False,
        has_env=False,
    ),
    _row(
        "shards",
        1,
        {
            "doc": "Number of shards; in an Indexed Job JOB_COMPLETION_INDEX selects this pod's shard.",
            "group": SCOPE,
            "value": v.integer(minimum=1, maximum=1000),
            "key": ("shards",),
            "flag": None,
            "file_default": MISSING,
            "details": "See [Sharding](#sharding).",
        },
        attribute=False,
    ),
)
"""Keys of the config file that are not attributes: the loader turns them into `kinds` and `shard`."""

TABLE: tuple[Setting, ...] = tuple(
    row for group in GROUPS for row in (*ATTRIBUTES, *FILE_ONLY) if row.group is group
)
"""Every row, grouped: the order of the schema and the shipped config files."""
BY_NAME = {row.name: row for row in TABLE}
FLAGS: tuple[Setting, ...] = tuple(
    sorted(
        (row for row in ATTRIBUTES if row.flag is not None), key=lambda row: row.flag.rank if row.flag else 0
    )
)
"""The rows with a flag, in `--help` order."""
