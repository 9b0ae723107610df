"""The notify webhook's document: one JSON object per pass listing every notified change (pure).

Why a module of its own: the document is a public contract (docs/notify-webhook.schema.json) that
receivers parse, so it is built here from plain values only, without I/O, and pinned by a golden test.
Sending it is reconcile/output/webhook.py's job; deciding when is reconcile/pipeline/notifier.py's.

The document names workloads and their changed sources by kind and name, and carries hash values
(which reveal nothing about content: docs/hash.md); never a source's content, never the webhook's URL.
Its `text` is a short human summary, so Slack- and Teams-compatible incoming webhooks, which show a
`text` field as it is and ignore the other fields, need no adapter.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from reconcile.model.kinds import SOURCE_KIND_NAMES
from reconcile.model.times import format_time
from reconcile.model.workload import Target
from reconcile.policy.decision import Decision

DOCUMENT_VERSION = 1
"""The version of the document's shape (`version`); a change that breaks receivers bumps it."""
TEXT_LINES = 20
"""Most workloads the `text` lists one per line; the rest are counted."""


@dataclass(frozen=True)
class Change:
    """One notified change of one workload: what the document says about it."""

    kind: str
    namespace: str
    name: str
    sources: tuple[str, ...]
    """The changed sources' labels (`configmap/app`), or every source's when the records do not say."""
    previous: str | None
    hash: str

    @classmethod
    def of(cls, target: Target, decision: Decision) -> Change:
        if decision.config_hash is None:
            raise ValueError(f"{target.ref}: a notification without a hash")
        return cls(
            kind=target.kind.kind,
            namespace=target.namespace,
            name=target.name,
            sources=decision.changed or decision.configs,
            previous=decision.previous,
            hash=decision.config_hash,
        )

    @property
    def ref(self) -> str:
        return f"{self.kind} {self.namespace}/{self.name}"


@dataclass(frozen=True)
class PassIdentity:
    """Which pass sent the document: a random id, its start, the shard and the configured cluster name."""

    id: str
    started: datetime
    shard: str | None = None
    cluster: str | None = None


def source_of(label: str) -> dict[str, str]:
    kind, _, name = label.partition("/")
    return {"kind": SOURCE_KIND_NAMES.get(kind, kind), "name": name}


def build_document(changes: Sequence[Change], identity: PassIdentity, *, sender: str) -> dict[str, Any]:
    """The document for these changes (sorted by namespace, kind, name). `sender` is `kube-rehash X.Y.Z`."""
    ordered = sorted(changes, key=lambda c: (c.namespace, c.kind, c.name))
    time = format_time(identity.started)
    return {
        "version": DOCUMENT_VERSION,
        "sender": sender,
        "cluster": identity.cluster,
        "pass": {"id": identity.id, "started": time, "shard": identity.shard},
        "text": summary_text(ordered, identity.cluster),
        "changes": [
            {
                "kind": c.kind,
                "namespace": c.namespace,
                "name": c.name,
                "sources": [source_of(label) for label in c.sources],
                "previous": c.previous,
                "hash": c.hash,
                "time": time,
            }
            for c in ordered
        ],
    }


def summary_text(changes: Sequence[Change], cluster: str | None) -> str:
    """`kube-rehash: config changed for 2 workloads (cluster prod), not restarted:` then one line each."""
    count = f"{len(changes)} workload" + ("" if len(changes) == 1 else "s")
    where = f" (cluster {cluster})" if cluster else ""
    lines = [f"kube-rehash: config changed for {count}{where}, not restarted:"]
    for change in changes[:TEXT_LINES]:
        lines.append(f"- {change.ref}: {', '.join(change.sources) or 'config'} changed")
    if len(changes) > TEXT_LINES:
        lines.append(f"- and {len(changes) - TEXT_LINES} more")
    return "\n".join(lines)


def encode(document: dict[str, Any]) -> bytes:
    """The request body: compact UTF-8 JSON, keys in the document's order."""
    return json.dumps(document, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
