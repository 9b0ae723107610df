"""The choices of the settings that pick a behaviour, as enums: compared by identity, never as strings.

The settings table (reconcile/settings/) parses each from its text; the pass reads them as these.
"""

from __future__ import annotations

from enum import StrEnum


class DryRun(StrEnum):
    """What a pass may write: everything; nothing at all; everything with `dryRun=All`."""

    NONE = "none"
    CLIENT = "client"
    SERVER = "server"


class FirstSight(StrEnum):
    """A workload with no stored hash: record it without a restart, or roll it."""

    ADOPT = "adopt"
    ROLLOUT = "rollout"


class OnChange(StrEnum):
    """A content change of a workload: restart it, or record it and notify."""

    ROLLOUT = "rollout"
    NOTIFY = "notify"


class Restart(StrEnum):
    """How a workload is restarted: by patching its pod template, or by evicting its old pods."""

    PATCH = "patch"
    EVICT = "evict"


class OnIneffective(StrEnum):
    """A restart not effective by its deadline: report it, or also restart its pods by eviction."""

    REPORT = "report"
    EVICT = "evict"


class Fetch(StrEnum):
    """How ConfigMaps and Secrets are read: the read strategy's choice, lists, or GETs by name only."""

    AUTO = "auto"
    LIST = "list"
    GET = "get"


class Format(StrEnum):
    """The format of the report on stdout, or of the log on stderr."""

    TEXT = "text"
    JSON = "json"


class Reports(StrEnum):
    """Where a pass writes per-namespace reports for tenants: nowhere, or OpenReports `Report`s."""

    NONE = "none"
    OPENREPORTS = "openreports"
