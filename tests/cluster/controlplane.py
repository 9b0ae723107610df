"""Start and stop a real Kubernetes control plane on loopback, for tests/real and `make cluster`.

Why: the simulator is our own reading of the API; the real kube-apiserver (RBAC, admission, audit), the real
controllers (rolling updates, ControllerRevisions, Jobs) and kwok's fake nodes show what actually happens in a
cluster. The binaries come from scripts/build-control-plane.sh (pinned in tests/cluster/go.mod); this module
only runs them: etcd with a temp data dir, kube-apiserver with generated certificates, a static token file,
service account signing keys and an audit log, kube-controller-manager and kube-scheduler without leader
election, and kwok managing a few fake Nodes so pods are scheduled and become Ready. Every port is picked at
random, every process runs in its own process group and is killed on exit (context manager, atexit, and the
kernel's parent-death signal), and the temp dir is removed.
"""

from __future__ import annotations

import atexit
import base64
import contextlib
import ctypes
import json
import os
import re
import secrets
import shutil
import signal
import socket
import ssl
import subprocess
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

from rehash_simulator import tls
from tests.cluster.versions import selected_version

REPO = Path(__file__).resolve().parents[2]
CACHE = REPO / ".cache" / "control-plane"
BINARIES = ("etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler", "kwok")
KWOK_STAGES = "kwok-stages.yaml"
KWOK_MODULE = REPO / "tests" / "cluster" / "kwok" / "go.mod"
# kwok's Stage CRD, inside the pinned kwok module (for `control_plane(kwok_stage_crds=True)`).
KWOK_STAGE_CRD = Path("kustomize", "crd", "bases", "kwok.x-k8s.io_stages.yaml")
STAGES_API = "/apis/kwok.x-k8s.io/v1alpha1/stages"
# Users of the static token file besides the components: tests bind them to roles through RBAC.
TEST_USERS = tuple(f"rehash-user-{i}" for i in range(4))
KWOK_NODE_ANNOTATION = "kwok.x-k8s.io/node"
CONTROLLERS = (
    "deployment-controller",
    "replicaset-controller",
    "statefulset-controller",
    "daemonset-controller",
    "job-controller",
    "cronjob-controller",
    "garbage-collector-controller",
    "namespace-controller",
    "serviceaccount-controller",
    # Lifts the not-ready taint admission puts on every new Node once kwok reports it Ready.
    "node-lifecycle-controller",
    # Keeps PodDisruptionBudgets' status, without which every eviction of a budgeted pod is refused.
    "disruption-controller",
)
AUDIT_POLICY = """\
apiVersion: audit.k8s.io/v1
kind: Policy
# One event per request, when it completes (watches also log when they start).
omitStages: [RequestReceived]
rules:
  # Patches of the workload kinds with their bodies (requestObject: the JSON patch), so a test can tell a
  # patch that rolled (it sets the pod template's annotation) from one that only rewrote bookkeeping.
  # Never Secrets or ConfigMaps: their values stay out of the log.
  - level: Request
    verbs: [patch]
    resources:
      - group: apps
        resources: [deployments, statefulsets, daemonsets]
  - level: Metadata
"""


class ControlPlaneError(RuntimeError):
    """The control plane could not be started (missing binaries, a component exited, a readiness timeout)."""


# -- binaries ------------------------------------------------------------------------------------------------


def pinned_version() -> str:
    """The k8s.io/kubernetes release the selected version's go.mod pins (the cache directory's name): the
    newest of tests/cluster/versions.txt (tests/cluster/go.mod), or the minor $KUBE_VERSION names."""
    go_mod = selected_version().module / "go.mod"
    match = re.search(r"^\s*k8s\.io/kubernetes\s+(v\S+)", go_mod.read_text(), re.M)
    if not match:
        raise ControlPlaneError(f"{go_mod} does not pin k8s.io/kubernetes")
    return match[1]


