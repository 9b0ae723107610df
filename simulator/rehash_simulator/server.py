"""HTTPS routing of the Kubernetes REST paths onto the store, with authn, authz, faults and logging.

Built on `http.server.ThreadingHTTPServer` (HTTP/1.1 keep-alive, one daemon thread per connection);
the TLS handshake happens in the connection's thread so one slow client cannot stall the accept loop.
Every response carries Content-Length (unless answers.py says to chunk it); every error is a v1 Status
body. Like kube-apiserver (feature APIResponseCompression, on by default since 1.16), a response over 128
KiB is gzipped at level 1 when the client accepts gzip (answers.py); the request log counts the bytes
actually sent.
"""

from __future__ import annotations

import json
import socket
import ssl
import struct
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qsl, urlsplit

import yaml

from . import discovery, events_v1, fields, openapi, protobuf, render
from .authz import Attributes, Authenticator, RBACAuthorizer, User, verb_for
from .entry import Entry
from .errors import ApiError
from .evictions import evict
from .faults import Delay, Deny, ExpireContinue, Faults, LoseAnswer, Mutate, Reset, Respond, Throttle
from .log import LogEntry, RequestLog
from .patches import APPLY
from .resources import BY_PATH, ResourceType
from .store import Store

NOT_FOUND = ApiError(404, "the server could not find the requested resource", details={})
METHOD_NOT_ALLOWED = ApiError(
    405, "the server does not allow this method on the requested resource", details={}
)
Response = tuple[int, bytes, str]


def accepts_gzip(header: str) -> bool:
    """True when an Accept-Encoding value lists gzip (or *) without q=0."""
    for part in header.split(","):
        coding, *params = (p.strip() for p in part.split(";"))
        if coding.lower() not in ("gzip", "*"):
            continue
        weights = [p.split("=", 1)[1] for p in params if p.lower().startswith("q=") and "=" in p]
        try:
            if not weights or float(weights[0]) > 0:
                return True
        except ValueError:
            continue
    return False


class SimulatorServer(ThreadingHTTPServer):
    """The HTTP server plus the shared state its handlers read."""

    daemon_threads = True
    block_on_close = False

    def __init__(
        self,
        address: tuple[str, int],
        context: ssl.SSLContext,
        *,
        store: Store,
        faults: Faults,
        log: RequestLog,
        authn: Authenticator,
        authz: RBACAuthorizer,
    ) -> None:
        super().__init__(address, _Handler)
        self.context = context
        self.store = store
        self.faults = faults
        self.log = log
        self.authn = authn
        self.authz = authz

    def handle_error(self, request: Any, client_address: Any) -> None:
        """Dropped connections and failed handshakes are normal here; stay quiet."""


class _Reset(Exception):
    """The request's connection was reset on purpose."""


# kube-apiserver's flow-control (and max-in-flight) rejection: plain text, not a Status (k8s.io/apiserver
# pkg/server/filters, tooManyRequests); checked against 1.37 in tests/chaos_real/test_flow_control.py.
THROTTLED_BODY = b"Too many requests, please try again later.\n"


def admission_denied(path: str, deny: Deny) -> ApiError:
    """kube-apiserver's answer when a ValidatingAdmissionPolicy denies a write of the object at `path`
    (an object path: .../<plural>/<name>)."""
    parts = [p for p in path.split("/") if p]
    group = "" if parts[:1] == ["api"] else parts[1]
    plural, name = parts[-2], parts[-1]
    denial = (
        f"ValidatingAdmissionPolicy '{deny.policy}' with binding '{deny.binding}' denied request: "
        f"{deny.message}"
    )
    qualified = f"{plural}.{group}" if group else plural
    reason = deny.reason or "Invalid"
    return ApiError(
        403 if reason == "Forbidden" else 422,
        f'{qualified} "{name}" is forbidden: {denial}',
        reason=reason,
        details={"name": name, "group": group, "kind": plural, "causes": [{"message": denial}]},
    )


