"""Helpers of tests/chaos_real (see its conftest.py for why): a control plane of the test's own seen
through kubectl, the API, kube-rehash passes as its ServiceAccount and the audit log; the figures each case
records for docs/reliability.md; the small manifests the cases seed.
"""

from __future__ import annotations

import http.client
import json
import os
import secrets
import ssl
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from tests.cluster.controlplane import (
    AuditEntry,
    ControlPlane,
    parse_audit,
)

REPO = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
CLI = str(BIN / "kube-rehash")
KUBECTL = str(BIN / "kubectl")
PREFIX = "kube-rehash.io"
HASH = f"{PREFIX}/config-hash"
JSON = "application/json"
SA_NAMESPACE = SA_NAME = "kube-rehash"
SA_USER = f"system:serviceaccount:{SA_NAMESPACE}:{SA_NAME}"
FIGURES = Path(
    os.environ.get("KUBE_REHASH_CHAOS_REAL_OUT") or REPO / ".cache" / "chaos-real" / "figures.json"
)

_ROWS: dict[str, dict[str, Any]] = {}


def write_figures() -> None:
    """Write the figures recorded so far (every case's row) to FIGURES."""
    if _ROWS:
        FIGURES.parent.mkdir(parents=True, exist_ok=True)
        FIGURES.write_text(json.dumps(dict(sorted(_ROWS.items())), indent=2) + "\n")


# -- figures -------------------------------------------------------------------------------------------------


@dataclass
class Figures:
    """One row of docs/reliability.md's table of real faults."""

    fault: str
    injected: int = 0
    passes: int = 0
    expected: int = 0
    done: int = 0
    doubled: int = 0
    lost: int = 0
    exits: list[int] = field(default_factory=list)
    longest_s: float = 0.0
    budget_s: float = 0.0
    notes: dict[str, Any] = field(default_factory=dict)

    def count(self, result: PassResult) -> None:
        self.passes += 1
        if result.code not in self.exits:
            self.exits.append(result.code)
        self.longest_s = max(self.longest_s, round(result.wall, 2))
        self.budget_s = max(self.budget_s, result.budget)

    def save(self) -> None:
        _ROWS[self.fault] = {**self.__dict__, "exits": sorted(self.exits)}


# -- the cluster ---------------------------------------------------------------------------------------------


@dataclass
class PassResult:
    code: int
    stdout: str
    stderr: str
    wall: float
    budget: float

    @property
    def report(self) -> dict[str, Any]:
        assert self.stdout.startswith("{"), f"no report (exit {self.code}): {self.stderr[-2000:]}"
        answer: dict[str, Any] = json.loads(self.stdout)
        return answer

    def rows(self) -> dict[str, dict[str, Any]]:
        return {f"{r['kind']}/{r['namespace']}/{r['name']}": r for r in self.report["workloads"]}

    def actions(self) -> dict[str, str]:
        return {key: row["action"] for key, row in self.rows().items()}


