"""Restart windows: when a pending rollout may start (annotation `restart-window`, config `restartWindow`).

A restart is cheap for the tool and expensive for the people on call, so a workload can say when it may be
restarted. This module turns the annotation's text into a frozen value once and answers the two questions
a pass asks of it: is a window open now, and when does one open next (the `deferred` reason and `explain`).
It is pure: no clock, no I/O; the caller passes the instant.

Syntax: one or more windows separated by `;`, each `DAYS HH:MM-HH:MM [TIMEZONE]`.
- DAYS: `*` (every day), a day (`Mon`), a range (`Mon-Fri`; `Fri-Mon` wraps over the weekend), or a comma
  list whose items are days or ranges (`Sat,Sun`, `Mon-Wed,Fri`). Day names are the English three-letter
  abbreviations, in any case. A day given twice counts once.
- Times are 24-hour `HH:MM` (`9:00` allowed), 00:00 to 23:59; the end is exclusive. An end before the start
  crosses midnight and the window belongs to the day it opens (`Mon 22:00-06:00` is open Tue 03:00); an end
  equal to the start is a full 24 hours (`Mon 00:00-00:00` is all of Monday).
- TIMEZONE: an IANA name (`Europe/Berlin`), default `UTC`. Spaces around `,` and around a `-` between two
  days or two times are ignored (`Mon - Fri 9:00 - 17:00`).
- An empty value is always open (so an empty annotation lifts the config's default window). One trailing `;`
  is ignored; an empty window anywhere else (`a;;b`, `;a`) is an error.

Time zones follow the wall clock, through zoneinfo: an instant is open when its local date, weekday and time
fall inside a window. So a window whose start falls into a spring-forward gap opens at the first instant
after the gap (and one lying wholly inside the gap does not open that day), and in a fall-back the repeated
hour is open both times it is on the clock.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta, tzinfo
from difflib import get_close_matches
from functools import lru_cache
from itertools import groupby
from zoneinfo import ZoneInfo, available_timezones

from reconcile.model.times import format_time

DAY_NAMES = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")
ALL_DAYS = frozenset(range(7))
DEFAULT_ZONE = "UTC"

_TIME = re.compile(r"^(\d{1,2}):(\d{2})$")
_SPACED_SEPARATOR = re.compile(r"\s*,\s*|(?<=[A-Za-z])\s*-\s*(?=[A-Za-z])|(?<=\d)\s*-\s*(?=\d)")
# How far next_open looks ahead: two weeks always hold an opening of every window (a window can lose at most
# the one day a DST gap swallows it), plus a day on each side for zones far from UTC.
_HORIZON_DAYS = 17
# zoneinfo lists no transitions, so they are found by probing the UTC offset at this step and bisecting.
_PROBE_STEP = timedelta(hours=3)


class WindowError(ValueError):
    """A window value that cannot be parsed; the message names the window, the part and the problem."""


@dataclass(frozen=True)
class Window:
    """One window: on `days` (0 = Monday, as `date.weekday()`) from `start` to `end` local time in `zone`."""

    days: frozenset[int]
    start: time
    end: time
    zone: str = DEFAULT_ZONE

    def __post_init__(self) -> None:
        if not self.days or not self.days <= ALL_DAYS:
            raise ValueError(f"days must be a non-empty subset of 0..6, not {sorted(self.days)}")
        for moment in (self.start, self.end):
            if moment.tzinfo is not None or moment.second or moment.microsecond:
                raise ValueError(f"{moment} is not a naive whole-minute time")
        load_zone(self.zone)

    @property
    def crosses_midnight(self) -> bool:
        """An end at or before the start: the window runs into the next day."""
        return self.end <= self.start

    @property
    def tz(self) -> tzinfo:
        return load_zone(self.zone)

    def describe(self) -> str:
        """The canonical text of this window, e.g. `Mon-Fri 22:00-06:00 Europe/Berlin`."""
        return f"{format_days(self.days)} {self.start:%H:%M}-{self.end:%H:%M} {self.zone}"


@dataclass(frozen=True)
class RestartWindows:
    """The windows of one value; no windows means always open."""

    windows: tuple[Window, ...] = ()

    @property
    def always_open(self) -> bool:
        return not self.windows

    def describe(self) -> str:
        """The canonical text (the windows' joined by `; `), or `always open` without windows."""
        return "; ".join(w.describe() for w in self.windows) or "always open"


ALWAYS_OPEN = RestartWindows()


# --- parsing ------------------------------------------------------------------------------------------


def parse_windows(text: str) -> RestartWindows:
    """Parse a restart window value (module docstring); raise WindowError naming what is wrong."""
    if not text.strip():
        return ALWAYS_OPEN
    parts = text.split(";")
    if len(parts) > 1 and not parts[-1].strip():
        parts.pop()  # one trailing `;`
    return RestartWindows(tuple(parse_window(part, i) for i, part in enumerate(parts, start=1)))


def parse_window(text: str, number: int = 1) -> Window:
    """Parse one `DAYS HH:MM-HH:MM [TIMEZONE]`; `number` (1-based) is its place in the value, for messages."""
    tokens = _SPACED_SEPARATOR.sub(lambda match: match.group(0).strip(), text.strip()).split()
    if not tokens:
        raise WindowError(f"window {number} is empty")
    where = f"window {number} {' '.join(text.split())!r}"
    if len(tokens) == 1:
        if ":" in tokens[0]:
            raise WindowError(f"{where}: missing the days before the times (*, Mon, Mon-Fri or Sat,Sun)")
        raise WindowError(f"{where}: missing the times HH:MM-HH:MM after the days")
    if len(tokens) > 3:
        raise WindowError(f"{where}: unexpected {tokens[3]!r} after the time zone")
    if ":" not in tokens[1] and len(tokens) == 3 and ":" in tokens[2]:
        raise WindowError(f"{where}: join the days with ',' or '-' ({tokens[0]},{tokens[1]}), not a space")
    try:
        days = parse_days(tokens[0])
        start, end = parse_times(tokens[1])
        zone = tokens[2] if len(tokens) == 3 else DEFAULT_ZONE
        load_zone(zone)
    except ValueError as exc:
        raise WindowError(f"{where}: {exc}") from None
    return Window(days, start, end, zone)


def parse_days(text: str) -> frozenset[int]:
    """`*`, `Mon`, `Mon-Fri`, `Fri-Mon` (wraps), or a comma list of days and ranges."""
    if text == "*":
        return ALL_DAYS
    days: set[int] = set()
    for item in text.split(","):
        if item == "*":
            raise ValueError(f"'*' cannot be combined with other days in {text!r}")
        if not item:
            raise ValueError(f"empty day in {text!r}")
        first, dash, last = item.partition("-")
        if dash and not (first and last):
            raise ValueError(f"range {item!r} needs a first and a last day")
        begin = _parse_day(first)
        finish = _parse_day(last) if dash else begin
        days.update((begin + i) % 7 for i in range((finish - begin) % 7 + 1))
    return frozenset(days)


def _parse_day(name: str) -> int:
    for i, day in enumerate(DAY_NAMES):
        if name.lower() == day.lower():
            return i
    raise ValueError(f"unknown day {name!r} (use {', '.join(DAY_NAMES)} or *)")


def parse_times(text: str) -> tuple[time, time]:
    """`HH:MM-HH:MM`, 24-hour, each from 00:00 to 23:59."""
    start, dash, end = text.partition("-")
    return _parse_time(start, "start", text if dash else ""), _parse_time(end, "end", text)


def _parse_time(text: str, which: str, whole: str) -> time:
    match = _TIME.match(text) if whole else None
    if match is None:
        raise ValueError(f"{whole or text!r} is not a time range HH:MM-HH:MM")
    hour, minute = int(match[1]), int(match[2])
    if hour > 23 or minute > 59:
        raise ValueError(f"{which} time {text!r} is not a time from 00:00 to 23:59")
    return time(hour, minute)


def load_zone(name: str) -> tzinfo:
    """The time zone of an IANA name; ValueError (with a close match, if any) for anything else."""
    if name == DEFAULT_ZONE:
        return UTC
    if name not in _known_zones():
        by_lower = {known.lower(): known for known in sorted(_known_zones())}
        close = get_close_matches(name.lower(), list(by_lower), n=1)
        hint = f"; did you mean {by_lower[close[0]]!r}?" if close else ""
        raise ValueError(f"unknown time zone {name!r} (an IANA name such as Europe/Berlin){hint}")
    return ZoneInfo(name)


@lru_cache(maxsize=1)
def _known_zones() -> frozenset[str]:
    # `localtime` is the machine's own zone, not an IANA name: the same value must mean the same everywhere.
    return frozenset(available_timezones() - {"localtime"})


def format_days(days: frozenset[int]) -> str:
    """Canonical days: `*`, or runs of three or more days as ranges (`Mon-Fri`), shorter runs listed."""
    if days == ALL_DAYS:
        return "*"
    items: list[str] = []
    for _, run in groupby(enumerate(sorted(days)), key=lambda pair: pair[1] - pair[0]):
        names = [DAY_NAMES[day] for _, day in run]
        items.extend([f"{names[0]}-{names[-1]}"] if len(names) >= 3 else names)
    return ",".join(items)


# --- questions ----------------------------------------------------------------------------------------


def is_open(windows: RestartWindows, at: datetime) -> bool:
    """Whether a rollout may start at the aware instant `at` (always, without windows)."""
    if at.utcoffset() is None:
        raise ValueError(f"{at.isoformat()} has no time zone; pass an aware datetime")
    return windows.always_open or any(_is_window_open(w, at) for w in windows.windows)


def _is_window_open(window: Window, at: datetime) -> bool:
    local = at.astimezone(window.tz)
    day, now = local.weekday(), local.time()
    if not window.crosses_midnight:
        return day in window.days and window.start <= now < window.end
    opened_today = day in window.days and now >= window.start
    opened_yesterday = (day - 1) % 7 in window.days and now < window.end
    return opened_today or opened_yesterday


def next_open(windows: RestartWindows, at: datetime) -> datetime | None:
    """The first instant at or after `at` at which a window is open, in UTC (`at` itself when open now).

    None only when no window opens within two weeks, which no parsed value allows (every window opens at
    least weekly, and a DST gap can swallow it on one day only).
    """
    if is_open(windows, at):
        return at.astimezone(UTC)
    begin = at.astimezone(UTC)
    # Openings are instants where the wall clock reaches a window's start (once, or twice in a fall-back),
    # or jumps into a window at a UTC offset change; the earliest open one is the answer.
    candidates: set[datetime] = set()
    for zone in {w.zone for w in windows.windows}:
        candidates |= _find_transitions(
            load_zone(zone), begin - timedelta(days=1), begin + timedelta(days=_HORIZON_DAYS + 1)
        )
    for window in windows.windows:
        first_day = begin.astimezone(window.tz).date() - timedelta(days=1)
        for offset in range(_HORIZON_DAYS + 1):
            day = first_day + timedelta(days=offset)
            if day.weekday() in window.days:
                candidates |= _resolve_wall_time(day, window.start, window.tz)
    return next((c for c in sorted(candidates) if c > begin and is_open(windows, c)), None)


def _resolve_wall_time(day: date, moment: time, zone: tzinfo) -> set[datetime]:
    """Both readings of a local wall time as UTC instants (the same one unless it is repeated or skipped)."""
    local = datetime.combine(day, moment, tzinfo=zone)
    return {local.replace(fold=fold).astimezone(UTC) for fold in (0, 1)}


def _find_transitions(zone: tzinfo, low: datetime, high: datetime) -> set[datetime]:
    """The instants in [low, high] where the zone's UTC offset changes (the wall clock jumps)."""
    found: set[datetime] = set()
    probe = low.replace(microsecond=0)
    offset = probe.astimezone(zone).utcoffset()
    while probe < high:
        following = probe + _PROBE_STEP
        following_offset = following.astimezone(zone).utcoffset()
        if following_offset != offset:
            found.add(_bisect_transition(zone, probe, following))
        probe, offset = following, following_offset
    return found


def _bisect_transition(zone: tzinfo, before: datetime, after: datetime) -> datetime:
    """The first whole second after `before`, up to `after`, whose UTC offset differs from `before`'s."""
    old = before.astimezone(zone).utcoffset()
    low, high = int(before.timestamp()), int(after.timestamp())
    while high - low > 1:
        middle = (low + high) // 2
        if datetime.fromtimestamp(middle, UTC).astimezone(zone).utcoffset() == old:
            low = middle
        else:
            high = middle
    return datetime.fromtimestamp(high, UTC)


def format_deferral(windows: RestartWindows, at: datetime) -> str | None:
    """The `deferred` reason of a rollout held back at `at`, or None when a window is open."""
    opening = next_open(windows, at)
    if opening == at:
        return None
    when = format_time(opening) if opening is not None else "never"
    return f"outside restart window; opens {when}"
