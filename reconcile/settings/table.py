"""The one table of settings, and the `Settings` of a pass: its groups, each handed whole to the stage that
needs it.

Every setting is one row of a group (reconcile/settings/scope.py, policy.py, notify.py, reading.py,
limits.py, output.py, connection.py). From the table come the frozen `Settings` (defaults and validation),
the loader (reconcile/config/settings.py), the CLI flags (reconcile/cli/commands.py) and, through
`scripts/gen-config.py` (`make config`), config/schema.json, the shipped config files (config/default.yaml,
cronjob/*/config.yaml, the chart's `config` values), their packaged copies and the settings tables of
docs/configuration.md; `make test` fails when one is stale. So a new setting is one row in its group, the
code that reads it and its test.

A few keys of the file are not attributes (`customKinds` joins `kinds`, `shards` becomes `shard`): they are
rows of `FILE_ONLY`, so the schema and the shipped files list them too.
"""

from __future__ import annotations

from dataclasses import MISSING, dataclass, field, replace
from functools import cached_property
from typing import Any

from reconcile.model.references import DiscoverySettings
from reconcile.settings import values as v
from reconcile.settings.connection import ConnectionSettings
from reconcile.settings.limits import LimitSettings
from reconcile.settings.notify import NotifySettings
from reconcile.settings.output import OutputSettings
from reconcile.settings.policy import PolicySettings
from reconcile.settings.reading import ReadingSettings
from reconcile.settings.rows import GROUPS, SCOPE, Setting, SettingsGroup, row_of, rows_of
from reconcile.settings.scope import ScopeSettings


@dataclass(frozen=True)
class Settings:
    """The resolved settings of one pass, by group (the groups of docs/configuration.md)."""

    scope: ScopeSettings = field(default_factory=ScopeSettings)
    policy: PolicySettings = field(default_factory=PolicySettings)
    notify: NotifySettings = field(default_factory=NotifySettings)
    reading: ReadingSettings = field(default_factory=ReadingSettings)
    limits: LimitSettings = field(default_factory=LimitSettings)
    output: OutputSettings = field(default_factory=OutputSettings)
    connection: ConnectionSettings = field(default_factory=ConnectionSettings)

    @classmethod
    def of(cls, **values: Any) -> Settings:
        """Settings from values by setting name (the table's `name`), each in its group; the rest default."""
        return Settings().replaced(**values)

    def replaced(self, **values: Any) -> Settings:
        """These settings with some values changed, by setting name."""
        unknown = sorted(set(values) - set(SECTION_OF))
        if unknown:
            raise TypeError(f"unknown settings {unknown}")
        groups: dict[str, dict[str, Any]] = {}
        for name, value in values.items():
            groups.setdefault(SECTION_OF[name], {})[name] = value
        return replace(self, **{attr: replace(getattr(self, attr), **new) for attr, new in groups.items()})

    @cached_property
    def discovery(self) -> DiscoverySettings:
        """The annotation vocabulary the pass reads workloads and sources with."""
        return DiscoverySettings(
            prefix=self.scope.prefix,
            compat=frozenset(self.policy.compat),
            restart=self.policy.restart,
            on_ineffective=self.policy.on_ineffective,
        )


SETTING_GROUPS: dict[str, type[SettingsGroup]] = {
    "scope": ScopeSettings,
    "policy": PolicySettings,
    "notify": NotifySettings,
    "reading": ReadingSettings,
    "limits": LimitSettings,
    "output": OutputSettings,
    "connection": ConnectionSettings,
}
"""Settings attribute -> its group class, in table order."""

ATTRIBUTES: tuple[Setting, ...] = tuple(row for group in SETTING_GROUPS.values() for row in rows_of(group))
"""The rows that are attributes of a group, in table order."""
SECTION_OF: dict[str, str] = {
    row.name: attr for attr, group in SETTING_GROUPS.items() for row in rows_of(group)
}
"""Setting name -> the `Settings` attribute of its group."""

FILE_ONLY: tuple[Setting, ...] = (
    row_of(
        "custom_kinds",
        (),
        {
            "doc": "Further kinds: {kind, group, version, resource, namespaced, podTemplate | annotations, "
            "suspend, paused, health, references, podSpecs, restart, pods, verify}; added to the enabled "
            "built-in kinds.",
            "value": v.CUSTOM_KINDS,
            "key": ("customKinds",),
            "flag": None,
            "file_default": [],
            "details": "See [Custom kinds](#custom-kinds).",
        },
        SCOPE,
        has_env=False,
    ),
    row_of(
        "shards",
        1,
        {
            "doc": "Number of shards; in an Indexed Job JOB_COMPLETION_INDEX selects this pod's shard.",
            "value": v.integer(minimum=1, maximum=1000),
            "key": ("shards",),
            "flag": None,
            "file_default": MISSING,
            "details": "See [Sharding](#sharding).",
        },
        SCOPE,
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


def check_sections() -> None:
    """Each attribute of `Settings` is the group `SETTING_GROUPS` names (a new group is added to both)."""
    for attr, group in SETTING_GROUPS.items():
        if not isinstance(getattr(Settings(), attr), group):
            raise TypeError(f"Settings.{attr} is not a {group.__name__}")