class Cluster:
    """A control plane of this suite's own, seen by the tests: kubectl, API reads, kube-rehash passes as
    its ServiceAccount, and the audit log read incrementally."""

    def __init__(self, cp: ControlPlane, tmp: Path) -> None:
        self.cp = cp
        self.tmp = tmp
        self.kubeconfig = install_service_account(cp, tmp)
        self._config_n = 0

    # kubectl and the API
    # --------------------------------------------------------------------------------------------------

    def kubectl(self, *args: str, stdin: str | None = None, check: bool = True) -> str:
        argv = [KUBECTL, "--kubeconfig", str(self.cp.kubeconfig), *args]
        done = subprocess.run(argv, input=stdin, capture_output=True, text=True, timeout=120, check=False)
        if check:
            assert done.returncode == 0, f"kubectl {' '.join(args)} failed: {done.stderr}"
        return done.stdout

    def apply(self, *objs: dict[str, Any]) -> None:
        self.kubectl(
            "apply", "-f", "-", stdin=json.dumps({"apiVersion": "v1", "kind": "List", "items": objs})
        )

    def namespace(self, prefix: str = "c") -> str:
        ns = f"{prefix}-{secrets.token_hex(3)}"
        self.cp.api(
            "POST", "/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}}
        )
        return ns

    def deployments(self, ns: str) -> list[dict[str, Any]]:
        return list(self.cp.api("GET", f"/apis/apps/v1/namespaces/{ns}/deployments")["items"])

    def replicasets(self, ns: str) -> dict[str, list[dict[str, Any]]]:
        """ReplicaSets by the name of the Deployment that owns them (every Deployment of `ns` is a key)."""
        owners = {d["metadata"]["uid"]: d["metadata"]["name"] for d in self.deployments(ns)}
        by_owner: dict[str, list[dict[str, Any]]] = {name: [] for name in owners.values()}
        for rs in self.cp.api("GET", f"/apis/apps/v1/namespaces/{ns}/replicasets")["items"]:
            for ref in rs["metadata"].get("ownerReferences") or []:
                if ref["uid"] in owners:
                    by_owner[owners[ref["uid"]]].append(rs)
        return by_owner

    def rs_counts(self, ns: str) -> dict[str, int]:
        return {name: len(items) for name, items in self.replicasets(ns).items()}

    def wait_observed(self, ns: str, timeout: float = 60.0) -> None:
        """Every Deployment of `ns` was seen by the controller at its latest generation, and each has a
        ReplicaSet for its current template (so counting ReplicaSets now counts every rollout)."""

        def done() -> bool:
            deployments = self.deployments(ns)
            if any(
                (d.get("status") or {}).get("observedGeneration", 0) < d["metadata"]["generation"]
                for d in deployments
            ):
                return False
            templates = {
                name: {template_hash(rs["spec"]["template"]) for rs in items}
                for name, items in self.replicasets(ns).items()
            }
            return all(
                template_hash(d["spec"]["template"]) in templates[d["metadata"]["name"]] for d in deployments
            )

        wait_until(f"the Deployments of {ns} to be observed", done, timeout)

    def sa_request(self, method: str, path: str) -> tuple[int, dict[str, str], bytes]:
        """One raw request as kube-rehash's ServiceAccount: (status, headers, body), nothing decoded."""
        token = json.loads(self.kubeconfig.read_text())["users"][0]["user"]["token"]
        host, port = self.cp.server.removeprefix("https://").split(":")
        context = ssl.create_default_context(cafile=str(self.cp.ca))
        conn = http.client.HTTPSConnection(host, int(port), context=context, timeout=30)
        try:
            conn.request(method, path, headers={"Authorization": f"Bearer {token}", "Accept": JSON})
            response = conn.getresponse()
            return response.status, dict(response.getheaders()), response.read()
        finally:
            conn.close()

    # kube-rehash
    # ------------------------------------------------------------------------------------------------------

    def config(self, **values: Any) -> Path:
        """A config file with these settings over the shipped defaults (camelCase keys, as documented)."""
        self._config_n += 1
        path = self.tmp / f"config-{self._config_n}.yaml"
        path.write_text(yaml.safe_dump(values))
        return path

    def start(self, *args: str, timeout: float = 30.0) -> tuple[subprocess.Popen[str], float]:
        """Start `kube-rehash run -o json --timeout T` as the ServiceAccount; returns (process, start)."""
        argv = [
            CLI,
            "run",
            "-o",
            "json",
            "--kubeconfig",
            str(self.kubeconfig),
            "--timeout",
            str(timeout),
            *args,
        ]
        env = {k: v for k, v in os.environ.items() if not k.startswith(("KUBE_REHASH_", "KUBECONFIG"))}
        proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
        return proc, time.monotonic()

    @staticmethod
    def finish(proc: subprocess.Popen[str], started: float, budget: float) -> PassResult:
        """Wait for a started pass: it must end within its budget + 5 s (killed and failed otherwise)."""
        try:
            stdout, stderr = proc.communicate(timeout=budget + 5)
        except subprocess.TimeoutExpired:
            proc.kill()
            stdout, stderr = proc.communicate()
            raise AssertionError(f"the pass outlived its budget {budget} s + 5 s: {stderr[-2000:]}") from None
        result = PassResult(proc.returncode, stdout, stderr, time.monotonic() - started, budget)
        assert result.wall <= budget + 5, result.wall
        assert "Traceback" not in stderr, stderr
        return result

    def run(self, *args: str, timeout: float = 30.0) -> PassResult:
        proc, started = self.start(*args, timeout=timeout)
        return self.finish(proc, started, timeout)

    # the audit log
    # ------------------------------------------------------------------------------------------------------

    def audit_offset(self) -> int:
        """The byte position after the audit log's last whole line (a line being written stays after it)."""
        self.cp.sync_audit()
        return self.cp.audit_log.read_bytes().rfind(b"\n") + 1

    def audit_events(self, offset: int) -> list[dict[str, Any]]:
        """The raw completed audit events of kube-rehash (its ServiceAccount and User-Agent) after byte
        `offset`, with their timestamps, which AuditEntry leaves out."""
        self.cp.sync_audit()
        with self.cp.audit_log.open("rb") as log:
            log.seek(offset)
            text = log.read().decode(errors="replace")
        lines = text[: text.rfind("\n") + 1].splitlines()  # a line being written is left out
        events = [json.loads(line) for line in lines if line.strip()]
        return [
            e
            for e in events
            if e.get("stage") == "ResponseComplete"
            and (e.get("user") or {}).get("username") == SA_USER
            and str(e.get("userAgent", "")).startswith("kube-rehash/")
        ]

    def audit_since(self, offset: int, user: str | None = SA_USER) -> list[AuditEntry]:
        """Completed requests logged after byte `offset` (of kube-rehash's ServiceAccount by default)."""
        self.cp.sync_audit()
        with self.cp.audit_log.open("rb") as log:
            log.seek(offset)
            text = log.read().decode(errors="replace")
        lines = text[: text.rfind("\n") + 1].splitlines()  # a line being written is left out
        return [e for e in parse_audit(lines) if user is None or e.user == user]

    def wait_for_request(
        self, offset: int, match: Any, timeout: float, proc: subprocess.Popen[str] | None = None
    ) -> AuditEntry:
        """Poll the audit log (no marker requests: the server may be the thing under test) until an entry
        after `offset` satisfies `match`; fails when `proc` ends first or `timeout` passes."""
        deadline = time.monotonic() + timeout
        with self.cp.audit_log.open("rb") as log:
            log.seek(offset)
            pending = b""
            while time.monotonic() < deadline:
                chunk = log.read()
                if chunk:
                    pending += chunk
                    *complete, pending = pending.split(b"\n")
                    for entry in parse_audit([line.decode(errors="replace") for line in complete]):
                        if entry.user == SA_USER and match(entry):
                            return entry
                elif proc is not None and proc.poll() is not None:
                    raise AssertionError("the pass ended before the awaited request was logged")
                time.sleep(0.02)
        raise AssertionError(f"no matching request in the audit log within {timeout} s")


