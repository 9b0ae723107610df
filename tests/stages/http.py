"""Shared by the per-stage tests (tests/stages/test_*.py): a KubeClient against a fake API server (the
`responses` transport fake, the only fake), the requests it sent as short strings, and workload objects
that carry real bookkeeping (the adopt patch of the real planner and patch code, applied as a server would).

Why a helper module: each stage test asserts "exact requests in, values out"; building the client, reading
the requests back and making a workload kube-rehash already adopted are the same in all four.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import unquote

import requests
import responses
import yaml

from reconcile.kube.auth import AuthOptions, load_credentials
from reconcile.kube.client import ClientOptions, Gate, KubeClient
from reconcile.model.annotations import Annotations
from reconcile.model.choices import Fetch
from reconcile.model.hashing import source_token
from reconcile.model.kinds import DEPLOYMENT, Kind
from reconcile.model.references import DiscoverySettings
from reconcile.model.sources import Hashed, NamespaceSources, SourceKey, read_meta
from reconcile.model.workload import read_target
from reconcile.pipeline.fetch import SourceReader
from reconcile.pipeline.read import ReadStage
from reconcile.policy.classify import key_of
from reconcile.policy.decide import decide_target
from reconcile.policy.decision import Action, generation_after
from reconcile.policy.patches import build_patch
from reconcile.policy.planned import Planned
from reconcile.policy.rules import Rules
from reconcile.policy.wants import Wants

SERVER = "https://127.0.0.1:6443"
META_LIST = "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json"
META_GET = "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json"
JSON = "application/json"
NOW = datetime(2026, 11, 25, 12, 0, tzinfo=UTC)
DISCOVERY = DiscoverySettings()
RULES = Rules(DISCOVERY, None, NOW)
KEYS = Annotations(DISCOVERY.prefix)
DEPLOYS = "/apis/apps/v1/namespaces/shop/deployments"
CONFIGMAPS = "/api/v1/namespaces/shop/configmaps"


def read_stage(client: KubeClient, executor: ThreadPoolExecutor) -> ReadStage:
    """A real read stage over `client`: the source reader in `auto` mode, unkeyed hashing."""
    reader = SourceReader(client, executor, mode=Fetch.AUTO, settings=DISCOVERY, hash_key=None)
    return ReadStage(client, executor, reader, DISCOVERY)


def make_client(tmp_path: Path, *, gate: Gate | None = None, page_size: int = 500) -> KubeClient:
    """A KubeClient for SERVER with a bearer token from a kubeconfig in `tmp_path`; no retries, no sleeps."""
    config = {
        "current-context": "ctx",
        "clusters": [{"name": "c", "cluster": {"server": SERVER}}],
        "users": [{"name": "u", "user": {"token": "tok"}}],
        "contexts": [{"name": "ctx", "context": {"cluster": "c", "user": "u"}}],
    }
    path = tmp_path / "kubeconfig"
    path.write_text(yaml.safe_dump(config))
    creds = load_credentials(AuthOptions(kubeconfig=str(path)), env={})
    options = ClientOptions(max_retries=0, page_size=page_size, qps=0)
    return KubeClient(creds, options, gate=gate, sleep=lambda _s: None)


def request(mock: responses.RequestsMock, index: int) -> requests.PreparedRequest:
    sent = mock.calls[index].request
    assert isinstance(sent, requests.PreparedRequest)
    return sent


def calls(mock: responses.RequestsMock) -> list[str]:
    """Every request sent, in order, as `METHOD /path?query` with the query decoded."""
    return [f"{c.request.method} {unquote(c.request.path_url)}" for c in mock.calls]


def accepts(mock: responses.RequestsMock) -> list[str]:
    return [str(c.request.headers["Accept"]) for c in mock.calls]


def status(code: int, reason: str, message: str = "denied") -> dict[str, Any]:
    """A Kubernetes `Status` error body."""
    return {
        "kind": "Status",
        "apiVersion": "v1",
        "status": "Failure",
        "code": code,
        "reason": reason,
        "message": message,
    }


def metadata_only(obj: dict[str, Any]) -> dict[str, Any]:
    """The PartialObjectMetadata view of an object, as a metadata-only list or GET returns it."""
    return {"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1", "metadata": obj["metadata"]}


def page(items: Iterable[dict[str, Any]], token: str | None = None, *, meta: bool = True) -> dict[str, Any]:
    """One list page of these objects (metadata-only unless `meta` is False), with a continue token."""
    metadata = {"resourceVersion": "900", **({"continue": token} if token else {})}
    kind = "PartialObjectMetadataList" if meta else "List"
    return {"kind": kind, "metadata": metadata, "items": [metadata_only(o) if meta else o for o in items]}


def stamped(
    obj: dict[str, Any], uid: str, resource_version: str = "1", generation: int = 1
) -> dict[str, Any]:
    """`obj` as the server stores it: with a uid, a resourceVersion and (workloads) a generation."""
    out = copy.deepcopy(obj)
    out["metadata"].update(uid=uid, resourceVersion=resource_version)
    if "spec" in out:
        out["metadata"]["generation"] = generation
    return out


def decided(
    obj: dict[str, Any], sources: Iterable[dict[str, Any]], kind: Kind = DEPLOYMENT, rules: Rules = RULES
) -> Planned:
    """The real decision for the whole object `obj` given these source objects (all read and hashed),
    with its full view: what the planner returns for it, without the requests."""
    target = read_target(obj, kind, rules.discovery)
    known = NamespaceSources(target.namespace)
    by_key = {SourceKey(s["kind"].lower(), s["metadata"]["name"]): s for s in sources}
    for key, source in by_key.items():
        meta = read_meta(key.kind, source, frozenset())
        assert meta is not None
        known.found[key] = meta
    for ref in target.discovery.references:
        source = by_key[key_of(ref)]
        token = source_token(ref.kind, source, ref.keys, rules.hash_key)
        meta = known.found[key_of(ref)]
        known.tokens[(key_of(ref), ref.keys)] = Hashed(token, meta.uid, meta.resource_version)
    return Planned(target.listed, decide_target(target, known, rules), target)


def adopted(
    obj: dict[str, Any], sources: Iterable[dict[str, Any]], kind: Kind = DEPLOYMENT
) -> dict[str, Any]:
    """The workload after kube-rehash adopted it over `sources` (first sight): the real adopt decision's
    real JSON patch applied to it, the generation moved as the server moves it for `kind`."""
    planned = decided(obj, sources, kind)
    target, decision = planned.full, planned.decision
    assert target is not None and decision.action is Action.ADOPT and decision.observed is not None, decision
    out = copy.deepcopy(obj)
    for op in build_patch(target, decision, decision.observed, now=NOW, keys=KEYS):
        apply_op(out, op)
    out["metadata"]["generation"] = generation_after(target.listed, target.generation, rollout=False)
    out["metadata"]["resourceVersion"] = str(int(out["metadata"]["resourceVersion"]) + 1)
    return out


def apply_op(obj: dict[str, Any], op: dict[str, Any]) -> None:
    """Apply one JSON-patch `test` or `add` op (RFC 6902) to `obj` in place."""
    *parents, last = [p.replace("~1", "/").replace("~0", "~") for p in op["path"].split("/")[1:]]
    node: Any = obj
    for part in parents:
        node = node[part]
    if op["op"] == "test":
        assert node[last] == op["value"], op
    else:
        assert op["op"] == "add", op
        node[last] = op["value"]


def read_metadata(
    stage: ReadStage, namespace: str, wanted: dict[str, set[str]], search: frozenset[str] = frozenset()
) -> NamespaceSources:
    """One round of the read stage asked for these sources' identities (and search mode's kinds)."""
    asked = Wants(metadata={kind: frozenset(names) for kind, names in wanted.items()}, search=search)
    sources: NamespaceSources = stage.read(namespace, asked).sources
    return sources


def read_contents(
    stage: ReadStage, namespace: str, wanted: dict[SourceKey, set[frozenset[str] | None]]
) -> NamespaceSources:
    """One round of the read stage asked for these sources' content, for these key selections."""
    asked = Wants(content={key: frozenset(keys) for key, keys in wanted.items()})
    sources: NamespaceSources = stage.read(namespace, asked).sources
    return sources
