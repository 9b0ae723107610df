"""The OTLP push received by a real Prometheus (the pinned release of promtool, `make prometheus`), started
with its OTLP receiver on loopback: the series arrive under the names and labels the Pushgateway gives them,
so every query of the dashboard answers from either source. Marker `promtool` (a pinned Prometheus binary).

Why a real receiver: Prometheus translates OTLP names, attributes and resources by its own rules
(`job` from service.name, `instance` from service.instance.id, the rest in `target_info`); only it can
show what a dashboard then finds.
"""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import time
import urllib.parse
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from reconcile.output.metrics import build_registry
from reconcile.output.otlp import push_otlp
from reconcile.policy.decision import Deferral
from tests.prerequisites import skip_or_fail

ROOT = Path(__file__).resolve().parent.parent
DASHBOARD = ROOT / "deploy" / "monitoring" / "kube-rehash.dashboard.json"
VARIABLES = {"$job": ".*", "$shard": ".*"}


def prometheus_binary() -> Path:
    """.cache/prometheus/<the version tools/prometheus/go.mod pins>/prometheus."""
    gomod = (ROOT / "tools" / "prometheus" / "go.mod").read_text(encoding="utf-8")
    match = re.search(r"^\s*(?:require\s+)?github\.com/prometheus/prometheus\s+(v\S+)", gomod, re.MULTILINE)
    assert match, "tools/prometheus/go.mod does not require github.com/prometheus/prometheus"
    cache = Path(os.environ.get("PROMETHEUS_CACHE", ROOT / ".cache" / "prometheus"))
    return cache / match.group(1) / "prometheus"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def prometheus(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    binary = prometheus_binary()
    if not os.access(binary, os.X_OK):
        skip_or_fail(f"prometheus not built ({binary} missing): run `make prometheus`")
    work = tmp_path_factory.mktemp("prometheus")
    (work / "prometheus.yml").write_text("global: {}\n")  # scrapes nothing: OTLP is its only input
    address = f"127.0.0.1:{free_port()}"
    argv = [
        str(binary),
        f"--config.file={work / 'prometheus.yml'}",
        f"--storage.tsdb.path={work / 'data'}",
        f"--web.listen-address={address}",
        "--web.enable-otlp-receiver",
        "--log.level=warn",
    ]
    with (work / "log").open("wb") as log:
        process = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT)
        try:
            url = f"http://{address}"
            deadline = time.monotonic() + 60
            while not ready(url):
                assert process.poll() is None, (work / "log").read_text()
                assert time.monotonic() < deadline, "prometheus did not become ready in 60 s"
                time.sleep(0.2)
            yield url
        finally:
            process.terminate()
            process.wait(timeout=30)


def ready(url: str) -> bool:
    try:
        with urllib.request.urlopen(url + "/-/ready", timeout=2) as response:
            return bool(response.status == 200)
    except OSError:
        return False


def query(url: str, expr: str) -> list[dict[str, Any]]:
    with urllib.request.urlopen(
        f"{url}/api/v1/query?{urllib.parse.urlencode({'query': expr})}", timeout=10
    ) as r:
        answer = json.load(r)
    assert answer["status"] == "success", answer
    return list(answer["data"]["result"])


def push(url: str, shard: str, now: float) -> None:
    registry = build_registry(
        summary={"workloads": 3, "rollout": 1, "in-sync": 1, "failed": 1, "stalled": 0},
        api_requests={("list", 200): 4},
        configs_fetched=2,
        duration_seconds=1.25,
        success=True,
        deferred={Deferral.WINDOW: 1},
        rolled=[("shop", "Deployment", "web")],
        now=now,
    )
    push_otlp(url + "/api/v1/otlp/v1/metrics", registry, shard=shard, cluster_name="prod-eu")


@pytest.mark.promtool
def test_prometheus_receives_the_pushgateways_series_with_job_instance_and_shard(prometheus: str) -> None:
    for at in (1_700_000_000.0, 1_700_000_060.0):
        push(prometheus, "0", at)
        push(prometheus, "1", at)
        time.sleep(1.1)  # two samples a second apart, as two passes
    workloads = query(prometheus, 'kube_rehash_workloads{action="failed"}')
    assert sorted(
        (r["metric"]["job"], r["metric"]["instance"], r["metric"]["shard"], r["value"][1]) for r in workloads
    ) == [("kube-rehash", "0", "0", "1"), ("kube-rehash", "1", "1", "1")]
    assert {frozenset(r["metric"]) for r in workloads} == {
        frozenset({"__name__", "action", "job", "instance", "shard"})
    }
    (duration,) = query(prometheus, 'kube_rehash_pass_duration_seconds{shard="0"}')
    assert duration["value"][1] == "1.25"
    info = query(prometheus, "target_info")
    assert sorted((r["metric"]["instance"], r["metric"]["k8s_cluster_name"]) for r in info) == [
        ("0", "prod-eu"),
        ("1", "prod-eu"),
    ]


@pytest.mark.promtool
def test_every_dashboard_query_answers_from_the_otlp_series(prometheus: str) -> None:
    push(prometheus, "all", 1_700_000_000.0)
    time.sleep(1.1)
    push(prometheus, "all", 1_700_000_060.0)
    dashboard = json.loads(DASHBOARD.read_text())
    empty = []
    for panel in dashboard["panels"]:
        for target in panel.get("targets", []):
            expr = target["expr"]
            for variable, value in VARIABLES.items():
                expr = expr.replace(variable, value)
            if not query(prometheus, expr):
                empty.append(f"{panel['title']}: {expr}")
    assert empty == []