def kwok_stage_crd() -> Path:
    """kwok's Stage CRD from the Go module cache, at the version tests/cluster/kwok/go.mod pins."""
    match = re.search(r"^\s*(?:require\s+)?sigs\.k8s\.io/kwok\s+(v\S+)", KWOK_MODULE.read_text(), re.M)
    if not match:
        raise ControlPlaneError(f"{KWOK_MODULE} does not pin sigs.k8s.io/kwok")
    cache = os.environ.get("GOMODCACHE") or str(
        Path(os.environ.get("GOPATH") or Path.home() / "go") / "pkg/mod"
    )
    path = Path(cache) / f"sigs.k8s.io/kwok@{match[1]}" / KWOK_STAGE_CRD
    if not path.is_file():
        raise ControlPlaneError(
            f"kwok's Stage CRD is not in the Go module cache: {path} (run `make control-plane`)"
        )
    return path


def binary_dir() -> Path:
    """Where the built binaries are: $KUBE_REHASH_CONTROL_PLANE_DIR, else .cache/control-plane/<version>."""
    override = os.environ.get("KUBE_REHASH_CONTROL_PLANE_DIR")
    return Path(override) if override else CACHE / pinned_version()


def missing_binaries(directory: Path | None = None) -> list[str]:
    """The files `make control-plane` should have produced and did not (empty when all are there)."""
    directory = directory or binary_dir()
    wanted = [*BINARIES, KWOK_STAGES]
    return [name for name in wanted if not (directory / name).is_file()]


# -- processes -----------------------------------------------------------------------------------------------

_LIVE: set[subprocess.Popen[bytes]] = set()


def _die_with_parent() -> None:
    """In the child before exec: the kernel SIGKILLs it when the parent dies (even by SIGKILL); Linux."""
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG


def _stop(proc: subprocess.Popen[bytes], grace: float = 10.0) -> None:
    """SIGTERM the process group, SIGKILL it after `grace` seconds."""
    if proc.poll() is None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(grace)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    with contextlib.suppress(ProcessLookupError):  # stray children of the group, if any
        os.killpg(proc.pid, signal.SIGKILL)
    _LIVE.discard(proc)


@atexit.register
def _stop_all() -> None:
    for proc in list(_LIVE):
        _stop(proc, grace=2.0)


@dataclass
class Component:
    """One running binary and its log file."""

    name: str
    proc: subprocess.Popen[bytes]
    log: Path

    def check(self) -> None:
        """Raise with the end of the log when the process has exited."""
        if self.proc.poll() is not None:
            raise ControlPlaneError(f"{self.name} exited with {self.proc.returncode}:\n{self.tail()}")

    def tail(self, lines: int = 40) -> str:
        text = self.log.read_text(errors="replace") if self.log.exists() else ""
        return "\n".join(text.splitlines()[-lines:])


