"""The API server to talk to (flags and environment only).

One group of the settings table (reconcile/settings/table.py): each attribute is a row (`setting`), with
its doc, value rules, config-file key, environment variable and flag.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from reconcile.settings import values as v
from reconcile.settings.rows import CONNECTION, Flag, Group, SettingsGroup, setting


@dataclass(frozen=True)
class ConnectionSettings(SettingsGroup):
    GROUP: ClassVar[Group] = CONNECTION

    kubeconfig: str | None = setting(
        None,
        "Kubeconfig file (KUBECONFIG and the in-cluster service account are handled by the client).",
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
        v.NAME,
        flag=Flag(("--context",), "kubeconfig context to use", "common", 2, metavar="NAME"),
    )
