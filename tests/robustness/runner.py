"""Running a history on a server and checking every pass.

`run_history` seeds the world, applies the steps in order (user steps to the server and the model; a
`pass` step installs its failpoints, runs the installed CLI, once or twice at once, and checks what the
server saw), then closes the history: cooldowns lifted, clean passes until one writes nothing (each
checked; one after a pass that changed nothing and held nothing back must write nothing), and every change
rolled.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from tests.e2e.backends import Result
from tests.robustness.checker import check_pass
from tests.robustness.effects import check_converged, check_steady
from tests.robustness.failpoints import failpoints
from tests.robustness.history import Step, apply, seed_namespace
from tests.robustness.model import Model, PassSettings, annotations_of
from tests.robustness.observed import Observed, Snapshot, Violation
from tests.robustness.servers import Server, SimServer
from tests.robustness.world import BY_NAME, HASH, NAMESPACES, SHAPES, SOURCES, template_hash

CLEAN_PASSES = 5
CLEAN: Step = {"op": "pass", "config": {"qps": 0}, "scope": [], "faults": [], "twice": False}


@dataclass
class Outcome:
    """What running a history found: its violations (empty: it passed) and what it covered."""

    violations: list[Violation] = field(default_factory=list)
    step: int | None = None
    """The step whose pass failed (len(steps) and beyond: the closing passes)."""
    passes: int = 0
    failpoints: Counter[str] = field(default_factory=Counter)
    """Failpoints that fired, by kind (two passes at once: `twice`)."""
    steps: int = 0
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
            for obj in server.items(f"{kind.lower()}s", ns):
                obj.setdefault("kind", kind)  # a real server's list items carry no kind
                snap.workloads[(ns, obj["metadata"]["name"])] = obj
        for resource in ("configmaps", "secrets"):
            for obj in server.items(resource, ns):
                if obj["metadata"]["name"] in SOURCES:
                    snap.sources[(ns, obj["metadata"]["name"])] = obj
        for event in server.items("events", ns):
            reporter = event.get("reportingComponent") or (event.get("source") or {}).get("component")
            if reporter == "kube-rehash":  # events.k8s.io/v1 Events read in the core shape, or core ones
                snap.events[(ns, event["metadata"]["name"])] = event
        for job in server.items("jobs", ns):
            snap.jobs[(ns, job["metadata"]["name"])] = job
    return snap


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
            self.outcome.steps += 1
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
        scope = (
            tuple(step["scope"]) or tuple(sorted(model.live))
            if server.name == "real"
            else tuple(step["scope"])
        )
        settings = pass_settings(step, config, server.name == "real", now)
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
        seen = Observed(
            before, after, reports, server.writes(mark), self.templates(history_marks, before, after), writer
        )
        self.outcome.passes += len(runs)
        self.outcome.failpoints += installed.fired()
        if step["twice"]:
            self.outcome.failpoints["twice"] += 1
        self.outcome.rollouts += sum(rollout_rows(r) for r in reports)
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
                apply(
                    {"op": "cooldown", "ns": w.namespace, "w": w.shape.name, "on": False},
                    index,
                    self.server,
                    self.model,
                )
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
            pending = any(
                r["action"] == "deferred" for result in self.reports for r in result.report["workloads"]
            )
            unchanged = all(same_hashes(before.workloads.get(k), o) for k, o in after.workloads.items())
            quiet = unchanged and not pending
        self.outcome.violations = [
            Violation("steady-writes", "closing passes", f"still writing after {CLEAN_PASSES} clean passes")
        ]
        self.outcome.step = index + CLEAN_PASSES


def pass_settings(step: Step, config: dict[str, Any], real: bool, now: datetime) -> PassSettings:
    """What the model needs of a pass step's settings (`config`: its config file as rendered)."""
    return PassSettings(
        max_rollouts=config.get("maxRollouts"),
        window_closed=step["config"].get("restartWindow") == "closed",
        notify=config.get("onChange") == "notify",
        scope=tuple(step["scope"]),
        faulty=bool(step["faults"]),
        controllers=real,
        at=now,
    )


def rollout_rows(result: Result) -> int:
    if not result.stdout.startswith("{"):
        return 0
    return sum(1 for row in result.report["workloads"] if row["action"] == "rollout")


def same_hashes(before: dict[str, Any] | None, after: dict[str, Any] | None) -> bool:
    """Neither the template's nor the metadata's hash differs."""
    meta = annotations_of(before).get(HASH), annotations_of(after).get(HASH)
    return template_hash(before) == template_hash(after) and meta[0] == meta[1]


def run_history(
    server_factory: Callable[[bool], Server], steps: list[Step], mutant: str | None = None
) -> Outcome:
    server = server_factory(any(s["op"] == "wave" for s in steps))
    try:
        return History(server, steps, mutant).run()
    finally:
        server.close()