def free_port() -> int:
    """A port the kernel has just handed out on 127.0.0.1 (never a fixed one)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_for(what: str, probe: Callable[[], bool], timeout: float, components: list[Component]) -> None:
    """Poll `probe` until it is true; fail early, with its log, when a component has exited."""
    deadline = time.monotonic() + timeout
    while True:
        for component in components:
            component.check()
        with contextlib.suppress(OSError, ValueError):
            if probe():
                return
        if time.monotonic() > deadline:
            logs = "\n".join(f"--- {c.name}:\n{c.tail(15)}" for c in components)
            raise ControlPlaneError(f"timed out after {timeout:.0f} s waiting for {what}\n{logs}")
        time.sleep(0.2)


# -- certificates and keys -----------------------------------------------------------------------------------


# The apiserver's names: loopback for the tests, the in-cluster service names and IP for pods' clients.
APISERVER_HOSTS = (
    "127.0.0.1",
    "10.0.0.1",
    "localhost",
    "kubernetes",
    "kubernetes.default",
    "kubernetes.default.svc",
    "kubernetes.default.svc.cluster.local",
)


def write_pki(directory: Path) -> dict[str, Path]:
    """A CA, the apiserver's serving certificate and service-account signing keys, from the simulator's
    CA code (rehash_simulator.tls, the one implementation in the repository)."""
    ca = tls.make_ca("kube-rehash test CA")
    cert, key = tls.issue(ca, "kube-apiserver", server_hosts=APISERVER_HOSTS)
    sa_key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    files = {
        "ca": directory / "ca.crt",
        "cert": directory / "apiserver.crt",
        "key": directory / "apiserver.key",
        "sa-key": directory / "sa.key",
        "sa-pub": directory / "sa.pub",
    }
    files["ca"].write_bytes(tls.cert_pem(ca[0]))
    files["cert"].write_bytes(tls.cert_pem(cert))
    files["key"].write_bytes(tls.key_pem(key))
    files["sa-key"].write_bytes(
        sa_key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        )
    )
    files["sa-pub"].write_bytes(
        sa_key.public_key().public_bytes(
            serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
        )
    )
    for name in ("key", "sa-key"):
        files[name].chmod(0o600)
    return files


# -- kubeconfig and audit ------------------------------------------------------------------------------------


def write_kubeconfig(path: Path, server: str, ca: Path, token: str, user: str = "user") -> Path:
    """A kubeconfig (JSON, which is YAML) with one cluster, one token user and a current context."""
    config = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [
            {"name": "kube-rehash-test", "cluster": {"server": server, "certificate-authority": str(ca)}}
        ],
        "users": [{"name": user, "user": {"token": token}}],
        "contexts": [{"name": user, "context": {"cluster": "kube-rehash-test", "user": user}}],
        "current-context": user,
    }
    path.write_text(json.dumps(config, indent=2) + "\n")
    path.chmod(0o600)
    return path


@dataclass(frozen=True)
class AuditEntry:
    """One completed request from the apiserver's audit log."""

    verb: str
    uri: str
    user: str
    code: int
    resource: str = ""
    namespace: str = ""
    name: str = ""

    @property
    def is_write(self) -> bool:
        return self.verb in ("create", "update", "patch", "delete", "deletecollection")


def parse_audit(lines: list[str]) -> list[AuditEntry]:
    """Completed requests (stage ResponseComplete or Panic) of the JSON-lines audit log, in log order."""
    entries = []
    for line in lines:
        if not line.strip():
            continue
        event = json.loads(line)
        if event.get("stage") not in ("ResponseComplete", "Panic"):
            continue
        ref = event.get("objectRef") or {}
        entries.append(
            AuditEntry(
                verb=event.get("verb", ""),
                uri=event.get("requestURI", ""),
                user=(event.get("user") or {}).get("username", ""),
                code=int((event.get("responseStatus") or {}).get("code", 0)),
                resource=ref.get("resource", ""),
                namespace=ref.get("namespace", ""),
                name=ref.get("name", ""),
            )
        )
    return entries


# -- the running control plane -------------------------------------------------------------------------------


