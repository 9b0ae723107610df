"""Failpoints: what a pass step's `faults` make the server do while the pass runs.

On the simulator each becomes a fault rule (rehash_simulator/faults.py): a Status error, a flow-control
429 with Retry-After, a connection reset before the request is served, an answer lost after it was served
(`LoseAnswer`: a PATCH applied, the connection dropped), a 410 between list pages, a delay, or a concurrent
writer (`Mutate`) that changes the workload just before kube-rehash's PATCH of it. On the real server the
lossy proxy's rules do the resets, lost answers and delays, and a concurrent writer is a thread racing the
pass in time. `Failpoints.writer()` is what the writers left, for the check that their change was kept.
"""

from __future__ import annotations

import functools
import threading
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from tests.robustness.servers import Server, SimServer
from tests.robustness.world import BY_NAME, template_of

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


def kind_of(spec: dict[str, Any]) -> str:
    return f"{spec['f']}-{spec['on']}" if "on" in spec and spec["f"] != "delay" else str(spec["f"])


def writer_change(spec: dict[str, Any]) -> Callable[..., None]:
    """A concurrent writer's change, its i-th time: a label, the image, or the replicas."""
    change = spec["change"]

    def apply_change(obj: dict[str, Any], *, i: int) -> None:
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
    named: list[tuple[dict[str, Any], Any]] = field(default_factory=list)
    threads: list[threading.Thread] = field(default_factory=list)
    done: dict[tuple[str, str], int] = field(default_factory=dict)
    stop: threading.Event = field(default_factory=threading.Event)

    def install(self) -> None:
        for spec in self.specs:
            before = len(self.rules)
            self.install_one(spec)
            self.named += [(spec, rule) for rule in self.rules[before:]]

    def install_one(self, spec: dict[str, Any]) -> None:
        faults, kind = self.server.faults, spec["f"]
        if kind == "writer":
            self.install_writer(spec)
            return
        if kind == "expire":
            self.rules.append(faults.expire_continue(nth=spec["nth"]))
            return
        method, path = TARGETS[spec["on"]]
        if kind == "delay":  # every matching request, slowed: passes at once overlap for sure
            self.rules.append(faults.delay(spec["seconds"], method=method, path=path))
            return
        match = {"method": method, "path": path, "nth": spec["nth"]}
        if kind == "error":
            rule = faults.respond(spec["status"], **match, every=True, max_count=spec["count"])
        elif kind == "throttle":
            rule = faults.throttle(retry_after=1, **match)
        elif kind == "reset":
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
                    store.mutate(shape.resource, ns, shape.name, functools.partial(change, i=i))
                    self.done[key] = i + 1

            path = f"/namespaces/{ns}/{shape.resource}/{shape.name}$"
            self.rules.append(
                self.server.faults.mutate(race, method="PATCH", path=path, max_count=spec["count"])
            )
            return

        def flip(obj: dict[str, Any], *, i: int) -> None:
            change(obj, i=i)

        def loop() -> None:  # the real server: a writer racing the pass in time
            for i in range(spec["count"]):
                if self.stop.wait(0.15):
                    return
                if self.server.get(shape.resource, ns, shape.name) is None:
                    return
                self.server.replace(shape.resource, ns, shape.name, functools.partial(flip, i=i))
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

    def fired(self) -> Counter[str]:
        """How many of the pass's failpoints fired, by kind (`lose-patch`, `writer`, ...)."""
        kinds: Counter[str] = Counter()
        for spec, rule in self.named:
            if rule.fired:
                kinds[kind_of(spec)] += 1
        if not isinstance(self.server, SimServer):
            kinds["writer"] += sum(1 for n in self.done.values() if n)
        return kinds

    def writer(self) -> dict[tuple[str, str], Callable[[dict[str, Any]], Any]]:
        out: dict[tuple[str, str], Callable[[dict[str, Any]], Any]] = {}
        for spec in self.specs:
            key = (spec["ns"], spec["w"]) if spec["f"] == "writer" else None
            if key is not None and self.done.get(key):
                out[key] = functools.partial(writer_change(spec), i=self.done[key] - 1)
        return out


@contextmanager
def failpoints(server: Server, specs: list[dict[str, Any]]) -> Iterator[Failpoints]:
    installed = Failpoints(server, specs)
    installed.install()
    try:
        yield installed
    finally:
        installed.remove()
