"""The memory benchmark (benchmarks/memory.py) and the 10x shape: structural claims on a tiny cluster."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from benchmarks.generate import Shape
from benchmarks.memory import PASSES, memory_scenario, memory_table

TINY = Shape(
    workloads=20,
    opted_in=8,
    namespaces=3,
    configmaps=24,
    secrets=24,
    helm_secrets=3,
    helm_min_kb=1,
    helm_max_kb=4,
)


def test_the_10x_shape_is_the_issue_s_and_its_helm_releases_are_smaller() -> None:
    ten = Shape().scaled(10)
    assert (ten.workloads, ten.opted_in, ten.namespaces) == (30_000, 10_000, 1_000)
    assert (ten.configmaps, ten.secrets, ten.helm_secrets) == (80_000, 80_000, 15_000)
    assert (ten.helm_min_kb, ten.helm_max_kb) == (5, 30)
    # Up to 4x the Helm releases keep their size: the runs of record stay comparable.
    for factor in (1, 2, 4):
        assert (Shape().scaled(factor).helm_min_kb, Shape().scaled(factor).helm_max_kb) == (50, 300)
    assert "15000 Helm releases of 5-30 KB" in ten.label()


@pytest.mark.slow
def test_memory_scenario_measures_every_pass_in_both_modes(tmp_path: Path) -> None:
    result = memory_scenario(
        TINY,
        tmp_path,
        kube_rehash=[sys.executable, "-m", "reconcile"],
        change_fraction=0.2,
        log=lambda *_: None,
    )
    for mode in ("qps0", "defaults"):
        assert set(result[mode]) == set(PASSES)
        for name in PASSES:
            row = result[mode][name]
            assert row["exit"] == 0 and row["rss_mb"] > 0 and row["errors"] == 0
    assert result["qps0"]["first"]["summary"]["adopt"] == TINY.opted_in
    assert result["defaults"]["first"]["summary"]["adopt"] == TINY.opted_in
    assert result["qps0"]["steady"]["writes"] == result["defaults"]["steady"]["writes"] == 0
    assert result["qps0"]["change"]["content_gets"] == result["changed_sources"]
    assert result["defaults"]["change"]["content_gets"] == result["changed_sources"]
    assert result["floor"]["requests"] > 0 and result["simulator"]["hwm_mb"] > 0
    assert result["settled"]["converged"]
    table = memory_table({"1": result})
    assert table[2].startswith("| 1x | 20 (8) | 24 / 24 (3 of 1-4 KB) |")
    assert "n/a" not in table[2]
