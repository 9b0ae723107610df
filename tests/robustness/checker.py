"""The checker: after every pass, what the server saw against the model and against the pass's report.

A rollout is observed on the server, never taken from the report: the pod template's
`kube-rehash.io/config-hash` changed (every stored version on the simulator; before and after on the real
server). Each pass must then satisfy, for every workload of the world:

- `rolled-without-change`: a rollout only when a referenced change was due, to the current content's hash;
- `rolled-twice`: at most one rollout per change, and one report (of two passes at once) claiming it;
- `row-lies`: a landed rollout is reported `rollout` (whatever happened to its answer), a `rollout` row
  has a rollout behind it, metadata rows (`adopt`, `notify`, `refresh`) a write behind them, rows that
  write nothing (`in-sync`, `deferred`, `skipped`) none;
- `missed-change`: a due change is rolled, or deferred for a reason the settings allow, or notified in
  notify mode, or `failed` while failpoints were active, or (real server) recorded because the pods
  already run a template started after it;
- `bad-deferral`, `rows` (every opted-in workload in scope has its row, no other has one; skipped rows name
  their cause), `report` (exit code, summary counts, no traceback);
- `event`: one `ConfigChanged` Event per rollout or notification claimed; `job`: a run-on-change Job per
  CronJob rollout, from the new template;
- `foreign-change`: nothing but kube-rehash's own annotations changed on a workload (a concurrent writer's
  change is kept), and kube-rehash wrote nothing but its annotations, Events and Jobs.

The Events, Jobs, other fields and requests are checked in tests/robustness/effects.py, which also holds
the two checks that close a history.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from tests.e2e.backends import Result
from tests.robustness.effects import check_events, check_foreign, check_jobs, check_writes
from tests.robustness.model import Expect, Model, PassSettings, Workload, annotations_of, expect
from tests.robustness.observed import Observed, Violation, covered, label, rows_of
from tests.robustness.world import HASH, template_hash


def check_reports(reports: Sequence[Result]) -> list[Violation]:
    out = []
    for i, result in enumerate(reports):
        where = f"report {i}"
        if "Traceback" in result.stderr or not result.stdout.startswith("{"):
            out.append(Violation("report", where, f"exit {result.code}, no report: {result.stderr[-800:]}"))
            continue
        rows = result.report["workloads"]
        failed = any(r["action"] == "failed" for r in rows)
        if result.code != (1 if failed else 0):
            out.append(Violation("report", where, f"exit {result.code} with failed rows: {failed}"))
        summary = result.report["summary"]
        counts: dict[str, int] = {}
        for r in rows:
            counts[r["action"]] = counts.get(r["action"], 0) + 1
        wrong = {a: (summary.get(a, 0), n) for a, n in counts.items() if summary.get(a, 0) != n}
        if wrong or summary.get("workloads") != len(rows):
            out.append(Violation("report", where, f"summary {summary} against rows {counts}"))
    return out


def check_pass(model: Model, settings: PassSettings, seen: Observed) -> list[Violation]:
    """Every rule of the module docstring, for one pass."""
    out = check_reports(seen.reports)
    if out:
        return out
    out += check_writes(seen.writes)
    for w in model.workloads.values():
        if w.namespace not in model.live or (settings.scope and w.namespace not in settings.scope):
            out += check_untouched(w, seen)
            continue
        before = seen.before.workloads.get(w.key)
        if before is None:
            continue
        exp = expect(model, w, before, seen.before.sources, settings)
        out += check_workload(w, exp, settings, seen)
    return out


def check_untouched(w: Workload, seen: Observed) -> list[Violation]:
    """A workload out of the pass's scope: no row, no write."""
    out = []
    for result in seen.reports:
        if (w.shape.kind, w.namespace, w.shape.name) in rows_of(result):
            out.append(Violation("rows", label(w), "a row for a workload outside the pass's scope"))
    if any(x.landed and (x.namespace, x.name) == w.key for x in seen.writes):
        out.append(Violation("foreign-change", label(w), "written outside the pass's scope"))
    return out


def check_workload(w: Workload, exp: Expect, settings: PassSettings, seen: Observed) -> list[Violation]:
    key, where = w.key, label(w)
    before, after = seen.before.workloads[key], seen.after.workloads.get(key)
    assert before is not None
    if after is None:
        return [Violation("foreign-change", where, "the workload disappeared during the pass")]
    out, rows = check_presence(w, exp, seen)
    values = seen.templates.get(key) or [template_hash(before), template_hash(after)]
    changes = [b for a, b in itertools.pairwise(values) if b != a]
    claims = [r for r in rows if r["action"] == "rollout"]
    if changes and not (exp.due and not exp.notify and changes == [exp.current]):
        out.append(Violation("rolled-without-change", where, f"template {values} while {describe(exp)}"))
    if len(changes) > 1 or len(claims) > 1:
        out.append(Violation("rolled-twice", where, f"template {values}, rows {rows}"))
    if bool(changes) != bool(claims):
        detail = f"template {values}, rows {[(r['action'], r['reason']) for r in rows]}"
        out.append(Violation("row-lies", where, detail))
    landed = any(x.landed and x.method == "PATCH" and (x.namespace, x.name) == key for x in seen.writes)
    written = Written(
        annotations_of(before).get(HASH), annotations_of(after).get(HASH), bool(changes), landed
    )
    for row in rows:
        out += check_row(w, exp, settings, row, written, overlapped=len(seen.reports) > 1)
    out += check_missed(w, exp, settings, rows, bool(changes))
    out += check_events(w, seen, rows)
    out += check_jobs(w, exp, seen, claims, rows)
    out += check_foreign(w, before, after, seen)
    return out


