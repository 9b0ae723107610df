"""What one opted-in workload costs the pass to keep: `python -m benchmarks.listed_cost [--scale N]`.

The pass keeps a `Listed` view of every opted-in workload (and its triage) from the listing to the end, which
is what still grows with the cluster (docs/engineering/memory-profile-details.md, "Where it stands"). This
generates the benchmark cluster, serves it from a simulator, adopts it with one pass (a child process, so the
views carry their records), then in this process, with tracemalloc on, lists the workloads as a pass does
(`pipeline.listing.list_targets`) and triages them, and prints the traced bytes per opted-in workload after
`gc.collect()`, overall and by allocation site.
"""

from __future__ import annotations

import argparse
import gc
import os
import subprocess
import sys
import tempfile
import tracemalloc
from datetime import UTC, datetime
from pathlib import Path

from benchmarks.generate import Shape, generate_file
from benchmarks.harness import SimulatorProcess


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.listed_cost", description=__doc__)
    parser.add_argument("--scale", type=int, default=1)
    parser.add_argument("--top", type=int, default=12)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="kube-rehash-listed-") as tmp:
        workdir = Path(tmp)
        written = generate_file(Shape().scaled(args.scale), workdir / "cluster.json")
        config = workdir / "qps0.yaml"
        config.write_text("qps: 0\n")
        with SimulatorProcess(written.path, workdir) as sim:
            run = ["run", "-o", "json", "--kubeconfig", str(sim.kubeconfig), "--config", str(config)]
            adopted = subprocess.run(
                [sys.executable, "-m", "reconcile", *run], capture_output=True, env=os.environ, check=False
            )
            print(f"adopting pass: exit {adopted.returncode}")
            measure_listing(run, args.top)
    return 0


def measure_listing(argv: list[str], top: int) -> None:
    tracemalloc.start(6)
    from reconcile.cli.commands import build_parser, load
    from reconcile.cli.connect import connect
    from reconcile.pipeline.listing import list_targets
    from reconcile.pipeline.planner import rules_for
    from reconcile.policy.triage import triage_listed, wanted_sources

    settings = load(build_parser().parse_args(argv))
    client = connect(settings)
    rules = rules_for(settings, None, datetime.now(UTC))
    gc.collect()
    before, start = tracemalloc.take_snapshot(), tracemalloc.get_traced_memory()[0]
    listing = list_targets(settings, client, rules.discovery)
    gc.collect()
    listed = tracemalloc.get_traced_memory()[0]
    count = len(listing.workloads)
    print(f"{count} opted-in workloads listed: {(listed - start) / count:.0f} B each")
    for stat in tracemalloc.take_snapshot().compare_to(before, "lineno")[:top]:
        print(f"  {stat.size_diff / count:8.1f} B {stat.count_diff:8d}  {stat.traceback[0]}")
    triage = triage_listed(listing.workloads, rules.fingerprint)
    wanted = wanted_sources(listing.workloads, triage)
    gc.collect()
    print(f"triage and wanted sources: {(tracemalloc.get_traced_memory()[0] - listed) / count:.0f} B each")
    del triage, wanted
    client.close()


if __name__ == "__main__":
    raise SystemExit(main())