def install_service_account(cp: ControlPlane, tmp: Path) -> Path:
    """The `kube-rehash` ServiceAccount bound to the shipped ClusterRole (cronjob/cluster), and a
    kubeconfig with its token (TokenRequest API): the identity the CronJob runs as."""
    cp.request(
        "POST",
        "/api/v1/namespaces",
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": SA_NAMESPACE}},
    )
    wait_until(
        "the default ServiceAccount of kube-rehash's namespace",
        lambda: cp.request("GET", f"/api/v1/namespaces/{SA_NAMESPACE}/serviceaccounts/default")[0] == 200,
        30,
    )
    cp.request(
        "POST",
        f"/api/v1/namespaces/{SA_NAMESPACE}/serviceaccounts",
        {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": SA_NAME}},
    )
    for name, path in (
        ("clusterrole.yaml", "/apis/rbac.authorization.k8s.io/v1/clusterroles"),
        ("clusterrolebinding.yaml", "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings"),
    ):
        cp.request("POST", path, yaml.safe_load((REPO / "cronjob" / "cluster" / name).read_text()))
    answer = cp.api(
        "POST",
        f"/api/v1/namespaces/{SA_NAMESPACE}/serviceaccounts/{SA_NAME}/token",
        {
            "apiVersion": "authentication.k8s.io/v1",
            "kind": "TokenRequest",
            "spec": {"expirationSeconds": 7200},
        },
    )
    return cp.kubeconfig_with_token(answer["status"]["token"], tmp / "kube-rehash.kubeconfig", SA_NAME)


# -- manifests -----------------------------------------------------------------------------------------------


def wait_until(what: str, probe: Any, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while not probe():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what}")
        time.sleep(0.25)


def template_hash(template: dict[str, Any]) -> str | None:
    value = ((template.get("metadata") or {}).get("annotations") or {}).get(HASH)
    return None if value is None else str(value)


def configmap(ns: str, name: str, data: dict[str, str]) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": ns},
        "data": data,
    }


def deployment(ns: str, name: str, source: str, labels: dict[str, str] | None = None) -> dict[str, Any]:
    """A watched one-replica Deployment reading ConfigMap `source` whole (envFrom)."""
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {
            "name": name,
            "namespace": ns,
            "annotations": {f"{PREFIX}/watch": "true"},
            **({"labels": labels} if labels else {}),
        },
        "spec": {
            "replicas": 1,
            "selector": {"matchLabels": {"app": name}},
            "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1, "maxUnavailable": 0}},
            "template": {
                "metadata": {"labels": {"app": name}},
                "spec": {
                    "containers": [
                        {
                            "name": "app",
                            "image": "registry.invalid/app:1",
                            "envFrom": [{"configMapRef": {"name": source}}],
                        }
                    ]
                },
            },
        },
    }


def seed(cluster: Cluster, ns: str, count: int, sources: int, **labels: dict[str, str]) -> list[str]:
    """`count` Deployments named d00.. over `sources` ConfigMaps cm0.. (Deployment i reads cm{i % sources});
    adopted by one pass. Returns the Deployments' names."""
    names = [f"d{i:02d}" for i in range(count)]
    cluster.apply(
        *(configmap(ns, f"cm{j}", {"v": "0"}) for j in range(sources)),
        *(deployment(ns, n, f"cm{i % sources}", labels.get(n)) for i, n in enumerate(names)),
    )
    cluster.wait_observed(ns)
    return names


def source_of(name: str, sources: int) -> str:
    return f"cm{int(name[1:]) % sources}"