def check_presence(w: Workload, exp: Expect, seen: Observed) -> tuple[list[Violation], list[dict[str, Any]]]:
    """Each report's row of the workload: there where expected (or its scope's failure row), not where
    not; a skipped row naming its cause. Returns the problems and the rows found."""
    out, rows = [], []
    for result in seen.reports:
        row = rows_of(result).get((w.shape.kind, w.namespace, w.shape.name))
        if row is None:
            if exp.row in ("skipped", "eligible") and not covered(result, w.shape.kind, w.namespace):
                out.append(Violation("rows", label(w), f"no row ({exp.row} expected)"))
            continue
        rows.append(row)
        if exp.row == "none":
            out.append(Violation("rows", label(w), f"a row for a workload not opted in: {row}"))
        elif exp.row in ("skipped", "none-or-skipped") and (
            row["action"] != "skipped" or exp.because.lower() not in row["reason"].lower()
        ):
            out.append(Violation("rows", label(w), f"expected skipped naming {exp.because!r}: {row}"))
    return out, rows


def check_missed(
    w: Workload, exp: Expect, settings: PassSettings, rows: list[dict[str, Any]], rolled: bool
) -> list[Violation]:
    """A due change not rolled: every row must say why (deferred, failed, pods newer), or notify."""
    if not exp.due or rolled or not rows:
        return []
    if exp.notify:
        told = [r for r in rows if r["action"] == "notify" or (r["action"] == "failed" and settings.faulty)]
        return (
            [] if told else [Violation("missed-change", label(w), f"not notified: {describe(exp)}; {rows}")]
        )
    if all(allowed_without_rollout(exp, settings, r) for r in rows):
        return []
    return [Violation("missed-change", label(w), f"{describe(exp)}; rows {rows}")]


@dataclass(frozen=True)
class Written:
    """What the pass wrote to one workload, as the server saw it."""

    meta_before: Any
    meta_after: Any
    rolled: bool
    landed: bool
    """A PATCH of it landed."""


def describe(exp: Expect) -> str:
    return f"expected {exp.row}, stored {exp.stored}, current {exp.current}, notify {exp.notify}"


def check_row(
    w: Workload,
    exp: Expect,
    settings: PassSettings,
    row: dict[str, Any],
    written: Written,
    *,
    overlapped: bool,
) -> list[Violation]:
    """One row against what the server saw (`overlapped`: two passes ran at once, and the other's
    report may claim what this one's re-decision found done)."""
    meta_before, meta_after, rolled, landed = (
        written.meta_before,
        written.meta_after,
        written.rolled,
        written.landed,
    )
    where, action = label(w), row["action"]
    claimed_elsewhere = overlapped
    out = []
    if action in ("adopt", "notify", "refresh") and exp.row == "eligible":
        if meta_after != exp.current or not landed:
            out.append(
                Violation("row-lies", where, f"{action} but metadata {meta_before} -> {meta_after}: {row}")
            )
        if action == "adopt" and not exp.first_sight:
            out.append(
                Violation("row-lies", where, f"adopt of a workload with a stored hash: {describe(exp)}")
            )
        if action == "notify" and not (exp.notify and exp.due):
            out.append(Violation("row-lies", where, f"notify without a due change: {describe(exp)}"))
    if action in ("rollout", "adopt", "notify", "refresh") and row.get("hash") != exp.current:
        out.append(Violation("row-lies", where, f"row hash {row.get('hash')} is not {exp.current}"))
    if (
        action in ("in-sync", "deferred", "skipped")
        and not claimed_elsewhere
        and (rolled or meta_after != meta_before)
    ):
        out.append(
            Violation(
                "row-lies", where, f"{action} but metadata {meta_before} -> {meta_after}, rolled {rolled}"
            )
        )
    if action == "skipped" and landed and not claimed_elsewhere:
        out.append(Violation("row-lies", where, f"skipped, yet written: {row}"))
    if action == "deferred" and not (exp.due and any(p in row["reason"] for p in exp.deferrals)):
        out.append(
            Violation("bad-deferral", where, f"{row['reason']!r} ({describe(exp)}, allowed {exp.deferrals})")
        )
    if action == "failed" and not settings.faulty:
        out.append(Violation("row-lies", where, f"failed without a failpoint: {row['reason']}"))
    if (
        action == "in-sync"
        and exp.row == "eligible"
        and (exp.due or exp.first_sight)
        and not claimed_elsewhere
    ):
        out.append(Violation("missed-change", where, f"in-sync while {describe(exp)}"))
    return out


def allowed_without_rollout(exp: Expect, settings: PassSettings, row: dict[str, Any]) -> bool:
    """A row that may stand for a due change left unrolled by this pass."""
    action, reason = row["action"], row["reason"]
    if action == "deferred":
        return any(p in reason for p in exp.deferrals)
    if action == "failed":
        return settings.faulty
    return action == "refresh" and exp.pods_newer and reason.startswith("pods started after")
