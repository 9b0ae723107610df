"""Restart windows: the syntax, every error message, wall-clock semantics across DST, next_open's promises."""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime, time, timedelta
from zoneinfo import ZoneInfo, available_timezones

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from reconcile.model.windows import (
    ALL_DAYS,
    ALWAYS_OPEN,
    RestartWindows,
    Window,
    WindowError,
    format_deferral,
    is_open,
    next_open,
    parse_windows,
)

MON, TUE, WED, THU, FRI, SAT, SUN = range(7)
BERLIN = ZoneInfo("Europe/Berlin")
NEW_YORK = ZoneInfo("America/New_York")


def utc(text: str) -> datetime:
    """An instant written as `2026-03-29 01:00` (UTC) or with an explicit offset."""
    moment = datetime.fromisoformat(text)
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def opened(spec: str, at: str) -> bool:
    return is_open(parse_windows(spec), utc(at))


def opens(spec: str, at: str) -> datetime | None:
    return next_open(parse_windows(spec), utc(at))


# --- syntax -------------------------------------------------------------------------------------------


def test_the_issue_example_parses_to_typed_windows() -> None:
    windows = parse_windows("Mon-Fri 22:00-06:00 Europe/Berlin; Sat,Sun 00:00-23:59")

    assert windows == RestartWindows(
        (
            Window(frozenset({MON, TUE, WED, THU, FRI}), time(22), time(6), "Europe/Berlin"),
            Window(frozenset({SAT, SUN}), time(0), time(23, 59), "UTC"),
        )
    )
    assert windows.describe() == "Mon-Fri 22:00-06:00 Europe/Berlin; Sat,Sun 00:00-23:59 UTC"


@pytest.mark.parametrize(
    ("days", "expected"),
    [
        ("*", ALL_DAYS),
        ("Mon", {MON}),
        ("mon", {MON}),
        ("Mon-Fri", {MON, TUE, WED, THU, FRI}),
        ("Sat,Sun", {SAT, SUN}),
        ("Mon-Wed,Fri", {MON, TUE, WED, FRI}),
        ("Fri-Mon", {FRI, SAT, SUN, MON}),  # a range wraps over the weekend
        ("Mon-Mon", {MON}),
        ("Tue,Mon-Wed,Tue", {MON, TUE, WED}),  # repeats count once
        ("Mon - Wed , Sun", {MON, TUE, WED, SUN}),  # spaces around separators are ignored
    ],
)
def test_days_are_star_a_day_a_range_or_a_list_of_days_and_ranges(days: str, expected: set[int]) -> None:
    (window,) = parse_windows(f"{days} 09:00-10:00").windows

    assert window.days == frozenset(expected)


def test_times_accept_one_digit_hours_and_spaces_around_the_dash() -> None:
    (window,) = parse_windows("Mon 9:05 - 17:30").windows

    assert (window.start, window.end) == (time(9, 5), time(17, 30))


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("", ALWAYS_OPEN),
        ("   ", ALWAYS_OPEN),
        ("Mon 09:00-10:00;", parse_windows("Mon 09:00-10:00")),  # one trailing `;` is ignored
        ("Mon 09:00-10:00 ; ", parse_windows("Mon 09:00-10:00")),
    ],
)
def test_an_empty_value_is_always_open_and_one_trailing_semicolon_is_ignored(
    text: str, expected: RestartWindows
) -> None:
    assert parse_windows(text) == expected


