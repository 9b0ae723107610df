"""A deterministic synthetic cluster for the benchmark, written as one JSON list for `--load`.

The shape follows a typical multi-tenant cluster: many workloads of which a third opt in, pod specs
that reference ConfigMaps/Secrets every way the API allows (env keyRefs, envFrom, volumes with and
without `items`, projected volumes), ConfigMaps of a few hundred bytes to tens of KB, Secrets holding
credentials or TLS pairs, and Helm release Secrets (50-300 KB each) that nobody references but that
dominate the bytes of any naive "list every Secret" approach. Same parameters and seed, same cluster.
"""

from __future__ import annotations

import base64
import json
import math
import random
import time
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from rehash_simulator.dress import dress

WATCH = "kube-rehash.io/watch"
# Share of each workload kind (the rest are Deployments).
KIND_MIX = (("StatefulSet", 0.15), ("DaemonSet", 0.10), ("CronJob", 0.15))
API_VERSIONS = {
    "Deployment": "apps/v1",
    "StatefulSet": "apps/v1",
    "DaemonSet": "apps/v1",
    "CronJob": "batch/v1",
}
THIN, REALISTIC = "thin", "realistic"  # `Shape.objects`
# The largest `Shape.scaled` factor at which Helm releases keep their full size (see `Shape.scaled`).
HELM_FULL_SIZE_UP_TO = 4
PLURALS = {
    "Deployment": "deployments",
    "StatefulSet": "statefulsets",
    "DaemonSet": "daemonsets",
    "CronJob": "cronjobs",
}


