"""End-to-end harness: the installed `kube-rehash` CLI against the simulator over HTTPS with a kubeconfig."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from rehash_simulator import Simulator

CLI = str(Path(sys.executable).parent / "kube-rehash")


@dataclass
class Result:
    code: int
    stdout: str
    stderr: str

    @property
    def report(self) -> dict[str, Any]:
        return json.loads(self.stdout)  # type: ignore[no-any-return]

    def actions(self) -> dict[str, str]:
        return {f"{w['kind']}/{w['namespace']}/{w['name']}": w["action"] for w in self.report["workloads"]}


class Cluster:
    """A running simulator plus helpers to seed objects and run the CLI against it."""

    def __init__(self, sim: Simulator, tmp: Path) -> None:
        self.sim = sim
        self.tmp = tmp
        self.kubeconfig = sim.write_kubeconfig(tmp / "kubeconfig")

    def add(self, *objs: dict[str, Any]) -> None:
        for obj in objs:
            self.sim.store.create(obj)

    def get(self, resource: str, namespace: str, name: str) -> dict[str, Any]:
        return self.sim.store.get(resource, namespace, name)

    def edit(self, resource: str, namespace: str, name: str, patch: dict[str, Any]) -> None:
        self.sim.store.patch_merge(resource, namespace, name, patch)

    def config(self, text: str) -> Path:
        path = self.tmp / "config.yaml"
        path.write_text(text)
        return path

    def cli(self, *args: str, env: dict[str, str] | None = None, kubeconfig: bool = True) -> Result:
        argv = [CLI, *args]
        if kubeconfig and args and args[0] in ("run", "plan", "explain"):
            argv += ["--kubeconfig", str(self.kubeconfig)]
        full_env = {k: v for k, v in os.environ.items() if not k.startswith(("KUBE_REHASH_", "KUBECONFIG"))}
        full_env.update(env or {})
        done = subprocess.run(argv, capture_output=True, text=True, timeout=120, env=full_env, check=False)
        return Result(done.returncode, done.stdout, done.stderr)

    def run(self, *args: str, **kw: Any) -> Result:
        """`kube-rehash run -o json ...`, asserting it produced a report."""
        result = self.cli("run", "-o", "json", *args, **kw)
        assert result.stdout.startswith("{"), result.stderr
        return result

    def writes(self) -> list[Any]:
        return [e for e in self.sim.log.entries() if e.method in ("POST", "PUT", "PATCH", "DELETE")]


@pytest.fixture
def cluster(tmp_path: Path) -> Iterator[Cluster]:
    with Simulator().start() as sim:
        yield Cluster(sim, tmp_path)


# -- object builders ------------------------------------------------------------------------------


def configmap(name: str, data: dict[str, str], ns: str = "shop", **meta: Any) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": ns, **meta},
        "data": data,
    }


def secret(name: str, data: dict[str, str], ns: str = "shop", **meta: Any) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Secret",
        "type": "Opaque",
        "metadata": {"name": name, "namespace": ns, **meta},
        "stringData": data,
    }


def deployment(
    name: str,
    pod_spec: dict[str, Any] | None = None,
    *,
    ns: str = "shop",
    annotations: dict[str, str] | None = None,
    kind: str = "Deployment",
    **spec: Any,
) -> dict[str, Any]:
    pod = pod_spec or {"containers": [{"name": "app", "image": "app:1"}]}
    template = {"metadata": {"labels": {"app": name}}, "spec": pod}
    body: dict[str, Any] = {"selector": {"matchLabels": {"app": name}}, "template": template, **spec}
    api = "argoproj.io/v1alpha1" if kind == "Rollout" else "apps/v1"
    if kind == "StatefulSet":
        body.setdefault("serviceName", name)
    meta = {
        "name": name,
        "namespace": ns,
        "annotations": {"kube-rehash.io/watch": "true"} if annotations is None else annotations,
    }
    return {"apiVersion": api, "kind": kind, "metadata": meta, "spec": body}


def cronjob(
    name: str,
    pod_spec: dict[str, Any],
    *,
    ns: str = "shop",
    annotations: dict[str, str] | None = None,
    **spec: Any,
) -> dict[str, Any]:
    template = {"spec": {**pod_spec, "restartPolicy": "OnFailure"}}
    return {
        "apiVersion": "batch/v1",
        "kind": "CronJob",
        "metadata": {
            "name": name,
            "namespace": ns,
            "annotations": annotations or {"kube-rehash.io/watch": "true"},
        },
        "spec": {"schedule": "*/5 * * * *", "jobTemplate": {"spec": {"template": template}}, **spec},
    }


def env_from(kind: str, name: str, **extra: Any) -> dict[str, Any]:
    ref = "configMapRef" if kind == "configmap" else "secretRef"
    return {"containers": [{"name": "app", "image": "app:1", "envFrom": [{ref: {"name": name, **extra}}]}]}


def env_key(kind: str, name: str, key: str, **extra: Any) -> dict[str, Any]:
    ref = "configMapKeyRef" if kind == "configmap" else "secretKeyRef"
    env = [{"name": "V", "valueFrom": {ref: {"name": name, "key": key, **extra}}}]
    return {"containers": [{"name": "app", "image": "app:1", "env": env}]}


def template_hash(obj: dict[str, Any], pointer: tuple[str, ...] = ("spec", "template")) -> str | None:
    node: Any = obj
    for step in (*pointer, "metadata", "annotations"):
        node = (node or {}).get(step)
    return (node or {}).get("kube-rehash.io/config-hash")
