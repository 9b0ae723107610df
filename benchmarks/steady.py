"""`python -m benchmarks.steady`: the steady pass's wall and CPU against both floors, on one cluster.

What docs/engineering/performance-history.md "Steady-pass CPU" measures: a cluster of
`Shape(objects=...).scaled(scale)` served by the simulator, one adopting pass of kube-rehash, then `--rounds`
rounds of steady passes (qps 0) of each contender: kube-rehash, kube-rehash from another checkout (`--baseline
DIR`, a directory holding an older `reconcile` package, run through PYTHONPATH: before and after in one
session), the floor (benchmarks/floor.py, one metadata GET per referenced source) and the list floor
(`--sources list`). Prints each run and, per contender, the median wall, CPU, peak RSS, requests and bytes,
with the load average.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
from pathlib import Path
from typing import Any

from benchmarks.floor import floor_argv
from benchmarks.generate import REALISTIC, THIN, Shape, generate_file
from benchmarks.harness import SimulatorProcess, measure

KUBE_REHASH = str(Path(sys.executable).parent / "kube-rehash")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.steady", description=__doc__)
    parser.add_argument("--scale", type=int, default=1)
    parser.add_argument("--objects", choices=(THIN, REALISTIC), default=THIN)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--baseline", type=Path, default=None, help="a checkout's root (holds reconcile/)")
    parser.add_argument("--no-get-floor", action="store_true", help="skip the GET floor (slow at 10x)")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="kube-rehash-steady-") as tmp:
        workdir = Path(tmp)
        written = generate_file(Shape(objects=args.objects).scaled(args.scale), workdir / "cluster.json")
        references = workdir / "references.json"
        references.write_text(json.dumps(written.cluster.referenced))
        config = workdir / "kube-rehash.yaml"
        config.write_text("qps: 0\n")
        with SimulatorProcess(written.path, workdir) as sim:
            rehash = [
                KUBE_REHASH,
                "run",
                "-o",
                "json",
                "--kubeconfig",
                str(sim.kubeconfig),
                "--config",
                str(config),
            ]
            floor = floor_argv(sim.kubeconfig, references)
            contenders: dict[str, tuple[list[str], dict[str, str] | None]] = {"kube-rehash": (rehash, None)}
            if args.baseline is not None:
                contenders["baseline"] = (rehash, {"PYTHONPATH": str(args.baseline.resolve())})
            contenders["list floor"] = (floor_argv(sim.kubeconfig, references, sources="list"), None)
            if not args.no_get_floor:
                contenders["floor"] = (floor, None)
            first = measure("first", rehash, sim)
            print(f"first pass: {first.wall:.2f} s, {first.traffic.requests} requests, exit {first.code}")
            runs: dict[str, list[dict[str, Any]]] = {name: [] for name in contenders}
            for _ in range(args.rounds):
                for name, (command, env) in contenders.items():
                    row = measure(name, command, sim, env=env).row()
                    runs[name].append(row)
                    print(
                        json.dumps(
                            {k: row[k] for k in ("name", "wall_s", "cpu_s", "rss_mb", "requests", "exit")}
                        )
                    )
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    for name, rows in runs.items():
        walls = [r["wall_s"] for r in rows]
        cpu = statistics.median(r["cpu_s"] for r in rows)
        rss = max(r["rss_mb"] for r in rows)
        print(
            f"{name}: wall median {statistics.median(walls):.3f} s {sorted(walls)}, CPU median {cpu:.3f} s, "
            f"peak RSS max {rss} MiB, requests {rows[-1]['requests']}, bytes {rows[-1]['bytes']}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
