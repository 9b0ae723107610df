"""docs/performance.png: steady-state requests, response bytes and wall time against cluster size, and the
peak RSS of each pass against cluster size from the memory run; and docs/memory.png: that peak RSS alone
(`--memory --chart`), with an earlier run drawn dashed where one is given.

The only module that imports matplotlib (a benchmark-only dependency), and only when a chart is asked for.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from benchmarks.floor import LIST_FLOOR

STYLE = {
    "kube-rehash": {"color": "#1b7837", "marker": "o"},
    "kube-rehash-list": {"color": "#5aae61", "marker": "D", "linestyle": ":"},
    "kube-rehash-get": {"color": "#9970ab", "marker": "v", "linestyle": ":"},
    "naive": {"color": "#b2182b", "marker": "s"},
    "floor": {"color": "#4d4d4d", "marker": "^", "linestyle": "--"},
    LIST_FLOOR: {"color": "#878787", "marker": "x", "linestyle": "--"},
}
PANELS = (("requests", "requests", 1), ("bytes", "response MB", 1e6), ("wall_s", "wall time (s)", 1))


def draw(results: dict[str, Any], path: Path, *, memory: dict[str, Any] | None = None) -> None:
    """The steady pass's panels from the run of record `results`; with `memory` (the `memory` key of
    results-memory.json), a fourth panel: peak RSS of every pass at `qps: 0` against cluster size."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    scales = sorted(
        ((f, s) for f, s in results["scales"].items() if "steady" in s), key=lambda kv: int(kv[0])
    )
    sizes = [s["shape"]["workloads"] for _, s in scales]
    ticks = [f"{n:,}\n({f}x)" for n, (f, _) in zip(sizes, scales, strict=True)]
    count = len(PANELS) + (1 if memory else 0)
    fig, all_axes = plt.subplots(1, count, figsize=(4.4 * count, 4.4), constrained_layout=True)
    axes = list(all_axes)
    if memory:
        plot_memory(axes.pop(), memory)
    for ax, (key, label, unit) in zip(axes, PANELS, strict=True):
        for tool, style in STYLE.items():
            values = [s["steady"][tool][key] / unit for _, s in scales if tool in s["steady"]]
            if len(values) == len(sizes):  # a tool missing at some scale is left out, not drawn short
                ax.plot(sizes, values, label=tool, linewidth=2, **style)
        ax.set_title(f"steady-state pass: {label}")
        ax.set_xlabel("workloads in the cluster")
        ax.set_ylabel(label)
        ax.set_xticks(sizes, ticks)
        ax.set_ylim(bottom=0)
        ax.grid(alpha=0.3)
    fig.supxlabel(
        "opted-in workloads, namespaces, ConfigMaps and Secrets (Helm releases included) scale alike",
        fontsize=9,
    )
    axes[0].legend()
    fig.suptitle(
        "kube-rehash vs a naive CronJob script vs the floor (metadata-only requests, no logic); "
        f"{results['machine'].get('cpus')} CPUs, simulator in its own process",
        fontsize=10,
    )
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)


PASSES = (
    ("first", "first (adopting) pass", "o", "#2166ac"),
    ("steady", "steady pass", "s", "#1b7837"),
    ("change", "change pass", "^", "#e08214"),
)
LIMIT_MIB = 128.0
"""The shipped pod's memory limit (128Mi): the benchmark reports RSS in MiB (`VmHWM` KiB / 1024)."""


def plot_memory(ax: Any, memory: dict[str, Any], *, before: dict[str, Any] | None = None) -> None:
    """Peak RSS (VmHWM) of the first, steady and change passes at `qps: 0` against the cluster's workloads,
    with the shipped limit; `before`, when given, is an earlier run drawn dashed for comparison."""
    for run, style, suffix, alpha in ((memory, "-", "", 1.0), (before or {}, "--", " (before)", 0.5)):
        scales = sorted(run.items(), key=lambda kv: int(kv[0]))
        sizes = [s["shape"]["workloads"] for _, s in scales]
        for key, label, marker, color in PASSES:
            values = [s["qps0"][key]["rss_mb"] for _, s in scales if key in s.get("qps0", {})]
            if values and len(values) == len(sizes):
                ax.plot(
                    sizes, values, style, marker=marker, color=color, alpha=alpha, label=label + suffix, lw=2
                )
    ax.axhline(LIMIT_MIB, color="#b2182b", linewidth=1, label="shipped limit (128Mi)")
    scales = sorted(memory.items(), key=lambda kv: int(kv[0]))
    sizes = [s["shape"]["workloads"] for _, s in scales]
    # Short labels: 1x and 2x sit close together on an axis that reaches 10x.
    ax.set_xticks(sizes, [f"{n // 1000}k\n({f}x)" for n, (f, _) in zip(sizes, scales, strict=True)])
    ax.set_ylabel("peak RSS (MiB, VmHWM)")
    ax.set_ylim(bottom=0)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    ax.set_title("every pass: peak RSS (qps: 0)")
    ax.set_xlabel("workloads in the cluster")


def draw_memory(memory: dict[str, Any], path: Path, *, before: dict[str, Any] | None = None) -> None:
    """docs/memory.png: `plot_memory` alone."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(8, 4.6), constrained_layout=True)
    plot_memory(ax, memory, before=before)
    ax.set_xlabel("workloads in the cluster (a third opted in; ConfigMaps and Secrets scale alike)")
    ax.set_title("kube-rehash peak memory per pass against cluster size (qps: 0)", fontsize=10)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)
