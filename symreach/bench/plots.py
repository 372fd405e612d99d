"""Plots of one comparison, each with its data beside it (matplotlib: the ``plots`` extra).

- ``cactus.png``: per engine, its decided instances sorted by time; the curve
  reaching furthest right decides most, the lowest is fastest.
- ``scatter-A-vs-B.png`` for every engine pair: one point per instance, A's
  time against B's on log-log axes, the diagonal, and the instances an engine
  did not decide on the border (at the largest limit); above the diagonal A is
  faster (A's time is the x axis).
- ``time_vs_size.png``: per family, time against the family's size per engine
  (solid: deployable, dashed: not deployable; crosses: not decided, at the limit).

Every PNG is drawn from a dict that is also written as ``NAME.json`` beside it:
what a plot shows can be read (and tested) without looking at the picture.
The counts in those dicts come from ``symreach.bench.analysis``, as the tables'.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Optional, Sequence

from symreach.bench.analysis import engines_in, limit_of, pair_stats, seconds
from symreach.bench.runner import JobResult

MARKERS = "osD^v<>phX*"
SIZE_AXIS = {"pyramid": "height h", "tree": "height h", "mcc": "state bits", "cluster": "nodes",
             "hard": "nodes"}


def pyplot():
    """matplotlib's pyplot on the Agg backend; ImportError without the ``plots`` extra."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


# ---------------------------------------------------------------------------
# the data of each plot
# ---------------------------------------------------------------------------

def cactus_data(results: Sequence[JobResult], metric: str = "time_s") -> dict:
    engines = engines_in(results)
    return {"plot": "cactus", "metric": metric, "instances": len({r.instance for r in results}),
            "limits": sorted({limit_of(r, metric) for r in results if limit_of(r, metric)}),
            "engines": {e: {"solved": len(ts), "times": ts} for e in engines
                        for ts in [sorted(round(seconds(r, metric), 4) for r in results
                                          if r.engine == e and r.solved)]}}


def scatter_data(results: Sequence[JobResult], a: str, b: str, metric: str = "time_s") -> dict:
    ra = {r.instance: r for r in results if r.engine == a}
    rb = {r.instance: r for r in results if r.engine == b}
    common = [i for i in ra if i in rb]
    border = max([limit_of(r, metric) for i in common for r in (ra[i], rb[i])] + [1.0])
    points = [{"instance": i, "family": ra[i].family,
               "x": round(seconds(ra[i], metric), 4) if ra[i].solved else border,
               "y": round(seconds(rb[i], metric), 4) if rb[i].solved else border,
               "x_solved": ra[i].solved, "y_solved": rb[i].solved} for i in common]
    stats = pair_stats(results, a, b, metric)
    return {"plot": "scatter", "metric": metric, "x_engine": a, "y_engine": b, "border": border,
            "points": points,
            "counts": {"both": stats.both, "x_only": stats.a_only, "y_only": stats.b_only,
                       "neither": stats.neither, "x_faster": stats.a_faster},
            "geo_mean_x_over_y": stats.geo_mean}


def time_vs_size_data(results: Sequence[JobResult], metric: str = "time_s") -> dict:
    families: dict = {}
    for r in results:
        per = families.setdefault(r.family, {}).setdefault(r.engine, {"solved": [], "unsolved": []})
        if r.solved:
            per["solved"].append([r.size, round(seconds(r, metric), 4), r.expected])
        elif r.status != "skipped":
            per["unsolved"].append([r.size, limit_of(r, metric)])
    return {"plot": "time_vs_size", "metric": metric, "families": families}


# ---------------------------------------------------------------------------
# drawing
# ---------------------------------------------------------------------------

def _style(engines: Sequence[str]) -> dict[str, tuple[str, str]]:
    return {e: (f"C{i % 10}", MARKERS[i % len(MARKERS)]) for i, e in enumerate(engines)}


def _label(metric: str) -> str:
    return "CPU s" if metric == "cpu_s" else "s"


def _save(plt, fig, path: Path, data: dict) -> Path:
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    path.with_suffix(".json").write_text(json.dumps(data, indent=1) + "\n")
    return path


def draw_cactus(plt, data: dict, path: Path) -> Path:
    engines = list(data["engines"])
    style = _style(engines)
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for engine, d in data["engines"].items():
        if d["times"]:
            color, marker = style[engine]
            ax.plot(range(1, len(d["times"]) + 1), d["times"], marker=marker, markersize=3, color=color,
                    label=f"{engine} ({d['solved']})")
    ax.set_yscale("log")
    for limit in data["limits"]:
        ax.axhline(limit, color="grey", linestyle=":", linewidth=1)
    ax.set_xlabel(f"instances decided (of {data['instances']})")
    ax.set_ylabel(f"time per instance ({_label(data['metric'])}, log)")
    ax.set_title("Cactus plot: decided instances vs time")
    ax.grid(True, which="both", alpha=0.3)
    if any(d["times"] for d in data["engines"].values()):
        ax.legend(fontsize=8)
    return _save(plt, fig, path, data)


