"""A first install's next pass at the shipped defaults, after the first pass adopted the namespaces that
come first in key order: the case where reading the rest namespace by namespace costs the 10x first install
a fourth pass.

A first install cut by its budget starts at a rotated namespace and may wrap round to the first ones in
key order. The next pass's sample (the first namespaces) is then in sync, so it walks on from its listing
as a light pass, and the namespaces past the adopted stretch were never seen. Whether the walk then reads
each of those namespaces' specs with requests of their own, or lists the kinds whole from where it is
(reconcile/pipeline/midway.py), decides how many workloads the pass adopts in its budget. Which namespace
the real first pass starts at comes from the clock, so this scenario sets the stretch itself: one pass at
`qps: 0` scoped (`namespaces:`) to the first `--adopted` share of the namespaces, then one pass at the
shipped defaults (no config file, `-v`), whose row and `listed whole` log lines are written.
Run: `python -m benchmarks.midway --scale 10 --adopted 0.35 --out benchmarks/results-midway.json`.
"""

from __future__ import annotations

import argparse
import json
import tempfile
from dataclasses import asdict
from pathlib import Path
from typing import Any

from benchmarks.__main__ import KUBE_REHASH
from benchmarks.defaults import pass_row
from benchmarks.generate import Shape, generate_file, namespace_name
from benchmarks.harness import SimulatorProcess, measure

LOGGED = ("one listing of the workloads", "listed whole from here on", "may not fit", "starting at")


def midway_scenario(shape: Shape, adopted: float, workdir: Path) -> dict[str, Any]:
    """The scoped adoption's row, then the defaults pass's row with its walk's log lines."""
    load = workdir / "midway-cluster.json"
    generate_file(shape, load)
    first = [namespace_name(n) for n in range(round(shape.namespaces * adopted))]
    scoped = workdir / "scoped.yaml"
    scoped.write_text(json.dumps({"qps": 0, "namespaces": first}))
    with SimulatorProcess(load, workdir) as sim:
        argv = [KUBE_REHASH, "run", "-o", "json", "--kubeconfig", str(sim.kubeconfig)]
        adoption = pass_row(measure("kube-rehash", [*argv, "--config", str(scoped)], sim))
        run = measure("kube-rehash", [*argv, "-v"], sim)
        walk = [line for line in run.stderr.splitlines() if any(text in line for text in LOGGED)]
        return {
            "shape": asdict(shape),
            "adopted_namespaces": len(first),
            "scoped_adoption": adoption,
            "defaults_pass": pass_row(run),
            "walk": walk,
        }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", type=int, default=10)
    parser.add_argument("--adopted", type=float, default=0.35, help="share of the namespaces adopted first")
    parser.add_argument("--out", type=Path, default=Path("benchmarks/results-midway.json"))
    parser.add_argument("--workdir", type=Path, default=None)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(dir=args.workdir) as tmp:
        result = midway_scenario(Shape().scaled(args.scale), args.adopted, Path(tmp))
    args.out.write_text(json.dumps(result, indent=1, default=str) + "\n")
    row = result["defaults_pass"]
    print(
        f"defaults pass: {row['wall_s']:.1f} s, {row['requests']} requests, {row['workload_gets']} workload "
        f"GETs, {row['lists']} lists; {row['summary']}"
    )
    print("\n".join(result["walk"]))


if __name__ == "__main__":
    main()
