"""A memory limit the kernel enforces, as a pod's `limits.memory` is: a child process in a cgroup of its own.

`MemoryCgroup.create(limit)` makes a fresh memory cgroup under this process's own, limited to `limit` bytes
(swap included, so swapping cannot hide an overrun), `join` (a `preexec_fn`: it runs in the forked child
before exec) moves the child into it, and after the child exits `peak_bytes` and `oom_kills` say what the
kernel saw: the cgroup's high-water mark (page cache included, as in a container) and how many processes its
OOM killer killed. `remove` deletes the cgroup. Both cgroup versions:

- v1 (a `memory:` line in /proc/self/cgroup, the hierarchy mounted at /sys/fs/cgroup/memory):
  `memory.limit_in_bytes`, `memory.memsw.limit_in_bytes` (when swap accounting is on), peak
  `memory.max_usage_in_bytes`, OOM kills from `memory.oom_control` (`oom_kill N`);
- v2 (the `0::` line, the unified hierarchy at /sys/fs/cgroup): `memory.max`, `memory.swap.max`, peak
  `memory.peak`, OOM kills from `memory.events` (`oom_kill N`).

Creating one needs write access to this process's cgroup (root, or a delegated subtree); `unavailable()`
says why it cannot, for a test to skip with.
"""

from __future__ import annotations

import contextlib
import json
import os
import random
import re
import sys
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from benchmarks.generate import Shape, generate_file
from benchmarks.harness import SimulatorProcess, change_sources, measure

CGROUP_ROOT = Path("/sys/fs/cgroup")
CRONJOB = Path(__file__).resolve().parents[1] / "cronjob" / "base" / "cronjob.yaml"
# Kubernetes memory quantities: binary and decimal suffixes (a plain number is bytes).
_QUANTITY = re.compile(r"^([0-9]+(?:\.[0-9]+)?)([KMGTPE]i?|k)?$")
_FACTORS = {
    None: 1,
    "k": 1000,
    "K": 1000,
    "M": 1000**2,
    "G": 1000**3,
    "T": 1000**4,
    "P": 1000**5,
    "E": 1000**6,
    "Ki": 1024,
    "Mi": 1024**2,
    "Gi": 1024**3,
    "Ti": 1024**4,
    "Pi": 1024**5,
    "Ei": 1024**6,
}


class Unavailable(Exception):
    """No memory cgroup can be made here; the message says why."""


def quantity_bytes(quantity: str | int) -> int:
    """A Kubernetes memory quantity (`128Mi`, `1G`, `134217728`) in bytes."""
    match = _QUANTITY.match(str(quantity).strip())
    if not match:
        raise ValueError(f"not a memory quantity: {quantity!r}")
    return int(float(match.group(1)) * _FACTORS[match.group(2)])


def shipped_limit(cronjob: Path = CRONJOB) -> str:
    """`limits.memory` of the kube-rehash container of the shipped CronJob (`128Mi`)."""
    doc = yaml.safe_load(cronjob.read_text())
    containers = doc["spec"]["jobTemplate"]["spec"]["template"]["spec"]["containers"]
    (container,) = [c for c in containers if c["name"] == "kube-rehash"]
    return str(container["resources"]["limits"]["memory"])


def _own_cgroups() -> dict[str, str]:
    """/proc/self/cgroup as {controllers: path}; the v2 line's controllers are ''."""
    cgroups: dict[str, str] = {}
    for line in Path("/proc/self/cgroup").read_text().splitlines():
        _, controllers, path = line.split(":", 2)
        cgroups[controllers] = path
    return cgroups


def _read_count(path: Path, key: str) -> int:
    """The value of `key N` in a flat-keyed cgroup file, 0 when the key is absent."""
    for line in path.read_text().splitlines():
        name, _, value = line.partition(" ")
        if name == key:
            return int(value)
    return 0


