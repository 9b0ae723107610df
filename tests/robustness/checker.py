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

`check_steady` (a clean pass after a clean pass writes nothing) and `check_converged` (every change
rolled at the end) close a history.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from tests.e2e.backends import Result
from tests.robustness.model import (
    SUPERSEDED,
    Expect,
    Model,
    PassSettings,
    Workload,
    annotations,
    expect,
    stored_hash,
)
from tests.robustness.servers import Write
from tests.robustness.world import HASH, PREFIX, template_hash, without_ours

WORKLOAD_RESOURCES = frozenset({"deployments", "statefulsets", "daemonsets", "cronjobs"})
OUR_PATHS = ("/metadata/annotations/kube-rehash.io~1", "/metadata/annotations")


@dataclass(frozen=True)
class Violation:
    code: str
    where: str
    detail: str

    def __str__(self) -> str:
        return f"{self.code} {self.where}: {self.detail}"


@dataclass
class Snapshot:
    """Every object of the world's live namespaces, as the checker reads them (`None`: absent)."""

    workloads: dict[tuple[str, str], dict[str, Any] | None] = field(default_factory=dict)
    sources: dict[tuple[str, str], dict[str, Any] | None] = field(default_factory=dict)
    events: dict[tuple[str, str], dict[str, Any]] = field(default_factory=dict)
    jobs: dict[tuple[str, str], dict[str, Any]] = field(default_factory=dict)


@dataclass
class Observed:
    """One pass (or two at once) as the server saw it."""

    before: Snapshot
    after: Snapshot
    reports: Sequence[Result]
    writes: Sequence[Write]
    templates: dict[tuple[str, str], list[str | None]]
    """Per workload, the template hash of every version stored during the pass, the one before first."""
    writer: dict[tuple[str, str], Callable[[dict[str, Any]], Any]] = field(default_factory=dict)
    """Concurrent writers that changed a workload during the pass, and their change."""


def rows_of(result: Result) -> dict[tuple[str, str, str], dict[str, Any]]:
    return {(r["kind"], r["namespace"], r["name"]): r for r in result.report["workloads"]}


def covered(result: Result, kind: str, namespace: str) -> bool:
    """A failed scope row stands for the workloads of its scope (a list failed past its retries)."""
    return any(
        r["action"] == "failed"
        and r["name"] == "*"
        and r["kind"] in (kind, "*")
        and r["namespace"] in (namespace, "*")
        for r in result.report["workloads"]
    )


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


def label(w: Workload) -> str:
    return f"{w.shape.kind}/{w.namespace}/{w.shape.name}"


def check_workload(w: Workload, exp: Expect, settings: PassSettings, seen: Observed) -> list[Violation]:
    key, where = w.key, label(w)
    before, after = seen.before.workloads[key], seen.after.workloads.get(key)
    assert before is not None
    if after is None:
        return [Violation("foreign-change", where, "the workload disappeared during the pass")]
    rows = []
    out: list[Violation] = []
    for result in seen.reports:
        row = rows_of(result).get((w.shape.kind, w.namespace, w.shape.name))
        if row is None:
            if exp.row in ("skipped", "eligible") and not covered(result, w.shape.kind, w.namespace):
                out.append(Violation("rows", where, f"no row ({exp.row} expected)"))
            continue
        rows.append(row)
        if exp.row == "none":
            out.append(Violation("rows", where, f"a row for a workload not opted in: {row}"))
        elif exp.row in ("skipped", "none-or-skipped") and (
            row["action"] != "skipped" or exp.because.lower() not in row["reason"].lower()
        ):
            out.append(Violation("rows", where, f"expected skipped naming {exp.because!r}: {row}"))
    values = seen.templates.get(key) or [template_hash(before), template_hash(after)]
    changes = [b for a, b in zip(values, values[1:], strict=False) if b != a]
    meta_before, meta_after = annotations(before).get(HASH), annotations(after).get(HASH)
    claims = [r for r in rows if r["action"] == "rollout"]
    landed = [x for x in seen.writes if x.landed and x.method == "PATCH" and (x.namespace, x.name) == key]
    if changes and not (exp.due and not exp.notify and changes == [exp.current]):
        out.append(Violation("rolled-without-change", where, f"template {values} while {describe(exp)}"))
    if len(changes) > 1 or len(claims) > 1:
        out.append(Violation("rolled-twice", where, f"template {values}, rows {rows}"))
    if bool(changes) != bool(claims):
        detail = f"template {values}, rows {[(r['action'], r['reason']) for r in rows]}"
        out.append(Violation("row-lies", where, detail))
    for row in rows:
        out += check_row(w, exp, settings, row, (meta_before, meta_after, bool(changes), bool(landed)), seen)
    if exp.due and not changes and not exp.notify:
        allowed = [r for r in rows if allowed_without_rollout(exp, settings, r)]
        if len(allowed) != len(rows):
            out.append(Violation("missed-change", where, f"{describe(exp)}; rows {rows}"))
    if exp.due and exp.notify and rows:
        told = [r for r in rows if r["action"] == "notify" or (r["action"] == "failed" and settings.faulty)]
        if not told:
            out.append(Violation("missed-change", where, f"not notified: {describe(exp)}; rows {rows}"))
    out += check_events(w, seen, rows)
    out += check_jobs(w, exp, seen, claims, rows)
    out += check_foreign(w, before, after, seen)
    return out


