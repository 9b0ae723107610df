"""What one pass may spend: its time budget, request rate and concurrency.

One group of the settings table (reconcile/settings/table.py): each attribute is a row (`setting`), with
its doc, value rules, config-file key, environment variable and flag.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from reconcile.settings import values as v
from reconcile.settings.rows import LIMITS, Flag, Group, SettingsGroup, setting


@dataclass(frozen=True)
class LimitSettings(SettingsGroup):
    GROUP: ClassVar[Group] = LIMITS

    timeout: float = setting(
        240.0,
        "Budget of the whole pass in seconds, or a duration such as `4m` (keep it below the Job's "
        "activeDeadlineSeconds).",
        v.PASS_SECONDS,
        ("timeout",),
        flag=Flag(
            ("--timeout",),
            "time budget of the whole pass (seconds, or e.g. 4m)",
            "common",
            7,
            metavar="SECONDS",
        ),
        details="Listing, reading and writing; the pass ends within `timeout` + 5 s. "
        "See [Time budget](#time-budget).",
    )
    request_timeout: float = setting(
        10.0,
        "Timeout of one API request in seconds.",
        v.PASS_SECONDS,
        ("requestTimeout",),
    )
    qps: float = setting(
        20.0, "Most API requests per second; 0 means unlimited.", v.number(minimum=0), ("qps",)
    )
    concurrency: int = setting(
        4,
        "API requests in flight at once (1-32).",
        v.integer(minimum=1, maximum=32),
        ("concurrency",),
    )
    memory_budget: int | None = setting(
        None,
        "Bytes the pass may hold at once (e.g. 64Mi): its answers, pages and what it keeps of them; null: "
        "half the memory limit of its cgroup (the pod's limit), else 64Mi.",
        v.BYTES,
        ("memoryBudget",),
        details="What the program itself holds when the pass starts comes off the top; no answer may then "
        "hold more than a sixth of the rest, a page aims at a sixteenth, and pages read ahead hold a "
        "sixth. A budget too small for the largest object the API server stores is refused at the start "
        "(exit 2). See [Memory](#memory).",
    )
