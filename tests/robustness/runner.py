"""Running a history on a server, checking every pass, and shrinking a failing history to a minimal one.

`run_history` seeds the world, applies the steps in order (user steps to the server and the model; a
`pass` step installs its failpoints, runs the installed CLI, once or twice at once, and checks what the
server saw), then closes the history: cooldowns lifted, clean passes until one writes nothing (each
checked; the one after a pass that changed no hash must write nothing), and every change rolled.

`shrink` removes steps and failpoints while the history still fails with the same violation, and
`explain_failure` prints the minimal history as the one line to replay or pin.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from tests.e2e.backends import Result
from tests.robustness.checker import (
    Observed,
    Snapshot,
    Violation,
    check_converged,
    check_pass,
    check_steady,
)
from tests.robustness.history import TARGETS, Step, apply, dumps, seed_namespace
from tests.robustness.model import Model, PassSettings
from tests.robustness.servers import Server, SimServer
from tests.robustness.world import BY_NAME, NAMESPACES, PREFIX, SHAPES, SOURCES, template_hash, template_of

CLEAN_PASSES = 5
CLEAN: Step = {"op": "pass", "config": {"qps": 0}, "scope": [], "faults": [], "twice": False}


@dataclass
class Outcome:
    """What running a history found: its violations (empty: it passed) and what it covered."""

    violations: list[Violation] = field(default_factory=list)
    step: int | None = None
    """The step whose pass failed (len(steps) and beyond: the closing passes)."""
    passes: int = 0
    failpoints: int = 0
    rollouts: int = 0

    @property
    def failed(self) -> bool:
        return bool(self.violations)

    @property
    def code(self) -> str | None:
        return self.violations[0].code if self.violations else None


def render_config(config: dict[str, Any], now: datetime) -> dict[str, Any]:
    """The pass's config file: a restart window `open` or `closed` is made around the clock."""
    out = dict(config)
    window = out.pop("restartWindow", "")
    if window:
        start = now - timedelta(hours=1) if window == "open" else now + timedelta(hours=2)
        end = start + timedelta(hours=3 if window == "open" else 1)
        out["restartWindow"] = f"* {start:%H}:00-{end:%H}:00"
    return out


def snapshot(server: Server, model: Model) -> Snapshot:
    snap = Snapshot()
    for ns in sorted(model.live):
        for kind in sorted({s.kind for s in SHAPES}):
            for obj in server.list(f"{kind.lower()}s", ns):
                obj.setdefault("kind", kind)  # a real server's list items carry no kind
                snap.workloads[(ns, obj["metadata"]["name"])] = obj
        for resource in ("configmaps", "secrets"):
            for obj in server.list(resource, ns):
                if obj["metadata"]["name"] in SOURCES:
                    snap.sources[(ns, obj["metadata"]["name"])] = obj
        for event in server.list("events", ns):
            if (event.get("source") or {}).get("component") == "kube-rehash":
                snap.events[(ns, event["metadata"]["name"])] = event
        for job in server.list("jobs", ns):
            snap.jobs[(ns, job["metadata"]["name"])] = job
    return snap


def writer_change(spec: dict[str, Any]) -> Callable[[dict[str, Any], int], None]:
    """A concurrent writer's change, its i-th time: a label, the image, or the replicas."""
    change = spec["change"]

    def apply_change(obj: dict[str, Any], i: int) -> None:
        if change == "label":
            obj["metadata"].setdefault("labels", {})["writer"] = str(i)
        elif change == "image":
            template_of(obj)["spec"]["containers"][0]["image"] = f"writer:{i}"
        elif "replicas" in obj.get("spec", {}):
            obj["spec"]["replicas"] = 2 + i % 2

    return apply_change


