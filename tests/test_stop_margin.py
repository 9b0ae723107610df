"""The time budget keeps a reserve for the report, scaled down for short budgets."""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from reconcile.run import open_context
from reconcile.settings import Settings


class NoClient:
    stats: Any = None


def test_a_short_timeout_still_leaves_time_to_write() -> None:
    with ThreadPoolExecutor(1) as executor:
        ctx = open_context(Settings(timeout=3.0), NoClient(), executor, hash_key=None)  # type: ignore[arg-type]
        assert not ctx.stopping()  # a fixed 5 s reserve would stop a 3 s pass before it starts
        ctx.stop_at = time.monotonic() + 0.5  # inside the 0.6 s reserve of a 3 s budget
        assert ctx.stopping()


def test_a_long_timeout_keeps_a_five_second_reserve_and_a_signal_stops_at_once() -> None:
    with ThreadPoolExecutor(1) as executor:
        stop = threading.Event()
        ctx = open_context(Settings(timeout=240.0), NoClient(), executor, hash_key=None, stop=stop)  # type: ignore[arg-type]
        ctx.stop_at = time.monotonic() + 6
        assert not ctx.stopping()
        ctx.stop_at = time.monotonic() + 4
        assert ctx.stopping()
        ctx.stop_at = time.monotonic() + 100
        stop.set()
        assert ctx.stopping()