def describe(exp: Expect) -> str:
    return f"expected {exp.row}, stored {exp.stored}, current {exp.current}, notify {exp.notify}"


def check_row(
    w: Workload,
    exp: Expect,
    settings: PassSettings,
    row: dict[str, Any],
    facts: tuple[Any, Any, bool, bool],
    seen: Observed,
) -> list[Violation]:
    meta_before, meta_after, rolled, landed = facts
    where, action = label(w), row["action"]
    claimed_elsewhere = len(seen.reports) > 1
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


def check_events(w: Workload, seen: Observed, rows: list[dict[str, Any]]) -> list[Violation]:
    """One ConfigChanged Event per claimed rollout or notification (fewer only where recording Events
    failed, which the report names as a failed Event scope)."""
    new = [
        e
        for k, e in seen.after.events.items()
        if k not in seen.before.events
        and k[0] == w.namespace
        and e["reason"] == "ConfigChanged"
        and (e.get("involvedObject") or {}).get("name") == w.shape.name
        and (e.get("involvedObject") or {}).get("kind") == w.shape.kind
    ]
    claimed = [r for r in rows if r["action"] in ("rollout", "notify")]
    lost = any(covered(result, "Event", w.namespace) for result in seen.reports)
    if len(new) == len(claimed) or (lost and len(new) < len(claimed)):
        return []
    messages = [e["message"] for e in new]
    return [Violation("event", label(w), f"{len(new)} ConfigChanged Events {messages} for rows {claimed}")]


def check_jobs(
    w: Workload, exp: Expect, seen: Observed, claims: list[dict[str, Any]], rows: list[dict[str, Any]]
) -> list[Violation]:
    if w.shape.kind != "CronJob":
        return []
    mine = {
        k: j
        for k, j in seen.after.jobs.items()
        if k[0] == w.namespace
        and any(o.get("name") == w.shape.name for o in j["metadata"].get("ownerReferences", []))
    }
    new = [k for k in mine if k not in seen.before.jobs]
    if len(new) > len(claims):
        return [Violation("job", label(w), f"{len(new)} Jobs created for {len(claims)} rollouts")]
    if claims and not any(template_hash(j) == exp.current for j in mine.values()):
        if not any(r["action"] == "failed" and "Job" in r["reason"] for r in rows):
            return [Violation("job", label(w), f"no run-on-change Job with the new template: {sorted(mine)}")]
    return []


def check_foreign(
    w: Workload, before: dict[str, Any], after: dict[str, Any], seen: Observed
) -> list[Violation]:
    expected = copy.deepcopy(before)
    change = seen.writer.get(w.key)
    if change is not None:
        change(expected)
    if without_ours(expected) != without_ours(after):
        return [Violation("foreign-change", label(w), f"{without_ours(expected)} -> {without_ours(after)}")]
    return []


def check_writes(writes: Sequence[Write]) -> list[Violation]:
    """kube-rehash writes only its annotations on workloads, Events and run-on-change Jobs."""
    out = []
    for x in writes:
        if x.method == "POST" and x.resource in ("events", "jobs"):
            continue
        if x.method == "PATCH" and x.resource in WORKLOAD_RESOURCES and all(ours(op) for op in x.ops or ()):
            continue
        out.append(
            Violation("foreign-change", f"{x.resource}/{x.namespace}/{x.name}", f"{x.method}: {x.ops}")
        )
    return out


def ours(op: dict[str, Any]) -> bool:
    """A JSON-patch op that only tests, or only sets kube-rehash's own annotations (or creates the map)."""
    path, value = op.get("path", ""), op.get("value")
    if op.get("op") == "test" or path.startswith(OUR_PATHS[0]):
        return True
    if path.endswith("/annotations") and isinstance(value, dict):
        return all(str(k).startswith(f"{PREFIX}/") for k in value)
    if path.endswith("/template/metadata") and isinstance(value, dict):
        return set(value) == {"annotations"} and all(str(k) == HASH for k in value["annotations"])
    return path.endswith("~1config-hash") and "/template/" in path


def check_steady(writes: Sequence[Write]) -> list[Violation]:
    landed = [x for x in writes if x.landed]
    return [
        Violation("steady-writes", f"{x.resource}/{x.namespace}/{x.name}", f"{x.method} {x.ops}")
        for x in landed
    ]


def check_converged(model: Model, settings: PassSettings, now: Snapshot) -> list[Violation]:
    """Every eligible workload's stored hash is its content's: each change was rolled (or notified)."""
    out = []
    for w in model.workloads.values():
        obj = now.workloads.get(w.key)
        if obj is None or w.namespace not in model.live:
            continue
        exp = expect(model, w, obj, now.sources, settings)
        if exp.row != "eligible":
            continue
        stored = stored_hash(obj, exp.notify)
        if stored != exp.current:
            out.append(Violation("not-converged", label(w), f"stored {stored}, current {exp.current}"))
        elif not exp.notify and template_hash(obj) not in (exp.current, annotations(obj).get(SUPERSEDED)):
            if template_hash(obj) is not None:
                out.append(
                    Violation(
                        "not-converged", label(w), f"template {template_hash(obj)} is not {exp.current}"
                    )
                )
    return out
