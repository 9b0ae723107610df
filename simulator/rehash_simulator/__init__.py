"""An embedded Kubernetes API server simulator for kube-rehash's demo, tests and benchmarks.

`Simulator` serves real HTTPS on 127.0.0.1 with the Kubernetes REST conventions kube-rehash, the
official Python client and kubectl rely on: discovery, OpenAPI v3, protobuf request bodies, get/list
(paged)/create/update/patch/delete, server-side field validation, metadata-only and Table responses, v1
Status errors, bearer-token and client-certificate authentication, RBAC, dry-run, and fault injection.
It is its own distribution, `kube-rehash-simulator`
(installed by the `kube-rehash[simulator]` extra), and imports nothing from `reconcile`.

    with Simulator().start() as sim:
        sim.store.create({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a"}})
        path = sim.write_kubeconfig(tmp_path / "kubeconfig")

tests/conformance plays the requests kube-rehash makes against this simulator and the real kube-apiserver
and compares status codes, Status reasons and details and response shapes (docs/conformance.md). Known
limits, each pinned there to its exact difference or outside what kube-rehash sends:

- No API defaulting: workloads and Jobs are stored as sent (no strategies, history limits or pod template
  defaults, no generated Job selector and labels). A DaemonSet's template-generation annotation is kept.
- No controllers: `status` is never written (only seeded), no ReplicaSets, Pods, ControllerRevisions or
  `deployment.kubernetes.io/revision`; a created Job never runs; a namespace is deleted at once.
- No managedFields of its own: `fieldManager` is accepted and not recorded; server-side apply merges
  without owners. Seeded managedFields are kept, served (metadata-only lists included) and carried
  through writes unchanged, except that a write changing a ConfigMap's or Secret's content replaces them
  with one entry owning it, timed then (opt-in `content_times`: that entry on every ConfigMap and Secret).
- Pods, ReplicaSets and PodDisruptionBudgets are stored as seeded (no controller creates them); the
  `pods/eviction` subresource deletes a pod unless its budget refuses (evictions.py).
- No watches (405). Request bodies in JSON, YAML or, for the built-in kinds, protobuf (protobuf.py: what
  kubectl's generated clients send); responses in JSON only (no protobuf or CBOR answers). Discovery lists
  only the resources it serves, with the verbs it implements (no watch, deletecollection or
  storageVersionHash), and no aggregated discovery.
- OpenAPI v3 (`/openapi/v3`, openapi.py) for the served kinds, with field schemas but no descriptions,
  defaults or `required`; no `/openapi/v2`. `fieldValidation` (Strict, Warn, Ignore) checks unknown fields
  of the built-in kinds (fields.py), not duplicate ones; custom resources are not checked.
- Continue tokens are its own (a snapshot per list, expiring after 5 minutes or 512 newer lists, then 410);
  error messages imitate kube-apiserver's wording but are not guaranteed to be identical.
"""

from __future__ import annotations

import base64
import pathlib
import secrets
import ssl
import tempfile
import threading
from collections.abc import Iterable, Mapping
from types import TracebackType
from typing import Any

import yaml

from .authz import Authenticator, RBACAuthorizer
from .controllers import RolloutController
from .errors import ApiError
from .faults import FaultRule, Faults
from .log import LogEntry, RequestLog
from .server import SimulatorServer
from .store import Store
from .tls import Authority

__version__ = "0.1.0"  # kept equal to reconcile.__version__ (tests/test_packaging.py)

__all__ = ["ApiError", "FaultRule", "Faults", "LogEntry", "RequestLog", "Simulator", "Store"]

ADMIN_USER = "kube-rehash-sim-admin"


