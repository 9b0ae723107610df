"""Named cluster shapes for the memory run (`python -m benchmarks --memory --shapes ...`), each at 10x.

Why: a pass's memory depends on the shape of the cluster and of its objects, not only on its size, and the
benchmark's one generated shape (`Shape().scaled(10)`, "project" here) is only one of them. Each
shape below keeps the 10x counts of opted-in workloads (8,000-10,000) and varies one thing a real cluster
may have; `independent` is the shape an outside measurement was made on (1,000 namespaces, 30,000
workloads of which 10,000 opted in, 1-5 references each through every reference form, 80,000 ConfigMaps of
which 30% carry a 1-8 KB file, 80,000 Secrets of which 15,000 are Helm releases of 5-30 KB), and the
others start from it:

- `project`: nothing: the run of record's 10x shape (ConfigMaps of 200 B-64 KB over 1-4 keys, 1-4 refs);
- `independent`: ConfigMaps of a few short settings (70%) or one 1-8 KB file (30%); 1-5 references;
- `many-small`: 6,000 namespaces of 5 workloads (1-2 opted in) and about 13 + 13 sources each;
- `few-huge`: 40 namespaces of 500 workloads (200 opted in) and 1,000 + 1,000 sources each, 2,000 Helm
  releases of 50-300 KB;
- `helm-heavy`: 5,000 Helm releases of 50-300 KB (full size, not shrunk);
- `big-configmaps`: 300 ConfigMaps of 900-1,000 KiB, each mounted whole by the opted-in workloads of its
  namespace;
- `long-refs`: 20-40 references and 40-120 plain env vars per workload;
- `realistic`: `independent` with objects as real clusters hold them (rehash_simulator/dress.py).

`scaled_down(shape, f)` shrinks a shape's counts (e.g. 0.1 for a quick look; the Helm and ConfigMap sizes
stay).
"""

from __future__ import annotations

from dataclasses import replace

from benchmarks.generate import REALISTIC, Contents, Shape

PROJECT = Shape().scaled(10)
INDEPENDENT = replace(
    Shape(contents=Contents(configmap_files=0.3, file_kb=(1, 8)), refs_max=5).scaled(10),
    helm_min_kb=5,
    helm_max_kb=30,
)
SHAPES: dict[str, Shape] = {
    "project": PROJECT,
    "independent": INDEPENDENT,
    "many-small": replace(INDEPENDENT, namespaces=6000),
    "few-huge": replace(
        INDEPENDENT,
        namespaces=40,
        workloads=20_000,
        opted_in=8_000,
        configmaps=40_000,
        secrets=40_000,
        helm_secrets=2_000,
        helm_min_kb=50,
        helm_max_kb=300,
    ),
    "helm-heavy": replace(INDEPENDENT, helm_secrets=5_000, helm_min_kb=50, helm_max_kb=300),
    "big-configmaps": replace(INDEPENDENT, big_configmaps=300),
    "long-refs": replace(
        INDEPENDENT, refs_min=20, refs_max=40, contents=replace(INDEPENDENT.contents, env=(40, 120))
    ),
    "realistic": replace(INDEPENDENT, objects=REALISTIC),
}
COUNTS = ("workloads", "opted_in", "namespaces", "configmaps", "secrets", "helm_secrets", "big_configmaps")


def named(name: str) -> Shape:
    """The shape called `name` (ValueError for another name)."""
    try:
        return SHAPES[name]
    except KeyError:
        raise ValueError(f"unknown shape {name!r}: one of {', '.join(SHAPES)}") from None


def scaled_down(shape: Shape, factor: float) -> Shape:
    """Every count times `factor` (rounded, at least 1 where the shape has any); sizes unchanged."""
    if factor == 1:
        return shape
    counts = {
        name: max(0 if name == "big_configmaps" else 1, round(getattr(shape, name) * factor))
        for name in COUNTS
    }
    if shape.big_configmaps:
        counts["big_configmaps"] = max(1, counts["big_configmaps"])
    return replace(shape, **counts)
