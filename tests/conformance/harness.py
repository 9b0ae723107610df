"""Send the same HTTP requests to two API servers and reduce each answer to what must agree.

Why: the simulator is our reading of the Kubernetes API; kube-rehash's tests only mean something where the
simulator answers as kube-apiserver does. A `Server` is a base URL, a CA and bearer tokens; `run_case` plays
one case (a short sequence of requests in a fresh namespace) and `observe` turns each response into an
`Observation`: status code, Status reason/code/details, gzip or not, kinds, and the response's shape (its
set of key paths) with volatile or server-specific fields left out.
"""

from __future__ import annotations

import gzip
import http.client
import json
import secrets
import ssl
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlencode, urlsplit

JSON = "application/json"
# Responses whose earlier steps a later step may read (e.g. a stale resourceVersion).
History = list["Response"]
Body = Any | Callable[[History], Any]

# Key paths never compared: values (and presence) that differ between any two servers or runs (a list's
# items are reduced like the object itself: `items[].` is stripped before matching).
VOLATILE = (
    "metadata.uid",
    "metadata.resourceVersion",
    "metadata.creationTimestamp",
    "metadata.managedFields",
    "metadata.selfLink",
    "metadata.continue",
)
# Written by controllers, not by the API server: the simulator runs no controllers (like `status`).
CONTROLLER_WRITTEN = ("metadata.annotations.deployment.kubernetes.io/revision",)
# Fields of a pod template kube-apiserver's defaulting fills in and the simulator does not.
POD_DEFAULTED = (
    "containers[].imagePullPolicy",
    "containers[].resources",
    "containers[].terminationMessagePath",
    "containers[].terminationMessagePolicy",
    "dnsPolicy",
    "restartPolicy",
    "schedulerName",
    "securityContext",
    "terminationGracePeriodSeconds",
)


def _pod(spec: str, *, job: bool = False) -> tuple[str, ...]:
    """POD_DEFAULTED under `spec`; a Job's pods must state their restartPolicy (it is not defaulted)."""
    return tuple(f"{spec}.{f}" for f in POD_DEFAULTED if not (job and f == "restartPolicy"))


_JOB_LABELS = (
    "batch.kubernetes.io/controller-uid",
    "batch.kubernetes.io/job-name",
    "controller-uid",
    "job-name",
)
# Per kind, what kube-apiserver fills in on create (defaulting, and a Job's generated selector and labels)
# and the simulator does not: a known limit. The case `defaulting` compares these fields and
# test_differential.py pins that they are the whole difference; every other case leaves them out.
DEFAULTED: dict[str, tuple[str, ...]] = {
    "Deployment": (
        "spec.progressDeadlineSeconds",
        "spec.revisionHistoryLimit",
        "spec.strategy",
        *_pod("spec.template.spec"),
    ),
    "StatefulSet": (
        "spec.persistentVolumeClaimRetentionPolicy",
        "spec.podManagementPolicy",
        "spec.revisionHistoryLimit",
        "spec.updateStrategy",
        *_pod("spec.template.spec"),
    ),
    "DaemonSet": ("spec.revisionHistoryLimit", "spec.updateStrategy", *_pod("spec.template.spec")),
    "CronJob": (
        "spec.concurrencyPolicy",
        "spec.failedJobsHistoryLimit",
        "spec.successfulJobsHistoryLimit",
        "spec.jobTemplate.metadata",
        *_pod("spec.jobTemplate.spec.template.spec", job=True),
    ),
    "Job": (
        "spec.backoffLimit",
        "spec.completionMode",
        "spec.completions",
        "spec.manualSelector",
        "spec.parallelism",
        "spec.podReplacementPolicy",
        "spec.selector",
        "spec.template.metadata",
        *(f"metadata.labels.{label}" for label in _JOB_LABELS),
        *_pod("spec.template.spec", job=True),
    ),
}
# Discovery documents list what each server serves; only their framing is compared.
DISCOVERY_DETAIL = ("resources[].", "groups[].", "serverAddressByClientCIDRs", "versions[]")


