"""The report of a pass: the contract's JSON document and a short aligned table for people, made from the
pass's result (policy/result.py): one row per outcome.

Rows carry names of configs and hash values only, never content; the JSON shape is the contract's,
plus an `api` block (requests, retries, bytes) and `interrupted` that the contract leaves open. A row
carries `rollout_status` only when the pass read the status of an unfinished rollout of ours, and
`summary.stalled` counts the stalled ones and `summary.not-effective` the restarts that did not take effect
(extra counts: the action counts alone add up to `workloads`).
"""

from __future__ import annotations

import io
import json
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from json.encoder import encode_basestring_ascii as quote_json  # json.dumps's own C quoting
from typing import Any, TextIO, TypeVar

from reconcile.model.bookkeeping import NOT_EFFECTIVE, STALLED
from reconcile.policy.decision import Action, Deferral, Skip
from reconcile.policy.outcome import Outcome
from reconcile.policy.outcomes import OutcomeClass, Outcomes
from reconcile.policy.result import PassResult

__all__ = ["Report", "row_json", "with_status"]

ACTION_ORDER = [a.value for a in Action]
TEXT_ROWS_IN_FULL = 2000
"""Above this many rows the text table lists only the rows that are not in sync (the summary line
counts every row): a table of ten thousand in-sync workloads helps nobody reading a log."""
QUIET_ACTIONS = frozenset({Action.IN_SYNC.value})
_ROWS_MARK = "\x00rows\x00"

R = TypeVar("R", Deferral, Skip)


@dataclass(frozen=True)
class Report:
    """The report of one pass's result."""

    result: PassResult = field(default_factory=PassResult)

    @classmethod
    def of(cls, rows: Iterable[Outcome] = (), **result: Any) -> Report:
        """The report of a result with these outcomes (packed) and fields."""
        return cls(PassResult(Outcomes(rows), **result))

    @property
    def rows(self) -> Outcomes:
        return self.result.outcomes

    @property
    def dry_run(self) -> bool:
        return self.result.dry_run

    @property
    def duration(self) -> float:
        return self.result.duration

    @property
    def interrupted(self) -> bool:
        return self.result.interrupted

    @property
    def budget_exhausted(self) -> bool:
        return self.result.budget_exhausted

    @property
    def api(self) -> dict[str, Any]:
        return dict(self.result.api)

    @property
    def contents_fetched(self) -> int:
        return self.result.contents_fetched

    @property
    def budget_deferred(self) -> int:
        return self._count(lambda c: c.deferral is Deferral.BUDGET)

    @property
    def decided(self) -> int:
        """Rows the pass got to the end of (not deferred for want of time or a stop)."""
        return self._count(lambda c: c.deferral not in (Deferral.BUDGET, Deferral.STOPPED))

    def deferred_by_reason(self) -> dict[Deferral, int]:
        """Deferred rows counted by why, every reason present (0 when none)."""
        return self._count_by(Deferral, lambda c: c.deferral)

    def skipped_by_reason(self) -> dict[Skip, int]:
        """Skipped rows counted by why, every reason present (0 when none)."""
        return self._count_by(Skip, lambda c: c.skip)

    def _count_by(self, reasons: type[R], reason_of: Callable[[OutcomeClass], R | None]) -> dict[R, int]:
        """The rows counted by the reason `reason_of` finds in their class, every one of `reasons` present."""
        counts = dict.fromkeys(reasons, 0)
        for row_class, count in self.rows.classes.items():
            reason = reason_of(row_class)
            if reason is not None:
                counts[reason] += count
        return counts

    def _count(self, which: Callable[[OutcomeClass], bool]) -> int:
        """The rows of the classes `which` picks (counted as they were appended: no row is unpacked)."""
        return sum(count for row_class, count in self.rows.classes.items() if which(row_class))

    def sorted_rows(self) -> Iterator[Outcome]:
        """The rows by namespace, kind and name (`Outcomes.sorted`)."""
        return self.rows.sorted()

    def summary(self) -> dict[str, int]:
        """Counts derived from the rows alone, so they always add up: `workloads` is the number of rows
        (a scope that could not be read or was not reached is one row, named `*`), and each row counts
        once under its action; `stalled` and `not-effective`, extra counts, are the rows whose rollout of
        ours stalled, and whose restart did not take effect by its deadline."""
        counts = {"workloads": len(self.rows)}
        counts.update(dict.fromkeys(ACTION_ORDER, 0))
        stalled = not_effective = 0
        for row_class, count in self.rows.classes.items():
            counts[row_class.action] += count
            stalled += count if row_class.stalled else 0
            not_effective += count if row_class.not_effective else 0
        counts[STALLED] = stalled
        counts[NOT_EFFECTIVE] = not_effective
        return counts

    @property
    def failed(self) -> bool:
        return self._count(lambda c: c.action == Action.FAILED.value) > 0

    @property
    def stalled(self) -> bool:
        return self._count(lambda c: c.stalled) > 0

    @property
    def pending_rollouts(self) -> bool:
        return self._count(lambda c: c.action == Action.ROLLOUT.value) > 0

    def to_json(self) -> dict[str, Any]:
        return {**self.head_json(), "workloads": [row_json(r) for r in self.sorted_rows()]}

    def head_json(self) -> dict[str, Any]:
        """The document without its rows, in the contract's key order (`workloads` where the rows go)."""
        return {
            "dry_run": self.dry_run,
            "summary": self.summary(),
            "workloads": [],
            "interrupted": self.interrupted,
            "budget_exhausted": self.budget_exhausted,
            "budget_deferred": self.budget_deferred,
            "duration_seconds": round(self.duration, 3),
            "configs_fetched": self.contents_fetched,
            "api": self.api,
            "foreign_annotations": dict(self.result.foreign_annotations),
        }

    def write_json(self, out: TextIO) -> None:
        """The JSON document (the same text as `json.dumps(to_json(), indent=2)`), written row by row so
        a pass over ten thousand workloads never holds their rows as one string or as dicts."""
        head = self.head_json()
        if not self.rows:
            out.write(json.dumps(head, indent=2))
            return
        head["workloads"] = [_ROWS_MARK]
        before, _, after = json.dumps(head, indent=2).partition(json.dumps(_ROWS_MARK))
        out.write(before)
        for i, row in enumerate(self.sorted_rows()):
            if i:
                out.write(",\n    ")
            out.write(indented_row(row_json(row)))
        out.write(after)

    def render_json(self) -> str:
        text = io.StringIO()
        self.write_json(text)
        return text.getvalue()

    def render_text(self) -> str:
        """An aligned table of the workloads (beyond `TEXT_ROWS_IN_FULL`, only those not in sync), then
        a summary line."""
        header = ("ACTION", "KIND", "NAMESPACE", "NAME", "REASON")
        shown = list(self.sorted_rows())
        lines = []
        if len(shown) > TEXT_ROWS_IN_FULL:
            shown = [r for r in shown if r.action not in QUIET_ACTIONS]
            quiet = len(self.rows) - len(shown)
            lines.append(f"{quiet} workloads in sync are not listed (-o json lists all)")
        rows = [(r.action, r.kind, r.namespace, r.name, with_status(r)) for r in shown]
        if rows:
            widths = [max(len(row[i]) for row in [header, *rows]) for i in range(4)]
            for row in [header, *rows]:
                cells = [row[i].ljust(widths[i]) for i in range(4)]
                lines.append("  ".join([*cells, row[4]]).rstrip())
        lines.append(self.summary_line())
        return "\n".join(lines)

    def summary_line(self) -> str:
        """E.g. `3 workloads: 2 rollout, 1 in-sync; 1 scope failed in 0.42s`: workloads and scopes (a kind
        or namespace not listed, the rows named `*`) counted apart, though the JSON summary counts both."""
        counts = self.summary()
        scopes: Counter[str] = Counter()
        for row_class, count in self.rows.classes.items():
            if row_class.scope:
                scopes[row_class.action] += count
        workloads = counts["workloads"] - sum(scopes.values())
        parts = [f"{counts[a] - scopes[a]} {a}" for a in ACTION_ORDER if counts[a] - scopes[a]]
        stalled = f" ({plural(counts[STALLED], 'rollout')} stalled)" if counts[STALLED] else ""
        if counts[NOT_EFFECTIVE]:
            stalled += f" ({plural(counts[NOT_EFFECTIVE], 'restart')} not effective)"
        mode = " (dry run: nothing written)" if self.dry_run else ""
        if self.result.server_dry_run:
            mode = " (server dry run: writes checked by the server with dryRun=All, none persisted)"
        cut = " (interrupted: the next pass finishes the rest)" if self.interrupted else ""
        if self.budget_exhausted and not self.interrupted:
            cut = f" (time budget spent: {self.budget_deferred} deferred to the next pass)"
        head = plural(workloads, "workload")
        if parts:
            head += ": " + ", ".join(parts)
        elif not scopes:
            head += ": nothing to do"
        scope_parts = [f"{plural(scopes[a], 'scope')} {a}" for a in ACTION_ORDER if scopes[a]]
        if scope_parts:
            head += "; " + ", ".join(scope_parts)
        return f"{head}{stalled}{mode}{cut} in {self.duration:.2f}s"


