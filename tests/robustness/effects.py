"""The checks of what a pass did besides its rows: Events, Jobs, the workloads' other fields, the requests
it wrote; and the two checks that close a history (a clean pass writes nothing; every change rolled).
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from typing import Any

from tests.robustness.model import (
    SUPERSEDED,
    Expect,
    Model,
    PassSettings,
    Workload,
    annotations_of,
    expect,
    stored_hash,
)
from tests.robustness.observed import Observed, Snapshot, Violation, covered, label
from tests.robustness.servers import Write
from tests.robustness.world import HASH, PREFIX, template_hash, without_ours

WORKLOAD_RESOURCES = frozenset({"deployments", "statefulsets", "daemonsets", "cronjobs"})
OUR_PATHS = (
    "/metadata/annotations/kube-rehash.io~1",
    "/metadata/annotations",
    "/metadata/annotations/kubernetes.io~1change-cause",
)


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
    made = any(template_hash(j) == exp.current for j in mine.values())
    if claims and not made and not any(r["action"] == "failed" and "Job" in r["reason"] for r in rows):
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
    if op.get("op") == "test" or path.startswith(OUR_PATHS[0]) or path == OUR_PATHS[2]:
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
        elif not exp.notify and template_hash(obj) not in (
            exp.current,
            annotations_of(obj).get(SUPERSEDED),
            None,
        ):
            out.append(
                Violation("not-converged", label(w), f"template {template_hash(obj)} is not {exp.current}")
            )
    return out