@dataclass(frozen=True)
class Server:
    """One API server reachable over HTTPS with bearer tokens: `admin` and `nobody` (no RBAC grants)."""

    name: str
    url: str
    ca_pem: str
    tokens: Mapping[str, str]

    def context(self) -> ssl.SSLContext:
        return ssl.create_default_context(cadata=self.ca_pem)


@dataclass(frozen=True)
class Step:
    """One request. `path` and `query` values may contain `{ns}`; `body` may be a function of the earlier
    responses of the case."""

    method: str
    path: str
    query: Mapping[str, str] | Callable[[History], Mapping[str, str]] = field(default_factory=dict)
    body: Body = None
    content_type: str = JSON
    accept: str = JSON
    headers: Mapping[str, str] = field(default_factory=dict)
    user: str = "admin"
    values: tuple[str, ...] = ()  # JSON pointers whose values (not only presence) must agree


@dataclass(frozen=True)
class Case:
    """A named sequence of requests, played in a fresh namespace on each server; every step is compared."""

    name: str
    steps: tuple[Step, ...]
    about: str
    # Compare the fields of DEFAULTED too (only the case that documents the limit does).
    defaults: bool = False


@dataclass
class Response:
    status: int
    headers: dict[str, str]
    body: Any  # decoded JSON, or text when the body is not JSON


def send(server: Server, step: Step, namespace: str, history: History) -> Response:
    """Send one step to `server` (identical bytes for every server but the token and host)."""
    split = urlsplit(server.url)
    conn = http.client.HTTPSConnection(split.hostname or "", split.port, context=server.context(), timeout=30)
    path = step.path.format(ns=namespace)
    query = step.query(history) if callable(step.query) else step.query
    if query:
        path += "?" + urlencode({k: v.format(ns=namespace) for k, v in query.items()})
    body = step.body(history) if callable(step.body) else step.body
    data = None if body is None else json.dumps(body).replace("{ns}", namespace).encode()
    headers = {
        "Authorization": f"Bearer {server.tokens[step.user]}",
        "Accept": step.accept,
        "User-Agent": "kube-rehash-conformance",
        **step.headers,
    }
    if data is not None:
        headers["Content-Type"] = step.content_type
    try:
        conn.request(step.method, path, body=data, headers=headers)
        raw = conn.getresponse()
        payload = raw.read()
        got = {k.lower(): v for k, v in raw.getheaders()}
    finally:
        conn.close()
    if got.get("content-encoding") == "gzip":
        payload = gzip.decompress(payload)
    # The namespace's name differs per server and case: every mention of it reads `{ns}`.
    text = payload.decode(errors="replace").replace(namespace, "{ns}")
    try:
        decoded: Any = json.loads(text)
    except ValueError:
        decoded = text
    return Response(raw.status, got, decoded)


