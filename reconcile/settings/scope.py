"""What a pass reconciles: its namespaces, kinds and shard, and the annotation prefix it reads.

One group of the settings table (reconcile/settings/table.py): each attribute is a row (`setting`), with
its doc, value rules, config-file key, environment variable and flag.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from reconcile.model.kinds import BUILTIN_KINDS, Kind
from reconcile.model.presets import PRESET_KINDS
from reconcile.settings import values as v
from reconcile.settings.rows import SCOPE, Flag, Group, SettingsGroup, setting
from reconcile.settings.values import Shard


@dataclass(frozen=True)
class ScopeSettings(SettingsGroup):
    GROUP: ClassVar[Group] = SCOPE

    prefix: str = setting(
        "kube-rehash.io",
        "Prefix of every annotation read and written (kube-rehash.io/watch, kube-rehash.io/config-hash, "
        "...).",
        v.PREFIX,
        ("annotationPrefix",),
    )
    namespaces: tuple[str, ...] = setting(
        (),
        "Namespaces to reconcile; an empty list means all namespaces.",
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
        v.NAMESPACES,
        ("excludeNamespaces",),
        file_default=[],
        details="A namespace may not be both included and excluded.",
    )
    namespace_selector: str = setting(
        "",
        'Only namespaces whose labels match this label selector (e.g. "team=payments,tier in (web,api)"); '
        '"" selects every namespace.',
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
        v.KINDS,
        ("kinds",),
        file_default=[k.kind for k in BUILTIN_KINDS],
    )
    shard: Shard | None = setting(
        None,
        "This pod's shard I/N (0-based); else `shards` with JOB_COMPLETION_INDEX.",
        v.SHARD,
        flag=Flag(
            ("--shard",),
            "process shard I of N (0-based): an even share of the opted-in workloads",
            "pass",
            11,
            metavar="I/N",
        ),
    )

    def __post_init__(self) -> None:
        super().__post_init__()
        if not all(isinstance(k, Kind) for k in self.kinds):
            raise ValueError("kinds: every entry must be a Kind")