@dataclass(frozen=True)
class Shape:
    """Cluster size; `scaled(f)` multiplies everything, `unrelated_secrets(f)` only unreferenced Secrets."""

    workloads: int = 3000
    opted_in: int = 1000
    namespaces: int = 100
    configmaps: int = 8000
    secrets: int = 8000
    helm_secrets: int = 1500
    helm_min_kb: int = 50
    helm_max_kb: int = 300
    seed: int = 5
    # Unreferenced Secrets (plain and Helm) added on top, as a multiple of `secrets`: 1 adds none.
    unrelated_factor: int = 1
    # Share of the workloads, opted-in workloads, ConfigMaps and Secrets in the first namespace (the rest
    # spread evenly): 0 spreads everything evenly; 0.8 is a cluster that keeps most apps in one namespace.
    skew: float = 0.0
    # THIN: the objects as written here; REALISTIC: dressed as a real cluster holds them (managedFields of
    # several managers, kubectl's last-applied annotation, Helm's labels, status: rehash_simulator/dress.py).
    objects: str = "thin"

    def scaled(self, factor: int) -> Shape:
        """Every count times `factor`; beyond `HELM_FULL_SIZE_UP_TO` the Helm releases also shrink.

        Up to 4x (the scales of the runs of record) a Helm release keeps its 50-300 KB. Beyond that each
        release's size range is divided by `factor` (10x: 5-30 KB), so the Helm bytes of the whole cluster
        stay those of 1x (about 260 MB) while their *number* still grows 10x (15,000 at 10x). kube-rehash
        never reads a Helm release's content (nobody references one; it lists Secrets metadata-only, if
        at all), so what it costs depends on how many there are, not on how big: shrinking them changes
        none of kube-rehash's requests, bytes or memory, and keeps the 10x file and the simulator, which
        holds every object in memory, within the 2-core, 24 GiB machine. Measured at 10x
        (`python -m benchmarks --memory`, docs/memory-profile.md): the file is 1.44 GB (about 3.8 GB with
        full-size releases), the simulator's RSS 3.6 GB once loaded and 5.5 GB at its peak (VmHWM, after the
        passes), and the generating harness about 1.8 GB. Sizes floor at 1-2 KB.
        """
        shrink = factor if factor > HELM_FULL_SIZE_UP_TO else 1
        return replace(
            self,
            workloads=self.workloads * factor,
            opted_in=self.opted_in * factor,
            namespaces=self.namespaces * factor,
            configmaps=self.configmaps * factor,
            secrets=self.secrets * factor,
            helm_secrets=self.helm_secrets * factor,
            helm_min_kb=max(1, self.helm_min_kb // shrink),
            helm_max_kb=max(2, self.helm_max_kb // shrink),
        )

    def unrelated_secrets(self, factor: int) -> Shape:
        """Secrets (Helm releases included) grow `factor`x; the extra ones are referenced by nobody."""
        return replace(self, unrelated_factor=factor)

    def skewed(self, share: float) -> Shape:
        """The same totals with `share` of the workloads and their sources in one namespace."""
        return replace(self, skew=share)

    def label(self) -> str:
        skew = f", {self.skew:.0%} of them in one namespace" if self.skew else ""
        dressed = ", objects as real clusters hold them" if self.objects == REALISTIC else ""
        return (
            f"{self.workloads} workloads ({self.opted_in} opted in{skew}), {self.namespaces} namespaces, "
            f"{self.configmaps} ConfigMaps, {self.secrets * self.unrelated_factor} Secrets "
            f"({self.helm_secrets * self.unrelated_factor} Helm releases of "
            f"{self.helm_min_kb}-{self.helm_max_kb} KB){dressed}"
        )


@dataclass
class Cluster:
    """The generated objects plus what the benchmark needs to know about them."""

    shape: Shape
    objects: list[dict[str, Any]]
    # (kind, namespace, name) of every source referenced by an opted-in workload, sorted.
    referenced: list[tuple[str, str, str]] = field(default_factory=list)
    # Per opted-in workload: (kind, namespace, name) -> its referenced sources.
    references: dict[tuple[str, str, str], list[tuple[str, str, str]]] = field(default_factory=dict)

    def summary(self) -> dict[str, Any]:
        return {"shape": asdict(self.shape), "objects": len(self.objects), "referenced": len(self.referenced)}


def _split(total: int, parts: int, index: int) -> int:
    """How many of `total` items part `index` of `parts` gets (spread evenly, remainder first)."""
    return total // parts + (1 if index < total % parts else 0)


def _portion(total: int, parts: int, index: int, skew: float) -> int:
    """Like `_split`, but part 0 takes `skew` of the total first (when `skew` > 0)."""
    if not skew or parts == 1:
        return _split(total, parts, index)
    first = round(total * skew)
    return first if index == 0 else _split(total - first, parts - 1, index - 1)


def _text(rng: random.Random, size: int) -> str:
    """Config-file-like text of about `size` bytes (compressible lines, like real configs)."""
    words = ("server", "listen", "timeout", "upstream", "cache", "level", "enabled", "path", "host", "port")
    lines: list[str] = []
    length = 0
    while length < size:
        line = f"{rng.choice(words)}.{rng.choice(words)}_{rng.randrange(1000)} = {rng.getrandbits(48):x}"
        lines.append(line)
        length += len(line) + 1
    return "\n".join(lines)


def _b64(rng: random.Random, size: int) -> str:
    return base64.b64encode(rng.randbytes(size)).decode()


def _configmap(rng: random.Random, ns: str, name: str) -> dict[str, Any]:
    # Log-uniform size between 200 B and 64 KB over 1-4 keys.
    total = int(math.exp(rng.uniform(math.log(200), math.log(64 * 1024))))
    keys = rng.randint(1, 4)
    data = {f"key{k}" if k else "app.conf": _text(rng, total // keys) for k in range(keys)}
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": ns, "labels": {"app.kubernetes.io/part-of": ns}},
        "data": data,
    }


def _secret(rng: random.Random, ns: str, name: str) -> dict[str, Any]:
    if rng.random() < 0.4:
        data = {"tls.crt": _b64(rng, 1400), "tls.key": _b64(rng, 1200), "ca.crt": _b64(rng, 1300)}
        kind = "kubernetes.io/tls"
    else:
        data = {k: _b64(rng, rng.randint(16, 64)) for k in ("username", "password", "token", "dsn")}
        kind = "Opaque"
    return {
        "apiVersion": "v1",
        "kind": "Secret",
        "type": kind,
        "metadata": {"name": name, "namespace": ns, "labels": {"app.kubernetes.io/part-of": ns}},
        "data": data,
    }


def _helm_secret(rng: random.Random, blob: str, ns: str, index: int, shape: Shape) -> dict[str, Any]:
    size = rng.randint(shape.helm_min_kb * 1024, shape.helm_max_kb * 1024) * 3 // 4  # before base64
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


def _container(
    rng: random.Random, name: str, refs: list[tuple[str, str, list[str]]]
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """A realistic container referencing `refs` ((kind, name, keys)) in varied ways, plus its volumes."""
    env: list[dict[str, Any]] = [
        {"name": f"SETTING_{i}", "value": f"value-{rng.getrandbits(32):x}"} for i in range(rng.randint(4, 14))
    ]
    env_from: list[dict[str, Any]] = []
    mounts: list[dict[str, Any]] = [{"name": "tmp", "mountPath": "/tmp"}]
    volumes: list[dict[str, Any]] = [{"name": "tmp", "emptyDir": {}}]
    for i, (kind, source, keys) in enumerate(refs):
        form = rng.choice(("keyref", "envfrom", "volume", "volume-items", "projected"))
        ref_key = "configMapKeyRef" if kind == "configmap" else "secretKeyRef"
        if form == "keyref":
            env.append({"name": f"REF_{i}", "valueFrom": {ref_key: {"name": source, "key": keys[0]}}})
        elif form == "envfrom":
            env_from.append({"configMapRef" if kind == "configmap" else "secretRef": {"name": source}})
        else:
            volume = f"ref-{i}"
            mounts.append({"name": volume, "mountPath": f"/etc/{volume}", "readOnly": True})
            if form == "projected":
                key = "configMap" if kind == "configmap" else "secret"
                volumes.append({"name": volume, "projected": {"sources": [{key: {"name": source}}]}})
            elif kind == "configmap":
                spec: dict[str, Any] = {"name": source}
                if form == "volume-items":
                    spec["items"] = [{"key": keys[0], "path": keys[0]}]
                volumes.append({"name": volume, "configMap": spec})
            else:
                spec = {"secretName": source, "defaultMode": 0o400}
                if form == "volume-items":
                    spec["items"] = [{"key": keys[0], "path": keys[0]}]
                volumes.append({"name": volume, "secret": spec})
    container: dict[str, Any] = {
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
        container["envFrom"] = env_from
    return container, volumes


def _workload(
    rng: random.Random,
    kind: str,
    ns: str,
    name: str,
    *,
    opted_in: bool,
    refs: list[tuple[str, str, list[str]]],
) -> dict[str, Any]:
    labels = {"app.kubernetes.io/name": name, "app.kubernetes.io/instance": f"{name}-prod"}
    container, volumes = _container(rng, name, refs)
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
            "containers": [container, sidecar],
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


def namespace_name(n: int) -> str:
    """The `n`-th namespace of a generated cluster; their names sort in their order, as etcd's keys do."""
    return f"ns-{n:04d}"


def generate(shape: Shape) -> Cluster:
    """Build the cluster for `shape` (deterministic in `shape.seed`)."""
    rng = random.Random(shape.seed)
    blob = _b64(rng, shape.helm_max_kb * 1024)  # Helm payloads are slices of one random blob
    objects: list[dict[str, Any]] = []
    cluster = Cluster(shape, objects)
    referenced: set[tuple[str, str, str]] = set()
    for n in range(shape.namespaces):
        ns = namespace_name(n)
        objects.append({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}})
        cms = [
            _configmap(rng, ns, f"config-{i:04d}")
            for i in range(_portion(shape.configmaps, shape.namespaces, n, shape.skew))
        ]
        helm = _split(shape.helm_secrets, shape.namespaces, n)
        plain = _portion(shape.secrets, shape.namespaces, n, shape.skew) - helm
        secrets = [_secret(rng, ns, f"secret-{i:04d}") for i in range(max(plain, 0))]
        objects.extend(cms)
        objects.extend(secrets)
        objects.extend(_helm_secret(rng, blob, ns, i, shape) for i in range(helm))
        # Unrelated Secrets come from their own generator so the rest of the cluster stays identical.
        extra = random.Random(f"{shape.seed}-{ns}-unrelated")
        for copy in range(1, shape.unrelated_factor):
            objects.extend(_secret(extra, ns, f"unrelated-{copy}-{i:04d}") for i in range(max(plain, 0)))
            objects.extend(_helm_secret(extra, blob, ns, copy * 10000 + i, shape) for i in range(helm))
        sources = [("configmap", c["metadata"]["name"], sorted(c["data"])) for c in cms]
        sources += [("secret", s["metadata"]["name"], sorted(s["data"])) for s in secrets]
        workloads = _portion(shape.workloads, shape.namespaces, n, shape.skew)
        opted = _portion(shape.opted_in, shape.namespaces, n, shape.skew)
        for w in range(workloads):
            roll = rng.random()
            kind = "Deployment"
            for candidate, share in KIND_MIX:
                if roll < share:
                    kind = candidate
                    break
                roll -= share
            name = f"app-{w:04d}"
            refs = rng.sample(sources, min(rng.randint(1, 4), len(sources))) if sources else []
            opted_in = w < opted
            objects.append(_workload(rng, kind, ns, name, opted_in=opted_in, refs=refs))
            if opted_in:
                keyed = [(k, ns, s) for k, s, _ in refs]
                cluster.references[(kind, ns, name)] = keyed
                referenced.update(keyed)
    cluster.referenced = sorted(referenced)
    if shape.objects == REALISTIC:
        for obj in objects:
            dress(obj, shape.seed)
    return cluster


def write(cluster: Cluster, path: Path) -> int:
    """Write the objects as one JSON list (for the simulator's `--load`); returns the bytes written."""
    with path.open("w", encoding="utf-8") as out:
        json.dump(cluster.objects, out, separators=(",", ":"))
    return path.stat().st_size


@dataclass(frozen=True)
class Written:
    """A generated cluster in the simulator's `--load` file. Its objects are dropped once written: the
    simulator holds them, and the harness stays small; what it knows of them (the referenced sources, the
    references per workload) is kept."""

    cluster: Cluster
    path: Path
    size: int
    """Bytes of the file."""
    objects: int
    seconds: float
    """Generating and writing it."""


def generate_file(shape: Shape, path: Path) -> Written:
    """Generate the cluster of `shape` into `path` (what every benchmark does before its simulator)."""
    started = time.monotonic()
    cluster = generate(shape)
    size = write(cluster, path)
    objects = len(cluster.objects)
    del cluster.objects[:]
    return Written(cluster, path, size, objects, time.monotonic() - started)
