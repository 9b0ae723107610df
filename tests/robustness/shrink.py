"""Shrinking: a failing history made as short and plain as it goes while it still fails the same way,
and the one line that replays it.

Steps are dropped in halves, then quarters, down to one at a time (delta debugging); then each pass loses
its failpoints, its second concurrent pass, its settings and its scope one by one. A candidate counts as
failing only with the same first violation code, within a time budget.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator

from tests.robustness.history import Step, dumps
from tests.robustness.runner import Outcome, run_history
from tests.robustness.servers import Server


def shrink(
    server_factory: Callable[[bool], Server],
    steps: list[Step],
    code: str,
    budget: float = 180.0,
    mutant: str | None = None,
) -> list[Step]:
    """A shorter history that still fails with violation `code`: steps dropped (halves, then one by one),
    then each pass's failpoints and settings dropped, while time remains."""
    deadline = time.monotonic() + budget

    def fails(candidate: list[Step]) -> bool:
        if time.monotonic() > deadline:
            return False
        return run_history(server_factory, candidate, mutant).code == code

    best = list(steps)
    chunk = max(1, len(best) // 2)
    while chunk >= 1 and time.monotonic() < deadline:
        i, progressed = 0, False
        while i < len(best):
            candidate = best[:i] + best[i + chunk :]
            if candidate and fails(candidate):
                best, progressed = candidate, True
            else:
                i += chunk
        if not progressed:
            chunk //= 2
    for i in range(len(best)):
        progressed = best[i]["op"] == "pass"
        while progressed:  # one simplification at a time, each kept only while the failure stays
            progressed = False
            for simpler in simplifications(best[i]):
                candidate = [*best[:i], simpler, *best[i + 1 :]]
                if fails(candidate):
                    best, progressed = candidate, True
                    break
    return best


def simplifications(step: Step) -> Iterator[Step]:
    for j in range(len(step["faults"])):
        yield {**step, "faults": step["faults"][:j] + step["faults"][j + 1 :]}
    if step["twice"]:
        yield {**step, "twice": False}
    for key in [k for k in step["config"] if k != "qps"]:
        yield {**step, "config": {k: v for k, v in step["config"].items() if k != key}}
    if step["scope"]:
        yield {**step, "scope": []}


def explain_failure(seed: int | None, steps: list[Step], outcome: Outcome, backend: str) -> str:
    violations = "\n".join(f"  {v}" for v in outcome.violations[:8])
    return (
        f"history (seed {seed}) failed on {backend} at step {outcome.step}:\n{violations}\n"
        f"replay it: .venv/bin/python -m tests.robustness replay '{dumps(steps)}'\n"
        'pin it: add {"name": ..., "why": ..., "servers": ["sim"], "steps": <that list>} to '
        "tests/robustness/regressions.json"
    )
