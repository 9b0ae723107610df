"""The two textual forms of time kube-rehash reads and writes: Go-style durations (`10m`, `1h30m`) in
annotations and settings, and second-granular RFC 3339 UTC timestamps in its bookkeeping.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from typing import Any

_DURATION = re.compile(r"(\d+(?:\.\d+)?)(d|h|m|s)")


def parse_duration(text: str) -> timedelta:
    """Go-style durations as in `10m`, `1h30m`, `45s`, `1.5h`, and days (`1d`: 24 hours), which Go lacks."""
    cleaned = text.strip().lower()
    if not cleaned or _DURATION.sub("", cleaned):
        raise ValueError(f"{text!r} is not a duration like 10m, 1h30m or 45s")
    seconds = 0.0
    for number, unit in _DURATION.findall(cleaned):
        seconds += float(number) * {"d": 86400, "h": 3600, "m": 60, "s": 1}[unit]
    return timedelta(seconds=seconds)


def format_duration(span: timedelta) -> str:
    """A duration exactly as `parse_duration` reads it back, as people write one: `2m`, `90s` as `1m30s`,
    `1d12h`."""
    seconds = int(span.total_seconds())
    days, rest = divmod(seconds, 86400)
    hours, rest = divmod(rest, 3600)
    minutes, secs = divmod(rest, 60)
    parts = zip((days, hours, minutes, secs), "dhms", strict=True)
    return "".join(f"{count}{unit}" for count, unit in parts if count) or "0s"


def format_time(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def parse_time(text: Any) -> datetime | None:
    if not isinstance(text, str):
        return None
    try:
        return datetime.strptime(text, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)
    except ValueError:
        return None