@dataclass
class ControlPlane:
    """A running control plane: where it listens, how to authenticate, and its audit log."""

    server: str
    ca: Path
    kubeconfig: Path
    audit_log: Path
    workdir: Path
    tokens: dict[str, str]  # static token file: user -> token (admin and TEST_USERS)
    components: list[Component] = field(default_factory=list)
    nodes: list[str] = field(default_factory=list)
    etcd_url: str = ""
    apiserver_argv: list[str] = field(default_factory=list)

    # HTTP
    # -----------------------------------------------------------------------------------------------------

    def _context(self) -> ssl.SSLContext:
        return ssl.create_default_context(cafile=str(self.ca))

    def request(
        self, method: str, path: str, body: Any = None, *, token: str | None = None, content_type: str = ""
    ) -> tuple[int, Any]:
        """One API request (admin unless `token`); returns (status code, decoded JSON body or text)."""
        data = None if body is None else json.dumps(body).encode()
        headers = {"Authorization": f"Bearer {token or self.tokens['admin']}", "Accept": "application/json"}
        if data is not None:
            headers["Content-Type"] = content_type or "application/json"
        req = urllib.request.Request(self.server + path, data=data, method=method, headers=headers)
        try:
            with urllib.request.urlopen(req, context=self._context(), timeout=30) as resp:
                status, raw = resp.status, resp.read()
        except urllib.error.HTTPError as exc:
            status, raw = exc.code, exc.read()
        try:
            return status, json.loads(raw)
        except ValueError:
            return status, raw.decode(errors="replace")

    def api(self, method: str, path: str, body: Any = None, **kw: Any) -> Any:
        """`request` that insists on a 2xx answer."""
        status, answer = self.request(method, path, body, **kw)
        if not 200 <= status < 300:
            raise ControlPlaneError(f"{method} {path}: {status} {answer}")
        return answer

    def version(self) -> dict[str, Any]:
        """The server's /version document (gitVersion, goVersion, ...)."""
        answer: dict[str, Any] = self.api("GET", "/version")
        return answer

    def kubeconfig_for(self, user: str, path: Path) -> Path:
        """A kubeconfig authenticating as one of the static-token users (TEST_USERS, or admin)."""
        return write_kubeconfig(path, self.server, self.ca, self.tokens[user], user)

    def kubeconfig_with_token(self, token: str, path: Path, user: str = "token-user") -> Path:
        """A kubeconfig for any bearer token (e.g. a service account's, from the TokenRequest API)."""
        return write_kubeconfig(path, self.server, self.ca, token, user)

    # audit
    # ----------------------------------------------------------------------------------------------------

    def audit_mark(self) -> int:
        """A position in the audit log: pass it to `audit(since=...)` to see only what came after."""
        self.sync_audit()
        return len(self.audit_lines()) if self.audit_log.exists() else 0

    def audit_lines(self) -> list[str]:
        """The audit log's whole lines: kube-apiserver may be writing the last one as it is read (another
        client's request, after our marker), and that part is left for a later read."""
        text = self.audit_log.read_text()
        return text[: text.rfind("\n") + 1].splitlines()

    def sync_audit(self, timeout: float = 10.0) -> None:
        """Wait until requests answered so far are in the audit log (a marker request of ours is logged)."""
        marker = secrets.token_hex(8)
        self.request("GET", f"/api/v1/namespaces/default?audit-marker={marker}")
        deadline = time.monotonic() + timeout
        while marker not in self.audit_log.read_text():
            if time.monotonic() > deadline:
                raise ControlPlaneError("the audit log did not record a request within 10 s")
            time.sleep(0.05)

    def audit(self, since: int = 0, user: str | None = None) -> list[AuditEntry]:
        """Completed requests logged after position `since`, optionally only those of one user."""
        self.sync_audit()
        entries = parse_audit(self.audit_lines()[since:])
        return [e for e in entries if user is None or e.user == user]

    # faults: kube-apiserver killed and restarted, etcd compacted (tests/chaos_real)
    # ----------------------------------------------------------------------------------------------------

    def apiserver(self) -> Component:
        """The running (or last started) kube-apiserver component."""
        return next(c for c in reversed(self.components) if c.name == "kube-apiserver")

    def kill_apiserver(self) -> None:
        """SIGKILL kube-apiserver only (etcd, controllers and kwok keep running); waits until it is gone."""
        component = self.apiserver()
        with contextlib.suppress(ProcessLookupError):
            os.killpg(component.proc.pid, signal.SIGKILL)
        component.proc.wait(10)
        _LIVE.discard(component.proc)
        self.components.remove(component)

    def start_apiserver(self, timeout: float = 60.0, *, probe: str = "/readyz") -> None:
        """Start kube-apiserver again with the same flags (same port, certificates, tokens, etcd and audit
        log) and wait for `probe` (/livez for a server that cannot become ready, e.g. a watch cache that
        cannot load); the clients that were connected reconnect on their own."""
        if any(c.name == "kube-apiserver" for c in self.components):
            raise ControlPlaneError("kube-apiserver is still running: kill_apiserver() first")
        # Before etcd's successors in the list, so that stop order stays kwok ... etcd.
        spawned: list[Component] = []
        component = _spawn("kube-apiserver", self.apiserver_argv, self.workdir, spawned)
        etcd_at = next(i for i, c in enumerate(self.components) if c.name == "etcd")
        self.components.insert(etcd_at + 1, component)
        context = self._context()
        wait_for(
            f"kube-apiserver {probe} after a restart",
            lambda: _get_ok(f"{self.server}{probe}", context, self.tokens["admin"]),
            timeout,
            [component],
        )

    def etcd(self, method: str, body: dict[str, Any]) -> dict[str, Any]:
        """One call to etcd's gRPC gateway (JSON over HTTP on the client URL, e.g. "kv/range")."""
        req = urllib.request.Request(
            f"{self.etcd_url}/v3/{method}",
            data=json.dumps(body).encode(),
            method="POST",
            headers={"Content-Type": "application/json"},
        )
        with urllib.request.urlopen(req, timeout=30) as resp:
            answer: dict[str, Any] = json.loads(resp.read())
        return answer

    def etcd_revision(self) -> int:
        """etcd's current revision (the header of any range request)."""
        answer = self.etcd("kv/range", {"key": base64.b64encode(b"/registry/").decode(), "limit": 1})
        return int(answer["header"]["revision"])

    def compact_etcd(self) -> int:
        """Compact etcd up to its current revision (physical: the old revisions are gone when this
        returns), as kube-apiserver's own compactor or `etcdctl compaction --physical` does; returns it."""
        revision = self.etcd_revision()
        self.etcd("kv/compaction", {"revision": revision, "physical": True})
        return revision