@dataclass
class MemoryCgroup:
    """One memory cgroup made for one child process (see the module docstring)."""

    path: Path
    version: int
    limit_bytes: int
    swap_limited: bool

    @classmethod
    def create(cls, limit_bytes: int) -> MemoryCgroup:
        """A fresh cgroup under this process's own, limited to `limit_bytes`; raises `Unavailable`."""
        cgroups = _own_cgroups()
        name = f"memlimit-{uuid.uuid4().hex[:12]}"
        v1 = next((path for ctl, path in cgroups.items() if "memory" in ctl.split(",")), None)
        if v1 is not None and (CGROUP_ROOT / "memory").is_dir():
            return cls._create_v1(CGROUP_ROOT / "memory" / v1.lstrip("/") / name, limit_bytes)
        if "" in cgroups and (CGROUP_ROOT / "cgroup.controllers").is_file():
            return cls._create_v2(CGROUP_ROOT / cgroups[""].lstrip("/") / name, limit_bytes)
        raise Unavailable(f"no memory cgroup hierarchy under {CGROUP_ROOT} (/proc/self/cgroup: {cgroups})")

    @classmethod
    def _create_v1(cls, path: Path, limit_bytes: int) -> MemoryCgroup:
        try:
            path.mkdir()
        except OSError as error:
            raise Unavailable(f"cgroup v1: cannot create {path}: {error}") from None
        group = cls(path, 1, limit_bytes, swap_limited=False)
        try:
            (path / "memory.limit_in_bytes").write_text(str(limit_bytes))
            swap = path / "memory.memsw.limit_in_bytes"
            if swap.exists():  # absent without swap accounting; then swap is not limited separately
                swap.write_text(str(limit_bytes))
                group.swap_limited = True
        except OSError as error:
            group.remove()
            raise Unavailable(f"cgroup v1: cannot limit {path}: {error}") from None
        return group

    @classmethod
    def _create_v2(cls, path: Path, limit_bytes: int) -> MemoryCgroup:
        parent = path.parent
        try:
            if "memory" not in (parent / "cgroup.subtree_control").read_text().split():
                (parent / "cgroup.subtree_control").write_text("+memory")
            path.mkdir()
        except OSError as error:
            raise Unavailable(
                f"cgroup v2: cannot create {path} with the memory controller: {error}"
            ) from None
        group = cls(path, 2, limit_bytes, swap_limited=False)
        try:
            (path / "memory.max").write_text(str(limit_bytes))
            swap = path / "memory.swap.max"
            if swap.exists():
                swap.write_text("0")
                group.swap_limited = True
        except OSError as error:
            group.remove()
            raise Unavailable(f"cgroup v2: cannot limit {path}: {error}") from None
        return group

    def join(self) -> None:
        """Move the calling process into the cgroup: the `preexec_fn` of the limited child."""
        (self.path / "cgroup.procs").write_text(str(os.getpid()))

    def peak_bytes(self) -> int:
        """The cgroup's high-water mark of charged memory (v2 without `memory.peak`: 0)."""
        if self.version == 1:
            return int((self.path / "memory.max_usage_in_bytes").read_text())
        peak = self.path / "memory.peak"
        return int(peak.read_text()) if peak.exists() else 0

    def oom_kills(self) -> int:
        """Processes the kernel's OOM killer killed in this cgroup."""
        if self.version == 1:
            return _read_count(self.path / "memory.oom_control", "oom_kill")
        return _read_count(self.path / "memory.events", "oom_kill")

    def remove(self) -> None:
        """Delete the cgroup (its processes have exited); a no-op when it is gone."""
        with contextlib.suppress(FileNotFoundError):
            self.path.rmdir()

    def __enter__(self) -> MemoryCgroup:
        return self

    def __exit__(self, *exc: object) -> None:
        self.remove()


def unavailable(probe_bytes: int = 64 * 1024**2) -> str | None:
    """Why no memory cgroup can be made here, or None when one can (made and removed to find out)."""
    try:
        MemoryCgroup.create(probe_bytes).remove()
    except Unavailable as error:
        return str(error)
    except OSError as error:
        return f"cgroup probe failed: {error}"
    return None


@dataclass
class LimitedPass:
    """One kube-rehash pass run in its own memory cgroup."""

    name: str
    exit: int
    oom_kills: int
    cgroup_peak_bytes: int
    vm_hwm_mb: float
    wall_s: float
    requests: int
    summary: dict[str, int]
    stderr_tail: str


