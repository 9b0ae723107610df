"""Fault injection: rules that make chosen requests fail, hang, drop, lose their answer, expire or race a
writer.

A rule matches requests by method, path regex, query predicate or parameter presence, and fires on
the Nth match, on every match, or with a probability drawn from a seeded RNG, up to a maximum count.
Tests use it to prove the client's retry, paging and precondition logic against real failure shapes.
"""

from __future__ import annotations

import random
import re
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

QueryPredicate = Callable[[Mapping[str, str]], bool]


@dataclass(frozen=True)
class Respond:
    """Answer with a Status error: `status` code, optional reason/message and `Retry-After` seconds."""

    status: int
    message: str | None = None
    reason: str | None = None
    retry_after: int | None = None


@dataclass(frozen=True)
class Throttle:
    """Answer 429 as kube-apiserver's API Priority and Fairness (and max-in-flight) filter does: not a
    Status but a text/plain body, with `Retry-After` seconds (checked against kube-apiserver 1.37 in
    tests/chaos_real/test_flow_control.py)."""

    retry_after: int = 1


@dataclass(frozen=True)
class Deny:
    """Refuse a write as a ValidatingAdmissionPolicy (CEL) does with `validationActions: [Deny]`: 422 Invalid
    when the validation names no `reason` (or "Invalid"), 403 for "Forbidden"; kube-apiserver's message and
    details (checked against 1.37 in tests/chaos_real/test_admission.py)."""

    policy: str
    binding: str
    message: str
    reason: str | None = None


@dataclass(frozen=True)
class Reset:
    """Close the connection without sending any response."""


@dataclass(frozen=True)
class LoseAnswer:
    """Serve the request (a write is applied), then close the connection with an RST instead of sending
    the answer: what a client sees when the server, or the network, fails after the server processed the
    request. The request log records the status it was served with and 0 bytes sent."""


@dataclass(frozen=True)
class Delay:
    """Sleep `seconds`, then serve the request normally."""

    seconds: float


@dataclass(frozen=True)
class ExpireContinue:
    """Drop every list snapshot, so this (and any) request carrying a continue token gets 410 Expired."""


@dataclass(frozen=True)
class Mutate:
    """Run `fn(store)` just before the request is served (a concurrent writer), then serve it."""

    fn: Callable[[Any], None]


Action = Respond | Throttle | Deny | Reset | LoseAnswer | Delay | ExpireContinue | Mutate


@dataclass
class FaultRule:
    """When to fire `action`.

    method: HTTP method or None for any; path: regex searched in the URL path; query: predicate over
    the query dict; param: name of a query parameter that must be present (e.g. "continue").
    nth: fire only on the Nth matching request (1-based); every: fire on every match (the default when
    neither nth nor probability is given); probability: fire with this chance (seeded RNG);
    max_count: stop after this many firings.
    """

    action: Action
    method: str | None = None
    path: str | None = None
    query: QueryPredicate | None = None
    param: str | None = None
    nth: int | None = None
    every: bool = False
    probability: float | None = None
    max_count: int | None = None
    matched: int = 0
    fired: int = 0
    _pattern: re.Pattern[str] | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        self._pattern = re.compile(self.path) if self.path else None

    def matches(self, method: str, path: str, query: Mapping[str, str]) -> bool:
        if self.method and self.method.upper() != method.upper():
            return False
        if self._pattern is not None and not self._pattern.search(path):
            return False
        if self.param is not None and self.param not in query:
            return False
        return self.query is None or self.query(query)


class Faults:
    """The active fault rules; the server asks `pick()` once per request."""

    def __init__(self, seed: int = 0) -> None:
        self._lock = threading.Lock()
        self._rules: list[FaultRule] = []
        self._rng = random.Random(seed)

    def seed(self, seed: int) -> None:
        with self._lock:
            self._rng = random.Random(seed)

    def add(self, rule: FaultRule) -> FaultRule:
        with self._lock:
            self._rules.append(rule)
        return rule

    def remove(self, rule: FaultRule) -> None:
        with self._lock:
            if rule in self._rules:
                self._rules.remove(rule)

    def clear(self) -> None:
        with self._lock:
            self._rules.clear()

    def rules(self) -> list[FaultRule]:
        with self._lock:
            return list(self._rules)

    def pick(self, method: str, path: str, query: Mapping[str, str]) -> list[Action]:
        """The actions of every rule that fires for this request, in rule order (counts updated)."""
        actions: list[Action] = []
        with self._lock:
            for rule in self._rules:
                if not rule.matches(method, path, query):
                    continue
                rule.matched += 1
                if rule.max_count is not None and rule.fired >= rule.max_count:
                    continue
                if rule.nth is not None:
                    fire = rule.matched == rule.nth or (rule.every and rule.matched > rule.nth)
                elif rule.probability is not None:
                    fire = self._rng.random() < rule.probability
                else:
                    fire = True
                if fire:
                    rule.fired += 1
                    actions.append(rule.action)
        return actions

    # Shorthands: each takes the FaultRule matching keywords (method, path, query, param, nth, every,
    # probability, max_count) and returns the added rule.

    def respond(
        self,
        status: int,
        *,
        message: str | None = None,
        reason: str | None = None,
        retry_after: int | None = None,
        **match: Any,
    ) -> FaultRule:
        return self.add(FaultRule(Respond(status, message, reason, retry_after), **match))

    def throttle(self, retry_after: int = 1, **match: Any) -> FaultRule:
        """kube-apiserver's flow-control rejection (429, text/plain, Retry-After), see `Throttle`."""
        return self.add(FaultRule(Throttle(retry_after), **match))

    def deny(
        self, policy: str, binding: str, message: str, reason: str | None = None, **match: Any
    ) -> FaultRule:
        """A ValidatingAdmissionPolicy's denial of the matched writes, see `Deny`."""
        return self.add(FaultRule(Deny(policy, binding, message, reason), **match))

    def reset_connection(self, **match: Any) -> FaultRule:
        return self.add(FaultRule(Reset(), **match))

    def lose_answer(self, **match: Any) -> FaultRule:
        """Serve the matched requests, then drop their answers (see `LoseAnswer`)."""
        return self.add(FaultRule(LoseAnswer(), **match))

    def delay(self, seconds: float, **match: Any) -> FaultRule:
        return self.add(FaultRule(Delay(seconds), **match))

    def expire_continue(self, **match: Any) -> FaultRule:
        match.setdefault("param", "continue")
        return self.add(FaultRule(ExpireContinue(), **match))

    def mutate(self, fn: Callable[[Any], None], **match: Any) -> FaultRule:
        return self.add(FaultRule(Mutate(fn), **match))
