"""What the checker is given: snapshots of every object, one pass's reports and writes, and violations.

A snapshot is read by the harness from the server (lists of each kind in each live namespace), never from
kube-rehash's report; a pass's writes are kube-rehash's own requests (the simulator's request log, the real
server's audit log), and the template hashes stored during the pass are every stored version's on the
simulator.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from tests.e2e.backends import Result
from tests.robustness.model import Workload
from tests.robustness.servers import Write


@dataclass(frozen=True)
class Violation:
    code: str
    where: str
    detail: str

    def __str__(self) -> str:
        return f"{self.code} {self.where}: {self.detail}"


@dataclass
class Snapshot:
    """Every object of the world's live namespaces, as the checker reads them (`None`: absent)."""

    workloads: dict[tuple[str, str], dict[str, Any] | None] = field(default_factory=dict)
    sources: dict[tuple[str, str], dict[str, Any] | None] = field(default_factory=dict)
    events: dict[tuple[str, str], dict[str, Any]] = field(default_factory=dict)
    jobs: dict[tuple[str, str], dict[str, Any]] = field(default_factory=dict)


@dataclass
class Observed:
    """One pass (or two at once) as the server saw it."""

    before: Snapshot
    after: Snapshot
    reports: Sequence[Result]
    writes: Sequence[Write]
    templates: dict[tuple[str, str], list[str | None]]
    """Per workload, the template hash of every version stored during the pass, the one before first."""
    writer: dict[tuple[str, str], Callable[[dict[str, Any]], Any]] = field(default_factory=dict)
    """Concurrent writers that changed a workload during the pass, and their change."""


def rows_of(result: Result) -> dict[tuple[str, str, str], dict[str, Any]]:
    return {(r["kind"], r["namespace"], r["name"]): r for r in result.report["workloads"]}


def covered(result: Result, kind: str, namespace: str) -> bool:
    """A failed scope row stands for the workloads of its scope (a list failed past its retries)."""
    return any(
        r["action"] == "failed"
        and r["name"] == "*"
        and r["kind"] in (kind, "*")
        and r["namespace"] in (namespace, "*")
        for r in result.report["workloads"]
    )


def label(w: Workload) -> str:
    return f"{w.shape.kind}/{w.namespace}/{w.shape.name}"