def passes_under_limit(
    shape: Shape,
    workdir: Path,
    *,
    limit_bytes: int,
    kube_rehash: list[str],
    change_fraction: float = 0.05,
    log: Callable[[str], None] = print,
) -> dict[str, Any]:
    """The first (adopting), steady and change passes against `shape`, each in a fresh cgroup limited to
    `limit_bytes`.

    The first pass runs at `qps: 0` (at the shipped `qps: 20` a 4x cluster's first pass spends its 240 s
    budget and adopts part of it; at `qps: 0` it adopts every opted-in workload in one pass, the most a first
    pass holds); the steady pass and the change pass (after `change_fraction` of the referenced sources
    changed) run at the shipped defaults: no config file, only `--kubeconfig` to the simulator. Returns
    {"passes": [LimitedPass...], "objects", "load_bytes", "referenced", "changed", "setup_s"}.
    """
    started = time.monotonic()
    written = generate_file(shape, workdir / "limited-cluster.json")
    load, size, objects, referenced = written.path, written.size, written.objects, written.cluster.referenced
    qps0 = workdir / "limited-qps0.yaml"
    qps0.write_text("qps: 0\n")
    result: dict[str, Any] = {"objects": objects, "load_bytes": size, "referenced": len(referenced)}
    passes: list[LimitedPass] = []
    result["passes"] = passes
    with SimulatorProcess(load, workdir, rollout_seconds=2.0) as sim:
        load.unlink()
        result["setup_s"] = round(time.monotonic() - started, 1)
        ready = result["setup_s"]
        log(f"[limited: {shape.label()}] {objects} objects, {size / 1e6:.0f} MB, ready in {ready}s")
        shipped = [*kube_rehash, "run", "-o", "json", "--kubeconfig", str(sim.kubeconfig)]

        def run(name: str, argv: list[str]) -> LimitedPass:
            with MemoryCgroup.create(limit_bytes) as group:
                measured = measure("kube-rehash", argv, sim, preexec=group.join)
                try:
                    summary = json.loads(measured.stdout)["summary"]
                except (ValueError, KeyError):
                    summary = {}
                row = LimitedPass(
                    name=name,
                    exit=measured.code,
                    oom_kills=group.oom_kills(),
                    cgroup_peak_bytes=group.peak_bytes(),
                    vm_hwm_mb=round(measured.rss_mb, 1),
                    wall_s=round(measured.wall, 1),
                    requests=measured.traffic.requests,
                    summary=summary,
                    stderr_tail=measured.stderr[-2000:],
                )
            passes.append(row)
            log(
                f"  {name}: exit {row.exit}, oom_kill {row.oom_kills}, cgroup peak "
                f"{row.cgroup_peak_bytes / 2**20:.1f} MiB, VmHWM {row.vm_hwm_mb} MiB, {row.wall_s}s, "
                f"{row.requests} requests, summary {row.summary}"
            )
            return row

        run("first", [*shipped, "--config", str(qps0)])
        run("steady", shipped)
        changed = random.Random(shape.seed + 1).sample(
            referenced, max(1, round(change_fraction * len(referenced)))
        )
        change_sources(sim, sorted(changed), f"limited-{time.time_ns()}")
        result["changed"] = len(changed)
        run("change", shipped)
    return result


def main(argv: list[str] | None = None) -> int:
    """`python -m benchmarks.memlimit --scale N [--limit Q]`: the passes at N times the 1x counts (Helm
    releases 1-2 KB) under a memory limit (default: the shipped CronJob's); exit 1 if any failed or was
    OOM-killed. For sizing `limits.memory` for a cluster larger than the ones measured."""
    import argparse
    import tempfile
    from dataclasses import replace

    parser = argparse.ArgumentParser(prog="python -m benchmarks.memlimit", description=main.__doc__)
    parser.add_argument("--scale", type=int, default=4, help="times the 1x shape's counts (default 4)")
    parser.add_argument("--limit", default=None, help="memory quantity (default: the shipped limits.memory)")
    parser.add_argument("--change-fraction", type=float, default=0.05)
    args = parser.parse_args(argv)
    limit = args.limit or shipped_limit()
    reason = unavailable()
    if reason:
        print(f"no memory cgroup: {reason}", file=sys.stderr)
        return 2
    shape = replace(Shape().scaled(args.scale), helm_min_kb=1, helm_max_kb=2)
    with tempfile.TemporaryDirectory(prefix="memlimit-") as workdir:
        result = passes_under_limit(
            shape,
            Path(workdir),
            limit_bytes=quantity_bytes(limit),
            kube_rehash=[sys.executable, "-m", "reconcile"],
            change_fraction=args.change_fraction,
        )
    failed = [p.name for p in result["passes"] if p.exit != 0 or p.oom_kills]
    print(
        f"under {limit}: " + (f"failed: {', '.join(failed)}" if failed else "every pass exit 0, no OOM kill")
    )
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
