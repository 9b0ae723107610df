"""Through the installed CLI: a wrong API address is said within seconds (exit 4, the address named), a
server that accepts but never answers shows its retries at the default verbosity, an empty CA file is named,
and a reader that closes stdout early (`| head`) ends the command quietly."""

from __future__ import annotations

import os
import socket
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from tests.e2e.backends import CLI, clean_env
from tests.e2e.conftest import Cluster, configmap, deployment, env_from

FIRST_REQUEST = "GET /apis/apps/v1/deployments"
"""A pass's first request at the defaults (its first kind's list), which proves the server and credentials."""


def kubeconfig_for(path: Path, server: str, **cluster: str) -> Path:
    document = {
        "apiVersion": "v1",
        "kind": "Config",
        "current-context": "c",
        "clusters": [{"name": "c", "cluster": {"server": server, **cluster}}],
        "users": [{"name": "u", "user": {"token": "a-token"}}],
        "contexts": [{"name": "c", "context": {"cluster": "c", "user": "u"}}],
    }
    path.write_text(yaml.safe_dump(document))
    return path


def cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [CLI, *args], capture_output=True, text=True, timeout=120, env=clean_env(env), check=False
    )


@pytest.fixture
def silent_server() -> Iterator[int]:
    """A port on 127.0.0.1 that accepts connections and never sends a byte."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(64)
    accepted: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        listener.settimeout(0.1)
        while not stop.is_set():
            try:
                accepted.append(listener.accept()[0])
            except OSError:
                continue

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    try:
        yield listener.getsockname()[1]
    finally:
        stop.set()
        thread.join()
        for conn in accepted:
            conn.close()
        listener.close()


def test_a_closed_port_exits_4_within_5_seconds_naming_the_address(tmp_path: Path) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    server = f"https://127.0.0.1:{port}"
    started = time.monotonic()
    result = cli("run", "--kubeconfig", str(kubeconfig_for(tmp_path / "kubeconfig", server)))
    elapsed = time.monotonic() - started
    assert result.returncode == 4 and result.stdout == "", result.stderr
    assert elapsed < 5, elapsed
    lines = result.stderr.strip().splitlines()
    assert (
        lines[-1]
        == f"kube-rehash: cannot reach the API server at {server} after 2 attempts: connection refused"
    )
    # No request proves contact ahead of the work: the pass's first list is the proof.
    assert "WARNING" in lines[0] and f"API server {server}: connection refused on {FIRST_REQUEST}" in lines[0]


@pytest.mark.slow
def test_a_server_that_never_answers_logs_each_retry_at_the_default_verbosity(
    tmp_path: Path, silent_server: int
) -> None:
    server = f"https://127.0.0.1:{silent_server}"
    config = kubeconfig_for(tmp_path / "kubeconfig", server)
    started = time.monotonic()
    result = cli(
        "run", "--kubeconfig", str(config), "--timeout", "5", env={"KUBE_REHASH_REQUEST_TIMEOUT": "1"}
    )
    assert time.monotonic() - started < 15
    assert result.returncode == 4, result.stderr
    retries = [line for line in result.stderr.splitlines() if "WARNING" in line]
    assert len(retries) >= 2, result.stderr
    for number, line in enumerate(retries, start=1):
        assert (
            f"API server {server}: no answer within 1s (read timeout) on {FIRST_REQUEST}; retry {number} in "
            in line
        )
    assert (
        result.stderr.strip()
        .splitlines()[-1]
        .startswith(f"kube-rehash: cannot reach the API server at {server}")
    )


def test_an_empty_ca_file_is_named_with_the_reason(tmp_path: Path) -> None:
    ca = tmp_path / "ca.crt"
    ca.write_text("")
    config = kubeconfig_for(
        tmp_path / "kubeconfig", "https://127.0.0.1:6443", **{"certificate-authority": str(ca)}
    )
    result = cli("plan", "--kubeconfig", str(config))
    assert result.returncode == 2, result.stderr
    assert result.stderr.strip() == (
        f"kube-rehash: kubeconfig {config} context c: certificate-authority {ca}: no certificates found"
    )


@pytest.mark.sim_only("a closed stdout is the CLI's concern, whatever the server")
@pytest.mark.parametrize("output", ["json", "text"])
def test_a_reader_that_closes_stdout_early_ends_the_run_quietly(cluster: Cluster, output: str) -> None:
    cluster.add(configmap("app", {"a": "1"}), deployment("web", env_from("configmap", "app")))
    read_end, write_end = os.pipe()
    os.close(read_end)  # the reader is gone before the report is written (as `| head -c 10` after 10 bytes)
    try:
        done = subprocess.run(
            [CLI, "run", "-o", output, "--kubeconfig", str(cluster.kubeconfig)],
            stdout=write_end,
            stderr=subprocess.PIPE,
            text=True,
            timeout=120,
            env=clean_env(),
            check=False,
        )
    finally:
        os.close(write_end)
    assert done.stderr == "" and done.returncode == 0, done.stderr
    assert (
        "kube-rehash.io/config-hash" in cluster.get("deployments", "shop", "web")["metadata"]["annotations"]
    )


@pytest.mark.slow
def test_run_piped_into_head_ends_quietly(tmp_path: Path) -> None:
    """The shell pipeline itself: `kube-rehash run -o json | head -c 10` prints 10 bytes and no traceback."""
    from rehash_simulator import Simulator

    with Simulator().start() as sim:
        kubeconfig = sim.write_kubeconfig(tmp_path / "kubeconfig")
        sim.store.create_many(
            [configmap(f"c{i}", {"a": "1"}) for i in range(300)]
            + [deployment(f"web-{i}", env_from("configmap", f"c{i}")) for i in range(300)]
        )
        done = subprocess.run(
            ["bash", "-o", "pipefail", "-c", f"'{CLI}' run -o json --kubeconfig '{kubeconfig}' | head -c 10"],
            capture_output=True,
            text=True,
            timeout=120,
            env=clean_env(),
            check=False,
        )
    assert done.stdout == '{\n  "dry_run": '[:10]
    assert "Traceback" not in done.stderr and "BrokenPipe" not in done.stderr, done.stderr
    assert done.returncode == 0, done.stderr