class _Throttled(Exception):
    """The request is rejected as API Priority and Fairness rejects it."""

    def __init__(self, retry_after: int) -> None:
        super().__init__(retry_after)
        self.retry_after = retry_after


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "kube-rehash-simulator"
    timeout = 120
    server: SimulatorServer
    # The request being served (a connection serves its requests one after another).
    _query: dict[str, str]
    _body: bytes
    # `Warning` headers of the response (unknown fields under fieldValidation=Warn).
    _warnings: list[str]
    _user: User

    def setup(self) -> None:
        # Headers and body go out as separate writes: without TCP_NODELAY, Nagle's algorithm and the
        # client's delayed ACK hold every response back ~40 ms (a real API server sets it too).
        self.request.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.request = self.server.context.wrap_socket(self.request, server_side=True)
        super().setup()

    def log_message(self, format: str, *args: Any) -> None:
        return

    def do_GET(self) -> None:
        self._serve()

    def do_POST(self) -> None:
        self._serve()

    def do_PUT(self) -> None:
        self._serve()

    def do_PATCH(self) -> None:
        self._serve()

    def do_DELETE(self) -> None:
        self._serve()

    def _read_body(self) -> bytes:
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            chunks: list[bytes] = []
            while True:
                size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                        pass
                    return b"".join(chunks)
                chunks.append(self.rfile.read(size))
                self.rfile.readline()
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length else b""

    def _serve(self) -> None:
        started = time.time()
        self._warnings = []
        split = urlsplit(self.path)
        path = split.path.rstrip("/") or "/"
        query = dict(parse_qsl(split.query, keep_blank_values=True))
        body = self._read_body()
        user: User | None = None
        extra: dict[str, str] = {}
        lose_answer = False
        try:
            try:
                user = self.server.authn.authenticate(
                    self.headers.get("Authorization"), self.connection.getpeercert()
                )
                auth_error: ApiError | None = None
            except ApiError as exc:
                auth_error = exc
            lose_answer = self._run_faults(path, query)
            if auth_error is not None:
                raise auth_error
            assert user is not None
            self._query, self._body, self._user = query, body, user
            code, payload, content_type = self._route(path)
        except _Reset:
            self._reset()
            self._log(path, query, body, (0, 0, user, started))
            return
        except _Throttled as exc:
            code, payload, content_type = 429, THROTTLED_BODY, "text/plain; charset=utf-8"
            extra = {"Retry-After": str(exc.retry_after), "X-Content-Type-Options": "nosniff"}
        except ApiError as exc:
            code, payload, content_type = exc.code, exc.body(), "application/json"
            extra = exc.headers
        except Exception as exc:  # a simulator bug must still answer with a Status
            error = ApiError(500, f"simulator internal error: {type(exc).__name__}: {exc}")
            code, payload, content_type = 500, error.body(), "application/json"
        if lose_answer:  # served (a write applied), and the answer never leaves
            self._reset()
            self._log(path, query, body, (code, 0, user, started))
            return
        gzipped = accepts_gzip(self.headers.get("Accept-Encoding", ""))
        payload, framing = self.server.store.answers.current.frame(payload, gzipped)
        # Logged before the response leaves, so a client that got its answer finds the entry.
        self._log(path, query, body, (code, len(payload), user, started))
        self.send_response(code)
        self.send_header("Content-Type", content_type)
        for key, value in framing.items():
            self.send_header(key, value)
        self.send_header("Cache-Control", "no-cache, private")
        for key, value in extra.items():
            self.send_header(key, value)
        for warning in self._warnings:
            self.send_header("Warning", "299 - " + json.dumps(warning))
        self.end_headers()
        self.wfile.write(payload)

    def _log(
        self, path: str, query: dict[str, str], body: bytes, outcome: tuple[int, int, User | None, float]
    ) -> None:
        status, sent, user, started = outcome
        self.server.log.append(
            LogEntry(
                method=self.command,
                path=path,
                query=query,
                content_type=self.headers.get("Content-Type", ""),
                accept=self.headers.get("Accept", ""),
                status=status,
                bytes_in=len(body),
                bytes_out=sent,
                user=user.name if user else "",
                timestamp=started,
                body=body,
            )
        )

    def _run_faults(self, path: str, query: dict[str, str]) -> bool:
        """Carry out the faults that fire before the request is served; whether its answer is to be lost
        after it is served (`LoseAnswer`)."""
        lose_answer = False
        for action in self.server.faults.pick(self.command, path, query):
            if isinstance(action, LoseAnswer):
                lose_answer = True
            elif isinstance(action, Delay):
                time.sleep(action.seconds)
            elif isinstance(action, Mutate):
                action.fn(self.server.store)
            elif isinstance(action, ExpireContinue):
                self.server.store.expire_continue_tokens()
            elif isinstance(action, Reset):
                raise _Reset
            elif isinstance(action, Throttle):
                raise _Throttled(action.retry_after)
            elif isinstance(action, Deny):
                raise admission_denied(path, action)
            elif isinstance(action, Respond):
                headers = {"Retry-After": str(action.retry_after)} if action.retry_after is not None else {}
                details: dict[str, Any] | None = (
                    {"retryAfterSeconds": action.retry_after} if action.retry_after is not None else None
                )
                message = action.message or f"injected fault: HTTP {action.status}"
                raise ApiError(action.status, message, reason=action.reason, details=details, headers=headers)
        return lose_answer

    def _reset(self) -> None:
        """Close the TCP connection with an RST and no response."""
        self.close_connection = True
        try:
            raw = self.connection
            raw.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            raw.close()
        except OSError:
            pass

    # -- routing -------------------------------------------------------------------------------------

    def _route(self, path: str) -> Response:
        parts = [p for p in path.split("/") if p]
        if path in ("/healthz", "/readyz", "/livez"):
            return 200, b"ok", "text/plain; charset=utf-8"
        if parts[:1] == ["api"]:
            if len(parts) == 1:
                return self._json(
                    discovery.api_versions(
                        f"{self.server.server_address[0]!s}:{self.server.server_address[1]}"
                    )
                )
            return self._resource_route("", parts[1], parts[2:])
        if parts[:1] == ["apis"]:
            if len(parts) == 1:
                return self._json(discovery.api_group_list())
            if len(parts) == 2:
                group = discovery.api_group(parts[1])
                if group is None:
                    raise NOT_FOUND
                return self._json(group)
            return self._resource_route(parts[1], parts[2], parts[3:])
        if path == "/version":
            return self._json(discovery.VERSION)
        if parts[:2] == ["openapi", "v3"]:
            return self._openapi("/".join(parts[2:]))
        raise NOT_FOUND

    def _json(self, doc: dict[str, Any]) -> Response:
        if self.command != "GET":
            raise METHOD_NOT_ALLOWED
        return 200, json.dumps(doc, separators=(",", ":")).encode(), "application/json"

    def _openapi(self, group_version: str) -> Response:
        """`/openapi/v3` and its per-group-version documents (openapi.py), in JSON whatever was asked."""
        if not group_version:
            return self._json(openapi.root())
        body = openapi.documents().get(group_version)
        if body is None:
            raise NOT_FOUND
        if self.command != "GET":
            raise METHOD_NOT_ALLOWED
        return 200, body, "application/json"

    def _resource_route(self, group: str, version: str, rest: list[str]) -> Response:
        query, user = self._query, self._user
        if not rest:
            doc = discovery.resource_list(group, version)
            if doc is None:
                raise NOT_FOUND
            return self._json(doc)
        namespace = ""
        if rest[0] == "namespaces" and len(rest) >= 3:
            namespace, rest = rest[1], rest[2:]
        rtype = BY_PATH.get((group, version, rest[0]))
        if rtype is not None and rtype.plural == "pods" and len(rest) == 3 and rest[2] == "eviction":
            return self._evict(namespace, rest[1])
        if rtype is None or len(rest) > 2 or (namespace and not rtype.namespaced):
            raise NOT_FOUND
        name = rest[1] if len(rest) == 2 else ""
        if query.get("watch") in ("true", "1"):
            raise ApiError(405, "watch is not supported by the kube-rehash simulator")
        scope_ns = name if rtype.plural == "namespaces" and name else namespace
        verb = verb_for(self.command, bool(name))
        attr_name = "" if verb == "create" else name
        self.server.authz.check(user, Attributes(verb, group, rtype.plural, scope_ns, attr_name))
        applying = verb == "patch" and self.headers.get("Content-Type", "").startswith(APPLY)
        if applying and not self.server.store.exists(
            rtype, namespace, name
        ):  # a create too, as on a real server
            self.server.authz.check(user, Attributes("create", group, rtype.plural, scope_ns, name))
        dry_run = self._dry_run(query)
        if group == events_v1.GROUP:
            return events_v1.serve(
                self.command, self._body, lambda body: self._as_core(namespace, name, dry_run, body)
            )
        return self._dispatch(rtype, namespace, name, dry_run)

    def _as_core(self, namespace: str, name: str, dry_run: bool, body: bytes) -> Response:
        self._body = body
        return self._dispatch(BY_PATH[("", "v1", "events")], namespace, name, dry_run)

    def _evict(self, namespace: str, name: str) -> Response:
        """POST pods/{name}/eviction (evictions.py): authorized as `create` on `pods/eviction`."""
        if self.command != "POST" or not namespace:
            raise METHOD_NOT_ALLOWED if namespace else NOT_FOUND
        self.server.authz.check(self._user, Attributes("create", "", "pods/eviction", namespace, name))
        body = evict(
            self.server.store, namespace, name, self._decode(self._body), dry_run=self._dry_run(self._query)
        )
        return 201, body, "application/json"

    @staticmethod
    def _dry_run(query: dict[str, str]) -> bool:
        value = query.get("dryRun")
        if value is None or value == "":
            return False
        if value != "All":
            raise ApiError(400, f'dryRun: Unsupported value: "{value}": supported values: "All"')
        return True

    def _dispatch(self, rtype: ResourceType, namespace: str, name: str, dry_run: bool) -> Response:
        store = self.server.store
        method = self.command
        query, body = self._query, self._body
        include = query.get("includeObject", "")
        if not name:
            if method == "GET":
                rep = render.negotiate(self.headers.get("Accept"), is_list=True)
                try:
                    limit = int(query.get("limit") or 0)
                except ValueError:
                    raise ApiError(400, f"limit: Invalid value: {query.get('limit')!r}") from None
                page = store.list_page(
                    rtype,
                    namespace or None,
                    label_selector=query.get("labelSelector", ""),
                    field_selector=query.get("fieldSelector", ""),
                    limit=max(limit, 0),
                    continue_token=query.get("continue", ""),
                )
                return 200, render.list_body(rtype, page, rep, include), rep.content_type
            if method == "POST":
                rep = render.negotiate(self.headers.get("Accept"), is_list=False)
                obj = self._decode(body)
                fields.check(obj, fields.directive(query, method), self._warnings)
                if rtype.namespaced and not store.exists("namespaces", None, namespace):
                    raise ApiError(
                        404,
                        f'namespaces "{namespace}" not found',
                        details={"name": namespace, "kind": "namespaces"},
                    )
                created = store.create(
                    obj,
                    namespace=namespace or None,
                    dry_run=dry_run,
                    ensure_namespace=False,
                    keep_status=False,
                    resource=rtype,
                )
                return 201, self._object(rtype, created, rep, include), rep.content_type
            raise METHOD_NOT_ALLOWED
        rep = render.negotiate(self.headers.get("Accept"), is_list=False)
        if method == "GET":
            entry = store.get_entry(rtype, namespace, name)
            return 200, render.object_body(entry, rep, include), rep.content_type
        if method == "PUT":
            obj = self._decode(body)
            fields.check(obj, fields.directive(query, method), self._warnings)
            updated = store.update(
                obj, namespace=namespace or None, name=name, dry_run=dry_run, resource=rtype
            )
            return 200, self._object(rtype, updated, rep, include), rep.content_type
        if method == "PATCH":
            mode = fields.directive(query, method)
            existed = store.exists(rtype, namespace, name)
            patched = store.patch(
                rtype,
                namespace,
                name,
                body,
                self.headers.get("Content-Type", ""),
                dry_run=dry_run,
                field_manager=query.get("fieldManager"),
                inspect=lambda new, old: fields.check(new, mode, self._warnings, decoded=False, previous=old),
            )
            return (200 if existed else 201), self._object(rtype, patched, rep, include), rep.content_type
        if method == "DELETE":
            deleted = store.delete(rtype, namespace, name, dry_run=dry_run)
            details: dict[str, Any] = {"name": name, "kind": rtype.plural, "uid": deleted["metadata"]["uid"]}
            if rtype.group:
                details["group"] = rtype.group
            status = {
                "kind": "Status",
                "apiVersion": "v1",
                "metadata": {},
                "status": "Success",
                "details": details,
            }
            return 200, json.dumps(status, separators=(",", ":")).encode(), "application/json"
        raise METHOD_NOT_ALLOWED

    def _decode(self, body: bytes) -> dict[str, Any]:
        """A request body in any form kube-apiserver reads for built-in kinds: JSON, YAML or protobuf."""
        content_type = self.headers.get("Content-Type", "")
        if protobuf.is_protobuf(content_type):
            return protobuf.decode(body)
        if content_type.split(";", 1)[0].strip().lower() == "application/yaml":
            try:
                obj = yaml.safe_load(body)
            except yaml.YAMLError as exc:
                raise ApiError(400, f"couldn't get version/kind; yaml parse error: {exc}") from None
        else:
            try:
                obj = json.loads(body)
            except ValueError as exc:
                raise ApiError(400, f"couldn't get version/kind; json parse error: {exc}") from None
        if not isinstance(obj, dict):
            raise ApiError(400, "couldn't get version/kind; json parse error: not an object")
        return obj

    @staticmethod
    def _object(rtype: ResourceType, obj: dict[str, Any], rep: render.Representation, include: str) -> bytes:
        return render.object_body(Entry(rtype, obj), rep, include)
