"""What one row of the settings table is: a setting written once, with all that is derived from it.

Each attribute of a settings group (reconcile/settings/scope.py, policy.py, ...) is one row: its Python type
and default (the dataclass field), and through `setting(...)` its one-line doc, its value rules
(reconcile/settings/values.py: the parser and the schema fragment), its config-file key path, its environment
variable and its flag; the group it belongs to is its class's `GROUP`. The table of every row and the
`Settings` of a pass are in reconcile/settings/table.py.
"""

from __future__ import annotations

import argparse
from dataclasses import MISSING, dataclass, field, fields
from typing import Any, ClassVar, Literal

from reconcile.settings.values import Value

ENV_PREFIX = "KUBE_REHASH_"

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
    section: type[SettingsGroup] | None = None
    """The settings group it is an attribute of; None for the file-only rows (`table.FILE_ONLY`)."""
    has_env: bool = True
    """Set by `env` as well (only `customKinds` is not)."""

    @property
    def attribute(self) -> bool:
        """An attribute of a settings group (the file-only rows are not)."""
        return self.section is not None

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
    value: Value,
    key: tuple[str, ...] | None = None,
    *,
    flag: Flag | None = None,
    file_default: object = MISSING,
    details: str = "",
) -> Any:
    """One row: the dataclass field of a settings group, carrying the rest of the row in its metadata.

    `file_default` is the default as the config file writes it, when that differs from the Python value
    (durations, kinds); a test checks that it parses to `default`.
    """
    row = {
        "doc": doc,
        "value": value,
        "key": key,
        "flag": flag,
        "file_default": file_default,
        "details": details,
    }
    return field(default=default, metadata={"setting": row})


@dataclass(frozen=True)
class SettingsGroup:
    """A group of settings (a frozen dataclass of rows), as the stage that needs it takes it: each value is
    checked when the group is built, whatever built it."""

    GROUP: ClassVar[Group]

    def __post_init__(self) -> None:
        for row in rows_of(type(self)):
            try:
                row.value.parse(getattr(self, row.name), False)
            except ValueError as exc:
                raise ValueError(f"{row.name}: {exc}") from None


def rows_of(group: type[SettingsGroup]) -> tuple[Setting, ...]:
    """The rows of a settings group, in its order."""
    return tuple(
        row_of(f.name, f.default, dict(f.metadata["setting"]), group.GROUP, section=group)
        for f in fields(group)
        if "setting" in f.metadata
    )


def row_of(
    name: str,
    default: object,
    row: dict[str, Any],
    group: Group,
    *,
    section: type[SettingsGroup] | None = None,
    has_env: bool = True,
) -> Setting:
    file_default = row["file_default"]
    if file_default is MISSING:
        file_default = default
    return Setting(
        name=name,
        default=default,
        group=group,
        section=section,
        has_env=has_env,
        **{**row, "file_default": file_default},
    )
