"""The two servers the end-to-end suite runs the installed CLI against: our API simulator and a real
kube-apiserver (the session's control plane, shared with tests/real).

Why: the simulator is our own reading of the API; running the same tests on a real server proves the CLI
against the real thing (admission, defaulting, controllers acting on our patches). Both backends implement
`Backend`: seed objects, read and edit them, run the CLI with a kubeconfig, and count the requests and
writes kube-rehash made. On the real server the audit log replaces the simulator's request log: kube-rehash
runs as its own ServiceAccount (bound to cluster-admin), so its requests are the audit entries of that user.

Isolation on the shared real server: every namespace a test names ("shop", "team-0", ...) becomes a unique
one (`<test prefix>-shop`), created on first use and deleted after the test; `-n` arguments are mapped, and
the CLI's output and the request paths are mapped back, so a test reads the names it wrote. A pass the test
runs without `-n` is scoped to the test's own namespaces (one `-n` each): the real server also holds other
tests' objects and terminating namespaces, so a truly cluster-wide pass is left to the simulator
(tests that need one are `sim_only`).
"""

from __future__ import annotations

import json
import os
import secrets
import subprocess
import sys
import time
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from rehash_simulator import Simulator
from tests.cluster.controlplane import ControlPlane, ControlPlaneError

CLI = str(Path(sys.executable).parent / "kube-rehash")
COMPONENT = "kube-rehash"  # the reportingComponent (reportingController) of the Events kube-rehash writes
SCOPED_COMMANDS = ("run", "plan")  # commands that pass cluster-wide without -n


@dataclass
class Result:
    """One CLI run: exit code, stdout, stderr, and the JSON report's rows.

    `key` names the fields a row's key is made of: tests/e2e spans namespaces (kind/namespace/name),
    tests/real works in one namespace per test (kind/name).
    """

    code: int
    stdout: str
    stderr: str
    key: tuple[str, ...] = ("kind", "namespace", "name")

    @property
    def report(self) -> dict[str, Any]:
        return json.loads(self.stdout)  # type: ignore[no-any-return]

    def actions(self) -> dict[str, str]:
        return {"/".join(w[k] for k in self.key): w["action"] for w in self.report["workloads"]}

    def row(self, kind: str, name: str) -> dict[str, Any]:
        rows = [w for w in self.report["workloads"] if w["kind"] == kind and w["name"] == name]
        assert len(rows) == 1, self.stdout
        return rows[0]  # type: ignore[no-any-return]

    def failed(self) -> list[dict[str, Any]]:
        return [w for w in self.report["workloads"] if w["action"] == "failed"]


