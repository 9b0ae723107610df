"""Helpers of the reliability suite: an in-process pass against the simulator, an independent hash
recomputation from docs/hash.md, and history checks over the simulator's store.

The end-to-end `Cluster` (the installed CLI as a subprocess) comes from tests/e2e/conftest.py; the
in-process `Pass` here runs `reconcile.pipeline.run.run_pass` with the same HTTPS client, for the tests
where a subprocess is not the point (it is ~10x cheaper).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import itertools
import json
import threading
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import xxhash

from reconcile.kube.auth import AuthOptions, load_credentials
from reconcile.kube.client import ClientOptions, KubeClient
from reconcile.output.report import Report
from reconcile.pipeline.budget import Budget
from reconcile.pipeline.run import run_pass
from reconcile.settings.table import Settings
from rehash_simulator import Simulator

PREFIX = "kube-rehash.io/"
CHANGE_CAUSE = "kubernetes.io/change-cause"
HASH_KEY = "kube-rehash.io/config-hash"
WORKLOADS = ("deployments", "statefulsets", "daemonsets")
# Fast retries for in-process runs: the retry logic is the same, the sleeps are short.
FAST = ClientOptions(request_timeout=5.0, deadline=20.0, backoff_base=0.01, backoff_max=0.05, pool_size=8)


def client_for(
    kubeconfig: Path,
    options: ClientOptions = FAST,
    stop_at: float | None = None,
    budget: Budget | None = None,
) -> KubeClient:
    credentials = load_credentials(AuthOptions(str(kubeconfig), None), env={})
    return KubeClient(credentials, options, stop_at=stop_at, gate=budget.admit if budget else None)


def in_process_pass(
    sim: Simulator,
    kubeconfig: Path,
    settings: Settings | None = None,
    *,
    hash_key: bytes | None = None,
    options: ClientOptions = FAST,
    stop: threading.Event | None = None,
    **overrides: Any,
) -> Report:
    """One `run_pass` against the simulator through a real HTTPS client (concurrency 4, events on)."""
    base = settings or Settings.of(qps=0.0)
    if overrides:
        base = base.replaced(**overrides)
    budget = Budget(base.limits.timeout, stop=stop or threading.Event())
    with client_for(kubeconfig, options, budget=budget) as client:
        return Report(run_pass(base, client, budget=budget, hash_key=hash_key))


def actions(report: Report) -> dict[str, str]:
    return {f"{r.kind}/{r.namespace}/{r.name}": r.action for r in report.rows}


# -- independent hash (docs/hash.md, written from the text, not from reconcile.model.hashing) -------------


def _field(b: bytes) -> bytes:
    return len(b).to_bytes(8, "big") + b


def doc_source_token(
    kind: str, obj: dict[str, Any] | None, keys: Iterable[str] | None, key: bytes | None
) -> str:
    if obj is None:
        return "-"
    entries: dict[bytes, bytes] = {}
    for name, value in (obj.get("data") or {}).items():
        raw = base64.b64decode(value) if kind == "secret" else value.encode("utf-8", "surrogatepass")
        entries[name.encode("utf-8", "surrogatepass")] = raw
    for name, value in (obj.get("binaryData") or {}).items():
        entries[name.encode("utf-8", "surrogatepass")] = base64.b64decode(value)
    wanted = None if keys is None else {k.encode("utf-8", "surrogatepass") for k in keys}
    selected = sorted((k, v) for k, v in entries.items() if wanted is None or k in wanted)
    body = b"kube-rehash/source/v1\x00" + len(selected).to_bytes(8, "big")
    for k, v in selected:
        body += _field(k) + _field(v)
    digest = xxhash.xxh3_128(body).digest()
    if key is None:
        return digest.hex()
    return hmac.new(key, digest, hashlib.sha256).digest()[:16].hex()


def doc_combined(records: Iterable[tuple[str, str, str]], key: bytes | None) -> str:
    rows = sorted(set(records), key=lambda r: (r[0], r[1]))
    body = b"kube-rehash/combined/v1\x00" + len(rows).to_bytes(8, "big")
    for kind, name, token in rows:
        body += _field(kind.encode()) + _field(name.encode()) + _field(token.encode())
    digest = xxhash.xxh3_128(body).digest()
    if key is None:
        return "v1:" + digest.hex()
    return "v1k:" + hmac.new(key, digest, hashlib.sha256).digest()[:16].hex()


def expected_hash(
    sim: Simulator,
    namespace: str,
    refs: Iterable[tuple[str, str, Iterable[str] | None]],
    key: bytes | None = None,
) -> str:
    """The value docs/hash.md predicts for (kind, name, keys-or-None) references, read from the store."""
    records = []
    for kind, name, keys in refs:
        plural = "configmaps" if kind == "configmap" else "secrets"
        obj = sim.store.get(plural, namespace, name) if sim.store.exists(plural, namespace, name) else None
        records.append((kind, name, doc_source_token(kind, obj, None if keys is None else list(keys), key)))
    return doc_combined(records, key)


# -- history ------------------------------------------------------------------------------------------


def template_hash_of(obj: dict[str, Any]) -> str | None:
    meta = ((obj.get("spec") or {}).get("template") or {}).get("metadata") or {}
    return (meta.get("annotations") or {}).get(HASH_KEY)


def template_hash_changes(sim: Simulator, resource: str, namespace: str, name: str) -> int:
    """How many stored versions changed the pod template's hash annotation (= rollouts caused)."""
    values = [template_hash_of(o) for o in sim.store.history(resource, namespace, name)]
    return sum(1 for a, b in itertools.pairwise(values) if b != a and b is not None)


def ours(key: str) -> bool:
    """Whether an annotation is one kube-rehash writes."""
    return (key.startswith(PREFIX) and key.split("/", 1)[1] in OURS) or key == CHANGE_CAUSE


def without_ours(obj: dict[str, Any]) -> dict[str, Any]:
    """The object minus server bookkeeping and kube-rehash's own annotations (anywhere; the change cause a
    rollout sets included), for diffs."""
    copy = json.loads(json.dumps(obj))
    meta = copy["metadata"]
    for key in ("resourceVersion", "generation", "managedFields"):
        meta.pop(key, None)
    copy.pop("status", None)

    def strip(node: Any) -> None:
        if isinstance(node, dict):
            ann = node.get("annotations")
            if isinstance(ann, dict):
                for k in [k for k in ann if ours(k)]:
                    del ann[k]
                if not ann:
                    del node["annotations"]
            for value in node.values():
                strip(value)
        elif isinstance(node, list):
            for value in node:
                strip(value)

    strip(copy)
    tmeta = ((copy.get("spec") or {}).get("template") or {}).get("metadata")
    if tmeta == {}:
        del copy["spec"]["template"]["metadata"]
    return copy  # type: ignore[no-any-return]


OURS = frozenset({"config-hash", "sources", "last-rollout", "rollout"})


def foreign_changes(sim: Simulator, resource: str, namespace: str, name: str) -> list[tuple[int, Any, Any]]:
    """Consecutive history versions that differ in anything but our annotations (writer-agnostic)."""
    history = [without_ours(o) for o in sim.store.history(resource, namespace, name)]
    return [(i, a, b) for i, (a, b) in enumerate(itertools.pairwise(history)) if a != b]
