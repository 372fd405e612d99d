"""PNG plots of one benchmark run (matplotlib, the optional extra ``plots``).

The cactus plot, the engine-pair scatters and time against size are
``symreach.bench.plots`` (as ``symreach bench --plot`` draws them), here for the
pairs of ``harness.RATIO_PAIRS``; this module adds

- ``bdd_nodes_vs_ic3_frames.png``: per instance, the BDD engine's peak node
  count against the number of IC3 frames (what is hard for one engine against
  what is hard for the other), coloured by family.

Each PNG has its data beside it as ``NAME.json``. ``plot_all`` returns the
files it wrote, or a note when matplotlib is missing.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Sequence

from symreach.bench import plots as bench_plots
from symreach.bench.runner import JobResult


def plot_all(results: Sequence[JobResult], out: Path,
             pairs: Sequence[tuple[str, str]]) -> tuple[list[Path], str]:
    engines = {r.engine for r in results}
    files, note = bench_plots.plot_all(results, out, pairs=[(a, b) for a, b in pairs
                                                            if a in engines and b in engines])
    if note:
        return files, note
    files.append(nodes_vs_frames(bench_plots.pyplot(), nodes_vs_frames_data(results),
                                 out / "bdd_nodes_vs_ic3_frames.png"))
    return files, ""


def nodes_vs_frames_data(results: Sequence[JobResult]) -> dict:
    bdd = {r.instance: r for r in results if r.engine == "bdd" and r.stats.get("peak_nodes")}
    ic3 = {r.instance: r for r in results if r.engine == "ic3" and r.stats.get("frames")}
    return {"plot": "bdd_nodes_vs_ic3_frames",
            "points": [{"instance": i, "family": bdd[i].family, "peak_nodes": bdd[i].stats["peak_nodes"],
                        "frames": ic3[i].stats["frames"], "both_solved": bdd[i].solved and ic3[i].solved}
                       for i in bdd if i in ic3]}


def nodes_vs_frames(plt, data: dict, path: Path) -> Path:
    points = data["points"]
    fig, ax = plt.subplots(figsize=(6.5, 4.5))
    families = list(dict.fromkeys(p["family"] for p in points))
    for k, family in enumerate(families):
        pts = [p for p in points if p["family"] == family]
        ax.scatter([p["peak_nodes"] for p in pts], [p["frames"] for p in pts], color=f"C{k % 10}",
                   marker=bench_plots.MARKERS[k % len(bench_plots.MARKERS)], s=22, label=family,
                   alpha=0.8)
    ax.set_xscale("log")
    ax.set_xlabel("BDD peak nodes (log)")
    ax.set_ylabel("IC3 frames")
    ax.set_title(f"BDD peak nodes vs IC3 frames ({len(points)} instances)")
    ax.grid(True, which="both", alpha=0.3)
    if families:
        ax.legend(fontsize=8)
    else:
        ax.text(0.5, 0.5, "no instance has both statistics", ha="center", transform=ax.transAxes)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    path.with_suffix(".json").write_text(json.dumps(data, indent=1) + "\n")
    return path
