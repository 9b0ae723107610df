"""The measuring side: a simulator in its own process, its request log, and measured child processes.

Requests and response bytes come from the simulator's request log (`--log-file`), never from the
measured tool, so all three contenders are counted the same way. Each measured command is a child
process; its wall time is spawn to exit and its peak RSS is the kernel's high-water mark `VmHWM` of
/proc/PID/status, polled every 10 ms until `os.wait4` reaps it. (`ru_maxrss` from `wait4` is not used:
Python's subprocess spawns with vfork, and Linux carries the parent's RSS over into the child's
maxrss at exec, so it would report the harness's size.) Phases of
the log are cut with marker requests (`/healthz?bench-mark=N`) sent by the harness between runs.
"""

from __future__ import annotations

import base64
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchmarks.kubeconfig import session_for

SOURCE_OBJECT = re.compile(r"^/api/v1/namespaces/[^/]+/(configmaps|secrets)/[^/]+$")
COLLECTION = re.compile(r"^/(api/v1|apis/[^/]+/[^/]+)(/namespaces/[^/]+)?/[a-z]+$")
# One namespaced object (no subresource); what is not a ConfigMap/Secret is a workload here.
NAMESPACED_OBJECT = re.compile(r"^/(api/v1|apis/[^/]+/[^/]+)/namespaces/[^/]+/[a-z]+/[^/]+$")
RESOURCE = re.compile(r"^/(?:api/v1|apis/[^/]+/[^/]+)(?:/namespaces/[^/]+(?=/))?/([a-z]+)")
METADATA = "as=PartialObjectMetadata"  # also matches ...MetadataList


@dataclass
class Traffic:
    """What one phase of the request log shows."""

    requests: int = 0
    bytes: int = 0
    lists: int = 0
    metadata_lists: int = 0  # of `lists`: PartialObjectMetadataList, no object bodies
    metadata_gets: int = 0
    content_gets: int = 0
    workload_gets: int = 0  # a single non-source object, e.g. one Deployment in full
    other_gets: int = 0
    writes: int = 0
    errors: int = 0
    conflicts: int = 0  # refused guarded writes: 409, or 422 from a failed JSON-patch `test`
    content_paths: list[str] = field(default_factory=list)
    by_method: dict[str, int] = field(default_factory=dict)
    bytes_by_resource: dict[str, int] = field(default_factory=dict)
    """Response bytes per resource (`configmaps`, `deployments`, …; `other`: /version, discovery)."""

    @classmethod
    def of(cls, entries: list[dict[str, Any]]) -> Traffic:
        t = cls(requests=len(entries), bytes=sum(e["bytes_out"] for e in entries))
        t.by_method = dict(Counter(e["method"] for e in entries))
        for e in entries:
            resource = resource_of(e["path"])
            t.bytes_by_resource[resource] = t.bytes_by_resource.get(resource, 0) + e["bytes_out"]
        for e in entries:
            if e["status"] >= 400 and e["status"] != 404:
                t.errors += 1
            if e["method"] != "GET" and e["status"] in (409, 422):
                t.conflicts += 1
            if e["method"] != "GET":
                t.writes += 1
            elif SOURCE_OBJECT.match(e["path"]):
                if METADATA in e["accept"]:
                    t.metadata_gets += 1
                else:
                    t.content_gets += 1
                    t.content_paths.append(e["path"])
            elif COLLECTION.match(e["path"]):
                t.lists += 1
                if METADATA in e["accept"]:
                    t.metadata_lists += 1
            elif NAMESPACED_OBJECT.match(e["path"]):
                t.workload_gets += 1
            else:
                t.other_gets += 1
        return t


def resource_of(path: str) -> str:
    """The resource a request path names (`/api/v1/namespaces/a/configmaps/x` -> configmaps)."""
    match = RESOURCE.match(path)
    return match.group(1) if match else "other"


@dataclass
class Measured:
    """One measured child process and its traffic."""

    name: str
    wall: float
    rss_mb: float
    """Peak RSS in MiB (`VmHWM` KiB / 1024; the key keeps its historical name)."""
    code: int
    stdout: str
    stderr: str
    traffic: Traffic
    cpu: float = 0.0
    """User and system CPU seconds of the child (getrusage via wait4)."""

    def row(self) -> dict[str, Any]:
        t = self.traffic
        return {
            "name": self.name,
            "wall_s": round(self.wall, 3),
            "rss_mb": round(self.rss_mb, 1),
            "cpu_s": round(self.cpu, 3),
            "exit": self.code,
            "requests": t.requests,
            "bytes": t.bytes,
            "lists": t.lists,
            "metadata_lists": t.metadata_lists,
            "metadata_gets": t.metadata_gets,
            "content_gets": t.content_gets,
            "workload_gets": t.workload_gets,
            "other_gets": t.other_gets,
            "writes": t.writes,
            "errors": t.errors,
            "conflicts": t.conflicts,
            "by_method": dict(sorted(t.by_method.items())),
            "bytes_by_resource": dict(sorted(t.bytes_by_resource.items())),
        }