def _spawn(
    name: str, argv: list[str], workdir: Path, components: list[Component], env: dict[str, str] | None = None
) -> Component:
    """Start one binary logging to workdir/<name>.log (`env`: its whole environment; None: ours)."""
    log = workdir / f"{name}.log"
    with log.open("ab") as out:
        proc = subprocess.Popen(  # its own process group, killed as a whole on stop
            argv,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            cwd=workdir,
            env=env,
            start_new_session=True,
            preexec_fn=_die_with_parent,  # noqa: PLW1509 (a single prctl call, before exec)
        )
    _LIVE.add(proc)
    component = Component(name, proc, log)
    components.append(component)
    return component


def _get_ok(url: str, context: ssl.SSLContext | None = None, token: str | None = None) -> bool:
    req = urllib.request.Request(url, headers={"Authorization": f"Bearer {token}"} if token else {})
    try:
        with urllib.request.urlopen(req, context=context, timeout=5) as resp:
            return bool(resp.status == 200)
    except urllib.error.HTTPError:
        return False


def _node(name: str) -> dict[str, Any]:
    labels = {"kubernetes.io/hostname": name, "kubernetes.io/os": "linux", "kubernetes.io/arch": "amd64"}
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "name": name,
            "labels": {**labels, "type": "kwok"},
            "annotations": {KWOK_NODE_ANNOTATION: "fake"},
        },
    }


def _node_ready(cp: ControlPlane, name: str) -> bool:
    """Ready (kwok's node stages) and schedulable (the node lifecycle controller lifted every taint)."""
    status, node = cp.request("GET", f"/api/v1/nodes/{name}")
    if status != 200:
        return False
    conditions = node.get("status", {}).get("conditions", [])
    ready = any(c.get("type") == "Ready" and c.get("status") == "True" for c in conditions)
    return ready and not node.get("spec", {}).get("taints")


