"""The real control plane as a history's server: fresh namespaces per history, kube-rehash reaching
kube-apiserver through the lossy proxy as its own ServiceAccount, its writes read from the audit log.

The namespaces are prefixed per history (`r<hex>-a`) and the names mapped back in every answer, so
histories and checks speak of `a` and `b` on both servers. The harness's own requests go to kube-apiserver
directly as admin, so the audit log's entries of kube-rehash's user are exactly what kube-rehash sent.
"""

from __future__ import annotations

import json
import secrets
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from rehash_simulator.faults import Faults
from tests.cluster.controlplane import ControlPlane
from tests.e2e.backends import Identity
from tests.robustness.proxy import LossyProxy
from tests.robustness.servers import API, Pass, Server, Write


class RealServer(Server):
    """The session's real control plane (controllers and kwok running), through a lossy proxy."""

    name = "real"

    def __init__(self, cp: ControlPlane, identity: Identity, proxy: LossyProxy, tmp: Path) -> None:
        self.cp = cp
        self.identity = identity
        self.proxy = proxy
        self.tmp = tmp
        self.prefix = f"r{secrets.token_hex(3)}"
        self.created: set[str] = set()
        token = json.loads(identity.kubeconfig.read_text())["users"][0]["user"]["token"]
        ca = tmp / "proxy-ca.crt"
        ca.write_bytes(proxy.ca_pem)
        self.kubeconfig = cp.kubeconfig_with_token(token, tmp / "proxy.kubeconfig")
        config = json.loads(self.kubeconfig.read_text())
        config["clusters"][0]["cluster"].update({"server": proxy.url, "certificate-authority": str(ca)})
        self.kubeconfig.write_text(json.dumps(config))

    # names
    def real(self, namespace: str) -> str:
        name = f"{self.prefix}-{namespace}"
        if namespace not in self.created:
            status, answer = self.cp.request(
                "POST",
                "/api/v1/namespaces",
                {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}},
            )
            assert status in (201, 409), answer
            self.created.add(namespace)
        return name

    def back(self, text: str) -> str:
        return text.replace(f"{self.prefix}-", "")

    def path(self, resource: str, namespace: str, name: str = "") -> str:
        base = f"{API[resource]}/namespaces/{self.real(namespace)}/{resource}"
        return f"{base}/{name}" if name else base

    def close(self) -> None:
        for namespace in sorted(self.created):
            self.cp.request("DELETE", f"/api/v1/namespaces/{self.prefix}-{namespace}")

    # objects (as admin)
    def create(self, obj: dict[str, Any]) -> None:
        resource = f"{obj['kind'].lower()}s"
        body = {**obj, "metadata": {**obj["metadata"], "namespace": self.real(obj["metadata"]["namespace"])}}
        self.cp.api("POST", self.path(resource, obj["metadata"]["namespace"]), body)

    def get(self, resource: str, namespace: str, name: str) -> dict[str, Any] | None:
        status, answer = self.cp.request("GET", self.path(resource, namespace, name))
        if status == 404:
            return None
        assert status == 200, answer
        return self.unmap(answer)

    def unmap(self, obj: dict[str, Any]) -> dict[str, Any]:
        loaded: dict[str, Any] = json.loads(self.back(json.dumps(obj)))
        return loaded

    def items(self, resource: str, namespace: str) -> list[dict[str, Any]]:
        return [self.unmap(o) for o in self.cp.api("GET", self.path(resource, namespace))["items"]]

    def merge(self, resource: str, namespace: str, name: str, patch: dict[str, Any]) -> None:
        self.cp.api(
            "PATCH", self.path(resource, namespace, name), patch, content_type="application/merge-patch+json"
        )

    def replace(
        self, resource: str, namespace: str, name: str, change: Callable[[dict[str, Any]], Any]
    ) -> None:
        for _ in range(10):  # a controller may write the object between our read and our write
            status, obj = self.cp.request("GET", self.path(resource, namespace, name))
            assert status == 200, obj
            change(obj)
            status, answer = self.cp.request("PUT", self.path(resource, namespace, name), obj)
            if status != 409:
                assert status == 200, answer
                return
        raise AssertionError(f"{resource}/{namespace}/{name}: conflicts on every try")

    def delete(self, resource: str, namespace: str, name: str) -> None:
        status, answer = self.cp.request("DELETE", self.path(resource, namespace, name))
        assert status in (200, 202), answer

    def delete_namespace(self, namespace: str) -> None:
        name = self.real(namespace)
        self.cp.request("DELETE", f"/api/v1/namespaces/{name}")
        deadline = time.monotonic() + 60
        while self.cp.request("GET", f"/api/v1/namespaces/{name}")[0] != 404:
            assert time.monotonic() < deadline, f"namespace {name} not gone after 60 s"
            time.sleep(0.25)
        self.created.discard(namespace)

    # kube-rehash's requests: the audit log of its ServiceAccount (with request bodies)
    def mark(self) -> int:
        return self.cp.audit_mark()

    def writes(self, since: int) -> list[Write]:
        self.cp.sync_audit()
        out = []
        methods = {"create": "POST", "update": "PUT", "patch": "PATCH", "delete": "DELETE"}
        for line in self.cp.audit_lines()[since:]:
            event = json.loads(line)
            if (
                event.get("stage") != "ResponseComplete"
                or (event.get("user") or {}).get("username") != self.identity.user
            ):
                continue
            if event.get("verb") not in methods:
                continue
            ref = event.get("objectRef") or {}
            body = event.get("requestObject")
            ops = tuple(body) if isinstance(body, list) else None
            status = int((event.get("responseStatus") or {}).get("code", 0))
            namespace = self.back(ref.get("namespace", ""))
            name = ref.get("name", "") if event["verb"] != "create" else ""
            out.append(Write(methods[event["verb"]], ref.get("resource", ""), namespace, name, status, ops))
        return out

    def start(self, config: dict[str, Any], scope: tuple[str, ...], mutant: str | None) -> Pass:
        head, env = self.program(mutant)
        argv = [*head, "run", "-o", "json", "--config", str(self.write_config(config))]
        argv += ["--kubeconfig", str(self.kubeconfig)]
        for namespace in scope:
            argv += ["-n", self.real(namespace)]
        proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
        return Pass(proc, self.back)

    @property
    def faults(self) -> Faults:
        return self.proxy.faults

    def settle(self) -> None:
        """Until every workload of the history's namespaces has rolled out its current template (or 30 s)."""
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            kinds = {"deployments": "Deployment", "statefulsets": "StatefulSet", "daemonsets": "DaemonSet"}
            if all(
                self.rolled_out(o, kind)
                for ns in self.created
                for r, kind in kinds.items()
                for o in self.items(r, ns)
            ):
                return
            time.sleep(0.25)

    @staticmethod
    def rolled_out(obj: dict[str, Any], kind: str) -> bool:
        status = obj.get("status") or {}
        if status.get("observedGeneration", 0) < obj["metadata"].get("generation", 0):
            return False
        if kind == "DaemonSet":
            want = status.get("desiredNumberScheduled", 0)
            return bool(want) and status.get("updatedNumberScheduled") == want == status.get(
                "numberAvailable"
            )
        want = obj["spec"].get("replicas", 1)
        return bool(status.get("updatedReplicas") == want == status.get("readyReplicas"))