class SimulatorProcess:
    """`python -m rehash_simulator --load FILE --log-file LOG` as a child; stop() ends it."""

    def __init__(
        self,
        load: Path,
        workdir: Path,
        *,
        timeout: float = 600.0,
        rollout_seconds: float | None = None,
        answers: Mapping[str, Any] | None = None,
    ) -> None:
        self.workdir = workdir
        self.kubeconfig = workdir / "kubeconfig"
        self.log_path = workdir / "requests.jsonl"
        self.answers_path = workdir / "answers.json"
        """How the simulator pages, counts and frames its answers (rehash_simulator/answers.py)."""
        ready = workdir / "ready"
        for path in (ready, self.log_path):
            path.unlink(missing_ok=True)
        self.answers_path.write_text(json.dumps(dict(answers or {})))
        self.process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "rehash_simulator",
                "--kubeconfig-out",
                str(self.kubeconfig),
                "--load",
                str(load),
                "--ready-file",
                str(ready),
                "--log-file",
                str(self.log_path),
                "--answers",
                str(self.answers_path),
                *(["--rollout-seconds", str(rollout_seconds)] if rollout_seconds is not None else []),
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        deadline = time.monotonic() + timeout
        while not ready.exists():
            if self.process.poll() is not None:
                raise RuntimeError(f"simulator exited: {self.process.stderr.read().decode()[-2000:]}")  # type: ignore[union-attr]
            if time.monotonic() > deadline:
                self.stop()
                raise RuntimeError("simulator did not become ready")
            time.sleep(0.1)
        self.session, self.server = session_for(self.kubeconfig)
        self._offset = 0
        self._marks = 0
        self.mark()

    def set_answers(self, answers: Mapping[str, Any]) -> None:
        """Answer from now on as `answers` says (the rest at the simulator's defaults)."""
        self.answers_path.write_text(json.dumps(dict(answers)))
        self.process.send_signal(signal.SIGHUP)
        time.sleep(1.0)  # the simulator's main thread reads the file between its 0.5 s waits

    def mark(self) -> list[dict[str, Any]]:
        """Entries logged since the previous mark, cut by a marker request sent now."""
        self._marks += 1
        token = f"bench-{self._marks}"
        self.session.get(f"{self.server}/healthz", params={"bench-mark": token})
        entries: list[dict[str, Any]] = []
        deadline = time.monotonic() + 30
        with self.log_path.open("rb") as log:
            log.seek(self._offset)
            buffer = b""
            while True:
                chunk = log.read()
                if not chunk:
                    if time.monotonic() > deadline:
                        raise RuntimeError("marker request never reached the log")
                    time.sleep(0.02)
                    continue
                buffer += chunk
                *lines, buffer = buffer.split(b"\n")
                for line in lines:
                    self._offset += len(line) + 1
                    entry = json.loads(line)
                    if entry["query"].get("bench-mark") == token:
                        return entries
                    entries.append(entry)

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.session.close() if hasattr(self, "session") else None

    def __enter__(self) -> SimulatorProcess:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def measure(
    name: str,
    argv: list[str],
    sim: SimulatorProcess,
    env: dict[str, str] | None = None,
    preexec: Callable[[], None] | None = None,
) -> Measured:
    """Run `argv` to completion; wall time, peak RSS (VmHWM) and the log entries it caused.

    `preexec` runs in the child between fork and exec (benchmarks/memlimit.py: join a memory cgroup)."""
    sim.mark()
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        started = time.monotonic()
        # The harness runs no other thread while it forks (the poller starts after), so `preexec` is safe.
        child = subprocess.Popen(
            argv,
            stdout=out,
            stderr=err,
            env={**os.environ, **(env or {})},
            preexec_fn=preexec,  # noqa: PLW1509
        )
        peak = [0]
        done = threading.Event()
        poller = threading.Thread(target=_poll_hwm, args=(child.pid, peak, done), daemon=True)
        poller.start()
        _, status, usage = os.wait4(child.pid, 0)
        wall = time.monotonic() - started
        done.set()
        poller.join()
        child.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read().decode(), err.read().decode()
    traffic = Traffic.of(sim.mark())
    cpu = usage.ru_utime + usage.ru_stime
    return Measured(name, wall, peak[0] / 1024, child.returncode, stdout, stderr, traffic, cpu)


def _poll_hwm(pid: int, peak: list[int], done: threading.Event) -> None:
    """Keep `peak[0]` at the child's VmHWM (KiB) until `done`; the last read before exit wins."""
    status = Path(f"/proc/{pid}/status")
    while not done.is_set():
        try:
            for line in status.read_text().splitlines():
                if line.startswith("VmHWM:"):
                    peak[0] = max(peak[0], int(line.split()[1]))
        except (OSError, ValueError, IndexError):
            pass
        time.sleep(0.01)


def change_sources(sim: SimulatorProcess, sources: list[tuple[str, str, str]], stamp: str) -> None:
    """Change the content of each (kind, namespace, name): a new value for its first key (sorted)."""
    for kind, ns, name in sources:
        url = f"{sim.server}/api/v1/namespaces/{ns}/{kind}s/{name}"
        current = sim.session.get(url)
        current.raise_for_status()
        key = sorted(current.json().get("data") or {"changed": ""})[0]
        value = stamp if kind == "configmap" else base64.b64encode(stamp.encode()).decode()
        response = sim.session.patch(
            url,
            data=json.dumps({"data": {key: value}}),
            headers={"Content-Type": "application/merge-patch+json"},
        )
        response.raise_for_status()
    sim.mark()
