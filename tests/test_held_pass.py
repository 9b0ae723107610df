"""A pass that holds its listing triages each opted-in workload once, as it is listed, and plans from the
listing's tally (pipeline/listing.py, `Listing.triage`, `keep_share`): the plan never counts the views again.
Counted on the simulator, in-process, by wrapping the one check every unsettled workload's triage makes."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from reconcile.output.report import Report
from reconcile.policy import triage
from reconcile.settings.values import Shard
from rehash_simulator import Simulator
from tests.e2e.conftest import configmap, deployment, env_from
from tests.reliability.helpers import in_process_pass

NAMESPACES = ("a", "b", "c")
PER_NAMESPACE = 5


@pytest.fixture
def cluster(tmp_path: Path) -> Iterator[tuple[Simulator, Path]]:
    with Simulator().start() as simulator:
        for ns in NAMESPACES:
            simulator.store.create_many(
                [configmap("app", {"v": "1"}, ns=ns)]
                + [deployment(f"web-{i}", env_from("configmap", "app"), ns=ns) for i in range(PER_NAMESPACE)]
            )
        yield simulator, simulator.write_kubeconfig(tmp_path / "kubeconfig")


@pytest.fixture
def triaged(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The uids `records_trusted` was asked about, in order (triage asks once per unsettled workload)."""
    seen: list[str] = []
    original: Callable[..., bool] = triage.records_trusted

    def counting(workload: Any, *args: Any, **kwargs: Any) -> bool:
        seen.append(workload.uid)
        return original(workload, *args, **kwargs)

    monkeypatch.setattr(triage, "records_trusted", counting)
    return seen


def run(cluster: tuple[Simulator, Path], **settings: Any) -> Report:
    return in_process_pass(*cluster, **settings)


def test_a_held_pass_triages_each_workload_once_from_first_install_to_steady(
    cluster: tuple[Simulator, Path], triaged: list[str]
) -> None:
    total = len(NAMESPACES) * PER_NAMESPACE
    first = run(cluster)
    assert [r.action for r in first.rows] == ["adopt"] * total
    assert len(triaged) == len(set(triaged)) == total
    triaged.clear()
    steady = run(cluster)
    assert {r.action for r in steady.rows} == {"in-sync"} and len(steady.rows) == total
    assert len(triaged) == len(set(triaged)) == total


def test_a_shard_triages_every_listed_workload_once_and_plans_only_its_share(
    cluster: tuple[Simulator, Path], triaged: list[str]
) -> None:
    run(cluster)
    triaged.clear()
    shares = [run(cluster, shard=Shard(index, 2)) for index in range(2)]
    total = len(NAMESPACES) * PER_NAMESPACE
    # Every shard lists (and so triages) every opted-in workload, once, to compute the same split.
    assert len(triaged) == 2 * total and len(set(triaged)) == total
    names = [sorted(f"{r.namespace}/{r.name}" for r in share.rows) for share in shares]
    assert not set(names[0]) & set(names[1]) and len(names[0]) + len(names[1]) == total