def test_the_canonical_description_lists_short_runs_and_ranges_longer_ones() -> None:
    text = "fri-mon 9:00-10:00 America/New_York;Tue,Wed 00:00-00:00;* 22:00-06:00"

    assert parse_windows(text).describe() == (
        "Mon,Fri-Sun 09:00-10:00 America/New_York; Tue,Wed 00:00-00:00 UTC; * 22:00-06:00 UTC"
    )
    assert ALWAYS_OPEN.describe() == "always open"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "Mon-Fry 22:00-06:00",
            "window 1 'Mon-Fry 22:00-06:00': unknown day 'Fry' (use Mon, Tue, Wed, Thu, Fri, Sat, Sun or *)",
        ),
        (
            "Monday 09:00-10:00",
            "window 1 'Monday 09:00-10:00': unknown day 'Monday' (use Mon, Tue, Wed, Thu, "
            "Fri, Sat, Sun or *)",
        ),
        (
            "Mon 24:00-06:00",
            "window 1 'Mon 24:00-06:00': start time '24:00' is not a time from 00:00 to 23:59",
        ),
        ("Mon 22:00-24:00", "window 1 'Mon 22:00-24:00': end time '24:00' is not a time from 00:00 to 23:59"),
        (
            "Mon 25:61-06:00",
            "window 1 'Mon 25:61-06:00': start time '25:61' is not a time from 00:00 to 23:59",
        ),
        (
            "Mon 09:60-10:00",
            "window 1 'Mon 09:60-10:00': start time '09:60' is not a time from 00:00 to 23:59",
        ),
        ("Mon 9-17", "window 1 'Mon 9-17': '9-17' is not a time range HH:MM-HH:MM"),
        ("Mon 09:00", "window 1 'Mon 09:00': '09:00' is not a time range HH:MM-HH:MM"),
        (
            "Mon 09:00-10:00-11:00",
            "window 1 'Mon 09:00-10:00-11:00': '09:00-10:00-11:00' is not a time range HH:MM-HH:MM",
        ),
        ("Mon 09:00-10:00;;Tue 09:00-10:00", "window 2 is empty"),
        (";Mon 09:00-10:00", "window 1 is empty"),
        (";", "window 1 is empty"),
        ("Mon 09:00-10:00;;", "window 2 is empty"),  # only one trailing `;` is forgiven
        (
            "Mon 22:00-06:00 Mars/Olympus",
            "window 1 'Mon 22:00-06:00 Mars/Olympus': unknown time zone "
            "'Mars/Olympus' (an IANA name such as Europe/Berlin)",
        ),
        (
            "Mon 22:00-06:00 europe/berlin",
            "window 1 'Mon 22:00-06:00 europe/berlin': unknown time zone "
            "'europe/berlin' (an IANA name such as Europe/Berlin); did you mean 'Europe/Berlin'?",
        ),
        (
            "Mon 09:00-10:00 localtime",
            "window 1 'Mon 09:00-10:00 localtime': unknown time zone 'localtime' "
            "(an IANA name such as Europe/Berlin)",
        ),
        (
            "Mon 09:00-10:00 ../etc",
            "window 1 'Mon 09:00-10:00 ../etc': unknown time zone '../etc' (an IANA "
            "name such as Europe/Berlin)",
        ),
        ("Mon", "window 1 'Mon': missing the times HH:MM-HH:MM after the days"),
        (
            "09:00-10:00",
            "window 1 '09:00-10:00': missing the days before the times (*, Mon, Mon-Fri or Sat,Sun)",
        ),
        (
            "Mon Tue 09:00-10:00",
            "window 1 'Mon Tue 09:00-10:00': join the days with ',' or '-' (Mon,Tue), not a space",
        ),
        (
            "Mon 09:00-10:00 UTC extra",
            "window 1 'Mon 09:00-10:00 UTC extra': unexpected 'extra' after the time zone",
        ),
        ("Mon,,Tue 09:00-10:00", "window 1 'Mon,,Tue 09:00-10:00': empty day in 'Mon,,Tue'"),
        ("Mon- 09:00-10:00", "window 1 'Mon- 09:00-10:00': range 'Mon-' needs a first and a last day"),
        (
            "*,Sat 09:00-10:00",
            "window 1 '*,Sat 09:00-10:00': '*' cannot be combined with other days in '*,Sat'",
        ),
        (
            "Mon 09:00-10:00; Sun  25:00-01:00",
            "window 2 'Sun 25:00-01:00': start time '25:00' is not a time from 00:00 to 23:59",
        ),
    ],
)
def test_a_malformed_value_names_the_window_the_part_and_the_problem(text: str, message: str) -> None:
    with pytest.raises(WindowError) as caught:
        parse_windows(text)

    assert str(caught.value) == message
    assert isinstance(caught.value, ValueError)


@pytest.mark.parametrize(
    "change",
    [{"days": frozenset()}, {"days": frozenset({7})}, {"start": time(9, 0, 30)}, {"zone": "Nowhere/Town"}],
)
def test_a_window_built_directly_is_checked_too(change: dict[str, object]) -> None:
    with pytest.raises(ValueError):
        dataclasses.replace(Window(frozenset({MON}), time(9), time(10)), **change)


