"""The two servers a history runs on, behind one interface: the API simulator and the real control plane.

Why an interface of its own rather than tests/e2e's `Backend`: a history needs what the checker observes
independently of kube-rehash's report, the same way on both: every object of the world, kube-rehash's own
write requests since a mark (the simulator's request log; the audit log of kube-rehash's ServiceAccount on
the real server), passes started in parallel, the CLI run under a mutant (tests/robustness/mutants.py),
and each server's failpoints (the simulator's fault rules; on the real server a lossy proxy's rules,
concurrent writers and overlapping passes). Here: the interface and the simulator; the real control
plane is tests/robustness/real.py.
"""

from __future__ import annotations

import json
import secrets
import subprocess
import sys
import time
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from rehash_simulator import Simulator
from rehash_simulator.faults import Faults
from tests.e2e.backends import CLI, Result, clean_env

API = {
    "configmaps": "/api/v1",
    "secrets": "/api/v1",
    "events": "/api/v1",
    "deployments": "/apis/apps/v1",
    "statefulsets": "/apis/apps/v1",
    "daemonsets": "/apis/apps/v1",
    "cronjobs": "/apis/batch/v1",
    "jobs": "/apis/batch/v1",
}
ROOT = Path(__file__).resolve().parents[2]


@dataclass(frozen=True)
class Write:
    """One write request kube-rehash made: method, the object's resource/namespace/name (name "" for a
    create), the status the server served it with, and the JSON-patch ops it sent where known."""

    method: str
    resource: str
    namespace: str
    name: str
    status: int
    ops: tuple[dict[str, Any], ...] | None = None

    @property
    def landed(self) -> bool:
        return 200 <= self.status < 300


def parse_path(path: str) -> tuple[str, str, str]:
    """(resource, namespace, name) of an API path (name "" for a collection)."""
    parts = [p for p in path.split("/") if p]
    if "namespaces" not in parts:
        return (parts[-1] if parts else "", "", "")
    at = parts.index("namespaces")
    rest = parts[at + 1 :]
    namespace = rest[0] if rest else ""
    resource = rest[1] if len(rest) > 1 else "namespaces"
    name = rest[2] if len(rest) > 2 else ""
    return resource, namespace, name


class Pass:
    """A CLI pass started in the background: `finish()` waits for it and returns its Result."""

    def __init__(self, proc: subprocess.Popen[str], back: Callable[[str], str]) -> None:
        self.proc = proc
        self.back = back

    def finish(self, timeout: float = 180.0) -> Result:
        stdout, stderr = self.proc.communicate(timeout=timeout)
        return Result(self.proc.returncode, self.back(stdout), self.back(stderr))


class Server(ABC):
    """What a history does to a server and observes of it. Namespaces are the history's own names."""

    name: str
    tmp: Path

    # objects
    @abstractmethod
    def create(self, obj: dict[str, Any]) -> None: ...

    @abstractmethod
    def get(self, resource: str, namespace: str, name: str) -> dict[str, Any] | None: ...

    @abstractmethod
    def items(self, resource: str, namespace: str) -> list[dict[str, Any]]: ...

    @abstractmethod
    def merge(self, resource: str, namespace: str, name: str, patch: dict[str, Any]) -> None: ...

    @abstractmethod
    def replace(
        self, resource: str, namespace: str, name: str, change: Callable[[dict[str, Any]], Any]
    ) -> None:
        """Read, change in place, write back whole (a PUT, as an apply tool or an editor does)."""

    @abstractmethod
    def delete(self, resource: str, namespace: str, name: str) -> None: ...

    @abstractmethod
    def delete_namespace(self, namespace: str) -> None:
        """Delete a namespace and wait until its objects are gone."""

    # kube-rehash's requests
    @abstractmethod
    def mark(self) -> int: ...

    @abstractmethod
    def writes(self, since: int) -> list[Write]: ...

    # the CLI
    @abstractmethod
    def start(self, config: dict[str, Any], scope: tuple[str, ...], mutant: str | None) -> Pass: ...

    def program(self, mutant: str | None) -> tuple[list[str], dict[str, str]]:
        """The CLI's argv head and environment: the installed console script, or the mutant wrapper."""
        if mutant is None:
            return [CLI], clean_env()
        env = clean_env({"ROBUSTNESS_MUTANT": mutant, "PYTHONPATH": str(ROOT)})
        return [sys.executable, "-m", "tests.robustness.mutants"], env

    def write_config(self, config: dict[str, Any]) -> Path:
        path = self.tmp / f"config-{secrets.token_hex(3)}.yaml"
        path.write_text(yaml.safe_dump(config))
        return path

    # failpoints and controllers
    @property
    @abstractmethod
    def faults(self) -> Faults: ...

    @abstractmethod
    def settle(self) -> None:
        """Until the controllers have finished the rollouts started so far (bounded)."""

    @abstractmethod
    def close(self) -> None:
        """Release what the server holds for this history."""


