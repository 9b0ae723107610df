"""The memory run's named shapes (benchmarks/shapes.py) and what the generator builds for them."""

from __future__ import annotations

from collections import Counter

import pytest

from benchmarks.generate import generate
from benchmarks.memory import shapes_table
from benchmarks.shapes import SHAPES, named, scaled_down


def test_the_independent_shape_is_the_issue_s() -> None:
    shape = named("independent")
    assert (shape.namespaces, shape.workloads, shape.opted_in) == (1_000, 30_000, 10_000)
    assert (shape.configmaps, shape.secrets, shape.helm_secrets) == (80_000, 80_000, 15_000)
    assert (shape.helm_min_kb, shape.helm_max_kb, shape.refs_min, shape.refs_max) == (5, 30, 1, 5)
    assert shape.contents.configmap_files == 0.3 and shape.contents.file_kb == (1, 8)


def test_an_unknown_shape_is_refused_with_the_known_ones() -> None:
    with pytest.raises(ValueError, match="one of project, independent"):
        named("huge")


def test_a_shape_scaled_down_keeps_its_sizes_and_generates_what_it_says() -> None:
    shape = scaled_down(named("big-configmaps"), 0.01)
    assert (shape.namespaces, shape.opted_in, shape.big_configmaps) == (10, 100, 3)
    cluster = generate(shape)
    bundles = [o for o in cluster.objects if o["metadata"]["name"].startswith("bundle-")]
    assert len(bundles) == 3
    assert all(900 * 1024 <= len(b["data"]["bundle.conf"]) <= 1000 * 1024 + 64 for b in bundles)
    mounted = {
        v["configMap"]["name"]
        for o in cluster.objects
        if o["kind"] in ("Deployment", "StatefulSet", "DaemonSet")
        for v in o["spec"]["template"]["spec"]["volumes"]
        if "configMap" in v and "items" not in v["configMap"]
    }
    assert {b["metadata"]["name"] for b in bundles} <= mounted  # each mounted whole


def test_long_refs_workloads_reference_twenty_to_forty_sources() -> None:
    cluster = generate(scaled_down(named("long-refs"), 0.01))
    counts = Counter(len(refs) for refs in cluster.references.values())
    assert min(counts) >= 20 and max(counts) <= 40


def test_the_shapes_table_says_which_pass_is_over_64_mib() -> None:
    row = {"rss_mb": 0.0}
    shape = SHAPES["independent"]
    result = {
        "shape": {
            "workloads": shape.workloads,
            "opted_in": shape.opted_in,
            "namespaces": shape.namespaces,
            "configmaps": shape.configmaps,
            "big_configmaps": 0,
            "secrets": shape.secrets,
            "helm_secrets": shape.helm_secrets,
            "helm_min_kb": 5,
            "helm_max_kb": 30,
        },
        "qps0": {"first": {**row, "rss_mb": 147.0}, "steady": {**row, "rss_mb": 50.1}, "change": row},
        "defaults": {"steady": row, "change": row},
        "answers": {"continueTtl": 60},
    }
    lines = shapes_table({"independent@tokens-60s": result})
    assert lines[2] == (
        "| independent | continueTtl: 60 | 30,000 (10,000) / 1,000 | 80,000 / 80,000 (15,000 of 5-30 KB) "
        "| 147.0 | 50.1 | 0.0 | n/a | 0.0 | 0.0 | 147.0 | **no** |"
    )
