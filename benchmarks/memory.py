"""`python -m benchmarks --memory`: peak RSS of kube-rehash's passes against cluster size.

For each scale it generates the cluster (`Shape.scaled`: at 10x 30,000 workloads of which 10,000 opted in,
1,000 namespaces, 80,000 ConfigMaps and 80,000 Secrets, Helm releases shrunk as that docstring says), serves
it from one simulator and measures, each as a child process whose peak RSS is its `VmHWM`
(benchmarks/harness.py):

1. the first (adopting) pass at `qps: 0`,
2. the steady pass at `qps: 0`, then the steady pass at the shipped defaults (no config file: `qps: 20`,
   `timeout: 240`) with its requests and wall, and the floor (benchmarks/floor.py) for its requests,
3. the change pass at `qps: 0` after 5% of the referenced sources changed; the passes after it until
   every rollout completed (at `qps: 0`, not kept as rows, only counted), then another 5% (a different
   sample) changed and the change pass at the shipped defaults,
4. with `first_at_defaults`, the first pass at the shipped defaults, on a second simulator loaded from the
   same file (the first one's workloads are adopted by then). At 2x and above that pass runs out of its
   240 s budget and adopts only part of the cluster, as a first install at the defaults does.

It also records the simulator's own RSS (`VmRSS` after loading, `VmHWM` at the end) and the size of the
generated file, which the 10x shape must fit on the machine. kube-rehash is run as
`python -m reconcile` (`kube_rehash`), so the tree on `PYTHONPATH` is measured even when the venv's
`kube-rehash` console script was installed from another checkout.
"""

from __future__ import annotations

import json
import random
import time
from collections.abc import Mapping
from dataclasses import asdict
from pathlib import Path
from typing import Any

from benchmarks.after_change import ROLLOUT_SECONDS, pass_row, until_complete
from benchmarks.floor import floor_argv
from benchmarks.generate import Shape, generate_file
from benchmarks.harness import Measured, SimulatorProcess, change_sources, measure

PASSES = ("first", "steady", "change")
TARGET_MIB = 64.0
"""Peak RSS every pass of every shape must stay within: half the shipped pod's 128 Mi limit."""


