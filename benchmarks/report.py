"""Turn the benchmark's results into docs/run-of-record.md: the tables and target checks that
docs/performance.md quotes."""

from __future__ import annotations

from typing import Any

from benchmarks.after_change import after_table
from benchmarks.defaults import defaults_checks, defaults_table
from benchmarks.floor import LIST_FLOOR

RSS_LIMIT_MB = 120.0
FLAT_RSS_MIB = 64.0  # target: peak RSS of every pass at 10x
FIRST_INSTALL_REQUESTS = 12_500  # target: the 10x first install at `qps: 0`, in one pass
MISSING = "n/a"  # a cell the results do not have


def _mb(n: float) -> str:
    return f"{n / 1e6:.2f} MB"


def _count(r: dict[str, Any], key: str) -> str:
    """A counter of a row, or MISSING for results written before the counter existed."""
    return str(r[key]) if key in r else MISSING


def table(rows: dict[str, dict[str, Any]]) -> list[str]:
    lines = [
        "| tool | wall (s) | requests | response bytes | content GETs | metadata GETs | workload GETs "
        "| lists (metadata-only) | writes | peak RSS (MB) |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for name, r in rows.items():
        lines.append(
            f"| {name} | {r['wall_s']:.2f} | {r['requests']} | {_mb(r['bytes'])} | {r['content_gets']} | "
            f"{r['metadata_gets']} | {_count(r, 'workload_gets')} | "
            f"{r['lists']} ({_count(r, 'metadata_lists')}) | {r['writes']} | {r['rss_mb']:.0f} |"
        )
    return lines


def scaling(results: dict[str, Any]) -> list[str]:
    """One row per measured scale and tool: the cluster's shape, then the steady and change passes."""
    lines = [
        "| scale | workloads | opted in | ConfigMaps | Secrets | tool "
        "| steady wall (s) | steady requests | steady bytes | steady RSS (MB) "
        "| change wall (s) | change requests | change bytes | change RSS (MB) |",
        "|---:|---:|---:|---:|---:|---|" + "---:|" * 8,
    ]
    for factor, scale in sorted(results["scales"].items(), key=lambda kv: int(kv[0])):
        shape = scale["shape"]
        secrets = shape["secrets"] * shape.get("unrelated_factor", 1)
        head = (
            f"| {factor}x | {shape['workloads']} | {shape['opted_in']} | {shape['configmaps']} | {secrets} "
        )
        tools = dict.fromkeys([*scale.get("steady", {}), *scale.get("change", {})])  # ordered, once each
        for tool in tools:
            cells: list[str] = []
            for phase in ("steady", "change"):
                r = scale.get(phase, {}).get(tool)
                if r is None:
                    cells.extend([MISSING] * 4)
                else:
                    cells.extend(
                        [f"{r['wall_s']:.2f}", str(r["requests"]), _mb(r["bytes"]), f"{r['rss_mb']:.0f}"]
                    )
            lines.append(head + f"| {tool} | " + " | ".join(cells) + " |")
    return lines


def checks(results: dict[str, Any]) -> list[tuple[str, bool, str]]:
    """(target, met, measured) for every target that the results can decide."""
    out: list[tuple[str, bool, str]] = []
    one = results["scales"].get("1")
    if one and "steady" in one:
        s = one["steady"]
        tool, floor, naive = s["kube-rehash"], s.get("floor"), s.get("naive")
        if floor:
            ratio = tool["bytes"] / floor["bytes"]
            out.append(("steady bytes ≤ 1.1 x floor", ratio <= 1.1, f"{ratio:.3f} x floor"))
            limit = 1.5 * floor["wall_s"] + 0.5
            out.append(
                (
                    "steady wall ≤ 1.5 x floor + 0.5 s",
                    tool["wall_s"] <= limit,
                    f"{tool['wall_s']:.2f} s vs {limit:.2f} s",
                )
            )
        if naive:
            b = naive["bytes"] / tool["bytes"]
            w = naive["wall_s"] / tool["wall_s"]
            out.append(("≥ 9x fewer bytes than naive", b >= 9, f"{b:.1f}x"))
            out.append(("≥ 5x less wall than naive", w >= 5, f"{w:.1f}x"))
        out.append(
            (
                "steady: zero content GETs, zero writes",
                tool["content_gets"] == 0 and tool["writes"] == 0,
                f"{tool['content_gets']} content GETs, {tool['writes']} writes",
            )
        )
        out.append(
            (
                f"peak RSS ≤ {RSS_LIMIT_MB:.0f} MB (1x)",
                tool["rss_mb"] <= RSS_LIMIT_MB,
                f"{tool['rss_mb']:.0f} MB",
            )
        )
    if one and "change" in one:
        c = one["change"]["kube-rehash"]
        met = c["content_gets"] == one["changed_sources"] == c["configs_fetched"] and c.get(
            "content_gets_are_changed_sources", False
        )
        out.append(
            (
                "change: content only for changed sources",
                met,
                f"{one['changed_sources']} changed, {c['content_gets']} content GETs, "
                f"configs_fetched {c['configs_fetched']}",
            )
        )
    unrelated = results.get("unrelated_secrets")
    if one and unrelated and "steady" in unrelated:
        base = one["steady"]["kube-rehash"]["rss_mb"]
        grown = unrelated["steady"]["kube-rehash"]["rss_mb"]
        out.append(
            (
                f"RSS with {unrelated['factor']}x Secrets ≤ 1.5 x 1x",
                grown <= 1.5 * base,
                f"{grown:.0f} MB vs {base:.0f} MB",
            )
        )
    if one and one.get("shards"):
        out.append(shard_requests_check(one, ""))
        out.append(shard_workloads_check(one, ""))
    skewed = results.get("skewed_shards")
    if skewed and skewed.get("shards"):
        # Requests are no yardstick here: a shard holding many workloads of the big namespace lists its
        # sources (the fetch planner's choice beyond 40 names) where the unsharded `get` pass reads by name.
        label = f"skewed ({skewed['shape']['skew']:.0%} in one namespace): "
        out.append(shard_workloads_check(skewed, label))
    by_scale = results.get("defaults_scales") or (
        {"1": results["defaults"]} if results.get("defaults") else {}
    )
    for factor, defaults in by_scale.items():
        same = results["scales"].get(factor) or {}
        floor = same.get("steady", {}).get("floor") if defaults["shape"] == same.get("shape") else None
        out.extend(defaults_checks(defaults, floor, int(factor)))
    for objects, scales in (("thin", results["scales"]), ("realistic", results.get("realistic") or {})):
        for factor, scale in sorted(scales.items(), key=lambda kv: int(kv[0])):
            out.extend(scale_checks(scale, f"{factor}x {objects}", int(factor)))
    return out


def scale_checks(scale: dict[str, Any], label: str, factor: int) -> list[tuple[str, bool, str]]:
    """The performance targets at one scale and shape, at `qps: 0`: the steady pass against the list
    floor, the change pass against the list floor plus its unavoidable writes and reads, flat memory, the
    10x first install."""
    out: list[tuple[str, bool, str]] = []
    steady = scale.get("steady") or {}
    tool, floor = steady.get("kube-rehash"), steady.get(LIST_FLOOR)
    if tool and floor:
        r, b = tool["requests"] / floor["requests"], tool["bytes"] / floor["bytes"]
        limit = 1.5 * floor["wall_s"] + 0.3
        out.append(
            (
                f"{label}: steady requests ≤ 1.1 x the list floor's",
                r <= 1.1,
                f"{tool['requests']} vs {floor['requests']} ({r:.3f} x)",
            )
        )
        out.append(
            (
                f"{label}: steady bytes ≤ 1.0 x the list floor's",
                b <= 1.0,
                f"{tool['bytes']:,} vs {floor['bytes']:,} ({b:.4f} x)",
            )
        )
        out.append(
            (
                f"{label}: steady wall ≤ 1.5 x the list floor's + 0.3 s",
                tool["wall_s"] <= limit,
                f"{tool['wall_s']:.2f} s vs {limit:.2f} s (list floor {floor['wall_s']:.2f} s)",
            )
        )
    change = (scale.get("change") or {}).get("kube-rehash")
    if change and floor and "summary" in change:
        # What no pass after a change avoids: the lists, each changed source's content, and per rollout
        # one patch and one Event.
        rollouts, changed = change["summary"].get("rollout", 0), scale.get("changed_sources", 0)
        bound = floor["requests"] + changed + 2 * rollouts
        out.append(
            (
                f"{label}: change requests ≤ the list floor's + changed sources + 2 x rollouts",
                change["requests"] <= bound,
                f"{change['requests']} vs {floor['requests']} + {changed} + 2 x {rollouts} = {bound}",
            )
        )
    passes = [
        (name, row)
        for name, row in (
            ("first", (scale.get("first") or {}).get("kube-rehash")),
            ("steady", tool),
            ("change", change),
        )
        if row
    ]
    if factor == 10 and passes:
        worst = max(row["rss_mb"] for _, row in passes)
        shown = ", ".join(f"{name} {row['rss_mb']:.1f}" for name, row in passes)
        out.append(
            (f"{label}: peak RSS of every pass ≤ {FLAT_RSS_MIB:.0f} MiB", worst <= FLAT_RSS_MIB, shown)
        )
    first = (scale.get("first") or {}).get("kube-rehash")
    if factor == 10 and first and "summary" in first:
        adopted = first["summary"].get("adopt", 0)
        out.append(
            (
                f"{label}: first install in one pass, ≤ {FIRST_INSTALL_REQUESTS:,} requests",
                first["requests"] <= FIRST_INSTALL_REQUESTS and adopted == scale["shape"]["opted_in"],
                f"{first['requests']:,} requests, {adopted:,} of {scale['shape']['opted_in']:,} adopted, "
                f"{first['wall_s']:.1f} s",
            )
        )
    return out


def shapes_table(results: dict[str, Any]) -> list[str]:
    """kube-rehash's passes (and the list floor's steady one) on thin and realistic objects, per scale run
    on both: what real objects' metadata costs in bytes, CPU-bound wall and peak RSS."""
    lines = [
        "| scale | pass | tool | thin: requests | realistic: requests | thin: bytes | realistic: bytes "
        "| thin: wall (s) | realistic: wall (s) | thin: peak RSS (MiB) | realistic: peak RSS (MiB) |",
        "|---:|---|---|" + "---:|" * 8,
    ]
    realistic = results.get("realistic") or {}
    for factor in sorted(realistic, key=int):
        thin, real = results["scales"].get(factor) or {}, realistic[factor]
        for phase, tool in (
            ("first", "kube-rehash"),
            ("steady", "kube-rehash"),
            ("steady", LIST_FLOOR),
            ("change", "kube-rehash"),
        ):
            a, b = (thin.get(phase) or {}).get(tool), (real.get(phase) or {}).get(tool)
            if not b:
                continue
            cells = []
            for key, shown in (
                ("requests", str),
                ("bytes", _mb),
                ("wall_s", lambda v: f"{v:.2f}"),
                ("rss_mb", lambda v: f"{v:.1f}"),
            ):
                cells += [shown(a[key]) if a else MISSING, shown(b[key])]
            lines.append(f"| {factor}x | {phase} | {tool} | " + " | ".join(cells) + " |")
    return lines


def shard_requests_check(scale: dict[str, Any], label: str) -> tuple[str, bool, str]:
    # A shard reads its sources by name (it never lists cluster-wide), so its share is measured
    # against the unsharded pass that does the same: `fetch: get`.
    unsharded = scale["steady"].get("kube-rehash-get") or scale["steady"]["kube-rehash"]
    quarter = unsharded["requests"] / len(scale["shards"])
    worst = max(abs(s["requests"] - quarter) / quarter for s in scale["shards"])
    counts = ", ".join(str(s["requests"]) for s in scale["shards"])
    return (
        f"{label}each shard within ±15% of 1/N of the unsharded {unsharded['name']} requests",
        worst <= 0.15,
        f"[{counts}] vs {quarter:.0f} (worst {worst:+.0%})",
    )


def shard_workloads_check(scale: dict[str, Any], label: str) -> tuple[str, bool, str]:
    sizes = [s["summary"]["workloads"] for s in scale["shards"]]
    share = sum(sizes) / len(sizes)
    worst = max(abs(n - share) / share for n in sizes) if share else 0.0
    counts = ", ".join(map(str, sizes))
    return (
        f"{label}each shard's opted-in workloads within ±15% of 1/N",
        worst <= 0.15,
        f"[{counts}] vs {share:.0f} (worst {worst:+.0%})",
    )


def shard_table(scale: dict[str, Any]) -> list[str]:
    """Per shard: opted-in workloads (and what whole namespaces per shard gave), namespaces whose
    workloads it handled (it reads their sources), requests, bytes, wall; then the unsharded passes."""
    before = scale.get("whole_namespace_sizes") or [None] * len(scale["shards"])
    lines = [
        "| shard | workloads | whole namespaces (before) | namespaces | requests | response bytes "
        "| wall (s) |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    count = len(scale["shards"])
    for index, (r, old) in enumerate(zip(scale["shards"], before, strict=True)):
        lines.append(
            f"| {index}/{count} | {r['summary']['workloads']} | {MISSING if old is None else old} | "
            f"{r.get('namespaces', MISSING)} | {r['requests']} | {_mb(r['bytes'])} | {r['wall_s']:.2f} |"
        )
    for name in ("kube-rehash", "kube-rehash-get"):
        unsharded = scale["steady"].get(name)
        if unsharded:
            lines.append(
                f"| unsharded ({name}) | {unsharded['summary']['workloads']} | | "
                f"{scale['shape']['namespaces']} | {unsharded['requests']} | {_mb(unsharded['bytes'])} | "
                f"{unsharded['wall_s']:.2f} |"
            )
    if "shared_namespaces" in scale:
        lines.append("")
        lines.append(f"Namespaces read by more than one shard: {scale['shared_namespaces']}.")
    return lines


def trade_offs(results: dict[str, Any]) -> list[str]:
    """Each way of reading the sources against naive, at 1x: shown, not targets of their own."""
    one = results["scales"].get("1") or {}
    steady = one.get("steady") or {}
    naive = steady.get("naive")
    if not naive:
        return []
    lines = []
    for name, row in steady.items():
        if name.startswith("kube-rehash"):
            b, w = naive["bytes"] / row["bytes"], naive["wall_s"] / row["wall_s"]
            lines.append(
                f"- {name}: {row['requests']} requests, {b:.1f}x fewer bytes, {w:.1f}x less wall than naive"
            )
    return lines


def real_table(real: dict[str, Any]) -> list[str]:
    """The real kube-apiserver beside the simulator, same shape and passes (benchmarks/real.py)."""
    server, sim, sim_defaults = real["server"], real["simulator"], real["simulator_defaults"]
    lines = [
        "| pass | tool | real: wall (s) | real: requests | real: writes "
        "| simulator: wall (s) | simulator: requests | simulator: writes |",
        "|---|---|---:|---:|---:|---:|---:|---:|",
    ]
    rows: list[tuple[str, str, dict[str, Any] | None, dict[str, Any] | None]] = []
    for tool in ("kube-rehash", "naive"):
        rows.append(("first (adoption), qps 0", tool, server["first"].get(tool), sim["first"].get(tool)))
    if "defaults" in server:
        first = sim_defaults["first"][0] if sim_defaults.get("first") else None
        rows.append(("first, shipped defaults", "kube-rehash", server["defaults"]["first"], first))
        rows.append(
            (
                "steady, shipped defaults",
                "kube-rehash",
                server["defaults"]["steady"],
                sim_defaults.get("steady"),
            )
        )
    repeat = real.get("repeat", 1)
    for phase, label in (
        ("steady", f"steady (median of {repeat})"),
        ("change", "after 5% of the sources changed"),
    ):
        for tool in server[phase]:
            rows.append((label, tool, server[phase][tool], sim[phase].get(tool)))
    for label, tool, r, s in rows:
        cells = [
            f"{x['wall_s']:.2f} | {x['requests']} | {x['writes']}"
            if x
            else f"{MISSING} | {MISSING} | {MISSING}"
            for x in (r, s)
        ]
        lines.append(f"| {label} | {tool} | {cells[0]} | {cells[1]} |")
    return lines


def after_sections(results: dict[str, Any]) -> list[str]:
    """The change pass and the passes after it until every rollout completed, wherever they were run."""
    found: list[tuple[str, dict[str, Any] | None, dict[str, Any]]] = []
    one = results["scales"].get("1") or {}
    if "after_change" in one:
        found.append(("simulator 1x, qps 0", (one["change"]["kube-rehash"]).get("pass"), one["after_change"]))
    defaults = results.get("defaults") or {}
    if "after_change" in defaults:
        found.append(
            ("simulator 1x, shipped defaults", defaults["change"].get("pass"), defaults["after_change"])
        )
    real = results.get("real") or {}
    server = real.get("server") or {}
    for key, label in (("after_change", "qps 0"), ("defaults_after_change", "shipped defaults")):
        if key in server:
            found.append((f"real kube-apiserver {real['scale']}x, {label}", None, server[key]))
    lines: list[str] = []
    for label, change, after in found:
        lines.append(f"## after a change until every rollout completed: {label}")
        lines.extend(after_table(change, after))
        lines.append("")
    return lines


def summarize(results: dict[str, Any]) -> str:
    lines = [f"command: {results['command']}", f"machine: {results['machine']}", ""]
    for factor, scale in results["scales"].items():
        for phase in ("steady", "change"):
            if phase in scale:
                lines.append(f"## {factor}x — {phase}")
                lines.extend(table(scale[phase]))
                lines.append("")
    if results["scales"]:
        lines.append("## scaling (" + ", ".join(f"{f}x" for f in sorted(results["scales"], key=int)) + ")")
        lines.extend(scaling(results))
        lines.append("")
    for factor, scale in sorted((results.get("realistic") or {}).items(), key=lambda kv: int(kv[0])):
        for phase in ("steady", "change"):
            if phase in scale:
                lines.append(f"## {factor}x, realistic objects — {phase}")
                lines.extend(table(scale[phase]))
                lines.append("")
    if results.get("realistic"):
        lines.append("## thin against realistic objects, same run")
        lines.extend(shapes_table(results))
        lines.append("")
    if "unrelated_secrets" in results:
        lines.append(f"## 1x with {results['unrelated_secrets']['factor']}x Secrets — steady")
        lines.extend(table(results["unrelated_secrets"]["steady"]))
        lines.append("")
    one = results["scales"].get("1") or {}
    if one.get("shards"):
        lines.append(f"## shards, 1x ({len(one['shards'])}) — steady")
        lines.extend(shard_table(one))
        lines.append("")
    skewed = results.get("skewed_shards")
    if skewed and skewed.get("shards"):
        share = skewed["shape"]["skew"]
        lines.append(f"## shards, 1x with {share:.0%} of the workloads in one namespace — steady")
        lines.extend(shard_table(skewed))
        lines.append("")
    for factor, defaults in (results.get("defaults_scales") or {"1": results.get("defaults")}).items():
        if not defaults:
            continue
        workloads = defaults["shape"]["workloads"]
        lines.append(f"## shipped defaults (qps 20, timeout 240), {factor}x: {workloads} workloads")
        lines.extend(defaults_table(defaults))
        lines.append("")
    real = results.get("real")
    if real:
        lines.append(f"## real kube-apiserver ({real['server']['server']}) vs simulator, {real['scale']}x")
        lines.extend(real_table(real))
        lines.append("")
    lines.extend(after_sections(results))
    if trade_offs(results):
        lines.append("## ways of reading the sources (1x steady)")
        lines.extend(trade_offs(results))
        lines.append("")
    lines.append("## targets")
    for name, met, measured in checks(results):
        lines.append(f"- [{'x' if met else ' '}] {name}: {measured}")
    return "\n".join(lines)


def record(results: dict[str, Any], memories: dict[str, dict[str, Any]]) -> str:
    """docs/run-of-record.md: the run's command, machine, tables and targets, then each memory run's."""
    lines = [
        "# The run of record",
        "",
        "Written by `make bench` from its results (`python -m benchmarks.report`). What these figures mean "
        "for sizing a deployment is in [performance.md](performance.md) and "
        "[memory-profile.md](memory-profile.md).",
        "",
        summarize(results).replace("\n## ", "\n### "),
    ]
    from benchmarks.memory import memory_table, shapes_table

    for path, memory in memories.items():
        lines += ["", f"### peak RSS (MiB): `{memory['command']}` ({path})", ""]
        if "shapes" in memory:  # `--memory --shapes`: one row per named shape (benchmarks/shapes.py)
            lines += shapes_table(memory["shapes"])
        else:
            lines += memory_table(memory["memory"])
    lines += ["", CONTRIBUTORS]
    return "\n".join(lines) + "\n"


CONTRIBUTORS = (
    "For contributors: the runs and experiments behind these figures are in "
    "[engineering/performance-history.md](engineering/performance-history.md)."
)
"""The run-of-record page's last line: a user page links into docs/engineering only from there."""


def main(argv: list[str] | None = None) -> int:
    import argparse
    import json
    from pathlib import Path

    parser = argparse.ArgumentParser(prog="python -m benchmarks.report", description=record.__doc__)
    parser.add_argument("results", type=Path, help="the run of record's JSON (benchmarks/results.json)")
    parser.add_argument("memory", type=Path, nargs="*", help="memory runs' JSON (results-memory*.json)")
    args = parser.parse_args(argv)
    memories = {str(p): json.loads(p.read_text()) for p in args.memory}
    print(record(json.loads(args.results.read_text()), memories), end="")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
