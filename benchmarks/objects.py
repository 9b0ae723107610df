"""The objects of a generated cluster: ConfigMaps, Secrets, Helm releases and workloads.

Why a module of its own: the benchmark measures memory on more than one shape of cluster
(benchmarks/shapes.py), and the shapes differ in what the objects hold, not only in how many there are:
ConfigMaps of a few settings beside some with a file, or near the API's 1 MiB limit; long env lists;
many references per workload. `Contents` carries those choices; its defaults build exactly the objects
the benchmark has always built (same seed, same bytes), so the runs of record stay comparable.
"""

from __future__ import annotations

import base64
import math
import random
from dataclasses import dataclass
from typing import Any

WATCH = "kube-rehash.io/watch"
API_VERSIONS = {
    "Deployment": "apps/v1",
    "StatefulSet": "apps/v1",
    "DaemonSet": "apps/v1",
    "CronJob": "batch/v1",
}
FORMS = ("keyref", "envfrom", "volume", "volume-items", "projected")
"""Every way a pod spec references a source; each reference takes one at random."""
MIB = 1024 * 1024


@dataclass(frozen=True)
class Contents:
    """What the objects hold (the counts are `Shape`'s)."""

    configmap_files: float = 0.0
    """0: every ConfigMap is 200 B-64 KB (log-uniform) of config text over 1-4 keys. Above 0: this share of
    them carries one file of `file_kb` and the rest a few short settings (2-8 keys of 4-40 bytes)."""
    file_kb: tuple[int, int] = (1, 8)
    env: tuple[int, int] = (4, 14)
    """Plain env vars of each workload's main container (besides its references)."""


def text(rng: random.Random, size: int) -> str:
    """Config-file-like text of about `size` bytes (compressible lines, like real configs)."""
    words = ("server", "listen", "timeout", "upstream", "cache", "level", "enabled", "path", "host", "port")
    lines: list[str] = []
    length = 0
    while length < size:
        line = f"{rng.choice(words)}.{rng.choice(words)}_{rng.randrange(1000)} = {rng.getrandbits(48):x}"
        lines.append(line)
        length += len(line) + 1
    return "\n".join(lines)


def b64(rng: random.Random, size: int) -> str:
    return base64.b64encode(rng.randbytes(size)).decode()


