"""The passes after a change, until every rollout it started is complete: what a change costs over time.

Why: a change pass alone hides most of a change's cost on a cluster with controllers. The rollouts it starts
take time; passes after it read their status (one list per namespace and kind where that is cheaper) until
they are complete and record that (a patch each). So after the change pass the bench runs passes until one
reports no rollout it watches and has nothing pending — "the first pass after all rollouts complete", which
must cost what a steady pass costs — and keeps a row per pass: requests by verb, writes, refused guarded
patches (409/422), rollouts, rollout statuses, wall, and whether the budget ran out.
"""

from __future__ import annotations

import json
import time
from collections import Counter
from collections.abc import Callable
from typing import Any

from benchmarks.harness import Measured

# Passes after the change before the bench gives up (and says so: `converged` false).
LIMIT = 15
# Seconds after a template change at which the simulator's rollout controller finishes the rollout (the
# real control plane's workloads have no replicas to roll: theirs finish within about a second).
ROLLOUT_SECONDS = 2.0


def pass_row(run: Measured, row: dict[str, Any]) -> dict[str, Any]:
    """`row` (the measured traffic) plus what the pass reported about its rollouts."""
    try:
        doc = json.loads(run.stdout)
    except ValueError:
        raise RuntimeError(f"kube-rehash exit {run.code}: {run.stderr[-2000:]}") from None
    statuses = Counter(str(w["rollout_status"]) for w in doc["workloads"] if w.get("rollout_status"))
    summary = doc["summary"]
    return {
        "wall_s": round(run.wall, 3),
        "exit": run.code,
        "requests": row["requests"],
        "by_method": row.get("by_method") or row.get("by_verb"),
        "writes": row["writes"],
        "refused": row.get("conflicts", 0),
        "rollouts": summary.get("rollout", 0),
        "pending": summary.get("deferred", 0),
        "rollout_status": dict(sorted(statuses.items())),
        "budget_exhausted": bool(doc.get("budget_exhausted")),
    }


def until_complete(
    run_pass: Callable[[], dict[str, Any]], *, pause: float, log: Any = print, label: str = ""
) -> dict[str, Any]:
    """`run_pass` (one measured pass, as `pass_row` gives it) after `pause` seconds each, until a pass
    watches no rollout and has nothing pending. Returns {"passes", "converged", "total_requests",
    "total_writes", "total_refused"}; the last pass is the first after every rollout completed."""
    passes: list[dict[str, Any]] = []
    converged = False
    for index in range(LIMIT):
        time.sleep(pause)
        row = run_pass()
        passes.append(row)
        log(
            f"  after change{label} {index + 1}: {row['requests']} requests, {row['writes']} writes, "
            f"{row['refused']} refused, {row['rollouts']} rollouts, statuses {row['rollout_status']}"
        )
        if not row["rollout_status"] and not row["rollouts"] and not row["pending"]:
            converged = True
            break
    return {
        "passes": passes,
        "converged": converged,
        "total_requests": sum(p["requests"] for p in passes),
        "total_writes": sum(p["writes"] for p in passes),
        "total_refused": sum(p["refused"] for p in passes),
    }


def after_table(change: dict[str, Any] | None, after: dict[str, Any]) -> list[str]:
    """Markdown rows: the change pass (when given) and each pass after it."""
    lines = [
        "| pass | wall (s) | requests | by verb | writes | refused (409/422) | rollouts | rollout status "
        "| budget spent |",
        "|---|---:|---:|---|---:|---:|---:|---|---|",
    ]
    rows = ([("change", change)] if change else []) + [
        (f"after {i}", p) for i, p in enumerate(after["passes"], 1)
    ]
    for label, p in rows:
        verbs = ", ".join(f"{k} {v}" for k, v in sorted((p.get("by_method") or {}).items()))
        statuses = ", ".join(f"{k} {v}" for k, v in p["rollout_status"].items()) or "—"
        lines.append(
            f"| {label} | {p['wall_s']:.2f} | {p['requests']} | {verbs} | {p['writes']} | {p['refused']} "
            f"| {p['rollouts']} | {statuses} | {'yes' if p['budget_exhausted'] else 'no'} |"
        )
    if not after["converged"]:
        lines.append(f"| (did not converge in {LIMIT} passes) | | | | | | | | |")
    return lines
