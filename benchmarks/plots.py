"""PNG plots of one benchmark run (matplotlib, the optional extra ``plots``).

- ``cactus.png``: per engine, its solved instances sorted by time; the curve
  reaching furthest right solves most, the lowest is fastest.
- ``time_vs_size.png``: one panel per family, time against the family's size
  parameter per engine (solid: deployable instances, dashed: not deployable); unsolved jobs (not skipped ones) are drawn as crosses
  at their time limit.
- ``bdd_nodes_vs_ic3_frames.png``: per instance, the BDD engine's peak node
  count against the number of IC3 frames (what is hard for one engine against
  what is hard for the other), coloured by family.

``plot_all`` returns the files it wrote, or a note when matplotlib is missing.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Sequence

from symreach.bench.runner import JobResult
from symreach.bench.tables import engines_in

MARKERS = "osD^v<>phX*"


def _pyplot():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def plot_all(results: Sequence[JobResult], out: Path, timeout_s: float) -> tuple[list[Path], str]:
    try:
        plt = _pyplot()
    except ImportError:
        return [], "matplotlib is not installed (pip install 'symreach[plots]'): no plots"
    out.mkdir(parents=True, exist_ok=True)
    files = [cactus(plt, results, out / "cactus.png", timeout_s),
             time_vs_size(plt, results, out / "time_vs_size.png", timeout_s),
             nodes_vs_frames(plt, results, out / "bdd_nodes_vs_ic3_frames.png")]
    return [f for f in files if f is not None], ""


def _style(engines: Sequence[str]) -> dict[str, tuple[str, str]]:
    colors = [f"C{i}" for i in range(10)]
    return {e: (colors[i % 10], MARKERS[i % len(MARKERS)]) for i, e in enumerate(engines)}


def cactus(plt, results: Sequence[JobResult], path: Path, timeout_s: float) -> Path:
    engines = engines_in(results)
    style = _style(engines)
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for engine in engines:
        times = sorted(max(r.time_s or 0.0, 1e-3) for r in results if r.engine == engine and r.solved)
        if not times:
            continue
        color, marker = style[engine]
        ax.plot(range(1, len(times) + 1), times, marker=marker, markersize=3, color=color,
                label=f"{engine} ({len(times)})")
    total = len({r.instance for r in results})
    ax.set_yscale("log")
    for limit in sorted({r.limit_s for r in results if r.limit_s}) or [timeout_s]:
        ax.axhline(limit, color="grey", linestyle=":", linewidth=1)
    ax.set_xlabel(f"instances solved (of {total})")
    ax.set_ylabel("time per instance (s, log)")
    ax.set_title("Cactus plot: solved instances vs time")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def time_vs_size(plt, results: Sequence[JobResult], path: Path, timeout_s: float) -> Path:
    families = list(dict.fromkeys(r.family for r in results))
    engines = engines_in(results)
    style = _style(engines)
    cols = min(3, len(families)) or 1
    rows = math.ceil(len(families) / cols) or 1
    fig, axes = plt.subplots(rows, cols, figsize=(4.3 * cols, 3.3 * rows), squeeze=False)
    for ax, family in zip(axes.flat, families):
        for engine in engines:
            rs = [r for r in results if r.family == family and r.engine == engine]
            if not rs:
                continue
            color, marker = style[engine]
            # one point per size and polarity: the slowest solved instance
            for expected, line in (("deployable", "-"), ("not-deployable", "--"), (None, "-")):
                by_size: dict[float, float] = {}
                for r in rs:
                    if r.solved and r.expected == expected:
                        by_size[r.size] = max(by_size.get(r.size, 0.0), max(r.time_s or 0.0, 1e-3))
                xs = sorted(by_size)
                if xs:
                    ax.plot(xs, [by_size[x] for x in xs], marker=marker, markersize=4, color=color,
                            linestyle=line, label=engine)
            fails = sorted({(r.size, r.limit_s or timeout_s) for r in rs
                            if not r.solved and r.status != "skipped"})
            if fails:
                ax.scatter([f[0] for f in fails], [f[1] for f in fails], marker="x", color=color,
                           s=25)
        ax.set_yscale("log")
        if family == "mcc":
            ax.set_xscale("log")
        ax.set_title(family, fontsize=10)
        ax.set_xlabel({"pyramid": "height h", "tree": "height h", "mcc": "state bits",
                       "cluster": "nodes", "hard": "nodes"}.get(family, "n"), fontsize=8)
        ax.set_ylabel("s (log); x = unsolved", fontsize=8)
        ax.grid(True, which="both", alpha=0.3)
        ax.tick_params(labelsize=7)
    for ax in list(axes.flat)[len(families):]:
        ax.axis("off")
    handles, labels = [], []
    for ax in axes.flat:
        for h, lab in zip(*ax.get_legend_handles_labels()):
            if lab not in labels:
                handles.append(h)
                labels.append(lab)
    if handles:
        fig.legend(handles, labels, loc="lower right", fontsize=8)
    fig.suptitle("Time vs size (slowest solved instance per size; solid: deployable, "
                 "dashed: not deployable)", fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def nodes_vs_frames(plt, results: Sequence[JobResult], path: Path) -> Path:
    bdd = {r.instance: r for r in results if r.engine == "bdd" and r.stats.get("peak_nodes")}
    ic3 = {r.instance: r for r in results if r.engine == "ic3" and r.stats.get("frames")}
    both = [i for i in bdd if i in ic3]
    fig, ax = plt.subplots(figsize=(6.5, 4.5))
    families = list(dict.fromkeys(bdd[i].family for i in both))
    for k, family in enumerate(families):
        pts = [(bdd[i].stats["peak_nodes"], ic3[i].stats["frames"], bdd[i].solved and ic3[i].solved)
               for i in both if bdd[i].family == family]
        ax.scatter([p[0] for p in pts], [p[1] for p in pts], color=f"C{k % 10}",
                   marker=MARKERS[k % len(MARKERS)], s=22, label=family, alpha=0.8)
    ax.set_xscale("log")
    ax.set_xlabel("BDD peak nodes (log)")
    ax.set_ylabel("IC3 frames")
    ax.set_title(f"BDD peak nodes vs IC3 frames ({len(both)} instances)")
    ax.grid(True, which="both", alpha=0.3)
    if families:
        ax.legend(fontsize=8)
    else:
        ax.text(0.5, 0.5, "no instance has both statistics", ha="center", transform=ax.transAxes)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path