@dataclass
class Failpoints:
    """The failpoints of one pass, installed on the server: `writer()` is what concurrent writers did."""

    server: Server
    specs: list[dict[str, Any]]
    rules: list[Any] = field(default_factory=list)
    threads: list[threading.Thread] = field(default_factory=list)
    done: dict[tuple[str, str], int] = field(default_factory=dict)
    stop: threading.Event = field(default_factory=threading.Event)

    def install(self) -> None:
        faults = self.server.faults
        for spec in self.specs:
            if spec["f"] == "writer":
                self.install_writer(spec)
                continue
            if spec["f"] == "expire":
                self.rules.append(faults.expire_continue(nth=spec["nth"]))
                continue
            if spec["f"] == "delay":  # every matching request, slowed: passes at once overlap for sure
                method, path = TARGETS[spec["on"]]
                self.rules.append(faults.delay(spec["seconds"], method=method, path=path))
                continue
            method, path = TARGETS[spec["on"]]
            match = {"method": method, "path": path, "nth": spec["nth"]}
            if spec["f"] == "error":
                rule = faults.respond(spec["status"], **match, every=True, max_count=spec["count"])
            elif spec["f"] == "throttle":
                rule = faults.throttle(retry_after=1, **match)
            elif spec["f"] == "reset":
                rule = faults.reset_connection(**match)
            else:
                rule = faults.lose_answer(**match)
            self.rules.append(rule)

    def install_writer(self, spec: dict[str, Any]) -> None:
        shape, ns = BY_NAME[spec["w"]], spec["ns"]
        change = writer_change(spec)
        key = (ns, shape.name)
        if isinstance(self.server, SimServer):
            store = self.server.sim.store

            def race(_store: Any) -> None:  # just before kube-rehash's PATCH of this workload
                if store.exists(shape.resource, ns, shape.name):
                    i = self.done.get(key, 0)
                    store.mutate(shape.resource, ns, shape.name, lambda obj: change(obj, i))
                    self.done[key] = i + 1

            path = f"/namespaces/{ns}/{shape.resource}/{shape.name}$"
            self.rules.append(self.server.faults.mutate(race, method="PATCH", path=path, max_count=spec["count"]))
            return

        def loop() -> None:  # the real server: a writer racing the pass in time
            for i in range(spec["count"]):
                if self.stop.wait(0.15):
                    return
                if self.server.get(shape.resource, ns, shape.name) is None:
                    return
                self.server.replace(shape.resource, ns, shape.name, lambda obj, i=i: change(obj, i))
                self.done[key] = i + 1

        thread = threading.Thread(target=loop, daemon=True)
        self.threads.append(thread)
        thread.start()

    def remove(self) -> None:
        self.stop.set()
        for thread in self.threads:
            thread.join(30)
        for rule in self.rules:
            self.server.faults.remove(rule)

    def fired(self) -> int:
        return sum(1 for r in self.rules if r.fired) + sum(1 for n in self.done.values() if n)

    def writer(self) -> dict[tuple[str, str], Callable[[dict[str, Any]], Any]]:
        out: dict[tuple[str, str], Callable[[dict[str, Any]], Any]] = {}
        for spec in self.specs:
            key = (spec["ns"], spec["w"]) if spec["f"] == "writer" else None
            if key is not None and self.done.get(key):
                last, change = self.done[key] - 1, writer_change(spec)
                out[key] = lambda obj, change=change, last=last: change(obj, last)
        return out


@contextmanager
def failpoints(server: Server, specs: list[dict[str, Any]]) -> Iterator[Failpoints]:
    installed = Failpoints(server, specs)
    installed.install()
    try:
        yield installed
    finally:
        installed.remove()


