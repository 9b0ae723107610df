"""Pushing a pass's metrics to a real Prometheus Pushgateway and reading them back from its /metrics."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import requests
from prometheus_client.parser import text_string_to_metric_families

from reconcile.errors import RehashError
from reconcile.output.metrics import MetricsPushError, push_metrics
from reconcile.policy.decision import Deferral, Skip
from tests.prerequisites import skip_or_fail

PUSHGATEWAY = os.environ.get("KUBE_REHASH_TEST_PUSHGATEWAY", "/usr/bin/prometheus-pushgateway")

JOB = "kube-rehash"


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture(scope="module")
def gateway(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A real Pushgateway on loopback; missing, it skips locally and fails under CI=true."""
    if shutil.which(PUSHGATEWAY) is None:
        skip_or_fail(
            f"{PUSHGATEWAY} is absent (Debian package prometheus-pushgateway; `make debian-deps` installs it)"
        )
    port = _free_port()
    workdir: Path = tmp_path_factory.mktemp("pushgateway")
    process = subprocess.Popen(
        [PUSHGATEWAY, f"--web.listen-address=127.0.0.1:{port}", "--persistence.file="],
        cwd=workdir,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 10
        while True:
            try:
                if requests.get(f"{url}/-/ready", timeout=1).status_code == 200:
                    break
            except requests.ConnectionError:
                pass
            if process.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"pushgateway did not become ready (exit code {process.poll()})")
            time.sleep(0.05)
        yield url
    finally:
        process.terminate()
        process.wait(timeout=10)


def scrape(url: str, grouping: dict[str, str]) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    """Samples of the group `grouping` under JOB, keyed by (name, labels without job/grouping labels)."""
    text = requests.get(f"{url}/metrics", timeout=5).text
    wanted = {"job": JOB, **grouping}
    samples: dict[tuple[str, tuple[tuple[str, str], ...]], float] = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            if any(sample.labels.get(k) != v for k, v in wanted.items()):
                continue
            # The gateway adds an empty `instance` label to every pushed series.
            labels = tuple(sorted((k, v) for k, v in sample.labels.items() if k not in {*wanted, "instance"}))
            samples[(sample.name, labels)] = sample.value
    return samples


def _push(
    url: str, grouping: dict[str, str], *, success: bool, rollouts: int, code: int = 200, undelivered: int = 0
) -> None:
    push_metrics(
        url,
        job=JOB,
        grouping=grouping,
        summary={"workloads": 7, "rollout": rollouts, "adopt": 1, "in-sync": 3, "deferred": 2, "failed": 0},
        api_requests={("list", 200): 5, ("patch", code): rollouts},
        configs_fetched=9,
        duration_seconds=1.5,
        success=success,
        deferred={Deferral.BUDGET: 1, Deferral.MAX_ROLLOUTS: 1},
        skipped={Skip.MALFORMED: 2, Skip.IGNORED: 1},
        notifications_undelivered=undelivered,
    )


def test_a_successful_pass_pushes_every_metric_with_its_value(gateway: str) -> None:
    before = time.time()
    _push(gateway, {"shard": "0"}, success=True, rollouts=1)
    samples = scrape(gateway, {"shard": "0"})

    assert samples[("kube_rehash_workloads", (("action", "rollout"),))] == 1
    assert samples[("kube_rehash_workloads", (("action", "adopt"),))] == 1
    assert samples[("kube_rehash_workloads", (("action", "in-sync"),))] == 3
    assert samples[("kube_rehash_workloads", (("action", "failed"),))] == 0
    assert ("kube_rehash_workloads", (("action", "workloads"),)) not in samples  # the total is not an action
    assert samples[("kube_rehash_configs_fetched", ())] == 9
    assert samples[("kube_rehash_api_requests", (("code", "200"), ("verb", "list")))] == 5
    assert samples[("kube_rehash_api_requests", (("code", "200"), ("verb", "patch")))] == 1
    assert samples[("kube_rehash_pass_duration_seconds", ())] == 1.5
    deferred = {labels: v for (name, labels), v in samples.items() if name == "kube_rehash_deferred"}
    assert deferred == {
        (("reason", "pass budget"),): 1,
        (("reason", "max-rollouts"),): 1,
        (("reason", "min-interval"),): 0,
        (("reason", "window"),): 0,
        (("reason", "settle"),): 0,
        (("reason", "wave"),): 0,
        (("reason", "disruption budget"),): 0,
        (("reason", "stopped"),): 0,
    }
    skipped = {
        dict(labels)["reason"]: v for (name, labels), v in samples.items() if name == "kube_rehash_skipped"
    }
    assert skipped == {why.value: {Skip.MALFORMED: 2, Skip.IGNORED: 1}.get(why, 0) for why in Skip}
    assert samples[("kube_rehash_notifications_undelivered", ())] == 0
    assert before <= samples[("kube_rehash_last_success_timestamp_seconds", ())] <= time.time()