class SimServer(Server):
    """The API simulator; with `controllers`, its rollout controller finishes each rollout 0.05 s after
    it started (so waves proceed and rollout records complete), else rollouts never finish."""

    name = "sim"

    def __init__(self, tmp: Path, *, controllers: bool = False) -> None:
        self.tmp = tmp
        self.controllers = controllers
        self.sim = Simulator(rollout_seconds=0.05 if controllers else None).start()
        self.kubeconfig = self.sim.write_kubeconfig(tmp / "kubeconfig")

    def close(self) -> None:
        self.sim.stop()

    def create(self, obj: dict[str, Any]) -> None:
        self.sim.store.create(obj)

    def get(self, resource: str, namespace: str, name: str) -> dict[str, Any] | None:
        store = self.sim.store
        return store.get(resource, namespace, name) if store.exists(resource, namespace, name) else None

    def items(self, resource: str, namespace: str) -> list[dict[str, Any]]:
        return list(self.sim.store.list(resource, namespace))

    def merge(self, resource: str, namespace: str, name: str, patch: dict[str, Any]) -> None:
        self.sim.store.patch_merge(resource, namespace, name, patch)

    def replace(
        self, resource: str, namespace: str, name: str, change: Callable[[dict[str, Any]], Any]
    ) -> None:
        self.sim.store.mutate(resource, namespace, name, change)

    def delete(self, resource: str, namespace: str, name: str) -> None:
        self.sim.store.delete(resource, namespace, name)

    def delete_namespace(self, namespace: str) -> None:
        self.sim.store.delete("namespaces", None, namespace)

    def history(self, resource: str, namespace: str, name: str) -> list[dict[str, Any]]:
        return self.sim.store.history(resource, namespace, name)

    def mark(self) -> int:
        return len(self.sim.log.entries())

    def writes(self, since: int) -> list[Write]:
        out = []
        for entry in self.sim.log.entries()[since:]:
            if entry.method not in ("POST", "PUT", "PATCH", "DELETE"):
                continue
            resource, namespace, name = parse_path(entry.path)
            ops = json.loads(entry.body) if entry.method == "PATCH" and entry.body else None
            out.append(Write(entry.method, resource, namespace, name, entry.status, tuple(ops or ()) or None))
        return out

    def start(self, config: dict[str, Any], scope: tuple[str, ...], mutant: str | None) -> Pass:
        head, env = self.program(mutant)
        argv = [*head, "run", "-o", "json", "--config", str(self.write_config(config))]
        argv += ["--kubeconfig", str(self.kubeconfig)]
        for namespace in scope:
            argv += ["-n", namespace]
        proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
        return Pass(proc, lambda text: text)

    @property
    def faults(self) -> Faults:
        return self.sim.faults

    def settle(self) -> None:
        if self.controllers:
            time.sleep(0.15)  # the rollout controller completes a rollout 0.05 s after it started
