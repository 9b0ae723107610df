"""`python -m benchmarks` (what `make bench` runs): the cost of a kube-rehash pass, with numbers.

For each cluster size it generates a synthetic cluster, serves it from a simulator in its own process
and measures, in one run, a steady-state pass (after a first adopting pass) and a pass after 5% of
the referenced sources changed, for kube-rehash, the naive script (benchmarks/naive.py) and the floor
(benchmarks/floor.py). Optional extra scenarios: `--shards N` (per-shard workloads and requests, on the
default shape and, with `--skewed-shards S`, on a cluster keeping the share S of its workloads in one
namespace), `--unrelated-secrets F` (Secrets nobody references grow Fx: peak RSS must stay flat) and
`--real-scale S` (benchmarks/real.py: the same passes against a real kube-apiserver at scale S, beside the
simulator at that shape; `--only-real` runs just that).
Results go to a JSON file and, with `--chart`, to a matplotlib chart (matplotlib is imported only then).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import platform
import random
import sys
import tempfile
import time
from dataclasses import asdict, replace
from pathlib import Path
from typing import Any

import xxhash

from benchmarks.after_change import ROLLOUT_SECONDS, pass_row, until_complete
from benchmarks.defaults import defaults_scenario
from benchmarks.floor import LIST_FLOOR, floor_argv
from benchmarks.generate import REALISTIC, THIN, Cluster, Shape, generate_file
from benchmarks.harness import Measured, SimulatorProcess, change_sources, measure

KUBE_REHASH = str(Path(sys.executable).parent / "kube-rehash")
# The list floor (`floor.py --sources list`): every kind listed cluster-wide, metadata-only, on 4 threads and
# nothing else; the steady-pass targets (requests, bytes, wall at `qps: 0`: benchmarks/report.py) are read
# against it.
TOOLS = ("kube-rehash", "naive", "floor", LIST_FLOOR)
# kube-rehash with `fetch: list` (one metadata list per namespace and kind) and `fetch: get` (one
# metadata GET per referenced source), measured in the steady state beside the default `auto` to show
# what each way of reading the sources costs. The shards are compared with `get`: a shard reads its
# sources by name, so that is the unsharded pass doing the same work.
LIST_MODE = "kube-rehash-list"
GET_MODE = "kube-rehash-get"
MODES = {LIST_MODE: "list", GET_MODE: "get"}
# The memory run's results (`make bench` writes them after the run of record): the chart's peak RSS panel.
MEMORY_RESULTS = Path("benchmarks/results-memory.json")


def commands(sim: SimulatorProcess, config: Path, references: Path) -> dict[str, list[str]]:
    """Each contender's command line; the floor reads the referenced sources from `references`."""
    kubeconfig = str(sim.kubeconfig)
    rehash = [KUBE_REHASH, "run", "-o", "json", "--kubeconfig", kubeconfig, "--config", str(config)]
    return {
        "kube-rehash": rehash,
        **{name: [*rehash, "--fetch", mode] for name, mode in MODES.items()},
        "naive": [sys.executable, "-m", "benchmarks.naive", "--kubeconfig", kubeconfig],
        "floor": floor_argv(kubeconfig, references),
        LIST_FLOOR: floor_argv(kubeconfig, references, sources="list"),
    }


TARGETED = ("kube-rehash", LIST_FLOOR)
"""The contenders the steady-pass targets compare: measured `target_repeat` times at every scale, since a
single pass at 4x or 10x spreads by a third on a busy machine; the others (naive, the GET floor, the
modes, tens of seconds each at 10x) `repeat` times."""