def indented_row(doc: dict[str, Any]) -> str:
    """`json.dumps(doc, indent=2)` as a row of the document (every line after the first indented four more
    spaces), the same text, written without `json.dumps`'s pure-Python indenting encoder, which cost a
    tenth of a 10,000-workload steady pass. A row's values are scalars and lists of strings; any other
    shape goes through `json.dumps`."""
    lines = []
    for key, value in doc.items():
        if key.__class__ is not str:
            return json.dumps(doc, indent=2).replace("\n", "\n    ")
        if value.__class__ is list:
            if not all(v.__class__ is str for v in value):
                return json.dumps(doc, indent=2).replace("\n", "\n    ")
            items = ",\n        ".join(map(quote_json, value))
            text = f"[\n        {items}\n      ]" if value else "[]"
        elif isinstance(value, (dict, list, tuple)):
            return json.dumps(doc, indent=2).replace("\n", "\n    ")
        else:
            text = scalar_json(value)
        lines.append(f"      {quote_json(key)}: {text}")
    return "{\n" + ",\n".join(lines) + "\n    }" if lines else "{}"


def scalar_json(value: object) -> str:
    """`json.dumps(value)` of a scalar; strings, None and booleans without its dispatch."""
    if value.__class__ is str:
        return quote_json(value)
    if value is None:
        return "null"
    if value is True or value is False:
        return "true" if value else "false"
    return json.dumps(value)


def plural(count: int, noun: str) -> str:
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"


def row_json(outcome: Outcome) -> dict[str, Any]:
    """The report's row of one outcome (`rollout_status` only where the pass read it)."""
    doc: dict[str, Any] = {
        "kind": outcome.kind,
        "namespace": outcome.namespace,
        "name": outcome.name,
        "action": outcome.action,
        "reason": outcome.reason,
        "configs": list(outcome.configs),
        "hash": outcome.hash,
        "previous": outcome.previous,
    }
    if outcome.rollout_status is not None:
        doc["rollout_status"] = outcome.rollout_status
    return doc


def with_status(row: Outcome) -> str:
    """The reason, plus the rollout status when one was read (`...; rollout stalled`)."""
    return f"{row.reason}; rollout {row.rollout_status}" if row.rollout_status else row.reason
