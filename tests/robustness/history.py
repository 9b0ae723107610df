"""Histories: what users and controllers do between passes, the passes and their failpoints, as data.

A history is a list of steps, each a small JSON object, so a failing one prints as one line that a test
replays (`ROBUSTNESS_REPLAY`) or pins (tests/robustness/regressions.json), and shrinks by dropping steps.
`generate` draws one from a seed; `apply` carries a user step out on a server and in the model (a step that
no longer applies, e.g. once shrinking removed what it needed, is skipped, so every sub-history replays).

User steps: `set`/`unset` a data key (referenced or not: the model knows which), `label` (metadata only),
`delete`/`create` a source (optional or required), `spec` (a pod template change), `reapply` (a GitOps
re-apply that strips kube-rehash's annotations: of the template, or all), `sync` (a template and a
ConfigMap changed together), `delete-ns`/`create-ns`, `opt` (in, out, ignore), `typo` (a malformed or
misspelled annotation, and its fix), `cooldown`, `wave`, `notify`. A `pass` step carries its settings,
scope, failpoints and whether two passes start at once.
"""

from __future__ import annotations

import json
from typing import Any

from tests.robustness.model import TYPOS, Model, Workload
from tests.robustness.servers import Server
from tests.robustness.world import (
    HASH,
    PREFIX,
    SHAPES,
    SOURCES,
    opt_in_annotations,
    our_annotations,
    source_object,
    template_of,
    workload_object,
)

Step = dict[str, Any]


def dumps(history: list[Step]) -> str:
    return json.dumps(history, separators=(",", ":"), sort_keys=True)


# -- the world's setup ---------------------------------------------------------------------------------------


def seed_namespace(server: Server, namespace: str) -> None:
    for name, (_, data) in SOURCES.items():
        server.create(source_object(name, namespace, dict(data)))
    for shape in SHAPES:
        server.create(workload_object(shape, namespace))


# -- user steps ----------------------------------------------------------------------------------------------


def data_of(server: Server, namespace: str, source: str) -> dict[str, str] | None:
    resource = f"{SOURCES[source][0]}s"
    obj = server.get(resource, namespace, source)
    if obj is None:
        return None
    return dict(obj.get("data") or {})


def apply(step: Step, index: int, server: Server, model: Model) -> bool:
    """Carry out a user step; False when it does not apply to the world as it now is (skipped)."""
    op = step["op"]
    if op in ("delete-ns", "create-ns"):
        return apply_namespace(step, index, server, model)
    if step["ns"] not in model.live:
        return False
    if "src" in step and op != "sync":
        return apply_source(step, index, server, model)
    w = model.workloads[(step["ns"], step["w"])]
    if not w.exists:
        return False
    if op == "sync":
        if not apply_source({**step, "op": "set"}, index, server, model):
            return False
        return apply_template(w, index, server, step["image"])
    if op == "spec":
        return apply_template(w, index, server, step["image"])
    if op == "reapply":
        return apply_reapply(w, index, server, step["strip"])
    return apply_annotations(step, w, server)


def apply_source(step: Step, index: int, server: Server, model: Model) -> bool:
    op, ns, src = step["op"], step["ns"], step["src"]
    kind = SOURCES[src][0]
    resource, field = f"{kind}s", ("stringData" if kind == "secret" else "data")
    data = data_of(server, ns, src)
    if op == "create":
        if data is not None:
            return False
        server.create(source_object(src, ns, dict(SOURCES[src][1])))
    elif data is None:
        return False
    elif op == "delete":
        server.delete(resource, ns, src)
    elif op == "set":
        server.merge(resource, ns, src, {field: {step["key"]: step["value"]}})
    elif op == "unset":
        if step["key"] not in data or len(data) == 1:
            return False
        server.merge(resource, ns, src, {"data": {step["key"]: None}})
    elif op == "label":
        meta = {"labels": {"touched": step["value"]}, "annotations": {"note": step["value"]}}
        server.merge(resource, ns, src, {"metadata": meta})
        return True
    if data_of(server, ns, src) != data:
        model.content_step[(ns, src)] = index
    return True


def apply_template(w: Workload, index: int, server: Server, image: str) -> bool:
    def change(obj: dict[str, Any]) -> None:
        template_of(obj)["spec"]["containers"][0]["image"] = image

    server.replace(w.shape.resource, w.namespace, w.shape.name, change)
    w.template_step = index
    return True


def apply_reapply(w: Workload, index: int, server: Server, strip: str) -> bool:
    """A GitOps tool puts its manifest back: kube-rehash's annotations go (the user's stay)."""

    def change(obj: dict[str, Any]) -> None:
        template = template_of(obj).get("metadata") or {}
        if (template.get("annotations") or {}).pop(HASH, None) is not None:
            w.template_step = index
        if strip == "all":
            meta = obj["metadata"].get("annotations") or {}
            for key in our_annotations(obj):
                meta.pop(key, None)

    server.replace(w.shape.resource, w.namespace, w.shape.name, change)
    return True


def apply_annotations(step: Step, w: Workload, server: Server) -> bool:
    op = step["op"]
    changes: dict[str, str | None] = {}
    if op == "opt":
        if w.typo is not None or step["state"] == w.opted:
            return False
        changes = {f"{PREFIX}/watch": None if step["state"] == "out" else "true"}
        changes[f"{PREFIX}/ignore"] = "true" if step["state"] == "ignore" else None
        w.opted = step["state"]
    elif op == "typo":
        if w.opted != "in" or (step["typo"] is None) == (w.typo is None):
            return False
        changes = typo_changes(w, step["typo"])
        w.typo = step["typo"]
    else:
        key, value, attr = {
            "cooldown": (f"{PREFIX}/min-interval", "1h", "cooldown"),
            "wave": (f"{PREFIX}/wave", "1", "wave"),
            "notify": (f"{PREFIX}/on-change", "notify", "notify"),
        }[op]
        if getattr(w, attr) == step["on"] or (w.typo in ("min-interval", "wave") and op != "notify"):
            return False
        changes = {key: value if step["on"] else None}
        setattr(w, attr, step["on"])
    server.merge(w.shape.resource, w.namespace, w.shape.name, {"metadata": {"annotations": changes}})
    return True


def typo_changes(w: Workload, typo: str | None) -> dict[str, str | None]:
    """The annotations a typo sets (or its fix restores)."""
    name = typo or w.typo
    assert name is not None
    key, value, _ = TYPOS[name]
    if typo is None:  # the fix: what the workload's manifest and state say
        proper = opt_in_annotations(w.shape).get(key)
        fixed: dict[str, str | None] = {key: proper}
        if name == "watch-key":
            fixed[f"{PREFIX}/watch"] = "true"
        if name == "min-interval" and w.cooldown:
            fixed[key] = "1h"
        if name == "wave" and w.wave:
            fixed[key] = "1"
        return fixed
    broken: dict[str, str | None] = {key: value}
    if name == "watch-key":
        broken[f"{PREFIX}/watch"] = None
    return broken


def apply_namespace(step: Step, index: int, server: Server, model: Model) -> bool:
    ns = step["ns"]
    if step["op"] == "delete-ns":
        if ns not in model.live:
            return False
        server.delete_namespace(ns)
        model.live.discard(ns)
        for w in model.workloads.values():
            if w.namespace == ns:
                w.exists = False
        return True
    if ns in model.live:
        return False
    seed_namespace(server, ns)
    model.live.add(ns)
    for shape in SHAPES:
        model.workloads[(ns, shape.name)] = Workload(ns, shape)
    for src in SOURCES:
        model.content_step[(ns, src)] = index
    return True