def clean_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    """The environment without our own settings or a KUBECONFIG, plus `extra`."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("KUBE_REHASH_", "KUBECONFIG"))}
    env.update(extra or {})
    return env


class Backend(ABC):
    """What an end-to-end test needs from a server. Resources are plural names ("deployments"); namespaces
    are the test's own names; request records carry `method`, `path`, `query` and `status`."""

    name: str
    tmp: Path
    kubeconfig: Path

    # objects
    @abstractmethod
    def add(self, *objs: dict[str, Any]) -> None: ...

    @abstractmethod
    def get(self, resource: str, namespace: str, name: str) -> dict[str, Any]: ...

    @abstractmethod
    def edit(self, resource: str, namespace: str, name: str, patch: dict[str, Any]) -> None:
        """A JSON merge patch, as `kubectl patch --type merge` sends it."""

    @abstractmethod
    def mutate(
        self, resource: str, namespace: str, name: str, change: Callable[[dict[str, Any]], Any]
    ) -> None:
        """Read the object, change it in place, write it back whole (as `kubectl edit` or an apply would)."""

    @abstractmethod
    def list(self, resource: str, namespace: str) -> list[dict[str, Any]]: ...

    @abstractmethod
    def exists(self, resource: str, namespace: str, name: str) -> bool: ...

    @abstractmethod
    def wait_rolled_out(self, resource: str, namespace: str, name: str) -> None:
        """Until the workload's controller has rolled out its current template (the simulator runs no
        controller: a rollout there stays unfinished, and this returns at once)."""

    def events(self, namespace: str = "shop", reason: str | None = None) -> list[dict[str, Any]]:
        """The Events kube-rehash wrote in a namespace (a real cluster's controllers write others), read
        through core/v1: `reportingComponent` is the reporting controller whichever API created them."""
        return [
            e
            for e in self.list("events", namespace)
            if e.get("reportingComponent") == COMPONENT and reason in (None, e["reason"])
        ]

    def ns(self, name: str) -> str:
        """The server's name of one of the test's namespaces (the real backend prefixes them), for values
        the CLI takes that name a namespace outside -n (e.g. `--hash-key-secret NS/NAME`)."""
        return name

    # the CLI
    def config(self, text: str) -> Path:
        path = self.tmp / "config.yaml"
        path.write_text(text)
        return path

    @abstractmethod
    def cli(self, *args: str, env: dict[str, str] | None = None, kubeconfig: bool = True) -> Result: ...

    def run(self, *args: str, **kw: Any) -> Result:
        """`kube-rehash run -o json ...`, asserting it produced a report."""
        result = self.cli("run", "-o", "json", *args, **kw)
        assert result.stdout.startswith("{"), result.stderr
        return result

    # what kube-rehash asked of the server since the last `clear_log`
    @abstractmethod
    def clear_log(self) -> None: ...

    @abstractmethod
    def requests(self, method: str | None = None) -> list[Any]: ...

    def writes(self) -> list[Any]:
        return [e for e in self.requests() if e.method in ("POST", "PUT", "PATCH", "DELETE")]

    @property
    def sim(self) -> Simulator:
        """The simulator itself (fault injection, the full request log): simulator-only tests."""
        raise AssertionError(f"{self.name} backend has no simulator: mark the test sim_only")


# -- the simulator -------------------------------------------------------------------------------------------


class Cluster(Backend):
    """A running simulator plus helpers to seed objects and run the CLI against it."""

    name = "sim"

    def __init__(self, sim: Simulator, tmp: Path) -> None:
        self._sim = sim
        self.tmp = tmp
        self.kubeconfig = sim.write_kubeconfig(tmp / "kubeconfig")

    @property
    def sim(self) -> Simulator:
        return self._sim

    def add(self, *objs: dict[str, Any]) -> None:
        for obj in objs:
            self._sim.store.create(obj)

    def get(self, resource: str, namespace: str, name: str) -> dict[str, Any]:
        return self._sim.store.get(resource, namespace, name)

    def edit(self, resource: str, namespace: str, name: str, patch: dict[str, Any]) -> None:
        self._sim.store.patch_merge(resource, namespace, name, patch)

    def mutate(
        self, resource: str, namespace: str, name: str, change: Callable[[dict[str, Any]], Any]
    ) -> None:
        self._sim.store.mutate(resource, namespace, name, change)

    def list(self, resource: str, namespace: str) -> list[dict[str, Any]]:
        return list(self._sim.store.list(resource, namespace))

    def exists(self, resource: str, namespace: str, name: str) -> bool:
        return bool(self._sim.store.exists(resource, namespace, name))

    def wait_rolled_out(self, resource: str, namespace: str, name: str) -> None:
        return None

    def cli(self, *args: str, env: dict[str, str] | None = None, kubeconfig: bool = True) -> Result:
        argv = [CLI, *args]
        if kubeconfig and args and args[0] in ("run", "plan", "explain"):
            argv += ["--kubeconfig", str(self.kubeconfig)]
        done = subprocess.run(
            argv, capture_output=True, text=True, timeout=120, env=clean_env(env), check=False
        )
        return Result(done.returncode, done.stdout, done.stderr)

    def clear_log(self) -> None:
        self._sim.log.clear()

    def requests(self, method: str | None = None) -> list[Any]:
        return list(self._sim.log.entries(method=method))


# -- a real kube-apiserver -----------------------------------------------------------------------------------