def run_case(server: Server, case: Case) -> list[Response]:
    """Create a fresh namespace, play every step of `case`, delete the namespace; the step responses."""
    namespace = f"conf-{secrets.token_hex(4)}"
    made = send(
        server,
        Step(
            "POST",
            "/api/v1/namespaces",
            body={"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}},
        ),
        namespace,
        [],
    )
    if made.status != 201:
        raise AssertionError(f"{server.name}: creating namespace {namespace}: {made.status} {made.body}")
    history: History = []
    try:
        for step in case.steps:
            history.append(send(server, step, namespace, history))
    finally:
        send(server, Step("DELETE", f"/api/v1/namespaces/{namespace}"), namespace, [])
    return history


# -- reduction -----------------------------------------------------------------------------------------------


def key_paths(value: Any, prefix: str = "") -> set[str]:
    """Every key path of a JSON value (`a.b`, list items as `a[]`), maps' keys included."""
    paths: set[str] = set()
    if isinstance(value, dict):
        for key, child in value.items():
            path = f"{prefix}.{key}" if prefix else str(key)
            paths.add(path)
            paths |= key_paths(child, path)
    elif isinstance(value, list):
        for child in value:
            paths |= key_paths(child, f"{prefix}[]")
    return paths


def under(path: str, prefixes: tuple[str, ...]) -> bool:
    path = path.removeprefix("items[].").removeprefix("rows[].object.")
    return any(path == p or path.startswith((p + ".", p + "[")) for p in prefixes)


def _kept(path: str, body: Mapping[str, Any], ignore: tuple[str, ...]) -> bool:
    if under(path, (*VOLATILE, *CONTROLLER_WRITTEN, *ignore)):
        return False
    if body.get("kind") == "Status":
        # The message text is the server's own; reason, code and details are compared.
        return path != "message" and not path.startswith("details.causes[].message")
    if body.get("kind") in ("APIResourceList", "APIGroupList", "APIVersions"):
        return not any(path.startswith(d) or path == d.rstrip(".") for d in DISCOVERY_DETAIL)
    # Status of an object is written by controllers (present on the real server, absent in the simulator).
    return not (path == "status" or path.startswith("status.") or "].status" in path)


def kinds(value: Any) -> set[str]:
    """The `apiVersion/kind` pairs anywhere in a response (the object, its items, Status details)."""
    found: set[str] = set()
    if isinstance(value, dict):
        if isinstance(value.get("kind"), str) and "apiVersion" in value:
            found.add(f"{value['apiVersion']}/{value['kind']}")
        for key, child in value.items():
            if key not in ("metadata", "involvedObject", "ownerReferences"):
                found |= kinds(child)
    elif isinstance(value, list):
        for child in value:
            found |= kinds(child)
    return found


def value_at(body: Any, pointer: str) -> Any:
    """The value at a JSON pointer (None when absent)."""
    for part in pointer.split("/")[1:]:
        key = part.replace("~1", "/").replace("~0", "~")
        if isinstance(body, list):
            body = body[int(key)] if key.isdigit() and int(key) < len(body) else None
        else:
            body = body.get(key) if isinstance(body, dict) else None
    return body


def defaulted(body: Any) -> tuple[str, ...]:
    """The DEFAULTED paths of a response's kind (of its items' kind for a list)."""
    kind = str(body.get("kind", "")) if isinstance(body, dict) else ""
    return DEFAULTED.get(kind.removesuffix("List"), ())


def observe(response: Response, step: Step, *, defaults: bool = False) -> dict[str, Any]:
    """What must agree between servers for one response (DEFAULTED fields only when `defaults`)."""
    ignore = () if defaults else defaulted(response.body)
    body = response.body
    seen: dict[str, Any] = {
        "status": response.status,
        "gzip": response.headers.get("content-encoding") == "gzip",
        "json": isinstance(body, dict),
    }
    if not isinstance(body, dict):
        return seen
    if body.get("kind") == "Status":
        details = body.get("details") or {}
        seen["reason"] = body.get("reason")
        seen["code"] = body.get("code")
        seen["details"] = {k: details[k] for k in ("kind", "group", "name") if k in details}
        seen["causes"] = sorted(
            (str(c.get("reason")), str(c.get("field"))) for c in details.get("causes") or []
        )
    seen["kinds"] = sorted(kinds(body))
    seen["shape"] = sorted(p for p in key_paths(body) if _kept(p, body, ignore))
    for pointer in step.values:
        seen[f"value:{pointer}"] = value_at(body, pointer)
    items = body.get("items")
    seen["names"] = (
        sorted(str(value_at(i, "/metadata/name")) for i in items) if isinstance(items, list) else None
    )
    return seen


def difference(real: dict[str, Any], sim: dict[str, Any]) -> dict[str, Any]:
    """Field by field, what differs: {field: {"real": ..., "sim": ...}}; shapes as the two set differences."""
    diff: dict[str, Any] = {}
    for key in sorted(set(real) | set(sim)):
        a, b = real.get(key), sim.get(key)
        if a == b:
            continue
        if key == "shape":
            diff[key] = {
                "real": sorted(set(a or []) - set(b or [])),
                "sim": sorted(set(b or []) - set(a or [])),
            }
        else:
            diff[key] = {"real": a, "sim": b}
    return diff