def draw_scatter(plt, data: dict, path: Path) -> Path:
    a, b, border = data["x_engine"], data["y_engine"], data["border"]
    c = data["counts"]
    fig, ax = plt.subplots(figsize=(5, 5))
    low = min([p[k] for p in data["points"] for k in ("x", "y")] + [border]) / 1.5
    families = list(dict.fromkeys(p["family"] for p in data["points"]))
    for k, family in enumerate(families):
        pts = [p for p in data["points"] if p["family"] == family]
        ax.scatter([p["x"] for p in pts], [p["y"] for p in pts], s=18, color=f"C{k % 10}",
                   marker=MARKERS[k % len(MARKERS)], label=family, alpha=0.8)
    ax.plot([low, border], [low, border], color="black", linewidth=0.8)
    ax.axvline(border, color="grey", linestyle=":", linewidth=1)
    ax.axhline(border, color="grey", linestyle=":", linewidth=1)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlim(low, border * 1.5)
    ax.set_ylim(low, border * 1.5)
    unit = _label(data["metric"])
    ax.set_xlabel(f"{a} ({unit}, log; border: not decided)")
    ax.set_ylabel(f"{b} ({unit}, log; border: not decided)")
    geo = data["geo_mean_x_over_y"]
    ax.set_title(f"{a} vs {b}: both {c['both']}, only {a} {c['x_only']}, only {b} {c['y_only']}"
                 + (f"\ngeo-mean {a}/{b} = {geo:.3g}; above the diagonal {a} is faster" if geo else ""),
                 fontsize=9)
    ax.grid(True, which="both", alpha=0.3)
    if families:
        ax.legend(fontsize=7, loc="lower right")
    return _save(plt, fig, path, data)


def draw_time_vs_size(plt, data: dict, path: Path) -> Path:
    families = list(data["families"])
    engines = list(dict.fromkeys(e for f in families for e in data["families"][f]))
    style = _style(engines)
    cols = min(3, len(families)) or 1
    rows = math.ceil(len(families) / cols) or 1
    fig, axes = plt.subplots(rows, cols, figsize=(4.3 * cols, 3.3 * rows), squeeze=False)
    for ax, family in zip(axes.flat, families):
        for engine, d in data["families"][family].items():
            color, marker = style[engine]
            for expected, line in (("deployable", "-"), ("not-deployable", "--"), (None, "-")):
                by_size: dict[float, float] = {}  # the slowest decided instance per size
                for size, t, exp in d["solved"]:
                    if exp == expected:
                        by_size[size] = max(by_size.get(size, 0.0), t)
                xs = sorted(by_size)
                if xs:
                    ax.plot(xs, [by_size[x] for x in xs], marker=marker, markersize=4, color=color,
                            linestyle=line, label=engine)
            if d["unsolved"]:
                ax.scatter([u[0] for u in d["unsolved"]], [u[1] for u in d["unsolved"]], marker="x",
                           color=color, s=25)
        ax.set_yscale("log")
        if family == "mcc":
            ax.set_xscale("log")
        ax.set_title(family, fontsize=10)
        ax.set_xlabel(SIZE_AXIS.get(family, "size"), fontsize=8)
        ax.set_ylabel(f"{_label(data['metric'])} (log); x = not decided", fontsize=8)
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
    fig.suptitle("Time vs size (slowest decided instance per size; solid: deployable, "
                 "dashed: not deployable)", fontsize=10)
    return _save(plt, fig, path, data)


def scatter_name(a: str, b: str) -> str:
    safe = [x.replace("/", "_").replace(":", "_") for x in (a, b)]
    return f"scatter-{safe[0]}-vs-{safe[1]}.png"


def plot_all(results: Sequence[JobResult], out: Path, metric: str = "time_s",
             pairs: Optional[Sequence[tuple[str, str]]] = None) -> tuple[list[Path], str]:
    """The cactus, a scatter per engine pair (or per pair of ``pairs``) and time vs size
    into ``out``: the PNG files written, or none and a note when matplotlib is missing."""
    try:
        plt = pyplot()
    except ImportError:
        return [], "matplotlib is not installed (pip install 'symreach[plots]'): no plots"
    out.mkdir(parents=True, exist_ok=True)
    engines = engines_in(results)
    if pairs is None:
        pairs = [(a, b) for i, a in enumerate(engines) for b in engines[i + 1:]]
    files = [draw_cactus(plt, cactus_data(results, metric), out / "cactus.png")]
    files += [draw_scatter(plt, scatter_data(results, a, b, metric), out / scatter_name(a, b))
              for a, b in pairs]
    files.append(draw_time_vs_size(plt, time_vs_size_data(results, metric), out / "time_vs_size.png"))
    return files, ""
