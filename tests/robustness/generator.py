"""The generator: a random history from a seed, with the failpoints each server allows.

Weights favour edits of referenced keys and passes; every other user step of tests/robustness/history.py
comes up in most histories of ten steps. Two passes at once get no failpoint that loses or fails a write
(docs/reliability.md, "Known limits"); the real server gets the failpoints it allows (lost answers through
the proxy, concurrent writers, two passes at once).
"""

from __future__ import annotations

import random
from typing import Any

from tests.robustness.failpoints import WRITERS
from tests.robustness.history import Step
from tests.robustness.model import TYPOS
from tests.robustness.world import NAMESPACES, SHAPES, SOURCES, VALUES


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
        (
            30,
            {
                "op": "set",
                "ns": ns,
                "src": src,
                "key": rng.choice(list(SOURCES[src][1])),
                "value": rng.choice(VALUES),
            },
        ),
        (4, {"op": "set", "ns": ns, "src": src, "key": "new", "value": rng.choice(VALUES)}),
        (4, {"op": "unset", "ns": ns, "src": src, "key": rng.choice([*SOURCES[src][1], "new"])}),
        (8, {"op": "label", "ns": ns, "src": src, "value": rng.choice(VALUES)}),
        (4, {"op": "delete", "ns": ns, "src": rng.choice(["opt", "opt", "app", "extra", "db"])}),
        (4, {"op": "create", "ns": ns, "src": rng.choice(["opt", "opt", "app", "extra", "db"])}),
        (5, {"op": "spec", "ns": ns, "w": w, "image": image}),
        (5, {"op": "reapply", "ns": ns, "w": w, "strip": rng.choice(["template", "all"])}),
        (
            4,
            {
                "op": "sync",
                "ns": ns,
                "w": w,
                "src": rng.choice(["app", "flags"]),
                "key": rng.choice(["a", "f"]),
                "value": rng.choice(VALUES),
                "image": image,
            },
        ),
        (5, {"op": "opt", "ns": ns, "w": w, "state": rng.choice(["in", "out", "ignore"])}),
        (5, {"op": "typo", "ns": ns, "w": w, "typo": rng.choice([*TYPOS, None, None])}),
        (3, {"op": "cooldown", "ns": ns, "w": w, "on": rng.random() < 0.6}),
        (3, {"op": "wave", "ns": ns, "w": w, "on": rng.random() < 0.6}),
        (3, {"op": "notify", "ns": ns, "w": w, "on": rng.random() < 0.6}),
        (2 if backend == "sim" else 0, {"op": "delete-ns", "ns": ns}),
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
    writer = {
        "f": "writer",
        "ns": ns,
        "w": w,
        "change": rng.choice(WRITERS),
        "count": rng.choice([1, 1, 2, 4]),
    }
    if backend == "real":
        return (
            writer
            if twice or rng.random() < 0.4
            else {"f": "lose", "on": "patch", "nth": rng.randrange(1, 5)}
        )
    nth = rng.randrange(1, 6)
    # Two passes at once share the failpoints; none loses or fails a write then (docs/reliability.md,
    # "Known limits": a lost answer while an overlapping pass of the same second writes the same).
    targets = ["list-workloads", "list-sources", "get"] + (
        [] if twice else ["patch", "patch", "event", "job"]
    )
    target = rng.choice(targets)
    choices = [
        {
            "f": "error",
            "on": target,
            "status": rng.choice([500, 503]),
            "nth": nth,
            "count": rng.choice([1, 2]),
        },
        {"f": "throttle", "on": target, "nth": nth},
        {"f": "reset", "on": target, "nth": nth},
        {"f": "expire", "nth": rng.randrange(1, 3)},
        writer,
    ]
    if not twice:
        choices.append({"f": "lose", "on": rng.choice(["patch", "patch", "event", "get"]), "nth": nth})
    return dict(rng.choice(choices))
