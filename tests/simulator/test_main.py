"""`python -m rehash_simulator` as a separate process: bulk seeding, ready file, SIGTERM."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

from kubernetes import client, config
from simhelpers import configmap


def test_serves_seeded_objects_until_sigterm(tmp_path: Path) -> None:
    seed = tmp_path / "seed.json"
    seed.write_text(
        json.dumps({"kind": "List", "items": [configmap(f"c{i:05}", f"ns{i % 4}") for i in range(20_000)]})
    )
    ready = tmp_path / "ready"
    kubeconfig = tmp_path / "kc"
    started = time.perf_counter()
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "rehash_simulator",
            "--port",
            "0",
            "--kubeconfig-out",
            str(kubeconfig),
            "--load",
            str(seed),
            "--ready-file",
            str(ready),
            "--log-file",
            str(tmp_path / "log.jsonl"),
        ],
        stderr=subprocess.PIPE,
    )
    try:
        while not ready.exists():
            assert proc.poll() is None, proc.stderr.read() if proc.stderr else ""
            assert time.perf_counter() - started < 20
            time.sleep(0.05)
        assert time.perf_counter() - started < 10
        cfg = client.Configuration()
        config.load_kube_config(config_file=str(kubeconfig), client_configuration=cfg, persist_config=False)
        with client.ApiClient(cfg) as api:
            core = client.CoreV1Api(api)
            assert len(core.list_namespaced_config_map("ns1", limit=10).items) == 10
            assert len(core.list_config_map_for_all_namespaces().items) == 20_000
    finally:
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=10) == 0
    logged = [json.loads(line) for line in (tmp_path / "log.jsonl").read_text().splitlines()]
    lists = [e for e in logged if e["path"].endswith("/configmaps")]
    assert [e["status"] for e in lists] == [200, 200] and "body" not in lists[0]
    assert lists[1]["bytes_out"] > lists[0]["bytes_out"]
