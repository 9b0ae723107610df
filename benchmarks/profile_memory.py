"""Where a kube-rehash pass's memory goes: tracemalloc over the steady and change passes, and import costs.

`python -m benchmarks.profile_memory --scales 1,4 --out /tmp/profile.json` (what
docs/engineering/memory-profile-details.md's figures come from):

1. Baselines, each a child process whose peak RSS is its `VmHWM` (benchmarks/harness.py polls it):
   the bare interpreter, `kube-rehash --version`, `import requests`, `import kubernetes` (the package that
   reconcile/kube/auth.py leaves to the legacy auth-provider), `import reconcile.cli.commands`, and everything
   a pass imports (`reconcile.cli.commands` + `reconcile.pipeline.run` + `reconcile.cli.connect`).
2. For each scale: the benchmark cluster (benchmarks/generate.py) served by a simulator in its own process
   (as `make bench` does), a first adopting pass as a child process (not profiled), then **in this process**
   with tracemalloc on from before `reconcile` is imported (so the imports' own allocations are traced
   too) the steady pass, then 5% of the referenced sources changed and the change pass, each through
   `reconcile.cli.commands.main(["run", "-o", "json", ...])` at `qps: 0` with stdout sent to /dev/null. A
   sampler
   thread polls `tracemalloc.get_traced_memory()` every 20 ms and takes a snapshot whenever the traced size
   exceeds the one at the last snapshot by 5%; the largest snapshot is the pass's profile.
3. Per snapshot: the top sites by size, keyed three ways: the innermost frame (`file:line`, as
   tracemalloc's `lineno` statistics); the outermost frame inside reconcile/ among the 20 traced
   (`by_reconcile_caller`: the pass-level code that asked for the memory, e.g. fetch.py's loop over a
   cluster-wide list rather than the `json.loads` under it); and the innermost frame inside reconcile/
   (`by_reconcile_innermost`), with sizes and counts. (The run in docs/engineering/memory-profile-details.md
   predates the third key.)

Secret values are never printed: only allocation sites, sizes and counts. Run from the worktree with
`PYTHONPATH=<tree>:<tree>/simulator` so the tree's `reconcile` is the one profiled.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import subprocess
import sys
import tempfile
import threading
import time
import tracemalloc
from pathlib import Path
from typing import Any

from benchmarks.after_change import ROLLOUT_SECONDS
from benchmarks.generate import Shape, generate_file
from benchmarks.harness import SimulatorProcess, change_sources, measure

# `python -m reconcile`, not the venv's console script: the tree on PYTHONPATH is the one measured.
KUBE_REHASH = [sys.executable, "-m", "reconcile"]
FRAMES = 20
SMALL = Shape(workloads=60, opted_in=20, namespaces=2, configmaps=160, secrets=160, helm_secrets=30)
BASELINES = {
    "python -c pass": [sys.executable, "-c", "pass"],
    "kube-rehash --version (python -m reconcile)": [*KUBE_REHASH, "--version"],
    "import requests": [sys.executable, "-c", "import requests"],
    "import kubernetes.client, kubernetes.config": [
        sys.executable,
        "-c",
        "import kubernetes.client, kubernetes.config",
    ],
    "import reconcile.kube.auth": [sys.executable, "-c", "import reconcile.kube.auth"],
    "import reconcile.cli.commands": [sys.executable, "-c", "import reconcile.cli.commands"],
    "import reconcile.cli.commands, run, connect (what a pass imports)": [
        sys.executable,
        "-c",
        "import reconcile.cli.commands, reconcile.pipeline.run, reconcile.cli.connect",
    ],
}


def child_hwm(argv: list[str]) -> float:
    """Peak RSS (MB) of `argv` run to completion, polled from /proc like the harness does."""
    from benchmarks.harness import _poll_hwm

    child = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    peak = [0]
    done = threading.Event()
    poller = threading.Thread(target=_poll_hwm, args=(child.pid, peak, done), daemon=True)
    poller.start()
    os.wait4(child.pid, 0)
    done.set()
    poller.join()
    return round(peak[0] / 1024, 1)


def baselines(repeat: int = 3) -> dict[str, float]:
    """Each baseline's smallest peak RSS over `repeat` runs (MB)."""
    return {name: min(child_hwm(argv) for _ in range(repeat)) for name, argv in BASELINES.items()}


class PeakSampler:
    """Snapshots while a pass runs; keeps the largest (by traced size)."""

    def __init__(self, interval: float = 0.02, margin: float = 1.05) -> None:
        self.interval, self.margin = interval, margin
        self.best: tracemalloc.Snapshot | None = None
        self.best_size = 0
        self.peak = 0
        self.snapshots = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.wait(self.interval):
            self.sample()

    def sample(self) -> None:
        current, peak = tracemalloc.get_traced_memory()
        self.peak = max(self.peak, peak)
        if current > self.best_size * self.margin:
            self.best = None  # the previous best goes before the next is taken: two never coexist
            self.best, self.best_size = tracemalloc.take_snapshot(), current
            self.snapshots += 1

    def __enter__(self) -> PeakSampler:
        tracemalloc.reset_peak()
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        self.sample()


