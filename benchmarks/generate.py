"""A deterministic synthetic cluster for the benchmark, written as one JSON list for `--load`.

The shape follows a typical multi-tenant cluster: many workloads of which a third opt in, pod specs
that reference ConfigMaps/Secrets every way the API allows (env keyRefs, envFrom, volumes with and
without `items`, projected volumes), ConfigMaps of a few hundred bytes to tens of KB, Secrets holding
credentials or TLS pairs, and Helm release Secrets (50-300 KB each) that nobody references but that
dominate the bytes of any naive "list every Secret" approach. Same parameters and seed, same cluster.
"""

from __future__ import annotations

import json
import random
import time
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from benchmarks.objects import (
    API_VERSIONS,
    WATCH,
    Contents,
    b64,
    big_size,
    configmap,
    helm_secret,
    secret,
    workload,
)
from rehash_simulator.dress import dress

__all__ = ["API_VERSIONS", "WATCH", "Cluster", "Contents", "Shape", "generate", "generate_file"]
# Share of each workload kind (the rest are Deployments).
KIND_MIX = (("StatefulSet", 0.15), ("DaemonSet", 0.10), ("CronJob", 0.15))
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
    # Each workload references between `refs_min` and `refs_max` sources of its namespace (fewer where it
    # holds fewer), each through one of every reference form (benchmarks/objects.py, FORMS).
    refs_min: int = 1
    refs_max: int = 4
    contents: Contents = field(default_factory=Contents)
    # ConfigMaps of 900-1,000 KiB (near the API's 1 MiB limit) on top of `configmaps`, spread over the
    # namespaces; every opted-in workload of a namespace holding some mounts one of them whole.
    big_configmaps: int = 0
    # Whether `scaled` shrinks the Helm releases beyond `HELM_FULL_SIZE_UP_TO` (see there).
    helm_shrink: bool = True

    def scaled(self, factor: int) -> Shape:
        """Every count times `factor`; beyond `HELM_FULL_SIZE_UP_TO` the Helm releases also shrink.

        Up to 4x (the scales of the runs of record) a Helm release keeps its 50-300 KB. Beyond that each
        release's size range is divided by `factor` (10x: 5-30 KB), so the Helm bytes of the whole cluster
        stay those of 1x (about 260 MB) while their *number* still grows 10x (15,000 at 10x). kube-rehash
        never reads a Helm release's content (nobody references one; it lists Secrets metadata-only, if
        at all), so what it costs depends on how many there are, not on how big: shrinking them changes
        none of kube-rehash's requests, bytes or memory, and keeps the 10x file and the simulator, which
        holds every object in memory, within the 2-core, 24 GiB machine. Measured at 10x
        (`python -m benchmarks --memory`, docs/engineering/memory-profile-details.md, "The 10x shape"): the
        file is 1.44 GB (about 3.8 GB with full-size releases), the simulator's RSS 3.6 GB once loaded and 5.5
        GB at its peak (VmHWM, after the passes), and the generating harness about 1.8 GB. Sizes floor at 1-2
        KB.
        """
        shrink = factor if factor > HELM_FULL_SIZE_UP_TO and self.helm_shrink else 1
        return replace(
            self,
            workloads=self.workloads * factor,
            opted_in=self.opted_in * factor,
            namespaces=self.namespaces * factor,
            configmaps=self.configmaps * factor,
            secrets=self.secrets * factor,
            helm_secrets=self.helm_secrets * factor,
            big_configmaps=self.big_configmaps * factor,
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


def namespace_name(n: int) -> str:
    """The `n`-th namespace of a generated cluster; their names sort in their order, as etcd's keys do."""
    return f"ns-{n:04d}"


def generate(shape: Shape) -> Cluster:
    """Build the cluster for `shape` (deterministic in `shape.seed`)."""
    rng = random.Random(shape.seed)
    blob = b64(rng, shape.helm_max_kb * 1024)  # Helm payloads are slices of one random blob
    cluster = Cluster(shape, [])
    referenced: set[tuple[str, str, str]] = set()
    for n in range(shape.namespaces):
        _namespace(cluster, n, rng, blob, referenced)
    cluster.referenced = sorted(referenced)
    if shape.objects == REALISTIC:
        for obj in cluster.objects:
            dress(obj, shape.seed)
    return cluster


def _namespace(
    cluster: Cluster, n: int, rng: random.Random, blob: str, referenced: set[tuple[str, str, str]]
) -> None:
    """The `n`-th namespace and everything in it, into `cluster`."""
    shape, objects = cluster.shape, cluster.objects
    ns = namespace_name(n)
    helm_kb = (shape.helm_min_kb, shape.helm_max_kb)
    objects.append({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}})
    cms = [
        configmap(rng, ns, f"config-{i:04d}", shape.contents)
        for i in range(_portion(shape.configmaps, shape.namespaces, n, shape.skew))
    ]
    bundles = [
        configmap(rng, ns, f"bundle-{i:04d}", size=big_size(rng))
        for i in range(_split(shape.big_configmaps, shape.namespaces, n))
    ]
    helm = _split(shape.helm_secrets, shape.namespaces, n)
    plain = _portion(shape.secrets, shape.namespaces, n, shape.skew) - helm
    secrets = [secret(rng, ns, f"secret-{i:04d}") for i in range(max(plain, 0))]
    objects.extend(cms)
    objects.extend(bundles)
    objects.extend(secrets)
    objects.extend(helm_secret(rng, blob, ns, i, helm_kb) for i in range(helm))
    # Unrelated Secrets come from their own generator so the rest of the cluster stays identical.
    extra = random.Random(f"{shape.seed}-{ns}-unrelated")
    for copy in range(1, shape.unrelated_factor):
        objects.extend(secret(extra, ns, f"unrelated-{copy}-{i:04d}") for i in range(max(plain, 0)))
        objects.extend(helm_secret(extra, blob, ns, copy * 10000 + i, helm_kb) for i in range(helm))
    sources = [("configmap", c["metadata"]["name"], sorted(c["data"])) for c in cms]
    sources += [("secret", s["metadata"]["name"], sorted(s["data"])) for s in secrets]
    whole = frozenset(b["metadata"]["name"] for b in bundles)
    opted = _portion(shape.opted_in, shape.namespaces, n, shape.skew)
    for w in range(_portion(shape.workloads, shape.namespaces, n, shape.skew)):
        roll = rng.random()
        kind = "Deployment"
        for candidate, share in KIND_MIX:
            if roll < share:
                kind = candidate
                break
            roll -= share
        name = f"app-{w:04d}"
        count = rng.randint(shape.refs_min, shape.refs_max)
        refs = rng.sample(sources, min(count, len(sources))) if sources else []
        opted_in = w < opted
        if opted_in and bundles:
            bundle = bundles[w % len(bundles)]
            refs.append(("configmap", bundle["metadata"]["name"], sorted(bundle["data"])))
        objects.append(
            workload(rng, kind, ns, name, opted_in=opted_in, refs=refs, contents=shape.contents, whole=whole)
        )
        if opted_in:
            keyed = [(k, ns, s) for k, s, _ in refs]
            cluster.references[(kind, ns, name)] = keyed
            referenced.update(keyed)


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