def test_windows_are_frozen_and_hashable() -> None:
    windows = parse_windows("Mon 09:00-10:00")

    with pytest.raises(dataclasses.FrozenInstanceError):
        windows.windows = ()  # type: ignore[misc]
    assert hash(windows) == hash(parse_windows("mon 9:00-10:00 UTC"))


# --- wall-clock semantics -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("spec", "at", "expected"),
    [
        # 2026-03-23 is a Monday. An end before the start belongs to the day the window opens.
        ("Mon 22:00-06:00", "2026-03-23 22:00", True),
        ("Mon 22:00-06:00", "2026-03-24 03:00", True),  # Tuesday 03:00, in Monday's window
        ("Mon 22:00-06:00", "2026-03-24 05:59:59", True),
        ("Mon 22:00-06:00", "2026-03-24 06:00", False),  # the end is exclusive
        ("Mon 22:00-06:00", "2026-03-23 03:00", False),  # Sunday's window would be needed
        ("Mon 22:00-06:00", "2026-03-24 22:00", False),  # Tuesday does not open one
        ("Sun 22:00-06:00", "2026-03-23 03:00", True),  # Sunday's window runs into Monday (week wrap)
        ("Mon 00:00-00:00", "2026-03-23 23:59:59", True),  # an end equal to the start is 24 hours
        ("Mon 00:00-00:00", "2026-03-24 00:00", False),
        ("Mon 12:00-12:00", "2026-03-24 11:59", True),
        ("* 09:00-17:00", "2026-03-28 09:00", True),
        ("* 09:00-17:00", "2026-03-28 08:59:59.999999", False),
        ("Sat,Sun 00:00-23:59", "2026-03-28 23:59", False),  # the written end is exclusive
        ("Mon-Wed,Fri 09:00-10:00", "2026-03-26 09:30", False),  # Thursday
        ("Mon-Wed,Fri 09:00-10:00", "2026-03-27 09:30", True),
        # 09:00-17:00 in Kolkata (+05:30) is 03:30-11:30 UTC; Berlin is +01:00 in March before the 29th.
        ("Mon 09:00-17:00 Asia/Kolkata", "2026-03-23 03:30", True),
        ("Mon 09:00-17:00 Asia/Kolkata", "2026-03-23 03:29", False),
        ("Mon-Fri 22:00-06:00 Europe/Berlin", "2026-03-23 21:00", True),
        ("Mon-Fri 22:00-06:00 Europe/Berlin", "2026-03-28 04:59", True),  # Saturday 05:59 local, Friday's
        ("Mon-Fri 22:00-06:00 Europe/Berlin", "2026-03-28 05:00", False),
        ("Mon 09:00-10:00 Europe/Berlin", "2026-03-23 09:30+01:00", True),  # any aware instant will do
    ],
)
def test_is_open_follows_the_local_wall_clock(spec: str, at: str, expected: bool) -> None:
    assert opened(spec, at) is expected


# Europe/Berlin 2026: spring forward Sun 29 March 02:00 CET -> 03:00 CEST (01:00 UTC),
# fall back Sun 25 October 03:00 CEST -> 02:00 CET (01:00 UTC).
# America/New_York 2026: spring forward Sun 8 March 02:00 EST -> 03:00 EDT (07:00 UTC),
# fall back Sun 1 November 02:00 EDT -> 01:00 EST (06:00 UTC).
@pytest.mark.parametrize(
    ("spec", "at", "expected"),
    [
        # A start inside the spring-forward gap opens at the first instant after the gap.
        ("Sun 02:30-04:00 Europe/Berlin", "2026-03-29 00:00", "2026-03-29 01:00"),
        ("Sun 02:30-05:00 America/New_York", "2026-03-08 00:00", "2026-03-08 07:00"),
        # A window wholly inside the gap does not open that day: the next week's does.
        ("Sun 02:15-02:45 Europe/Berlin", "2026-03-29 00:00", "2026-04-05 00:15"),
        ("Sun 02:00-03:00 America/New_York", "2026-03-08 06:00", "2026-03-15 06:00"),
        # A window crossing midnight into the gap day ends by the wall clock (03:30 CEST = 01:30 UTC).
        ("Sat 23:00-03:30 Europe/Berlin", "2026-03-28 12:00", "2026-03-28 22:00"),
        # Fall back: the repeated hour is open both times the clock shows it.
        ("Sun 02:00-02:30 Europe/Berlin", "2026-10-24 12:00", "2026-10-25 00:00"),
        ("Sun 02:00-02:30 Europe/Berlin", "2026-10-25 00:45", "2026-10-25 01:00"),  # the second 02:00
        ("Sun 01:15-01:45 America/New_York", "2026-11-01 05:50", "2026-11-01 06:15"),
        # The clock jumping back into a window opens it at the jump (wall 02:45 CEST -> 02:00 CET).
        ("Sun 01:00-02:30 Europe/Berlin", "2026-10-25 00:45", "2026-10-25 01:00"),
        # Start and end both after the transition use the new offset.
        ("Sun 09:00-10:00 Europe/Berlin", "2026-03-29 00:00", "2026-03-29 07:00"),
        ("Sun 09:00-10:00 America/New_York", "2026-11-01 00:00", "2026-11-01 14:00"),
    ],
)
def test_next_open_across_dst_changes_of_2026(spec: str, at: str, expected: str) -> None:
    assert opens(spec, at) == utc(expected)


