"""End-to-end harness: the installed `kube-rehash` CLI over HTTPS with a kubeconfig, against the simulator
and against a real kube-apiserver (tests/e2e/backends.py), and builders of the objects the tests seed."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from rehash_simulator import Simulator
from tests.cluster.controlplane import ControlPlane
from tests.e2e.backends import CLI, Backend, Cluster, Identity, RealCluster, Result, make_identity

__all__ = ["CLI", "Backend", "Cluster", "Result", "cluster"]

BACKENDS = ("sim", "real")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "sim_only(reason): the test runs on the simulator only (needs its faults, log or clock)"
    )
    config.addinivalue_line(
        "markers",
        "content_times: the simulator times each source's last content change in managedFields, as "
        "kube-apiserver does",
    )


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """Every e2e test using `cluster` runs on both backends, `[sim]` and `[real]`, unless marked sim_only."""
    if "cluster" not in metafunc.fixturenames:
        return
    marker = metafunc.definition.get_closest_marker("sim_only")
    if marker is not None:
        assert marker.args and marker.args[0], "sim_only needs a reason"
    backends = ("sim",) if marker is not None else BACKENDS
    params = [pytest.param(b, id=b, marks=[pytest.mark.real] if b == "real" else []) for b in backends]
    metafunc.parametrize("cluster", params, indirect=True)


@pytest.fixture(scope="session")
def identity(control: ControlPlane, tmp_path_factory: pytest.TempPathFactory) -> Identity:
    """kube-rehash's own ServiceAccount on the real server, so the audit log tells its requests apart."""
    return make_identity(control, tmp_path_factory.mktemp("identity"))


@pytest.fixture
def cluster(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Backend]:
    """The server a test runs against: the simulator (the default, e.g. for tests/reliability) or real."""
    if getattr(request, "param", "sim") == "real":
        real = RealCluster(request.getfixturevalue("control"), request.getfixturevalue("identity"), tmp_path)
        try:
            yield real
        finally:
            real.close()
        return
    content_times = request.node.get_closest_marker("content_times") is not None
    with Simulator(content_times=content_times).start() as sim:
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
        # never during a test (a real cronjob controller would make Jobs of its own)
        "spec": {"schedule": "0 0 1 1 *", "jobTemplate": {"spec": {"template": template}}, **spec},
    }


def env_from(kind: str, name: str, **extra: Any) -> dict[str, Any]:
    ref = "configMapRef" if kind == "configmap" else "secretRef"
    return {"containers": [{"name": "app", "image": "app:1", "envFrom": [{ref: {"name": name, **extra}}]}]}


def env_key(kind: str, name: str, key: str, **extra: Any) -> dict[str, Any]:
    ref = "configMapKeyRef" if kind == "configmap" else "secretKeyRef"
    env = [{"name": "V", "valueFrom": {ref: {"name": name, "key": key, **extra}}}]
    return {"containers": [{"name": "app", "image": "app:1", "env": env}]}


def csi_pod_spec(spc: str = "vault-db") -> dict[str, Any]:
    volume = {
        "name": "secrets",
        "csi": {
            "driver": "secrets-store.csi.k8s.io",
            "readOnly": True,
            "volumeAttributes": {"secretProviderClass": spc},
        },
    }
    mount = {"name": "secrets", "mountPath": "/mnt/secrets", "readOnly": True}
    return {"containers": [{"name": "app", "image": "app:1", "volumeMounts": [mount]}], "volumes": [volume]}


def owned_pod(name: str, owner: str, hash_label: str = "abc12", ns: str = "shop") -> dict[str, Any]:
    """A pod of Deployment `owner` as its ReplicaSet `<owner>-<hash>` creates it."""
    rs = f"{owner}-{hash_label}"
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": name,
            "namespace": ns,
            "labels": {"app": owner, "pod-template-hash": hash_label},
            "ownerReferences": [
                {
                    "apiVersion": "apps/v1",
                    "kind": "ReplicaSet",
                    "name": rs,
                    "uid": f"uid-{rs}",
                    "controller": True,
                }
            ],
        },
        "spec": {"containers": [{"name": "app", "image": "app:1"}]},
    }


def csi_status(
    pod_name: str, versions: dict[str, str], spc: str = "vault-db", ns: str = "shop"
) -> dict[str, Any]:
    """What the driver writes when it mounts `spc` into a pod."""
    return {
        "apiVersion": "secrets-store.csi.x-k8s.io/v1",
        "kind": "SecretProviderClassPodStatus",
        "metadata": {"name": f"{pod_name}-{ns}-{spc}", "namespace": ns},
        "status": {
            "podName": pod_name,
            "secretProviderClassName": spc,
            "mounted": True,
            "targetPath": f"/var/lib/kubelet/pods/{pod_name}/volumes/kubernetes.io~csi/secrets/mount",
            "objects": [{"id": f"secret/{k}", "version": v} for k, v in sorted(versions.items())],
        },
    }


def template_hash(obj: dict[str, Any], pointer: tuple[str, ...] = ("spec", "template")) -> str | None:
    node: Any = obj
    for step in (*pointer, "metadata", "annotations"):
        node = (node or {}).get(step)
    return (node or {}).get("kube-rehash.io/config-hash")