class Simulator:
    """One simulated API server. Create, `start()`, use `url`/`ca_pem`/`write_kubeconfig`, `stop()`."""

    def __init__(
        self,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        admin_token: str | None = None,
        cert_hosts: tuple[str, ...] | None = None,
        rollout_seconds: float | None = None,
        content_times: bool = False,
    ) -> None:
        """`cert_hosts`: the names and IPs the serving certificate is valid for (default: the host,
        127.0.0.1 and localhost). `rollout_seconds`: run a rollout controller that finishes each workload's
        rollout that long after its template changed (controllers.py); None: rollouts never finish.
        `content_times`: ConfigMaps and Secrets carry a managedFields entry timed at their last content
        change, as kube-apiserver's (Store); off, they carry none."""
        self.host = host
        self.port = port
        self.admin_token = admin_token or secrets.token_urlsafe(24)
        self.store = Store(content_times=content_times)
        self.faults = Faults()
        self.log = RequestLog()
        self.authn = Authenticator()
        self.authz = RBACAuthorizer()
        self.authn.add_token(self.admin_token, ADMIN_USER, ("system:masters",), admin=True)
        self.authority = Authority.create(
            cert_hosts or tuple(dict.fromkeys(("127.0.0.1", "localhost", host)))
        )
        self.ca_pem = self.authority.ca_pem
        self._server: SimulatorServer | None = None
        self._thread: threading.Thread | None = None
        self.store.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "default"}})
        self.rollouts = (
            RolloutController(self.store, rollout_seconds) if rollout_seconds is not None else None
        )

    # -- lifecycle -----------------------------------------------------------------------------------

    def _ssl_context(self) -> ssl.SSLContext:
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.minimum_version = ssl.TLSVersion.TLSv1_2
        with tempfile.TemporaryDirectory(prefix="kube-rehash-sim-") as tmp:
            cert = pathlib.Path(tmp, "server.crt")
            key = pathlib.Path(tmp, "server.key")
            cert.write_bytes(self.authority.server_cert_pem)
            key.write_bytes(self.authority.server_key_pem)
            key.chmod(0o600)
            context.load_cert_chain(cert, key)
        context.load_verify_locations(cadata=self.ca_pem.decode())
        context.verify_mode = ssl.CERT_OPTIONAL
        return context

    def start(self) -> Simulator:
        """Bind and serve in a daemon thread; returns self."""
        if self._server is not None:
            return self
        server = SimulatorServer(
            (self.host, self.port),
            self._ssl_context(),
            store=self.store,
            faults=self.faults,
            log=self.log,
            authn=self.authn,
            authz=self.authz,
        )
        self._server = server
        self.port = int(server.server_address[1])
        self._thread = threading.Thread(
            target=server.serve_forever,
            kwargs={"poll_interval": 0.1},
            daemon=True,
            name=f"kube-rehash-sim-{self.port}",
        )
        self._thread.start()
        if self.rollouts is not None:
            self.rollouts.start()
        return self

    def stop(self) -> None:
        """Stop serving and close the listening socket (idempotent)."""
        if self.rollouts is not None:
            self.rollouts.stop()
        server, self._server = self._server, None
        if server is not None:
            server.shutdown()
            server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None

    def __enter__(self) -> Simulator:
        return self.start()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()

    @property
    def url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"https://{host}:{self.port}"

    # -- identities and policy -----------------------------------------------------------------------

    def add_token(self, token: str, user: str, groups: Iterable[str] = ()) -> None:
        """Accept `token` as `user` (a `system:serviceaccount:NS:NAME` user also gets the SA groups)."""
        self.authn.add_token(token, user, groups)

    def load_rbac(self, source: str | Mapping[str, Any] | Iterable[Any]) -> None:
        """Turn RBAC on with exactly these Role/ClusterRole/(Cluster)RoleBinding documents (replaces any
        previous policy). YAML text (multi-doc), a dict, a List, or an iterable of dicts/YAML strings."""
        self.authz.load(source)

    def reset_rbac(self) -> None:
        """Back to the start state: no policy, every authenticated user allowed."""
        self.authz.reset()

    def issue_client_cert(self, user: str, groups: Iterable[str] = ()) -> tuple[bytes, bytes]:
        """(cert_pem, key_pem) signed by the simulator CA; CN = user, O = groups."""
        return self.authority.issue_client_cert(user, groups)

    def write_kubeconfig(
        self,
        path: str | pathlib.Path,
        *,
        token: str | None = None,
        client_cert: tuple[bytes, bytes] | None = None,
        context: str = "kube-rehash-sim",
        namespace: str | None = None,
    ) -> pathlib.Path:
        """Write a kubeconfig for this server (CA embedded; the admin token unless `token` or
        `client_cert` is given) and return its path."""
        user: dict[str, str] = {}
        if client_cert is not None:
            user["client-certificate-data"] = base64.b64encode(client_cert[0]).decode()
            user["client-key-data"] = base64.b64encode(client_cert[1]).decode()
        if token is not None or client_cert is None:
            user["token"] = token if token is not None else self.admin_token
        ctx: dict[str, str] = {"cluster": context, "user": context}
        if namespace:
            ctx["namespace"] = namespace
        config = {
            "apiVersion": "v1",
            "kind": "Config",
            "clusters": [
                {
                    "name": context,
                    "cluster": {
                        "server": self.url,
                        "certificate-authority-data": base64.b64encode(self.ca_pem).decode(),
                    },
                }
            ],
            "users": [{"name": context, "user": user}],
            "contexts": [{"name": context, "context": ctx}],
            "current-context": context,
            "preferences": {},
        }
        target = pathlib.Path(path)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(yaml.safe_dump(config, sort_keys=False))
        target.chmod(0o600)
        return target