def short(filename: str) -> str:
    for marker in ("/reconcile/", "/site-packages/", "/lib/python3"):
        if marker in filename:
            head = marker.strip("/")
            tail = filename.split(marker, 1)[1]
            return tail if head == "site-packages" else f"{head}/{tail}" if head == "reconcile" else tail
    return filename


def reconcile_frame(trace: tracemalloc.Traceback, *, innermost: bool = False) -> str:
    """A frame inside reconcile/ ("file:line"): by default the outermost one among the `FRAMES` most
    recent frames tracemalloc kept (a `Traceback` runs oldest first), which names the pass-level call
    that asked for the memory (e.g. fetch.py's cluster-wide list loop, not the `json.loads` under it);
    with `innermost`, the one closest to the allocation. The innermost frame when none is in reconcile/."""
    frames = list(reversed(trace)) if innermost else list(trace)
    for frame in frames:
        if "/reconcile/" in frame.filename:
            return f"{short(frame.filename)}:{frame.lineno}"
    last = trace[len(trace) - 1]
    return f"{short(last.filename)}:{last.lineno} (outside reconcile)"


def grouped(stats: list[tracemalloc.Statistic], top: int, *, innermost: bool) -> list[dict[str, Any]]:
    callers: dict[str, list[int]] = {}
    for stat in stats:
        entry = callers.setdefault(reconcile_frame(stat.traceback, innermost=innermost), [0, 0])
        entry[0] += stat.size
        entry[1] += stat.count
    return [
        {"site": site, "kb": size // 1024, "count": count}
        for site, (size, count) in sorted(callers.items(), key=lambda kv: -kv[1][0])[:top]
    ]


def describe(snapshot: tracemalloc.Snapshot, top: int) -> dict[str, Any]:
    snapshot = snapshot.filter_traces(
        (
            tracemalloc.Filter(False, tracemalloc.__file__),
            tracemalloc.Filter(False, __file__),
        )
    )
    lines = snapshot.statistics("lineno")
    total = sum(s.size for s in lines)
    by_line = [
        {
            "site": f"{short(s.traceback[0].filename)}:{s.traceback[0].lineno}",
            "kb": s.size // 1024,
            "count": s.count,
        }
        for s in lines[:top]
    ]
    traces = snapshot.statistics("traceback")
    by_caller = grouped(traces, top, innermost=False)
    by_innermost = grouped(traces, top, innermost=True)
    imports = sum(
        s.size
        for s in traces
        if any("importlib" in f.filename or f.filename.startswith("<frozen") for f in s.traceback)
    )
    return {
        "traced_kb": total // 1024,
        "import_kb": imports // 1024,
        "by_line": by_line,
        "by_reconcile_caller": by_caller,
        "by_reconcile_innermost": by_innermost,
    }


def profiled_pass(argv: list[str], top: int) -> dict[str, Any]:
    from reconcile.cli.commands import main

    started = time.monotonic()
    with open(os.devnull, "w") as sink, contextlib.redirect_stdout(sink), PeakSampler() as sampler:
        code = main(argv)
    wall = time.monotonic() - started
    assert sampler.best is not None
    result = describe(sampler.best, top)
    result.update(
        exit=code,
        wall_s=round(wall, 1),
        peak_traced_kb=sampler.peak // 1024,
        snapshots=sampler.snapshots,
    )
    return result


def prepare(
    factor: int, workdir: Path, base: Shape, log: Any = print
) -> tuple[Shape, Path, list[tuple[str, str, str]]]:
    """The cluster file of `factor` and its referenced sources (generated before tracemalloc starts)."""
    shape = base.scaled(factor)
    written = generate_file(shape, workdir / f"profile-cluster-{factor}.json")
    log(f"[profile {factor}x] {shape.label()}: {written.size / 1e6:.0f} MB")
    return shape, written.path, written.cluster.referenced


def profile_scale(
    shape: Shape,
    load: Path,
    referenced: list[tuple[str, str, str]],
    *,
    top: int,
    first: bool = False,
    log: Any = print,
) -> dict[str, Any]:
    """The steady and change passes over `load`, profiled in this process (tracemalloc already on);
    with `first`, the first (adopting) pass too, instead of running it as a child."""
    workdir = load.parent
    config = workdir / "profile-qps0.yaml"
    config.write_text("qps: 0\n")
    result: dict[str, Any] = {
        "shape": shape.label(),
        "opted_in": shape.opted_in,
        "workloads": shape.workloads,
        "referenced": len(referenced),
    }
    with SimulatorProcess(load, workdir, rollout_seconds=ROLLOUT_SECONDS) as sim:
        argv = ["run", "-o", "json", "--kubeconfig", str(sim.kubeconfig), "--config", str(config)]
        if first:
            result["first"] = profiled_pass(argv, top)
            log(f"  first: {result['first']['traced_kb']} KB traced at the largest snapshot")
            sim.mark()
        first = measure("kube-rehash", [*KUBE_REHASH, *argv], sim)
        log(
            f"  first pass (child, not profiled): exit {first.code}, {first.rss_mb:.1f} MB, {first.wall:.1f}s"
        )
        result["first_child"] = {"exit": first.code, "rss_mb": round(first.rss_mb, 1)}
        del first
        result["steady"] = profiled_pass(argv, top)
        log(f"  steady: {result['steady']['traced_kb']} KB traced at the largest snapshot")
        sim.mark()
        rng = random.Random(shape.seed + 1)
        changed = sorted(rng.sample(referenced, max(1, round(0.05 * len(referenced)))))
        change_sources(sim, changed, f"profile-{time.time_ns()}")
        result["changed_sources"] = len(changed)
        result["change"] = profiled_pass(argv, top)
        log(f"  change: {result['change']['traced_kb']} KB traced at the largest snapshot")
        sim.mark()
    load.unlink(missing_ok=True)
    return result


def import_baseline(top: int) -> dict[str, Any]:
    """What importing everything a pass imports leaves allocated (traced), by file."""
    import reconcile.cli.commands
    import reconcile.cli.connect
    import reconcile.pipeline.run  # noqa: F401

    snapshot = tracemalloc.take_snapshot().filter_traces((tracemalloc.Filter(False, tracemalloc.__file__),))
    stats = snapshot.statistics("filename")
    by_package: dict[str, int] = {}
    for stat in snapshot.statistics("traceback"):
        names = [short(f.filename) for f in stat.traceback]
        package = next(
            (n.split("/")[0] for n in reversed(names) if "/" in n and not n.startswith("importlib")), "other"
        )
        by_package[package] = by_package.get(package, 0) + stat.size
    return {
        "traced_kb": sum(s.size for s in stats) // 1024,
        "by_file": [
            {"site": short(s.traceback[0].filename), "kb": s.size // 1024, "count": s.count}
            for s in stats[:top]
        ],
        "by_top_package_kb": {
            k: v // 1024 for k, v in sorted(by_package.items(), key=lambda kv: -kv[1])[:top]
        },
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.profile_memory", description=__doc__)
    parser.add_argument("--scales", default="1,4", help="comma-separated size factors")
    parser.add_argument("--top", type=int, default=20)
    parser.add_argument("--out", type=Path, default=Path("/tmp/kube-rehash-profile.json"))
    parser.add_argument("--workdir", type=Path, default=None)
    parser.add_argument("--small", action="store_true", help="a 1/50 shape, to check the script quickly")
    parser.add_argument("--first", action="store_true", help="profile the first (adopting) pass too")
    args = parser.parse_args(argv)
    base = SMALL if args.small else Shape()
    result: dict[str, Any] = {"baselines_mb": baselines(), "scales": {}}
    print(json.dumps(result["baselines_mb"], indent=1))
    factors = [int(f) for f in args.scales.split(",") if f]
    with tempfile.TemporaryDirectory(prefix="kube-rehash-profile-", dir=args.workdir) as tmp:
        prepared = [prepare(factor, Path(tmp), base) for factor in factors]
        tracemalloc.start(FRAMES)  # before `reconcile` is imported: its imports are traced too
        result["imports"] = import_baseline(args.top)
        print(f"imports: {result['imports']['traced_kb'] / 1024:.1f} MB traced")
        for factor, (shape, load, referenced) in zip(factors, prepared, strict=True):
            result["scales"][str(factor)] = profile_scale(
                shape, load, referenced, top=args.top, first=args.first
            )
            args.out.write_text(json.dumps(result, indent=1) + "\n")
    for factor, scale in result["scales"].items():
        for name in ("first", "steady", "change"):
            if name not in scale:
                continue
            p = scale[name]
            print(
                f"\n## {factor}x {name}: {p['traced_kb'] / 1024:.1f} MB traced "
                f"({p['import_kb'] / 1024:.1f} MB under an import frame)"
            )
            for row in p["by_line"]:
                print(f"  {row['kb']:>8} KB {row['count']:>8}  {row['site']}")
            print("  -- by the outermost reconcile/ frame among the traced ones (the pass-level caller):")
            for row in p["by_reconcile_caller"]:
                print(f"  {row['kb']:>8} KB {row['count']:>8}  {row['site']}")
    print(f"\nwritten: {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