def steady(
    names: tuple[str, ...],
    argv: dict[str, list[str]],
    sim: SimulatorProcess,
    *,
    repeat: int,
    target_repeat: int,
    log: Any,
) -> dict[str, dict[str, Any]]:
    """Each contender's steady pass `repeat` times (`target_repeat` for `TARGETED`), in rounds (so a busy
    moment hits all alike); the row of its median-wall run, with every wall time kept in `wall_runs`."""
    runs: dict[str, list[Measured]] = {name: [] for name in names}
    for round_ in range(max(repeat, target_repeat)):
        for name in names:
            if round_ < (target_repeat if name in TARGETED else repeat):
                runs[name].append(measure(name, argv[name], sim))
    rows: dict[str, dict[str, Any]] = {}
    for name, measured in runs.items():
        median = sorted(measured, key=lambda m: m.wall)[len(measured) // 2]
        rows[name] = {**median.row(), "wall_runs": [round(m.wall, 3) for m in measured]}
        if name.startswith("kube-rehash"):
            rows[name].update(rehash_report(median))
        log(f"  steady {name}: {rows[name]}")
    return rows


def rehash_report(run: Measured) -> dict[str, Any]:
    try:
        doc: dict[str, Any] = json.loads(run.stdout)
    except ValueError:
        raise RuntimeError(f"kube-rehash exit {run.code}: {run.stderr[-2000:]}") from None
    return {"summary": doc["summary"], "configs_fetched": doc.get("configs_fetched")}


def namespaces_of(run: Measured) -> set[str]:
    """The namespaces of the workloads a pass reported (a shard reads the sources of exactly these)."""
    return {str(w["namespace"]) for w in json.loads(run.stdout)["workloads"]}


def whole_namespace_sizes(cluster: Cluster, shards: int) -> list[int]:
    """Opted-in workloads per shard if shards took whole namespaces (dealt round-robin in the order of a
    stable hash of their names): computed from the generator, to compare with the per-workload split."""
    names = sorted(
        {ns for _, ns, _ in cluster.references}, key=lambda n: (xxhash.xxh3_64_intdigest(n.encode()), n)
    )
    owner = {ns: i % shards for i, ns in enumerate(names)}
    sizes = [0] * shards
    for _, ns, _ in cluster.references:
        sizes[owner[ns]] += 1
    return sizes


def scenario(
    shape: Shape,
    workdir: Path,
    *,
    change_fraction: float,
    shards: int,
    qps: float,
    repeat: int = 1,
    target_repeat: int | None = None,
    passes: tuple[str, ...] = ("steady", "change"),
    tools: tuple[str, ...] = TOOLS,
    modes: bool = True,
    log: Any = print,
) -> dict[str, Any]:
    """Measure one cluster: {"shape", "steady": {tool: row}, "change": {...}, "shards": [...], ...}."""
    started = time.monotonic()
    written = generate_file(shape, workdir / "cluster.json")
    cluster, load, size, objects = written.cluster, written.path, written.size, written.objects
    log(f"[{shape.label()}] generated {objects} objects, {size / 1e6:.0f} MB in {written.seconds:.0f}s")
    config = workdir / "kube-rehash.yaml"
    config.write_text(f"qps: {qps}\n")
    result: dict[str, Any] = {"shape": asdict(shape), "objects": objects, "load_bytes": size}
    if shards:
        result["whole_namespace_sizes"] = whole_namespace_sizes(cluster, shards)
    result["referenced_sources"] = len(cluster.referenced)
    # The floor lists workloads metadata-only, so it learns the referenced sources from the generator.
    references = workdir / "references.json"
    references.write_text(json.dumps(cluster.referenced))
    # The simulator's rollout controller finishes every rollout a few seconds after its template changed,
    # as a cluster's controllers do, so the passes after a change show what they cost until complete.
    with SimulatorProcess(load, workdir, rollout_seconds=ROLLOUT_SECONDS) as sim:
        argv = commands(sim, config, references)
        # First passes (adopt / hash everything once), naive first: its patches change pod templates,
        # i.e. bump `metadata.generation`, which kube-rehash must see before, not after, its own first
        # pass, or its "steady" pass would be catching up with the naive script's writes.
        for name in ("naive", "kube-rehash"):
            if name in tools:
                first = measure(name, argv[name], sim)
                result.setdefault("first", {})[name] = first.row()
                if name == "kube-rehash":
                    result["first"][name].update(rehash_report(first))
                log(f"  first {name}: {first.wall:.1f}s, {first.traffic.requests} requests")
        if "steady" in passes:
            names = (*tools, *MODES) if "kube-rehash" in tools and modes else tools
            result["steady"] = steady(
                names, argv, sim, repeat=repeat, target_repeat=target_repeat or repeat, log=log
            )
            seen: list[set[str]] = []
            for index in range(shards):
                run = measure("kube-rehash", [*argv["kube-rehash"], "--shard", f"{index}/{shards}"], sim)
                row = {**run.row(), **rehash_report(run)}
                seen.append(namespaces_of(run))
                row["namespaces"] = len(seen[-1])
                result.setdefault("shards", []).append(row)
                workloads = row["summary"]["workloads"]
                log(f"  shard {index}/{shards}: {workloads} workloads, {run.traffic.requests} requests")
            if shards:
                # Namespaces whose workloads (and so sources) more than one shard reads.
                result["shared_namespaces"] = sum(
                    1 for ns in set().union(*seen) if sum(ns in s for s in seen) > 1
                )
        if "change" in passes:
            rng = random.Random(shape.seed + 1)
            count = max(1, round(change_fraction * len(cluster.referenced)))
            changed = sorted(rng.sample(cluster.referenced, count))
            change_sources(sim, changed, f"changed-{shape.seed}-{time.time_ns()}")
            result["changed_sources"] = count
            result["change"] = {}
            for name in tools:
                run = measure(name, argv[name], sim)
                result["change"][name] = run.row()
                if name == "kube-rehash":
                    result["change"][name].update(rehash_report(run))
                    fetched = {p.split("/", 4)[4] for p in run.traffic.content_paths}
                    expected = {f"{ns}/{kind}s/{name}" for kind, ns, name in changed}
                    result["change"][name]["content_gets_are_changed_sources"] = fetched == expected
                    result["change"][name]["pass"] = pass_row(run, run.row())
                    # Before the other tools' change passes, which roll the same workloads again.
                    result["after_change"] = until_complete(
                        lambda: measured_pass(argv["kube-rehash"], sim),
                        pause=ROLLOUT_SECONDS + 0.5,
                        log=log,
                    )
                log(f"  change {name}: {run.row()}")
    result["seconds"] = round(time.monotonic() - started, 1)
    return result


def measured_pass(argv: list[str], sim: SimulatorProcess) -> dict[str, Any]:
    run = measure("kube-rehash", argv, sim)
    return pass_row(run, run.row())


def machine() -> dict[str, Any]:
    import os

    memory = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    model = ""
    with contextlib.suppress(OSError, StopIteration):
        model = next(
            line.split(":", 1)[1].strip()
            for line in Path("/proc/cpuinfo").read_text().splitlines()
            if line.startswith("model name")
        )
    return {
        "cpus": os.cpu_count(),
        "cpu": model,
        "memory_gb": round(memory, 1),
        "python": platform.python_version(),
        "platform": platform.platform(),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__)
    defaults = Shape()
    parser.add_argument("--workloads", type=int, default=defaults.workloads)
    parser.add_argument("--opted-in", type=int, default=defaults.opted_in)
    parser.add_argument("--namespaces", type=int, default=defaults.namespaces)
    parser.add_argument("--configmaps", type=int, default=defaults.configmaps)
    parser.add_argument("--secrets", type=int, default=defaults.secrets)
    parser.add_argument("--helm-secrets", type=int, default=defaults.helm_secrets)
    parser.add_argument("--helm-kb", default=f"{defaults.helm_min_kb}-{defaults.helm_max_kb}", help="MIN-MAX")
    parser.add_argument("--seed", type=int, default=defaults.seed)
    parser.add_argument(
        "--objects",
        choices=(THIN, REALISTIC),
        default=defaults.objects,
        help="realistic: every object carries what real clusters add (managedFields of several managers, "
        "the last-applied annotation, Helm's labels, workload status; rehash_simulator/dress.py)",
    )
    parser.add_argument("--scales", default="1", help="comma-separated size factors, e.g. 1,2,4")
    parser.add_argument("--change-fraction", type=float, default=0.05)
    parser.add_argument("--shards", type=int, default=4, help="also run each shard I/N at 1x (0: skip)")
    parser.add_argument(
        "--skewed-shards",
        type=float,
        default=0.8,
        help="with --shards: also run them at 1x with this share of the workloads in one namespace (0: skip)",
    )
    parser.add_argument(
        "--unrelated-secrets", type=int, default=4, help="also run 1x with Fx the Secrets (0: skip)"
    )
    parser.add_argument("--qps", type=float, default=0, help="kube-rehash's qps setting (0: unlimited)")
    parser.add_argument(
        "--defaults",
        default="1",
        help="also run these scales (comma-separated, e.g. 1,10) at the shipped defaults (qps 20, timeout "
        "240): the passes a first install takes, steady, the passes a change takes (empty or 0: skip)",
    )
    parser.add_argument(
        "--realistic-scales",
        default="",
        help="also run these scales (comma-separated, e.g. 1,10) on realistic objects at --qps: first, "
        "steady and change passes of kube-rehash and the list floor, and naive at 1x (under `realistic`)",
    )
    parser.add_argument(
        "--repeat",
        type=int,
        default=5,
        help="steady passes per contender at 1x, and of kube-rehash and the list floor at every scale (the "
        "others: one); the median wall is reported",
    )
    parser.add_argument(
        "--real-scale",
        type=float,
        default=0,
        help="also run the first, steady and change passes at this scale (e.g. 0.25) against the real "
        "control plane of tests/cluster, beside the simulator at the same shape (0: skip)",
    )
    parser.add_argument(
        "--only-real", action="store_true", help="with --real-scale: run only that scenario (no --scales)"
    )
    parser.add_argument(
        "--memory",
        action="store_true",
        help="run only the memory measurement (benchmarks/memory.py) at --scales: peak RSS of the first, "
        "steady and change passes at qps 0 and at the shipped defaults; results under the key `memory`",
    )
    parser.add_argument(
        "--memory-first-defaults",
        default="all",
        help="with --memory: the scales (comma-separated, `all` or `none`) at which the first pass at the "
        "shipped defaults is also measured, on a second simulator (up to 240 s each)",
    )
    parser.add_argument(
        "--shapes",
        default="",
        help="with --memory: instead of --scales, these named 10x shapes (comma-separated; "
        "benchmarks/shapes.py: project, independent, many-small, few-huge, helm-heavy, big-configmaps, "
        "long-refs, realistic), each "
        "optionally as NAME@VARIANT with the simulator answering as a variant of benchmarks/answers.py says "
        "(e.g. independent@limit-ignored); results under the key `shapes`",
    )
    parser.add_argument(
        "--shape-scale", type=float, default=1.0, help="with --shapes: their counts times this (a quick look)"
    )
    parser.add_argument("--out", type=Path, default=Path("benchmarks/results.json"))
    parser.add_argument("--chart", type=Path, default=None, help="draw the chart here (needs matplotlib)")
    parser.add_argument(
        "--performance-chart",
        nargs=2,
        type=Path,
        metavar=("RESULTS", "PNG"),
        default=None,
        help="with --memory: redraw the run of record's chart PNG from RESULTS (its JSON) with this run's "
        "peak RSS panel",
    )
    parser.add_argument("--workdir", type=Path, default=None)
    args = parser.parse_args(argv)
    low, high = (int(x) for x in args.helm_kb.split("-"))
    base = Shape(
        workloads=args.workloads,
        opted_in=args.opted_in,
        namespaces=args.namespaces,
        configmaps=args.configmaps,
        secrets=args.secrets,
        helm_secrets=args.helm_secrets,
        helm_min_kb=low,
        helm_max_kb=high,
        seed=args.seed,
        objects=args.objects,
    )
    results: dict[str, Any] = {
        "command": "python -m benchmarks " + " ".join(sys.argv[1:] if argv is None else argv),
        "machine": machine(),
        "qps": args.qps,
        "repeat": args.repeat,
        "scales": {},
    }
    if args.memory:
        return memory_main(args, base, results)
    with tempfile.TemporaryDirectory(prefix="kube-rehash-bench-", dir=args.workdir) as tmp:
        workdir = Path(tmp)
        if args.real_scale:
            results["real"] = real_and_simulated(args, base, workdir)
            write_results(results, args.out)
        if args.only_real:
            args.scales, args.shards, args.defaults, args.unrelated_secrets = "", 0, "", 0
        for factor in (int(f) for f in args.scales.split(",") if f):
            shards = args.shards if factor == 1 else 0
            results["scales"][str(factor)] = scenario(
                base.scaled(factor),
                workdir,
                change_fraction=args.change_fraction,
                shards=shards,
                qps=args.qps,
                repeat=args.repeat if factor == 1 else 1,
                target_repeat=args.repeat,
            )
            write_results(results, args.out)
        if args.shards and args.skewed_shards:
            results["skewed_shards"] = scenario(
                base.skewed(args.skewed_shards),
                workdir,
                change_fraction=args.change_fraction,
                shards=args.shards,
                qps=args.qps,
                passes=("steady",),
                tools=("kube-rehash",),
            )
            write_results(results, args.out)
        for factor in (int(f) for f in args.defaults.split(",") if f.strip() not in ("", "0")):
            # The first scale is `defaults` (the checks against the floor at 1x); each is under its factor.
            measured = defaults_scenario(
                base.scaled(factor),
                workdir,
                kube_rehash=KUBE_REHASH,
                naive=[sys.executable, "-m", "benchmarks.naive"],
                change_fraction=args.change_fraction,
            )
            results.setdefault("defaults", measured)
            results.setdefault("defaults_scales", {})[str(factor)] = measured
            write_results(results, args.out)
        for factor in (int(f) for f in args.realistic_scales.split(",") if f.strip() not in ("", "0")):
            results.setdefault("realistic", {})[str(factor)] = scenario(
                replace(base, objects=REALISTIC).scaled(factor),
                workdir,
                change_fraction=args.change_fraction,
                shards=0,
                qps=args.qps,
                repeat=3 if factor == 1 else 1,
                target_repeat=3,
                tools=("kube-rehash", "naive", LIST_FLOOR) if factor == 1 else ("kube-rehash", LIST_FLOOR),
                modes=False,
            )
            write_results(results, args.out)
        if args.unrelated_secrets:
            results["unrelated_secrets"] = scenario(
                base.unrelated_secrets(args.unrelated_secrets),
                workdir,
                change_fraction=args.change_fraction,
                shards=0,
                qps=args.qps,
                passes=("steady",),
            )
            results["unrelated_secrets"]["factor"] = args.unrelated_secrets
            write_results(results, args.out)
    from benchmarks.report import summarize

    print(summarize(results))
    if args.chart is not None:
        from benchmarks.chart import draw

        memory = json.loads(MEMORY_RESULTS.read_text()).get("memory") if MEMORY_RESULTS.exists() else None
        draw(results, args.chart, memory=memory)
        print(f"chart: {args.chart}" + (f" (peak RSS from {MEMORY_RESULTS})" if memory else ""))
    return 0


def memory_main(args: argparse.Namespace, base: Shape, results: dict[str, Any]) -> int:
    """`--memory`: benchmarks/memory.py at each of `--scales`, into `results["memory"]` by scale."""
    from benchmarks.memory import memory_scenario, memory_table

    if args.shapes:
        return shapes_main(args, results)
    factors = [int(f) for f in args.scales.split(",") if f]
    wanted = args.memory_first_defaults
    first_at = set(factors) if wanted == "all" else {int(f) for f in wanted.split(",") if f.isdigit()}
    results["memory"] = {}
    with tempfile.TemporaryDirectory(prefix="kube-rehash-bench-", dir=args.workdir) as tmp:
        for factor in factors:
            results["memory"][str(factor)] = memory_scenario(
                base.scaled(factor),
                Path(tmp),
                kube_rehash=[sys.executable, "-m", "reconcile"],
                change_fraction=args.change_fraction,
                first_at_defaults=factor in first_at,
            )
            write_results(results, args.out)
    print("\n".join(memory_table(results["memory"])))
    if args.chart is not None:
        from benchmarks.chart import draw_memory

        draw_memory(results["memory"], args.chart)
        print(f"chart: {args.chart}")
    if args.performance_chart is not None:
        from benchmarks.chart import draw

        record, png = args.performance_chart
        draw(json.loads(record.read_text()), png, memory=results["memory"])
        print(f"chart: {png} (the run of record {record}, with this run's peak RSS)")
    return 0


def shapes_main(args: argparse.Namespace, results: dict[str, Any]) -> int:
    """`--memory --shapes`: benchmarks/memory.py on each named shape, into `results["shapes"]` by name."""
    from benchmarks.answers import VARIANTS
    from benchmarks.memory import memory_scenario, shapes_table
    from benchmarks.shapes import named, scaled_down

    chosen = [name.strip() for name in args.shapes.split(",") if name.strip()]
    for name in chosen:  # every name checked before the first cluster is generated
        named(name.split("@")[0])
        if "@" in name and name.split("@", 1)[1] not in VARIANTS:
            raise SystemExit(f"unknown answer variant in {name!r}: one of {', '.join(VARIANTS)}")
    results["shapes"] = {}
    results["shape_scale"] = args.shape_scale
    with tempfile.TemporaryDirectory(prefix="kube-rehash-bench-", dir=args.workdir) as tmp:
        for name in chosen:
            shape, _, variant = name.partition("@")
            results["shapes"][name] = memory_scenario(
                scaled_down(named(shape), args.shape_scale),
                Path(tmp),
                kube_rehash=[sys.executable, "-m", "reconcile"],
                change_fraction=args.change_fraction,
                first_at_defaults=args.memory_first_defaults != "none",
                answers=VARIANTS[variant] if variant else None,
            )
            write_results(results, args.out)
    print("\n".join(shapes_table(results["shapes"])))
    return 0


def real_and_simulated(args: argparse.Namespace, base: Shape, workdir: Path) -> dict[str, Any]:
    """The real control plane at `--real-scale` (benchmarks/real.py), then the simulator at the same shape
    with the same passes (qps 0, and the shipped defaults' first install), for a side-by-side."""
    from benchmarks.real import real_scenario, scaled

    repeat = 3
    real_dir = workdir / "real"
    real_dir.mkdir()
    server = real_scenario(
        args.real_scale, real_dir, base=base, change_fraction=args.change_fraction, repeat=repeat
    )
    shape = scaled(base, args.real_scale)
    print(f"[simulator {args.real_scale}x] the same shape")
    simulated = scenario(shape, workdir, change_fraction=args.change_fraction, shards=0, qps=0, repeat=repeat)
    defaults = defaults_scenario(
        shape,
        workdir,
        kube_rehash=KUBE_REHASH,
        naive=[sys.executable, "-m", "benchmarks.naive"],
        change_fraction=args.change_fraction,
    )
    return {
        "scale": args.real_scale,
        "repeat": repeat,
        "server": server,
        "simulator": simulated,
        "simulator_defaults": defaults,
    }


def write_results(results: dict[str, Any], path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(results, indent=1, sort_keys=True) + "\n")


if __name__ == "__main__":
    raise SystemExit(main())
