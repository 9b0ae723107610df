"""The one time budget of a pass, shared by listing, reading and writing.

A pass must end within `timeout` + 5 s whatever the cluster size and request rate, and must leave
durable progress (its writes) behind. So every request asks the budget first (`admit`, wired into the
API client as its gate): reads may start until a reserve before the end, kept for the writes of the
batch being read; writes may start until the end; no request starts after it, and every request
started must be over by `end + GRACE` (its timeout and retries are cut to that). A SIGTERM stops new
requests of any kind at once, and in-flight ones finish.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from reconcile.errors import BudgetExhausted, Stopped

# Seconds past the budget that a request started in time may still take (its timeout is cut to this);
# a pass ends within timeout + 5 s, with half a second left for its report.
GRACE = 4.5
# Time kept at the end of the budget for the writes of the batch being read: this many seconds, but
# never more than this share of the budget, so a short --timeout still leaves time to read.
WRITE_RESERVE = 10.0
WRITE_RESERVE_SHARE = 0.2
WRITE_VERBS = frozenset({"patch", "create", "update", "delete"})


@dataclass
class Budget:
    """Deadlines of one pass, measured on `clock` from the moment the budget is made."""

    timeout: float
    stop: threading.Event = field(default_factory=threading.Event)
    clock: Callable[[], float] = time.monotonic
    started: float = field(init=False)
    exhausted: bool = field(init=False, default=False)
    """Set once a request was refused for want of time: the report says so."""
    held: float = field(init=False, default=0.0)
    """Seconds at the end kept from the pass's pending work for its rollout-health checks
    (policy.priority): while held, reads and writes stop that much earlier; `release` gives them back."""

    def __post_init__(self) -> None:
        self.started = self.clock()

    @property
    def end(self) -> float:
        return self.started + self.timeout

    @property
    def reserve(self) -> float:
        return min(WRITE_RESERVE, self.timeout * WRITE_RESERVE_SHARE)

    def elapsed(self) -> float:
        return self.clock() - self.started

    def remaining(self) -> float:
        return self.end - self.clock()

    def may_read(self) -> bool:
        return not self.stop.is_set() and self.clock() < self.end - self.reserve - self.held

    def may_write(self) -> bool:
        return not self.stop.is_set() and self.clock() < self.end - self.held

    def hold(self, seconds: float) -> None:
        self.held = max(0.0, seconds)

    def release(self) -> None:
        self.held = 0.0

    def admit(self, verb: str) -> float:
        """The client's gate: the time by which a request of `verb` must be over, or PassCut."""
        if self.stop.is_set():
            raise Stopped("the pass was asked to stop (SIGTERM); no new request is started")
        allowed = self.may_write() if verb in WRITE_VERBS else self.may_read()
        if not allowed:
            self.exhausted = True
            what = "write" if verb in WRITE_VERBS else "read"
            raise BudgetExhausted(f"pass budget: no time left for another {what} (timeout {self.timeout:g}s)")
        return self.end + GRACE