@pytest.mark.parametrize(
    ("spec", "at", "expected"),
    [
        ("Sat 23:00-03:30 Europe/Berlin", "2026-03-29 01:29:59", True),  # 03:29:59 CEST
        ("Sat 23:00-03:30 Europe/Berlin", "2026-03-29 01:30", False),
        ("Sun 01:30-02:30 Europe/Berlin", "2026-03-29 00:59:59", True),  # 01:59:59 CET
        ("Sun 01:30-02:30 Europe/Berlin", "2026-03-29 01:00", False),  # 03:00 CEST: the gap ate the rest
        ("Sun 02:30-03:00 Europe/Berlin", "2026-10-25 00:45", True),  # 02:45 CEST
        ("Sun 02:30-03:00 Europe/Berlin", "2026-10-25 01:15", False),  # 02:15 CET
        ("Sun 02:30-03:00 Europe/Berlin", "2026-10-25 01:45", True),  # 02:45 CET
        ("Sun 01:00-02:30 America/New_York", "2026-11-01 05:59", True),  # 01:59 EDT
        ("Sun 01:00-02:30 America/New_York", "2026-11-01 06:30", True),  # 01:30 EST
        ("Sun 01:00-02:30 America/New_York", "2026-11-01 07:30", False),  # 02:30 EST
    ],
)
def test_is_open_in_the_gap_and_the_repeated_hour(spec: str, at: str, expected: bool) -> None:
    assert opened(spec, at) is expected


def test_next_open_is_at_itself_when_open_and_always_for_no_windows() -> None:
    at = utc("2026-03-23 22:30")

    assert opens("Mon 22:00-06:00", "2026-03-23 22:30") == at
    assert next_open(ALWAYS_OPEN, at) == at
    assert is_open(ALWAYS_OPEN, at)


def test_next_open_of_several_windows_is_the_earliest_in_any_zone() -> None:
    spec = "Sat 10:00-11:00 Asia/Tokyo; Sat 10:00-11:00 America/Los_Angeles; Sat 10:00-11:00"

    assert opens(spec, "2026-03-27 12:00") == utc("2026-03-28 01:00")  # 10:00 JST
    assert opens(spec, "2026-03-28 02:00") == utc("2026-03-28 10:00")  # 10:00 UTC
    assert opens(spec, "2026-03-28 11:00") == utc("2026-03-28 17:00")  # 10:00 PDT


def test_naive_instants_are_refused() -> None:
    with pytest.raises(ValueError, match="no time zone"):
        is_open(parse_windows("Mon 09:00-10:00"), datetime(2026, 3, 23, 9, 30))


def test_the_deferral_reason_names_the_next_opening_in_utc() -> None:
    windows = parse_windows("Mon-Fri 22:00-06:00 Europe/Berlin")

    assert format_deferral(windows, utc("2026-03-28 12:00")) == (
        "outside restart window; opens 2026-03-30T20:00:00Z"  # Monday 22:00 CEST
    )
    assert format_deferral(windows, utc("2026-03-30 20:00")) is None
    assert format_deferral(ALWAYS_OPEN, utc("2026-03-28 12:00")) is None