def configmap_data(rng: random.Random, contents: Contents) -> dict[str, str]:
    if not contents.configmap_files:
        # Log-uniform size between 200 B and 64 KB over 1-4 keys.
        total = int(math.exp(rng.uniform(math.log(200), math.log(64 * 1024))))
        keys = rng.randint(1, 4)
        return {f"key{k}" if k else "app.conf": text(rng, total // keys) for k in range(keys)}
    if rng.random() < contents.configmap_files:
        low, high = contents.file_kb
        return {"app.conf": text(rng, rng.randint(low * 1024, high * 1024))}
    return {f"SETTING_{k}": f"{rng.getrandbits(rng.randint(16, 160)):x}" for k in range(rng.randint(2, 8))}


def configmap(
    rng: random.Random, ns: str, name: str, contents: Contents = Contents(), *, size: int = 0
) -> dict[str, Any]:
    """A ConfigMap; with `size`, one key of config text of about that many bytes."""
    data = {"bundle.conf": text(rng, size)} if size else configmap_data(rng, contents)
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": ns, "labels": {"app.kubernetes.io/part-of": ns}},
        "data": data,
    }


def big_size(rng: random.Random) -> int:
    """A ConfigMap's data near the API's 1 MiB limit: 900 KiB up to 1,000 KiB of text (the object, its
    metadata included, stays under 1 MiB, as kube-apiserver requires)."""
    return rng.randint(900 * 1024, 1000 * 1024)


def secret(rng: random.Random, ns: str, name: str) -> dict[str, Any]:
    if rng.random() < 0.4:
        data = {"tls.crt": b64(rng, 1400), "tls.key": b64(rng, 1200), "ca.crt": b64(rng, 1300)}
        kind = "kubernetes.io/tls"
    else:
        data = {k: b64(rng, rng.randint(16, 64)) for k in ("username", "password", "token", "dsn")}
        kind = "Opaque"
    return {
        "apiVersion": "v1",
        "kind": "Secret",
        "type": kind,
        "metadata": {"name": name, "namespace": ns, "labels": {"app.kubernetes.io/part-of": ns}},
        "data": data,
    }


def helm_secret(
    rng: random.Random, blob: str, ns: str, index: int, size_kb: tuple[int, int]
) -> dict[str, Any]:
    size = rng.randint(size_kb[0] * 1024, size_kb[1] * 1024) * 3 // 4  # before base64
    start = rng.randrange(0, len(blob) - size)
    release = f"release-{index:04d}"
    return {
        "apiVersion": "v1",
        "kind": "Secret",
        "type": "helm.sh/release.v1",
        "metadata": {
            "name": f"sh.helm.release.v1.{release}.v{rng.randint(1, 30)}",
            "namespace": ns,
            "labels": {"name": release, "owner": "helm", "status": "deployed", "version": "1"},
        },
        # A Helm release is base64(gzip(json)) inside the Secret's own base64: incompressible text.
        "data": {"release": base64.b64encode(blob[start : start + size].encode()).decode()},
    }


Reference = tuple[str, str, list[str]]
"""(kind, name, keys) of a source a workload references."""


def _reference(
    rng: random.Random,
    i: int,
    ref: Reference,
    whole: frozenset[str],
    into: tuple[list[dict[str, Any]], list[dict[str, Any]], list[dict[str, Any]], list[dict[str, Any]]],
) -> None:
    """Reference source `ref` in one of `FORMS` (a volume of the whole object for a name in `whole`),
    appending to the container's (env, envFrom, volumeMounts) and the pod's volumes."""
    env, env_from, mounts, volumes = into
    kind, source, keys = ref
    form = rng.choice(FORMS)
    if source in whole:
        form = "volume"
    ref_key = "configMapKeyRef" if kind == "configmap" else "secretKeyRef"
    if form == "keyref":
        env.append({"name": f"REF_{i}", "valueFrom": {ref_key: {"name": source, "key": keys[0]}}})
        return
    if form == "envfrom":
        env_from.append({"configMapRef" if kind == "configmap" else "secretRef": {"name": source}})
        return
    volume = f"ref-{i}"
    mounts.append({"name": volume, "mountPath": f"/etc/{volume}", "readOnly": True})
    if form == "projected":
        key = "configMap" if kind == "configmap" else "secret"
        volumes.append({"name": volume, "projected": {"sources": [{key: {"name": source}}]}})
        return
    spec: dict[str, Any] = {"name": source}
    if kind != "configmap":
        spec = {"secretName": source, "defaultMode": 0o400}
    if form == "volume-items":
        spec["items"] = [{"key": keys[0], "path": keys[0]}]
    volumes.append({"name": volume, "configMap" if kind == "configmap" else "secret": spec})


def container(
    rng: random.Random,
    name: str,
    refs: list[Reference],
    contents: Contents = Contents(),
    whole: frozenset[str] = frozenset(),
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """A realistic container referencing `refs` in varied ways, plus its volumes."""
    env: list[dict[str, Any]] = [
        {"name": f"SETTING_{i}", "value": f"value-{rng.getrandbits(32):x}"}
        for i in range(rng.randint(*contents.env))
    ]
    env_from: list[dict[str, Any]] = []
    mounts: list[dict[str, Any]] = [{"name": "tmp", "mountPath": "/tmp"}]
    volumes: list[dict[str, Any]] = [{"name": "tmp", "emptyDir": {}}]
    for i, ref in enumerate(refs):
        _reference(rng, i, ref, whole, (env, env_from, mounts, volumes))
    main: dict[str, Any] = {
        "name": name,
        "image": f"registry.example.com/team/{name}:1.{rng.randint(0, 40)}.{rng.randint(0, 9)}",
        "imagePullPolicy": "IfNotPresent",
        "ports": [{"name": "http", "containerPort": 8080, "protocol": "TCP"}],
        "env": env,
        "resources": {"requests": {"cpu": "100m", "memory": "128Mi"}, "limits": {"memory": "512Mi"}},
        "readinessProbe": {"httpGet": {"path": "/ready", "port": "http"}, "periodSeconds": 10},
        "livenessProbe": {"httpGet": {"path": "/healthz", "port": "http"}, "initialDelaySeconds": 15},
        "securityContext": {
            "runAsNonRoot": True,
            "allowPrivilegeEscalation": False,
            "readOnlyRootFilesystem": True,
        },
        "volumeMounts": mounts,
    }
    if env_from:
        main["envFrom"] = env_from
    return main, volumes


def workload(
    rng: random.Random,
    kind: str,
    ns: str,
    name: str,
    *,
    opted_in: bool,
    refs: list[Reference],
    contents: Contents = Contents(),
    whole: frozenset[str] = frozenset(),
) -> dict[str, Any]:
    labels = {"app.kubernetes.io/name": name, "app.kubernetes.io/instance": f"{name}-prod"}
    main, volumes = container(rng, name, refs, contents, whole)
    sidecar = {
        "name": "log-shipper",
        "image": "registry.example.com/infra/log-shipper:2.3.1",
        "resources": {"requests": {"cpu": "10m", "memory": "32Mi"}},
        "volumeMounts": [{"name": "tmp", "mountPath": "/var/log/app"}],
    }
    template: dict[str, Any] = {
        "metadata": {
            "labels": labels,
            "annotations": {"prometheus.io/scrape": "true", "prometheus.io/port": "8080"},
        },
        "spec": {
            "serviceAccountName": name,
            "containers": [main, sidecar],
            "volumes": volumes,
            "securityContext": {"fsGroup": 65532},
            "terminationGracePeriodSeconds": 30,
        },
    }
    annotations = {
        "deployment.kubernetes.io/revision": str(rng.randint(1, 50)),
        "team": f"team-{rng.randint(1, 20)}",
    }
    if opted_in:
        annotations[WATCH] = "true"
    metadata = {"name": name, "namespace": ns, "labels": labels, "annotations": annotations}
    if kind == "CronJob":
        template["spec"]["restartPolicy"] = "OnFailure"
        spec: dict[str, Any] = {"schedule": "*/30 * * * *", "jobTemplate": {"spec": {"template": template}}}
    else:
        spec = {"selector": {"matchLabels": labels}, "template": template}
        if kind != "DaemonSet":
            spec["replicas"] = rng.randint(1, 5)
        if kind == "StatefulSet":
            spec["serviceName"] = name
    return {"apiVersion": API_VERSIONS[kind], "kind": kind, "metadata": metadata, "spec": spec}
