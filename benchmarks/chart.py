"""docs/performance.png: steady-state requests, response bytes and wall time against cluster size.

The only module that imports matplotlib (a benchmark-only dependency), and only when a chart is asked for.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

STYLE = {
    "kube-rehash": {"color": "#1b7837", "marker": "o"},
    "kube-rehash-list": {"color": "#5aae61", "marker": "D", "linestyle": ":"},
    "kube-rehash-get": {"color": "#9970ab", "marker": "v", "linestyle": ":"},
    "naive": {"color": "#b2182b", "marker": "s"},
    "floor": {"color": "#4d4d4d", "marker": "^", "linestyle": "--"},
}
PANELS = (("requests", "requests", 1), ("bytes", "response MB", 1e6), ("wall_s", "wall time (s)", 1))


def draw(results: dict[str, Any], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    scales = sorted(
        ((f, s) for f, s in results["scales"].items() if "steady" in s), key=lambda kv: int(kv[0])
    )
    sizes = [s["shape"]["workloads"] for _, s in scales]
    ticks = [f"{n:,}\n({f}x)" for n, (f, _) in zip(sizes, scales, strict=True)]
    fig, axes = plt.subplots(1, 3, figsize=(13, 4.4), constrained_layout=True)
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