@contextlib.contextmanager
def control_plane(
    binaries: Path | None = None,
    *,
    nodes: int = 3,
    keep_workdir: bool = False,
    timeout: float = 90.0,
    kwok_stage_crds: bool = False,
    apiserver_flags: tuple[str, ...] = (),
) -> Iterator[ControlPlane]:
    """Start etcd, kube-apiserver, kube-controller-manager, kube-scheduler and kwok with `nodes` fake Nodes.

    Yields when the apiserver is ready, the controllers run (the `default` ServiceAccount exists) and every
    Node is Ready. Everything is stopped, and the temp dir removed (unless `keep_workdir`), on exit.

    With `kwok_stage_crds`, kwok reads its stages from Stage objects (kwok `--enable-crds=Stage`) instead of
    a file: the CRD and the same default stages are created first, and a test can add its own Stage at run
    time (POST to STAGES_API), e.g. to keep some pods from ever becoming Ready.

    `apiserver_flags` are added to kube-apiserver's command line (e.g. a watch-cache setting).
    """
    bin_dir = binaries or binary_dir()
    if missing := missing_binaries(bin_dir):
        raise ControlPlaneError(f"missing in {bin_dir}: {', '.join(missing)} (run `make control-plane`)")
    workdir = Path(tempfile.mkdtemp(prefix="kube-rehash-cp-"))
    components: list[Component] = []
    try:
        yield _start(
            bin_dir,
            workdir,
            components,
            nodes,
            timeout,
            kwok_stage_crds=kwok_stage_crds,
            apiserver_flags=apiserver_flags,
        )
    finally:
        for component in reversed(components):  # kwok first, etcd last
            _stop(component.proc)
        if not keep_workdir:
            shutil.rmtree(workdir, ignore_errors=True)


def _install_stage_crds(cp: ControlPlane, stages: Path, timeout: float, components: list[Component]) -> None:
    """kwok's Stage CRD, established, then the default stages of `stages` as Stage objects."""
    crd = yaml.safe_load(kwok_stage_crd().read_text())
    cp.api("POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", crd)

    def established() -> bool:
        path = f"/apis/apiextensions.k8s.io/v1/customresourcedefinitions/{crd['metadata']['name']}"
        conditions = (cp.api("GET", path).get("status") or {}).get("conditions") or []
        return any(c.get("type") == "Established" and c.get("status") == "True" for c in conditions)

    wait_for("kwok's Stage CRD to be established", established, timeout, components)
    for stage in yaml.safe_load_all(stages.read_text()):
        if stage:
            cp.api("POST", STAGES_API, stage)