def test_every_iana_zone_opens_a_monday_window_on_a_local_monday() -> None:
    at = utc("2026-01-07 12:00")
    for name in sorted(available_timezones() - {"localtime"}):
        windows = parse_windows(f"Mon 09:00-10:00 {name}")
        opening = next_open(windows, at)

        assert opening is not None and opening >= at, name
        local = opening.astimezone(ZoneInfo(name))
        assert local.weekday() == MON and time(9) <= local.time() < time(10), (name, local)
        assert not is_open(windows, opening - timedelta(microseconds=1)), name


# --- properties ---------------------------------------------------------------------------------------

ZONES = (
    "UTC",
    "Europe/Berlin",
    "America/New_York",
    "Europe/London",
    "Australia/Lord_Howe",  # a 30-minute DST shift
    "Asia/Kolkata",
    "Asia/Kathmandu",
    "Pacific/Chatham",
    "America/St_Johns",
    "Pacific/Apia",
)
# Local midnight of the 2026 DST changes in Berlin and New York.
DST_DAYS = (
    datetime(2026, 3, 29, tzinfo=BERLIN),
    datetime(2026, 10, 25, tzinfo=BERLIN),
    datetime(2026, 3, 8, tzinfo=NEW_YORK),
    datetime(2026, 11, 1, tzinfo=NEW_YORK),
)

minutes = st.one_of(
    st.builds(time, st.integers(0, 3), st.integers(0, 59)),  # near the changes at 01:00-03:00
    st.builds(time, st.integers(0, 23), st.sampled_from([0, 15, 30, 45])),
    st.builds(time, st.integers(0, 23), st.integers(0, 59)),
)
window_values = st.builds(
    Window,
    days=st.frozensets(st.integers(0, 6), min_size=1),
    start=minutes,
    end=minutes,
    zone=st.sampled_from(ZONES),
)
window_sets = st.lists(window_values, min_size=1, max_size=3).map(lambda w: RestartWindows(tuple(w)))
instants = st.one_of(
    st.datetimes(min_value=datetime(2025, 12, 1), max_value=datetime(2027, 1, 31), timezones=st.just(UTC)),
    st.builds(
        lambda day, offset: (day + offset).astimezone(UTC),
        st.sampled_from(DST_DAYS),
        st.timedeltas(min_value=timedelta(days=-8), max_value=timedelta(days=2)),
    ),
)


@given(window_sets)
def test_the_description_parses_back_to_the_same_windows(windows: RestartWindows) -> None:
    assert parse_windows(windows.describe()) == windows


@settings(max_examples=300, deadline=None)
@given(window_sets, instants, st.lists(st.floats(0, 1, exclude_min=True, exclude_max=True), max_size=60))
@example(parse_windows("Sun 02:00-02:30 Europe/Berlin"), utc("2026-10-25 00:45"), [0.5])
@example(parse_windows("Sun 02:15-02:45 Europe/Berlin"), utc("2026-03-29 00:00"), [0.01, 0.5])
def test_next_open_is_the_first_open_instant_at_or_after_at(
    windows: RestartWindows, at: datetime, fractions: list[float]
) -> None:
    opening = next_open(windows, at)

    assert opening is not None
    assert opening >= at
    assert is_open(windows, opening)
    assert is_open(windows, at) is (opening == at)
    if opening > at:
        assert not is_open(windows, max(at, opening - timedelta(microseconds=1)))
        for fraction in fractions:
            between = at + (opening - at) * fraction
            if at < between < opening:
                assert not is_open(windows, between), between


@settings(max_examples=40, deadline=None)
@given(window_sets, instants)
def test_next_open_matches_a_minute_by_minute_scan(windows: RestartWindows, at: datetime) -> None:
    # Every window edge and every offset change of these zones lies on a whole UTC minute, so the first open
    # whole minute after `at` (or `at` itself) is the true first opening.
    expected = at
    if not is_open(windows, at):
        expected = at.replace(second=0, microsecond=0) + timedelta(minutes=1)
        while not is_open(windows, expected):
            expected += timedelta(minutes=1)

    assert next_open(windows, at) == expected


@given(window_sets, instants)
def test_a_window_crossing_midnight_belongs_to_the_day_it_opens(
    windows: RestartWindows, at: datetime
) -> None:
    for window in windows.windows:
        local = at.astimezone(window.tz)
        single = RestartWindows((window,))
        now = local.time()
        if window.crosses_midnight and now < window.end and local.weekday() not in window.days:
            # Only the previous day's window can hold this instant.
            assert is_open(single, at) is ((local.weekday() - 1) % 7 in window.days)