class History:
    """One history being run on one server."""

    def __init__(self, server: Server, steps: list[Step], mutant: str | None = None) -> None:
        self.server = server
        self.steps = steps
        self.mutant = mutant
        self.model = Model.initial()
        self.outcome = Outcome()
        self.reports: list[Result] = []

    def run(self) -> Outcome:
        for ns in NAMESPACES:
            seed_namespace(self.server, ns)
        for index, step in enumerate(self.steps):
            if step["op"] != "pass":
                apply(step, index, self.server, self.model)
                continue
            if self.run_pass(step, index):
                self.outcome.step = index
                return self.outcome
        self.close(len(self.steps))
        return self.outcome

    def run_pass(self, step: Step, index: int) -> bool:
        """Run and check one pass step; True when it found violations."""
        model, server = self.model, self.server
        now = datetime.now(UTC)
        config = render_config(step["config"], now)
        scope = tuple(step["scope"]) or tuple(sorted(model.live)) if server.name == "real" else tuple(step["scope"])
        settings = PassSettings(
            max_rollouts=config.get("maxRollouts"),
            window_closed=step["config"].get("restartWindow") == "closed",
            notify=config.get("onChange") == "notify",
            scope=tuple(step["scope"]),
            faulty=bool(step["faults"]),
            controllers=server.name == "real",
            at=now,
        )
        for spec in step["faults"]:  # a writer's image change may start pods newer than the content
            if spec["f"] == "writer" and spec["change"] == "image":
                model.workloads[(spec["ns"], spec["w"])].template_step = index
        before = snapshot(server, model)
        history_marks = self.history_marks(before)
        mark = server.mark()
        with failpoints(server, step["faults"]) as installed:
            runs = [server.start(config, scope, self.mutant) for _ in range(2 if step["twice"] else 1)]
            reports = [run.finish() for run in runs]
        self.reports = reports
        writer = installed.writer()
        after = snapshot(server, model)
        seen = Observed(before, after, reports, server.writes(mark), self.templates(history_marks, before, after), writer)
        self.outcome.passes += len(runs)
        self.outcome.failpoints += installed.fired()
        self.outcome.rollouts += sum(1 for r in reports if r.stdout.startswith("{") for row in r.report["workloads"] if row["action"] == "rollout")
        violations = check_pass(model, settings, seen)
        if violations:
            self.outcome.violations = violations
            return True
        return False

    def history_marks(self, before: Snapshot) -> dict[tuple[str, str], int]:
        if not isinstance(self.server, SimServer):
            return {}
        return {key: len(self.server.history(BY_NAME[key[1]].resource, *key)) for key in before.workloads}

    def templates(
        self, marks: dict[tuple[str, str], int], before: Snapshot, after: Snapshot
    ) -> dict[tuple[str, str], list[str | None]]:
        """The template hash of each version stored during the pass (the simulator keeps them all)."""
        if not isinstance(self.server, SimServer):
            return {}
        out = {}
        for key, start in marks.items():
            versions = self.server.history(BY_NAME[key[1]].resource, *key)[start:]
            out[key] = [template_hash(before.workloads[key]), *(template_hash(v) for v in versions)]
        return out

    def close(self, index: int) -> None:
        """Lift the cooldowns, then clean passes until one writes nothing; every change is then rolled."""
        for w in self.model.workloads.values():
            if w.cooldown and w.exists and w.namespace in self.model.live:
                apply({"op": "cooldown", "ns": w.namespace, "w": w.shape.name, "on": False}, index, self.server, self.model)
        quiet = False
        for n in range(CLEAN_PASSES):
            self.server.settle()
            mark = self.server.mark()
            before = snapshot(self.server, self.model)
            if self.run_pass(CLEAN, index + n):
                self.outcome.step = index + n
                return
            writes = self.server.writes(mark)
            after = snapshot(self.server, self.model)
            if not [x for x in writes if x.landed]:
                settings = PassSettings(controllers=self.server.name == "real")
                self.outcome.violations = check_converged(self.model, settings, after)
                if self.outcome.violations:
                    self.outcome.step = index + n
                return
            if quiet:
                self.outcome.violations = check_steady(writes)
                self.outcome.step = index + n
                return
            # Nothing changed and nothing is held back: the next clean pass has nothing left to write.
            pending = any(r["action"] == "deferred" for result in self.reports for r in result.report["workloads"])
            unchanged = all(same_hashes(before.workloads.get(k), o) for k, o in after.workloads.items())
            quiet = unchanged and not pending
        self.outcome.violations = [Violation("steady-writes", "closing passes", f"still writing after {CLEAN_PASSES} clean passes")]
        self.outcome.step = index + CLEAN_PASSES


def same_hashes(before: dict[str, Any] | None, after: dict[str, Any]) -> bool:
    ann = lambda o: (o or {}).get("metadata", {}).get("annotations") or {}  # noqa: E731
    key = f"{PREFIX}/config-hash"
    return template_hash(before) == template_hash(after) and ann(before).get(key) == ann(after).get(key)


def run_history(server_factory: Callable[[bool], Server], steps: list[Step], mutant: str | None = None) -> Outcome:
    server = server_factory(any(s["op"] == "wave" for s in steps))
    try:
        return History(server, steps, mutant).run()
    finally:
        server.close()


# -- shrinking -----------------------------------------------------------------------------------------------


def shrink(
    server_factory: Callable[[bool], Server], steps: list[Step], code: str, budget: float = 180.0, mutant: str | None = None
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
    for i, step in enumerate(best):
        if step["op"] != "pass":
            continue
        for simpler in simplifications(step):
            candidate = best[:i] + [simpler] + best[i + 1 :]
            if fails(candidate):
                best = candidate
                step = simpler
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