def status_kib(pid: int, field: str) -> int:
    """`VmRSS`/`VmHWM` (KiB) of a live process, 0 when it is gone."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith(field + ":"):
                return int(line.split()[1])
    except (OSError, ValueError, IndexError):
        pass
    return 0


def rehash_row(run: Measured) -> dict[str, Any]:
    """The measured row plus what the pass reported (summary, budget, duration); never the report rows."""
    try:
        doc: dict[str, Any] = json.loads(run.stdout)
    except ValueError:
        raise RuntimeError(f"kube-rehash exit {run.code}: {run.stderr[-2000:]}") from None
    return {
        **run.row(),
        "summary": doc["summary"],
        "budget_exhausted": bool(doc.get("budget_exhausted")),
        "duration_s": doc.get("duration_seconds"),
        "configs_fetched": doc.get("configs_fetched"),
    }


def memory_scenario(
    shape: Shape,
    workdir: Path,
    *,
    kube_rehash: list[str],
    change_fraction: float = 0.05,
    first_at_defaults: bool = True,
    answers: Mapping[str, Any] | None = None,
    log: Any = print,
) -> dict[str, Any]:
    """One scale: {"qps0": {pass: row}, "defaults": {pass: row}, "floor": row, "simulator": {...}, ...}.
    `answers`: the simulator's answer settings (rehash_simulator/answers.py), its defaults when None."""
    started = time.monotonic()
    written = generate_file(shape, workdir / "memory-cluster.json")
    load, size, objects, referenced = written.path, written.size, written.objects, written.cluster.referenced
    references = workdir / "memory-references.json"
    references.write_text(json.dumps(referenced))
    seconds = written.seconds
    log(f"[memory: {shape.label()}] {objects} objects, {size / 1e6:.0f} MB, generated in {seconds:.0f}s")
    config = workdir / "memory-qps0.yaml"
    config.write_text("qps: 0\n")
    result: dict[str, Any] = {
        "shape": asdict(shape),
        "objects": objects,
        "load_bytes": size,
        "referenced_sources": len(referenced),
        "qps0": {},
        "defaults": {},
        "answers": dict(answers or {}),
    }
    with SimulatorProcess(load, workdir, rollout_seconds=ROLLOUT_SECONDS, answers=answers) as sim:
        pid = sim.process.pid
        result["simulator"] = {"rss_mb_loaded": round(status_kib(pid, "VmRSS") / 1024, 1)}
        log(f"  simulator loaded: {result['simulator']['rss_mb_loaded']} MiB RSS")
        kubeconfig = str(sim.kubeconfig)
        qps0 = [*kube_rehash, "run", "-o", "json", "--kubeconfig", kubeconfig, "--config", str(config)]
        shipped = [*kube_rehash, "run", "-o", "json", "--kubeconfig", kubeconfig]

        def record(mode: str, name: str, argv: list[str]) -> dict[str, Any]:
            row = rehash_row(measure("kube-rehash", argv, sim))
            result[mode][name] = row
            log(
                f"  {mode} {name}: {row['rss_mb']} MiB peak RSS, {row['wall_s']:.2f}s, "
                f"{row['requests']} requests, exit {row['exit']}, summary {row['summary']}"
            )
            return row

        record("qps0", "first", qps0)
        record("qps0", "steady", qps0)
        record("defaults", "steady", shipped)
        floor = measure("floor", floor_argv(kubeconfig, references), sim)
        result["floor"] = floor.row()
        log(f"  floor: {floor.traffic.requests} requests, {floor.wall:.2f}s, {floor.rss_mb:.1f} MiB")
        rng = random.Random(shape.seed + 1)
        count = max(1, round(change_fraction * len(referenced)))
        changed = rng.sample(referenced, count)
        change_sources(sim, sorted(changed), f"memory-{time.time_ns()}")
        result["changed_sources"] = count
        record("qps0", "change", qps0)

        def settle() -> dict[str, Any]:
            run = measure("kube-rehash", qps0, sim)
            return pass_row(run, run.row())

        after = until_complete(settle, pause=ROLLOUT_SECONDS + 0.5, log=lambda _line: None)
        result["settled"] = {"passes": len(after["passes"]), "converged": after["converged"]}
        # Another 5%, not the sources changed already, for the change pass at the shipped defaults.
        remaining = sorted(set(referenced) - set(changed))
        second = random.Random(shape.seed + 2).sample(remaining, min(count, len(remaining)))
        change_sources(sim, sorted(second), f"memory-defaults-{time.time_ns()}")
        record("defaults", "change", shipped)
        result["simulator"]["rss_mb_end"] = round(status_kib(pid, "VmRSS") / 1024, 1)
        result["simulator"]["hwm_mb"] = round(status_kib(pid, "VmHWM") / 1024, 1)
    if first_at_defaults:
        with SimulatorProcess(load, workdir, rollout_seconds=ROLLOUT_SECONDS, answers=answers) as sim:
            argv = [*kube_rehash, "run", "-o", "json", "--kubeconfig", str(sim.kubeconfig)]
            row = rehash_row(measure("kube-rehash", argv, sim))
            result["defaults"]["first"] = row
            log(
                f"  defaults first: {row['rss_mb']} MiB peak RSS, {row['wall_s']:.1f}s, {row['requests']} "
                f"requests, budget exhausted {row['budget_exhausted']}, summary {row['summary']}"
            )
    load.unlink(missing_ok=True)
    result["seconds"] = round(time.monotonic() - started, 1)
    return result