# plural resource -> API group/version path
API_PATHS = {
    "configmaps": "/api/v1",
    "secrets": "/api/v1",
    "events": "/api/v1",
    "pods": "/api/v1",
    "deployments": "/apis/apps/v1",
    "statefulsets": "/apis/apps/v1",
    "daemonsets": "/apis/apps/v1",
    "replicasets": "/apis/apps/v1",
    "cronjobs": "/apis/batch/v1",
    "jobs": "/apis/batch/v1",
}
AUDIT_METHODS = {
    "get": "GET",
    "list": "GET",
    "watch": "GET",
    "create": "POST",
    "update": "PUT",
    "patch": "PATCH",
    "delete": "DELETE",
    "deletecollection": "DELETE",
}
IDENTITY_NAMESPACE = "kube-rehash-e2e"
IDENTITY_NAME = "kube-rehash"


@dataclass(frozen=True)
class Request:
    """One request kube-rehash made, from the audit log, with the test's namespace names."""

    method: str
    path: str
    query: dict[str, str]
    status: int


@dataclass(frozen=True)
class Identity:
    """kube-rehash's own user on the real server: a ServiceAccount bound to cluster-admin."""

    user: str
    kubeconfig: Path


def make_identity(cp: ControlPlane, directory: Path) -> Identity:
    """The ServiceAccount, its ClusterRoleBinding and a token (TokenRequest API): a kubeconfig for it."""
    ns, name = IDENTITY_NAMESPACE, IDENTITY_NAME
    cp.request(
        "POST", "/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}}
    )
    cp.request(
        "POST",
        f"/api/v1/namespaces/{ns}/serviceaccounts",
        {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": name}},
    )
    cp.request(
        "POST",
        "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings",
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "ClusterRoleBinding",
            "metadata": {"name": "kube-rehash-e2e"},
            "roleRef": {
                "apiGroup": "rbac.authorization.k8s.io",
                "kind": "ClusterRole",
                "name": "cluster-admin",
            },
            "subjects": [{"kind": "ServiceAccount", "name": name, "namespace": ns}],
        },
    )
    answer = cp.api(
        "POST",
        f"/api/v1/namespaces/{ns}/serviceaccounts/{name}/token",
        {
            "apiVersion": "authentication.k8s.io/v1",
            "kind": "TokenRequest",
            "spec": {"expirationSeconds": 7200},
        },
    )
    kubeconfig = cp.kubeconfig_with_token(answer["status"]["token"], directory / "kube-rehash.kubeconfig")
    return Identity(f"system:serviceaccount:{ns}:{name}", kubeconfig)


def collection_path(resource: str, namespace: str) -> str:
    return f"{API_PATHS[resource]}/namespaces/{namespace}/{resource}"


def resource_of(obj: dict[str, Any]) -> str:
    kind = obj["kind"]
    if obj["apiVersion"].startswith("argoproj.io/"):
        raise AssertionError(f"{kind}: no Argo Rollouts CRD on the real server: mark the test sim_only")
    plural = f"{kind.lower()}s"
    assert plural in API_PATHS, kind
    return plural


