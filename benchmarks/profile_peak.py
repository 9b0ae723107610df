"""What a pass holds at its peak, by memray: every allocation alive at the high-water mark, native included.

`python -m benchmarks.profile_peak --shape independent --answers '{"limit": "ignored"}' --out /tmp/peak.json`
generates the named shape (benchmarks/shapes.py, `--scale` to shrink it), serves it from the simulator with
the answer settings given (rehash_simulator/answers.py), and runs the first pass as a server dry run
(`--dry-run server`, `qps: 0`, as benchmarks/answers.py does) under `memray run --aggregate
--trace-python-allocators` (each Python object's allocation recorded where it was made, not as a share of
pymalloc's arenas; `--native` adds C frames: orjson's, zlib's and OpenSSL's buffers by their callers).
`--pass steady` runs a first pass first (not profiled) and profiles the steady pass after it.

memray keeps the allocations alive at the moment the process's heap was largest. They are summed here by:

- `by_site`: the innermost Python frame (`file:line function`);
- `by_reconcile`: the innermost frame inside reconcile/ (the project's code that asked for the memory,
  e.g. kube/pages.py's page text rather than the `bytes.decode` under it);
- `by_stage`: the outermost frame inside reconcile/pipeline/, kube/, output/ or policy/ (which stage of the
  pass holds it: the streamed walk, the read stage, the client's read-ahead...), or "imports" for what a
  module body allocated;
- `by_thread`: the thread that allocated it (the pass's main thread, the read-ahead threads, workers).

The measured process's own peak RSS (`VmHWM`, benchmarks/harness.py) is recorded beside memray's
figure; memray's bookkeeping lives mostly outside the traced heap, so the two differ by its cost.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from collections.abc import Iterable
from dataclasses import asdict
from pathlib import Path
from typing import Any

from benchmarks.after_change import ROLLOUT_SECONDS
from benchmarks.generate import generate_file
from benchmarks.harness import SimulatorProcess, measure
from benchmarks.shapes import named, scaled_down

Frame = tuple[str, str, int]
"""(function, file, line), as memray gives a Python frame."""
STAGES = ("/reconcile/pipeline/", "/reconcile/kube/", "/reconcile/output/", "/reconcile/policy/")


def short(path: str) -> str:
    for marker in ("/reconcile/", "/site-packages/", "/lib/python3."):
        if marker in path:
            tail = path.split(marker, 1)[1]
            return f"reconcile/{tail}" if marker == "/reconcile/" else tail.split("/", 1)[-1]
    return path


def where(frame: Frame | None) -> str:
    if frame is None:
        return "(no Python frame)"
    function, path, line = frame
    return f"{short(path)}:{line} {function}"


def innermost(stack: list[Frame], marker: str) -> Frame | None:
    return next((f for f in stack if marker in f[1]), None)


def stage_of(stack: list[Frame]) -> str:
    """The outermost frame of a pass stage (pipeline, client, output, policy) under the command; "imports"
    for what a module body allocated."""
    if any(f[1].startswith("<frozen importlib") for f in stack):
        return "imports"
    frames = [f for f in stack if any(m in f[1] for m in STAGES)]
    return where(frames[-1]) if frames else "(outside the pass stages)"


def summed(rows: Iterable[tuple[str, int, int]], top: int) -> list[dict[str, Any]]:
    totals: dict[str, list[int]] = {}
    for key, size, count in rows:
        entry = totals.setdefault(key, [0, 0])
        entry[0] += size
        entry[1] += count
    ranked = sorted(totals.items(), key=lambda kv: -kv[1][0])[:top]
    return [{"site": key, "kib": size // 1024, "allocations": count} for key, (size, count) in ranked]


def read_peak(path: Path, top: int) -> dict[str, Any]:
    """The allocations alive at the high-water mark of a memray capture, summed as the docstring says."""
    import memray

    reader = memray.FileReader(str(path))
    records = []
    for record in reader.get_high_watermark_allocation_records(merge_threads=False):
        stack: list[Frame] = list(record.stack_trace(max_stacks=64))
        records.append((stack, record.size, record.n_allocations, record.thread_name))
    total = sum(size for _, size, _, _ in records)
    return {
        "peak_heap_mib": round(reader.metadata.peak_memory / 2**20, 1),
        "alive_at_peak_mib": round(total / 2**20, 1),
        "by_site": summed(((where(s[0] if s else None), n, c) for s, n, c, _ in records), top),
        "by_reconcile": summed(((where(innermost(s, "/reconcile/")), n, c) for s, n, c, _ in records), top),
        "by_stage": summed(((stage_of(s), n, c) for s, n, c, _ in records), top),
        "by_thread": summed(((t or "main", n, c) for _, n, c, t in records), top),
    }


def profiled(argv: list[str], capture: Path, *, native: bool) -> list[str]:
    tracer = [sys.executable, "-m", "memray", "run", "--aggregate", "--trace-python-allocators", "-q", "-f"]
    return [*tracer, *(["--native"] if native else []), "-o", str(capture), "-m", "reconcile", *argv]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.profile_peak", description=__doc__)
    parser.add_argument("--shape", default="independent")
    parser.add_argument("--scale", type=float, default=1.0)
    parser.add_argument("--answers", default="{}", help="a JSON object of answer settings")
    parser.add_argument("--pass", dest="which", choices=("first", "steady"), default="first")
    parser.add_argument("--native", action="store_true")
    parser.add_argument("--top", type=int, default=25)
    parser.add_argument("--out", type=Path, default=Path("/tmp/kube-rehash-peak.json"))
    parser.add_argument("--workdir", type=Path, default=None)
    args = parser.parse_args(argv)
    shape = scaled_down(named(args.shape), args.scale)
    answers = json.loads(args.answers)
    result: dict[str, Any] = {"shape": asdict(shape), "answers": answers, "pass": args.which}
    with tempfile.TemporaryDirectory(prefix="kube-rehash-peak-", dir=args.workdir) as tmp:
        workdir = Path(tmp)
        written = generate_file(shape, workdir / "cluster.json")
        print(f"[{args.shape} x{args.scale}] {shape.label()}: {written.size / 1e6:.0f} MB", flush=True)
        config = workdir / "qps0.yaml"
        config.write_text("qps: 0\ntimeout: 1800\n")
        capture = workdir / "pass.bin"
        with SimulatorProcess(written.path, workdir, rollout_seconds=ROLLOUT_SECONDS, answers=answers) as sim:
            written.path.unlink()
            run = ["run", "-o", "json", "--kubeconfig", str(sim.kubeconfig), "--config", str(config)]
            if args.which == "first":
                run += ["--dry-run", "server"]
            else:
                measure("kube-rehash", [sys.executable, "-m", "reconcile", *run], sim)
            plain = measure("kube-rehash", [sys.executable, "-m", "reconcile", *run], sim)
            traced = measure("kube-rehash", profiled(run, capture, native=args.native), sim)
        result["rss_mib"] = round(plain.rss_mb, 1)
        result["rss_mib_under_memray"] = round(traced.rss_mb, 1)
        result["exit"] = traced.code
        result["peak"] = read_peak(capture, args.top)
    args.out.write_text(json.dumps(result, indent=1) + "\n")
    peak = result["peak"]
    print(
        f"peak RSS {result['rss_mib']} MiB ({result['rss_mib_under_memray']} under memray); heap at its peak "
        f"{peak['peak_heap_mib']} MiB, {peak['alive_at_peak_mib']} MiB of it in the records"
    )
    for key in ("by_stage", "by_reconcile", "by_site", "by_thread"):
        print(f"\n## {key}")
        for row in peak[key]:
            print(f"  {row['kib']:>9} KiB {row['allocations']:>9}  {row['site']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