def memory_table(memory: dict[str, Any]) -> list[str]:
    """Markdown: peak RSS (MiB) of each pass per scale, at `qps: 0` and at the shipped defaults."""
    lines = [
        "| scale | workloads (opted in) | ConfigMaps / Secrets (Helm) | file | simulator RSS "
        "| first | steady | change | defaults: first | defaults: steady | defaults: change |",
        "|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for factor, m in sorted(memory.items(), key=lambda kv: int(kv[0])):
        s = m["shape"]

        def rss(mode: str, name: str, m: dict[str, Any] = m) -> str:
            row = m[mode].get(name)
            return f"{row['rss_mb']:.1f}" if row else "n/a"

        lines.append(
            f"| {factor}x | {s['workloads']:,} ({s['opted_in']:,}) | {s['configmaps']:,} / {s['secrets']:,} "
            f"({s['helm_secrets']:,} of {s['helm_min_kb']}-{s['helm_max_kb']} KB) "
            f"| {m['load_bytes'] / 1e6:,.0f} MB | {m['simulator'].get('hwm_mb', 0):,.0f} MiB "
            f"| {rss('qps0', 'first')} | {rss('qps0', 'steady')} | {rss('qps0', 'change')} "
            f"| {rss('defaults', 'first')} | {rss('defaults', 'steady')} | {rss('defaults', 'change')} |"
        )
    lines.append("")
    lines.append(
        "| scale | defaults steady: wall (s) | requests | floor requests | ratio | defaults change: wall (s) "
        "| requests | defaults first: wall (s) | requests | adopted | budget spent |"
    )
    lines.append("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|")
    for factor, m in sorted(memory.items(), key=lambda kv: int(kv[0])):
        steady, change = m["defaults"]["steady"], m["defaults"]["change"]
        floor = m["floor"]["requests"]
        first = m["defaults"].get("first")
        first_cells = (
            f"{first['wall_s']:.1f} | {first['requests']} | {first['summary'].get('adopt', 0)} of "
            f"{first['summary'].get('workloads', 0)} | {'yes' if first['budget_exhausted'] else 'no'}"
            if first
            else "n/a | n/a | n/a | n/a"
        )
        lines.append(
            f"| {factor}x | {steady['wall_s']:.2f} | {steady['requests']} | {floor} "
            f"| {steady['requests'] / floor:.3f} | {change['wall_s']:.2f} | {change['requests']} "
            f"| {first_cells} |"
        )
    return lines


def shapes_table(shapes: dict[str, Any]) -> list[str]:
    """Markdown: peak RSS (MiB) of each pass per named shape (benchmarks/shapes.py) and answer variant, at
    `qps: 0` and at the shipped defaults, with the 64 MiB target."""
    lines = [
        "| shape | answers | workloads (opted in) / namespaces | ConfigMaps / Secrets (Helm) | first "
        "| steady | change | defaults: first | defaults: steady | defaults: change | highest | within 64 MiB "
        "|",
        "|---|---|---|---|---:|---:|---:|---:|---:|---:|---:|---|",
    ]
    for name, m in shapes.items():
        s = m["shape"]
        cells = [(m[mode].get(p) or {}).get("rss_mb") for mode in ("qps0", "defaults") for p in PASSES]
        highest = max((c for c in cells if c is not None), default=0.0)
        answers = ", ".join(f"{k}: {v}" for k, v in (m.get("answers") or {}).items()) or "simulator's"
        workloads = f"{s['workloads']:,} ({s['opted_in']:,}) / {s['namespaces']:,}"
        configmaps = s["configmaps"] + s.get("big_configmaps", 0)
        helm = f"{s['helm_secrets']:,} of {s['helm_min_kb']}-{s['helm_max_kb']} KB"
        peaks = " | ".join("n/a" if c is None else f"{c:.1f}" for c in cells)
        within = "yes" if highest <= TARGET_MIB else "**no**"
        lines.append(
            f"| {name.split('@')[0]} | {answers} | {workloads} | {configmaps:,} / {s['secrets']:,} ({helm}) "
            f"| {peaks} | {highest:.1f} | {within} |"
        )
    return lines
