"""How the pass reads and hashes.

One group of the settings table (reconcile/settings/table.py): each attribute is a row (`setting`), with
its doc, value rules, config-file key, environment variable and flag.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from reconcile.model.choices import Fetch
from reconcile.settings import values as v
from reconcile.settings.rows import READING, Flag, Group, SettingsGroup, setting


@dataclass(frozen=True)
class ReadingSettings(SettingsGroup):
    GROUP: ClassVar[Group] = READING

    fetch: Fetch = setting(
        Fetch.AUTO,
        "How ConfigMaps/Secrets are read: auto, list, or get (by name only; needs only `get` on secrets).",
        v.choice_of(Fetch),
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
        v.integer(minimum=1, maximum=5000, nullable=True),
        ("pageSize",),
        details="See [Pages that grow](performance.md#pages-that-grow).",
    )
    stream_above: int = setting(
        1000,
        "Opted-in workloads a whole-cluster pass holds from its listing; above this many it walks the "
        "cluster namespace by namespace as its lists stream (0: always).",
        v.integer(minimum=0),
        ("streamAbove",),
        details="Memory then stays flat in cluster size, for one more listing of the workloads where the "
        "first ones a pass lists say it is heavy (a first install). "
        "See [Large clusters](#large-clusters).",
    )
    hash_key_file: str | None = setting(
        None,
        "File holding the secret key of the keyed hash; null means unkeyed hashing.",
        v.FILE,
        ("hashKeyFile",),
        details="Must exist, be readable and non-empty when the pass starts. "
        "See [The hash key](#the-hash-key).",
    )
    hash_key_secret: str | None = setting(
        None,
        "NAMESPACE/NAME of a Secret holding the hash key under `key` (the chart's: "
        "RELEASE-NAMESPACE/kube-rehash-hash-key), read with the caller's own access; not with hashKeyFile.",
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
