"""The metrics of a real pass, pushed by the installed CLI to a real Prometheus Pushgateway: the alert rules'
inputs of deploy/monitoring/ as a pass produces them (tests/test_metrics.py pushes them directly).

A notify workload whose webhook refuses is `kube_rehash_notifications_undelivered` until a pass delivers;
with `metricsPerWorkload: true` each workload a pass rolled is a series of
`kube_rehash_workload_last_rollout_timestamp_seconds`, gone after a pass that did not roll it.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from tests.e2e.conftest import Backend, deployment
from tests.e2e.test_notify import NOTIFY, WEB, seed, uses_both
from tests.e2e.test_notify_webhook import Receiver, configure, receiver
from tests.test_metrics import gateway, scrape

__all__ = ["gateway", "receiver"]  # fixtures

API = "Deployment/shop/api"
PER_WORKLOAD = "kube_rehash_workload_last_rollout_timestamp_seconds"


@pytest.mark.sim_only("what is proven is the push of a pass's outcome, the same on either server")
@pytest.mark.slow
def test_a_pass_pushes_undelivered_notifications_and_the_opt_in_rolled_workloads(
    cluster: Backend, receiver: Receiver, gateway: str
) -> None:
    seed(cluster, NOTIFY)  # web: notify mode; api: rolls
    cluster.add(deployment("api", uses_both()))
    webhook = configure(cluster, receiver)
    config = cluster.config("metricsPerWorkload: true\n" + Path(webhook).read_text())
    assert cluster.run("--config", str(config)).actions() == {WEB: "in-sync", API: "adopt"}

    cluster.edit("configmaps", "shop", "app", {"data": {"a": "2"}})
    receiver.fail_next(10)
    before = time.time()
    failed = cluster.run("--config", str(config), "--pushgateway", gateway)
    assert failed.code == 1
    assert failed.actions() == {WEB: "notify", API: "rollout", "Webhook/ops/*": "failed"}
    samples = scrape(gateway, {"shard": "all"})
    assert samples[("kube_rehash_notifications_undelivered", ())] == 1
    rolled = {labels: v for (name, labels), v in samples.items() if name == PER_WORKLOAD}
    assert list(rolled) == [(("kind", "Deployment"), ("name", "api"), ("namespace", "shop"))]
    assert before <= next(iter(rolled.values())) <= time.time()

    receiver.fail_next(0)  # the receiver is back
    delivered = cluster.run("--config", str(config), "--pushgateway", gateway)
    assert delivered.code == 0 and delivered.actions() == {WEB: "notify", API: "in-sync"}
    samples = scrape(gateway, {"shard": "all"})
    assert samples[("kube_rehash_notifications_undelivered", ())] == 0
    assert not [name for name, _ in samples if name == PER_WORKLOAD]