def test_a_failed_pass_keeps_the_last_success_time_and_replaces_the_rest(gateway: str) -> None:
    grouping = {"shard": "1"}
    _push(gateway, grouping, success=True, rollouts=1)
    last_success = scrape(gateway, grouping)[("kube_rehash_last_success_timestamp_seconds", ())]

    _push(gateway, grouping, success=False, rollouts=4, code=500, undelivered=3)
    samples = scrape(gateway, grouping)

    assert samples[("kube_rehash_last_success_timestamp_seconds", ())] == last_success
    assert samples[("kube_rehash_notifications_undelivered", ())] == 3
    assert samples[("kube_rehash_workloads", (("action", "rollout"),))] == 4
    assert samples[("kube_rehash_api_requests", (("code", "500"), ("verb", "patch")))] == 4
    # The failed pass replaced the whole family: the 200-coded patch series of the earlier pass is gone.
    assert ("kube_rehash_api_requests", (("code", "200"), ("verb", "patch"))) not in samples


def test_a_successful_pass_drops_series_that_older_passes_left_behind(gateway: str) -> None:
    grouping = {"shard": "2"}
    _push(gateway, grouping, success=False, rollouts=2, code=409)
    _push(gateway, grouping, success=True, rollouts=0)
    samples = scrape(gateway, grouping)

    assert ("kube_rehash_api_requests", (("code", "409"), ("verb", "patch"))) not in samples
    assert samples[("kube_rehash_api_requests", (("code", "200"), ("verb", "patch")))] == 0
    assert ("kube_rehash_last_success_timestamp_seconds", ()) in samples


def test_groups_do_not_overwrite_each_other(gateway: str) -> None:
    _push(gateway, {"shard": "3"}, success=True, rollouts=5)
    _push(gateway, {"shard": "4"}, success=True, rollouts=6)

    assert scrape(gateway, {"shard": "3"})[("kube_rehash_workloads", (("action", "rollout"),))] == 5
    assert scrape(gateway, {"shard": "4"})[("kube_rehash_workloads", (("action", "rollout"),))] == 6


def test_an_unreachable_gateway_raises_a_one_line_rehash_error_without_credentials() -> None:
    url = f"http://user:s3cret@127.0.0.1:{_free_port()}"
    with pytest.raises(MetricsPushError) as caught:
        _push(url, {}, success=True, rollouts=0)

    assert isinstance(caught.value, RehashError)
    message = str(caught.value)
    assert "\n" not in message
    assert message.startswith("cannot push metrics to http://127.0.0.1:")
    assert "s3cret" not in message and "user" not in message


def test_credentials_in_the_url_are_sent_as_basic_auth(gateway: str) -> None:
    # The gateway runs without auth and ignores the header; the push must still succeed.
    _push(gateway.replace("http://", "http://user:pw@"), {"shard": "5"}, success=True, rollouts=1)

    assert scrape(gateway, {"shard": "5"})[("kube_rehash_workloads", (("action", "rollout"),))] == 1


def test_a_gateway_error_status_raises_metrics_push_error(gateway: str) -> None:
    with pytest.raises(MetricsPushError, match=r"^cannot push metrics to .*400"):
        # A grouping label named like a reserved label is rejected by the gateway with 400.
        _push(gateway, {"__name__": "x"}, success=True, rollouts=0)


def test_the_opt_in_per_workload_series_name_the_rolled_workloads_until_a_pass_rolls_them_no_more(
    gateway: str,
) -> None:
    grouping = {"shard": "6"}

    def push(rolled: list[tuple[str, str, str]] | None) -> None:
        push_metrics(
            gateway,
            job=JOB,
            grouping=grouping,
            summary={"workloads": 2, "rollout": len(rolled or [])},
            api_requests={},
            configs_fetched=0,
            duration_seconds=1.0,
            success=True,
            deferred={},
            rolled=rolled,
        )

    def series() -> dict[tuple[tuple[str, str], ...], float]:
        name = "kube_rehash_workload_last_rollout_timestamp_seconds"
        return {labels: v for (n, labels), v in scrape(gateway, grouping).items() if n == name}

    before = time.time()
    push([("shop", "Deployment", "web"), ("shop", "StatefulSet", "db")])
    first = series()
    assert set(first) == {
        (("kind", "Deployment"), ("name", "web"), ("namespace", "shop")),
        (("kind", "StatefulSet"), ("name", "db"), ("namespace", "shop")),
    }
    assert all(before <= v <= time.time() for v in first.values())
    push([("shop", "Deployment", "web")])
    assert set(series()) == {(("kind", "Deployment"), ("name", "web"), ("namespace", "shop"))}
    push(None)  # not opted in: no such series at all
    assert series() == {}
