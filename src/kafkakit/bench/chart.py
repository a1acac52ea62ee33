"""The throughput chart: median MB/s per producer and consumer case, min–max as error bars."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from kafkakit.bench.plan import Case
from kafkakit.bench.stats import Summary


def write_chart(cases: Sequence[Case], summaries: Mapping[str, Mapping[str, Summary]], path: Path) -> Path:
    # Imported here so that the rest of the harness (and its tests) runs without matplotlib.
    import matplotlib

    matplotlib.use("Agg")  # no display in the lab or CI
    import matplotlib.pyplot as plt

    panels = [
        (tool, [(c.name, summaries[c.name]["mb_per_sec"]) for c in cases if c.tool == tool and c.name in summaries])
        for tool in ("producer", "consumer")
    ]
    panels = [(tool, rows) for tool, rows in panels if rows]
    heights = [max(1.5, 0.35 * len(rows) + 0.8) for _, rows in panels] or [1.5]
    fig, axes = plt.subplots(len(heights), 1, figsize=(9, sum(heights) + 0.6), height_ratios=heights, squeeze=False)
    if not panels:
        axes[0][0].text(0.5, 0.5, "no successful runs", ha="center", va="center")
        axes[0][0].set_axis_off()
    for ax, (tool, rows) in zip(axes[:, 0], panels, strict=False):
        names = [name for name, _ in rows]
        medians = [s.median for _, s in rows]
        # Asymmetric error bars from the median down to the minimum and up to the maximum.
        spread = [[s.median - s.minimum for _, s in rows], [s.maximum - s.median for _, s in rows]]
        ax.barh(names, medians, xerr=spread, capsize=3, color="#4c72b0" if tool == "producer" else "#55a868")
        ax.invert_yaxis()  # plan order, top to bottom
        ax.set_xlabel("MB/s (median, min–max)")
        ax.set_title(f"{tool} throughput")
        ax.tick_params(axis="y", labelsize=8)
        ax.grid(axis="x", alpha=0.3)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path
