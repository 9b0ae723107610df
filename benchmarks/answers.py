"""Which property of the server's answers moves a first pass's peak RSS: one cluster, every variant.

`python -m benchmarks.answers --shape independent --variants all --rounds 2 --out /tmp/answers.json`
generates the named shape (benchmarks/shapes.py), serves it from one simulator and, for each variant of
the simulator's answers (rehash_simulator/answers.py), in rounds (so a busy moment hits all alike), runs the
first pass as a server dry run (`--dry-run server`: the same requests as a first install, every write sent
with `dryRun=All`, so nothing is kept and the pass can be repeated on the same cluster), `qps: 0`, with its
peak RSS (`VmHWM`, benchmarks/harness.py). `--env NAME=VALUE` sets a variable of the measured pass (e.g.
the allocator's `MALLOC_ARENA_MAX`).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from dataclasses import asdict
from pathlib import Path
from typing import Any

from benchmarks.after_change import ROLLOUT_SECONDS
from benchmarks.generate import generate_file
from benchmarks.harness import SimulatorProcess, measure
from benchmarks.memory import rehash_row
from benchmarks.shapes import named, scaled_down

VARIANTS: dict[str, dict[str, Any]] = {
    "simulator": {},
    "count-never": {"remainingItemCount": "never"},
    "count-always": {"remainingItemCount": "always"},
    "limit-ignored": {"limit": "ignored"},
    "pages-half": {"pageScale": 0.5},
    "pages-double": {"pageScale": 2.0},
    "pages-quadruple": {"pageScale": 4.0},
    "pages-cap-100": {"pageCap": 100},
    "pages-floor-500": {"pageFloor": 500},
    "gzip-chunked": {"gzip": "chunked"},
    "gzip-off": {"gzip": "off"},
    "order-scrambled": {"order": "scrambled"},
    "tokens-30s": {"continueTtl": 30},
    "tokens-60s": {"continueTtl": 60},
    "tokens-120s": {"continueTtl": 120},
}


def first_pass(
    sim: SimulatorProcess, config: Path, *, extra: list[str], env: dict[str, str]
) -> dict[str, Any]:
    argv = [sys.executable, "-m", "reconcile", "run", "-o", "json", "--kubeconfig", str(sim.kubeconfig)]
    run = measure("kube-rehash", [*argv, "--config", str(config), "--dry-run", "server", *extra], sim, env)
    row = rehash_row(run)
    row["retries"] = run.stderr.count("list continue token expired")
    return row


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.answers", description=__doc__)
    parser.add_argument("--shape", default="independent")
    parser.add_argument("--scale", type=float, default=1.0, help="counts times this (benchmarks/shapes.py)")
    parser.add_argument("--variants", default="all", help=f"comma-separated, or all: {', '.join(VARIANTS)}")
    parser.add_argument("--answers", default="", help="a JSON object of answer settings, as variant `custom`")
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--env", action="append", default=[], help="NAME=VALUE for the measured pass")
    parser.add_argument("--pass-args", default="", help="extra arguments of `kube-rehash run`")
    parser.add_argument("--out", type=Path, default=Path("/tmp/kube-rehash-answers.json"))
    parser.add_argument("--workdir", type=Path, default=None)
    args = parser.parse_args(argv)
    variants = (
        dict(VARIANTS) if args.variants == "all" else {v: VARIANTS[v] for v in args.variants.split(",") if v}
    )
    if args.answers:
        variants["custom"] = json.loads(args.answers)
    env = dict(item.split("=", 1) for item in args.env)
    shape = scaled_down(named(args.shape), args.scale)
    result: dict[str, Any] = {"shape": asdict(shape), "variants": variants, "env": env, "runs": {}}
    with tempfile.TemporaryDirectory(prefix="kube-rehash-answers-", dir=args.workdir) as tmp:
        workdir = Path(tmp)
        written = generate_file(shape, workdir / "cluster.json")
        result["load_bytes"], result["objects"] = written.size, written.objects
        size = written.size / 1e6
        print(f"[{args.shape} x{args.scale}] {shape.label()}: {written.objects} objects, {size:.0f} MB")
        config = workdir / "qps0.yaml"
        config.write_text("qps: 0\ntimeout: 1800\n")
        with SimulatorProcess(written.path, workdir, rollout_seconds=ROLLOUT_SECONDS) as sim:
            written.path.unlink()
            for round_ in range(args.rounds):
                for name, answers in variants.items():
                    sim.set_answers(answers)
                    started = time.monotonic()
                    row = first_pass(sim, config, extra=args.pass_args.split(), env=env)
                    result["runs"].setdefault(name, []).append(row)
                    print(
                        f"  round {round_ + 1} {name}: {row['rss_mb']} MiB, {row['wall_s']:.1f}s, "
                        f"{row['requests']} requests, {row['bytes'] / 2**20:.1f} MiB sent, "
                        f"exit {row['exit']}, {row['summary']} ({time.monotonic() - started:.0f}s)",
                        flush=True,
                    )
                    args.out.write_text(json.dumps(result, indent=1) + "\n")
    for name, rows in result["runs"].items():
        print(f"{name:>18}: {', '.join(str(r['rss_mb']) for r in rows)} MiB")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
