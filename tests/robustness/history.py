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
import random
from typing import Any

from tests.robustness.model import TYPOS, Model, Workload
from tests.robustness.servers import Server
from tests.robustness.world import (
    BY_NAME,
    HASH,
    NAMESPACES,
    PREFIX,
    SHAPES,
    SOURCES,
    VALUES,
    opt_in_annotations,
    our_annotations,
    source_object,
    template_of,
    workload_object,
)

Step = dict[str, Any]

# Where a failpoint fires: method and path pattern (the simulator's FaultRule matching).
TARGETS: dict[str, tuple[str, str | None]] = {
    "list-workloads": ("GET", r"/(deployments|statefulsets|daemonsets|cronjobs)$"),
    "list-sources": ("GET", r"/(configmaps|secrets)$"),
    "get": ("GET", r"/(configmaps|secrets|deployments|statefulsets|daemonsets|cronjobs)/[^/]+$"),
    "patch": ("PATCH", None),
    "event": ("POST", r"/events$"),
    "job": ("POST", r"/jobs$"),
}
WRITERS = ("label", "image", "scale")


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


# -- the generator -------------------------------------------------------------------------------------------


def generate(rng: random.Random, backend: str, length: int) -> list[Step]:
    """A random history of `length` steps (at least two passes) for `backend` (`sim` or `real`)."""
    steps: list[Step] = [random_pass(rng, backend)] if rng.random() < 0.8 else []  # adopt, mostly
    while len(steps) < length:
        steps.append(random_pass(rng, backend) if rng.random() < 0.3 else random_user_step(rng, backend))
    passes = [i for i, s in enumerate(steps) if s["op"] == "pass"]
    for _ in range(2 - len(passes)):
        steps.insert(rng.randrange(1, len(steps) + 1), random_pass(rng, backend))
    return steps


def random_user_step(rng: random.Random, backend: str) -> Step:
    ns = rng.choice(NAMESPACES)
    src = rng.choice(list(SOURCES))
    w = rng.choice([s.name for s in SHAPES])
    image = f"app:{rng.randrange(2, 9)}"
    choices: list[tuple[int, Step]] = [
        (30, {"op": "set", "ns": ns, "src": src, "key": rng.choice(list(SOURCES[src][1])), "value": rng.choice(VALUES)}),
        (4, {"op": "set", "ns": ns, "src": src, "key": "new", "value": rng.choice(VALUES)}),
        (4, {"op": "unset", "ns": ns, "src": src, "key": rng.choice([*SOURCES[src][1], "new"])}),
        (8, {"op": "label", "ns": ns, "src": src, "value": rng.choice(VALUES)}),
        (4, {"op": "delete", "ns": ns, "src": rng.choice(["opt", "opt", "app", "extra", "db"])}),
        (4, {"op": "create", "ns": ns, "src": rng.choice(["opt", "opt", "app", "extra", "db"])}),
        (5, {"op": "spec", "ns": ns, "w": w, "image": image}),
        (5, {"op": "reapply", "ns": ns, "w": w, "strip": rng.choice(["template", "all"])}),
        (4, {"op": "sync", "ns": ns, "w": w, "src": rng.choice(["app", "flags"]), "key": rng.choice(["a", "f"]), "value": rng.choice(VALUES), "image": image}),
        (5, {"op": "opt", "ns": ns, "w": w, "state": rng.choice(["in", "out", "ignore"])}),
        (5, {"op": "typo", "ns": ns, "w": w, "typo": rng.choice([*TYPOS, None, None])}),
        (3, {"op": "cooldown", "ns": ns, "w": w, "on": rng.random() < 0.6}),
        (3, {"op": "wave", "ns": ns, "w": w, "on": rng.random() < 0.6}),
        (3, {"op": "notify", "ns": ns, "w": w, "on": rng.random() < 0.6}),
        (2 if backend == "sim" else 1, {"op": "delete-ns", "ns": ns}),
        (3 if backend == "sim" else 0, {"op": "create-ns", "ns": ns}),
    ]
    weights = [weight for weight, _ in choices]
    return dict(rng.choices([step for _, step in choices], weights)[0])


def random_pass(rng: random.Random, backend: str) -> Step:
    config: dict[str, Any] = {"qps": 0}
    if rng.random() < 0.3:
        config["maxRollouts"] = rng.choice([1, 2])
    config["fetch"] = rng.choice(["auto", "list", "get"])
    if rng.random() < 0.4:
        config["pageSize"] = rng.choice([2, 3])
    if rng.random() < 0.25:
        config["streamAbove"] = 0
    window = rng.choices(["", "open", "closed"], [75, 10, 15])[0]
    if window:
        config["restartWindow"] = window  # rendered at run time around the clock (runner.render_config)
    if rng.random() < 0.1:
        config["onChange"] = "notify"
    twice = rng.random() < 0.12
    scope = [rng.choice(NAMESPACES)] if backend == "sim" and rng.random() < 0.15 else []
    faults = [random_failpoint(rng, backend, twice) for _ in range(rng.choice([0, 0, 1, 1, 2, 3]))]
    if any(f["f"] == "expire" for f in faults):
        config["pageSize"] = 2  # the workload and source lists then have pages to expire between
    return {"op": "pass", "config": config, "scope": scope, "faults": faults, "twice": twice}


def random_failpoint(rng: random.Random, backend: str, twice: bool) -> dict[str, Any]:
    ns, w = rng.choice(NAMESPACES), rng.choice([s.name for s in SHAPES])
    writer = {"f": "writer", "ns": ns, "w": w, "change": rng.choice(WRITERS), "count": rng.choice([1, 1, 2, 4])}
    if backend == "real":
        return writer if twice or rng.random() < 0.4 else {"f": "lose", "on": "patch", "nth": rng.randrange(1, 5)}
    nth = rng.randrange(1, 6)
    # Two passes at once share the failpoints; none loses or fails a write then (docs/reliability.md,
    # "Known limits": a lost answer while an overlapping pass of the same second writes the same).
    targets = ["list-workloads", "list-sources", "get"] + ([] if twice else ["patch", "patch", "event", "job"])
    target = rng.choice(targets)
    choices = [
        {"f": "error", "on": target, "status": rng.choice([500, 503]), "nth": nth, "count": rng.choice([1, 2])},
        {"f": "throttle", "on": target, "nth": nth},
        {"f": "reset", "on": target, "nth": nth},
        {"f": "expire", "nth": rng.randrange(1, 3)},
        writer,
    ]
    if not twice:
        choices.append({"f": "lose", "on": rng.choice(["patch", "patch", "event", "get"]), "nth": nth})
    return dict(rng.choice(choices))


__all__ = ["BY_NAME", "Step", "apply", "dumps", "generate", "seed_namespace"]
