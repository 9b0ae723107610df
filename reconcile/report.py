"""The report of a pass: the contract's JSON document and a short aligned table for people.

Rows carry names of configs and hash values only, never content; the JSON shape is the contract's,
plus an `api` block (requests, retries, bytes) and `interrupted` that the contract leaves open.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from reconcile.plan import Action, Decision
from reconcile.targets import Target

ACTION_ORDER = [a.value for a in Action]


@dataclass(frozen=True)
class Row:
    kind: str
    namespace: str
    name: str
    action: str
    reason: str
    configs: tuple[str, ...] = ()
    hash: str | None = None
    previous: str | None = None

    @classmethod
    def of(cls, target: Target, decision: Decision) -> Row:
        return cls(
            kind=target.kind.kind,
            namespace=target.namespace,
            name=target.name,
            action=decision.action.value,
            reason=decision.reason,
            configs=decision.configs,
            hash=decision.config_hash,
            previous=decision.previous,
        )

    @classmethod
    def scope_failure(cls, kind: str, namespace: str, reason: str) -> Row:
        """A whole scope (a kind in a namespace, or everywhere) that could not be read: name `*`."""
        return cls(kind=kind, namespace=namespace, name="*", action=Action.FAILED.value, reason=reason)

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "namespace": self.namespace,
            "name": self.name,
            "action": self.action,
            "reason": self.reason,
            "configs": list(self.configs),
            "hash": self.hash,
            "previous": self.previous,
        }


@dataclass
class Report:
    dry_run: bool = False
    rows: list[Row] = field(default_factory=list)
    duration: float = 0.0
    contents_fetched: int = 0
    interrupted: bool = False
    api: dict[str, Any] = field(default_factory=dict)

    def add(self, row: Row) -> None:
        self.rows.append(row)

    def sorted_rows(self) -> list[Row]:
        return sorted(self.rows, key=lambda r: (r.namespace, r.kind, r.name))

    def summary(self) -> dict[str, int]:
        counts = {"workloads": sum(1 for r in self.rows if r.name != "*")}
        counts.update(dict.fromkeys(ACTION_ORDER, 0))
        for row in self.rows:
            counts[row.action] += 1
        return counts

    @property
    def failed(self) -> bool:
        return any(r.action == Action.FAILED.value for r in self.rows)

    @property
    def pending_rollouts(self) -> bool:
        return any(r.action == Action.ROLLOUT.value for r in self.rows)

    def to_json(self) -> dict[str, Any]:
        return {
            "dry_run": self.dry_run,
            "summary": self.summary(),
            "workloads": [r.to_json() for r in self.sorted_rows()],
            "interrupted": self.interrupted,
            "duration_seconds": round(self.duration, 3),
            "configs_fetched": self.contents_fetched,
            "api": self.api,
        }

    def render_json(self) -> str:
        return json.dumps(self.to_json(), indent=2, sort_keys=False)

    def render_text(self) -> str:
        """An aligned table of every workload that needs attention or was touched, then a summary line."""
        header = ("ACTION", "KIND", "NAMESPACE", "NAME", "REASON")
        rows = [(r.action, r.kind, r.namespace, r.name, r.reason) for r in self.sorted_rows()]
        lines = []
        if rows:
            widths = [max(len(row[i]) for row in [header, *rows]) for i in range(4)]
            for row in [header, *rows]:
                cells = [row[i].ljust(widths[i]) for i in range(4)]
                lines.append("  ".join([*cells, row[4]]).rstrip())
        lines.append(self.summary_line())
        return "\n".join(lines)

    def summary_line(self) -> str:
        counts = self.summary()
        parts = [f"{counts[a]} {a}" for a in ACTION_ORDER if counts[a]]
        mode = " (dry run: nothing written)" if self.dry_run else ""
        cut = " (interrupted: the next pass finishes the rest)" if self.interrupted else ""
        body = ", ".join(parts) if parts else "nothing to do"
        return f"{counts['workloads']} workloads: {body}{mode}{cut} in {self.duration:.2f}s"