def _start(
    bin_dir: Path,
    workdir: Path,
    components: list[Component],
    nodes: int,
    timeout: float,
    *,
    kwok_stage_crds: bool = False,
    apiserver_flags: tuple[str, ...] = (),
) -> ControlPlane:
    pki = write_pki(workdir)
    users = {
        "admin": "system:masters",
        "system:kube-controller-manager": "system:masters",
        "system:kube-scheduler": "system:masters",
        "kwok": "system:masters",
        **dict.fromkeys(TEST_USERS, ""),
    }
    tokens = {user: secrets.token_urlsafe(24) for user in users}
    token_file = workdir / "tokens.csv"
    token_file.write_text(
        "".join(f'{tokens[u]},{u},uid-{i},"{groups}"\n' for i, (u, groups) in enumerate(users.items()))
    )
    token_file.chmod(0o600)
    (workdir / "audit-policy.yaml").write_text(AUDIT_POLICY)

    etcd_port, peer_port, api_port = free_port(), free_port(), free_port()
    etcd_url, peer_url = f"http://127.0.0.1:{etcd_port}", f"http://127.0.0.1:{peer_port}"
    _spawn(
        "etcd",
        [
            str(bin_dir / "etcd"),
            "--name=default",
            f"--data-dir={workdir / 'etcd'}",
            f"--listen-client-urls={etcd_url}",
            f"--advertise-client-urls={etcd_url}",
            f"--listen-peer-urls={peer_url}",
            f"--initial-advertise-peer-urls={peer_url}",
            f"--initial-cluster=default={peer_url}",
            "--unsafe-no-fsync",
            "--log-level=warn",
        ],
        workdir,
        components,
    )
    wait_for("etcd /health", lambda: _get_ok(f"{etcd_url}/health"), timeout, components)

    server = f"https://127.0.0.1:{api_port}"
    audit_log = workdir / "audit.log"
    apiserver_argv = [
        str(bin_dir / "kube-apiserver"),
        f"--etcd-servers={etcd_url}",
        "--bind-address=127.0.0.1",
        "--advertise-address=127.0.0.1",
        "--endpoint-reconciler-type=none",  # loopback cannot be a Service endpoint; nothing needs one
        f"--secure-port={api_port}",
        f"--cert-dir={workdir / 'apiserver-certs'}",
        f"--tls-cert-file={pki['cert']}",
        f"--tls-private-key-file={pki['key']}",
        f"--client-ca-file={pki['ca']}",
        f"--token-auth-file={token_file}",
        "--authorization-mode=Node,RBAC",
        "--service-cluster-ip-range=10.0.0.0/24",
        "--service-account-issuer=https://kubernetes.default.svc.cluster.local",
        f"--service-account-key-file={pki['sa-pub']}",
        f"--service-account-signing-key-file={pki['sa-key']}",
        f"--audit-policy-file={workdir / 'audit-policy.yaml'}",
        f"--audit-log-path={audit_log}",
        "--audit-log-mode=blocking",
        "--allow-privileged=true",
        "--profiling=false",
        "--v=0",
        *apiserver_flags,
    ]
    _spawn("kube-apiserver", apiserver_argv, workdir, components)
    cp = ControlPlane(server, pki["ca"], workdir / "kubeconfig", audit_log, workdir, tokens, components)
    cp.etcd_url, cp.apiserver_argv = etcd_url, apiserver_argv
    context = ssl.create_default_context(cafile=str(pki["ca"]))
    wait_for(
        "kube-apiserver /readyz",
        lambda: _get_ok(f"{server}/readyz", context, tokens["admin"]),
        timeout,
        components,
    )
    write_kubeconfig(cp.kubeconfig, server, pki["ca"], tokens["admin"], "admin")

    def kubeconfig(user: str) -> str:
        return str(
            write_kubeconfig(
                workdir / f"{user.rsplit(':', maxsplit=1)[-1]}.kubeconfig",
                server,
                pki["ca"],
                tokens[user],
                user,
            )
        )

    _spawn(
        "kube-controller-manager",
        [
            str(bin_dir / "kube-controller-manager"),
            f"--kubeconfig={kubeconfig('system:kube-controller-manager')}",
            f"--controllers={','.join(CONTROLLERS)}",
            "--leader-elect=false",
            "--secure-port=0",
            "--concurrent-deployment-syncs=10",
            "--v=0",
        ],
        workdir,
        components,
    )
    _spawn(
        "kube-scheduler",
        [
            str(bin_dir / "kube-scheduler"),
            f"--kubeconfig={kubeconfig('system:kube-scheduler')}",
            "--leader-elect=false",
            "--secure-port=0",
            "--v=0",
        ],
        workdir,
        components,
    )
    if kwok_stage_crds:
        _install_stage_crds(cp, bin_dir / KWOK_STAGES, timeout, components)
        # An empty configuration file: kwok refuses Stages in --config together with --enable-crds=Stage.
        (workdir / "kwok.yaml").write_text("")
        stage_flags = [f"--config={workdir / 'kwok.yaml'}", "--enable-crds=Stage"]
    else:
        stage_flags = [f"--config={bin_dir / KWOK_STAGES}"]
    _spawn(
        "kwok",
        [
            str(bin_dir / "kwok"),
            f"--kubeconfig={kubeconfig('kwok')}",
            *stage_flags,
            "--manage-all-nodes=false",
            f"--manage-nodes-with-annotation-selector={KWOK_NODE_ANNOTATION}=fake",
            "--node-lease-duration-seconds=40",
        ],
        workdir,
        components,
    )
    for i in range(nodes):
        cp.api("POST", "/api/v1/nodes", _node(f"kwok-node-{i}"))
        cp.nodes.append(f"kwok-node-{i}")
    wait_for(
        "the kwok Nodes to be Ready and untainted",
        lambda: all(_node_ready(cp, n) for n in cp.nodes),
        timeout,
        components,
    )
    wait_for(
        "the default ServiceAccount (kube-controller-manager running)",
        lambda: cp.request("GET", "/api/v1/namespaces/default/serviceaccounts/default")[0] == 200,
        timeout,
        components,
    )
    return cp
