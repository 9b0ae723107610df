"""What skipIfPodsNewer costs a whole pass, counted in the simulator's request log: nothing in a steady
pass or for a change of config alone; one metadata-only read for a changed workload whose spec moved.

The simulator keeps no managedFields, so here the change time of a source is planted (as if the server
had recorded it): the counting is the point; tests/real/test_fresh_pods.py shows the outcome for real.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from reconcile.kube.auth import AuthOptions, load_credentials
from reconcile.kube.client import KubeClient
from reconcile.output.report import Report
from reconcile.pipeline.run import run_pass
from reconcile.settings.table import Settings
from rehash_simulator import Simulator
from tests.e2e.conftest import configmap, deployment, env_from

ORIGINS = r"/(replicasets|controllerrevisions)"


@pytest.fixture
def sim(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[Simulator, Path]]:
    # As if the API server had recorded managedFields: every source's content changed long ago.
    monkeypatch.setattr(
        "reconcile.pipeline.fetch.content_changed_at", lambda obj: datetime(2020, 1, 1, tzinfo=UTC)
    )
    with Simulator(rollout_seconds=0.05).start() as simulator:
        simulator.store.create_many(
            [
                configmap("app", {"a": "1"}),
                deployment("web", env_from("configmap", "app")),
            ]
        )
        yield simulator, simulator.write_kubeconfig(tmp_path / "kubeconfig")


def run(kubeconfig: Path, **settings: Any) -> Report:
    client = KubeClient(load_credentials(AuthOptions(str(kubeconfig))))
    try:
        return Report(run_pass(Settings.of(kubeconfig=str(kubeconfig), timeout=60.0, **settings), client))
    finally:
        client.close()


def requests_of(simulator: Simulator, mark: int) -> list[str]:
    return [f"{e.method} {e.path}" for e in simulator.log.entries()[mark:]]


def test_a_steady_pass_and_a_config_only_change_read_no_replicaset(sim: tuple[Simulator, Path]) -> None:
    simulator, kubeconfig = sim
    assert [r.action for r in run(kubeconfig).rows] == ["adopt"]

    counts = {}
    for on in (True, False):
        mark = len(simulator.log.entries())
        steady = run(kubeconfig, skip_if_pods_newer=on)
        assert [r.action for r in steady.rows] == ["in-sync"]
        counts[on] = requests_of(simulator, mark)
    # Not one request more (the lists walked in step start together: their order across lists may vary).
    assert sorted(counts[True]) == sorted(counts[False])
    assert simulator.log.count(path=ORIGINS) == 0

    # The ConfigMap alone changed: the spec did not move since our record, so its template is older.
    simulator.store.patch_merge("configmaps", "shop", "app", {"data": {"a": "2"}})
    assert [r.action for r in run(kubeconfig).rows] == ["rollout"]
    assert simulator.log.count(path=ORIGINS) == 0


def test_a_changed_workload_whose_spec_moved_asks_once_and_rolls_when_unanswered(
    sim: tuple[Simulator, Path],
) -> None:
    simulator, kubeconfig = sim
    assert [r.action for r in run(kubeconfig).rows] == ["adopt"]
    simulator.store.patch_merge("configmaps", "shop", "app", {"data": {"a": "2"}})
    pod = env_from("configmap", "app")
    pod["containers"][0]["image"] = "app:2"
    patch = {"spec": {"template": {"spec": pod}}}
    simulator.store.patch_merge("deployments", "shop", "web", patch)

    def observed() -> bool:
        obj = simulator.store.get("deployments", "shop", "web")
        return bool(obj.get("status", {}).get("observedGeneration") == obj["metadata"]["generation"])

    deadline = time.monotonic() + 5
    while not observed() and time.monotonic() < deadline:
        time.sleep(0.02)
    assert observed(), "the simulator's rollout controller did not observe the new spec"
    report = run(kubeconfig)
    # The simulator serves no ReplicaSets (404): no answer, so the workload rolls as it always did.
    assert [r.action for r in report.rows] == ["rollout"]
    reads = simulator.log.entries(path=ORIGINS)
    assert [(e.method, e.path) for e in reads] == [("GET", "/apis/apps/v1/namespaces/shop/replicasets")]