class RealCluster(Backend):
    """The session's real control plane, seen through namespaces of this test only."""

    name = "real"

    def __init__(self, cp: ControlPlane, identity: Identity, tmp: Path) -> None:
        self.cp = cp
        self.identity = identity
        self.tmp = tmp
        self.kubeconfig = identity.kubeconfig
        self.prefix = f"e{secrets.token_hex(3)}"
        self.namespaces: list[str] = []  # the test's names, in order of first use
        self.mark = cp.audit_mark()

    # names
    def ns(self, name: str) -> str:
        """The real namespace of one of the test's namespace names, created on first use."""
        real = f"{self.prefix}-{name}"
        if name not in self.namespaces:
            body = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": real}}
            self.cp.api("POST", "/api/v1/namespaces", body)
            self.namespaces.append(name)
        return real

    def back(self, text: str) -> str:
        """Real namespace names in `text` turned back into the test's."""
        return text.replace(f"{self.prefix}-", "")

    def close(self) -> None:
        for name in self.namespaces:  # the namespace controller deletes what is in them, in the background
            self.cp.request("DELETE", f"/api/v1/namespaces/{self.prefix}-{name}")

    # objects (as admin: the harness's requests are not kube-rehash's)
    def add(self, *objs: dict[str, Any]) -> None:
        for obj in objs:
            real = {
                **obj,
                "metadata": {**obj["metadata"], "namespace": self.ns(obj["metadata"]["namespace"])},
            }
            self.cp.api("POST", collection_path(resource_of(obj), real["metadata"]["namespace"]), real)

    def _path(self, resource: str, namespace: str, name: str) -> str:
        return f"{collection_path(resource, self.ns(namespace))}/{name}"

    def get(self, resource: str, namespace: str, name: str) -> dict[str, Any]:
        obj: dict[str, Any] = self.cp.api("GET", self._path(resource, namespace, name))
        return obj

    def edit(self, resource: str, namespace: str, name: str, patch: dict[str, Any]) -> None:
        self.cp.api(
            "PATCH", self._path(resource, namespace, name), patch, content_type="application/merge-patch+json"
        )

    def mutate(
        self, resource: str, namespace: str, name: str, change: Callable[[dict[str, Any]], Any]
    ) -> None:
        for _ in range(5):  # a controller may write the object between our read and our write
            obj = self.get(resource, namespace, name)
            change(obj)
            status, answer = self.cp.request("PUT", self._path(resource, namespace, name), obj)
            if status != 409:
                assert status == 200, answer
                return
        raise ControlPlaneError(f"{resource}/{name}: conflicts on every try")

    def list(self, resource: str, namespace: str) -> list[dict[str, Any]]:
        return list(self.cp.api("GET", collection_path(resource, self.ns(namespace)))["items"])

    def exists(self, resource: str, namespace: str, name: str) -> bool:
        return self.cp.request("GET", self._path(resource, namespace, name))[0] == 200

    def wait_rolled_out(self, resource: str, namespace: str, name: str, timeout: float = 60.0) -> None:
        assert resource in ("deployments", "statefulsets"), resource
        deadline = time.monotonic() + timeout
        while True:
            obj = self.get(resource, namespace, name)
            status, want = obj.get("status", {}), obj["spec"].get("replicas", 1)
            if status.get("observedGeneration", 0) >= obj["metadata"]["generation"] and all(
                status.get(field) == want for field in ("replicas", "updatedReplicas", "readyReplicas")
            ):
                return
            if time.monotonic() > deadline:
                raise AssertionError(f"{resource}/{name} not rolled out after {timeout:.0f} s: {status}")
            time.sleep(0.2)

    # the CLI
    def cli(self, *args: str, env: dict[str, str] | None = None, kubeconfig: bool = True) -> Result:
        argv = [CLI, *self._args(args)]
        if kubeconfig and args and args[0] in ("run", "plan", "explain"):
            argv += ["--kubeconfig", str(self.kubeconfig)]
        done = subprocess.run(
            argv, capture_output=True, text=True, timeout=180, env=clean_env(env), check=False
        )
        return Result(done.returncode, self.back(done.stdout), self.back(done.stderr))

    def _args(self, args: tuple[str, ...]) -> list[str]:
        out: list[str] = []
        scoped = False
        for i, arg in enumerate(args):
            if i and args[i - 1] in ("-n", "--namespace"):
                out.append(self.ns(arg))
                scoped = True
            elif arg.startswith("--namespace="):
                out.append(f"--namespace={self.ns(arg.split('=', 1)[1])}")
                scoped = True
            else:
                out.append(arg)
        if args and args[0] in SCOPED_COMMANDS and not scoped:
            for name in self.namespaces or ["shop"]:
                out += ["-n", self.ns(name)]
        return out

    # the audit log
    def clear_log(self) -> None:
        self.mark = self.cp.audit_mark()

    def requests(self, method: str | None = None) -> list[Any]:
        found = []
        for entry in self.cp.audit(since=self.mark, user=self.identity.user):
            parts = urlsplit(self.back(entry.uri))
            request = Request(
                AUDIT_METHODS.get(entry.verb, entry.verb.upper()),
                parts.path,
                dict(parse_qsl(parts.query)),
                entry.code,
            )
            if method in (None, request.method):
                found.append(request)
        return found
