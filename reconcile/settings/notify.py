"""Where the changes of workloads in notify mode are sent.

One group of the settings table (reconcile/settings/table.py): each attribute is a row (`setting`), with
its doc, value rules, config-file key, environment variable and flag.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from reconcile.settings import values as v
from reconcile.settings.rows import NOTIFY, Group, SettingsGroup, setting


@dataclass(frozen=True)
class NotifySettings(SettingsGroup):
    GROUP: ClassVar[Group] = NOTIFY

    webhook_secret: str | None = setting(
        None,
        "NAMESPACE/NAME of the Secret holding the webhook's URL (read once per pass, only when a "
        "notification is pending; the Secret needs a Role granting get on it).",
        v.SECRET_REF,
        ("notify", "webhook", "secret"),
        details="The [notify webhook](#notify-webhook) posts one document per pass listing the notified "
        "changes; the URL is never a setting.",
    )
    webhook_key: str = setting(
        "url", "The Secret's key holding the URL.", v.SECRET_KEY, ("notify", "webhook", "key")
    )
    webhook_timeout: float = setting(
        10.0,
        "Timeout of one POST: seconds, or a duration such as 10s (at most 5m).",
        v.SECONDS,
        ("notify", "webhook", "timeout"),
    )
    webhook_cluster: str | None = setting(
        None,
        "A name for the cluster, carried in the document and its text.",
        v.NAME,
        ("notify", "webhook", "cluster"),
    )
