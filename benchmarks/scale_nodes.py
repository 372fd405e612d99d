"""The matrix past 5,000 nodes: CPU and peak memory of ``symreach matrix`` as nodes grow.

    python -m benchmarks.scale_nodes [--pooled 500,1000,2000,5000,10000,20000]
        [--heterogeneous 500,1000,2000,5000] [--types 1000] [--formats text,json,csv]
        [--base DIR --base-pooled 500,2000 --base-heterogeneous 500]

Each point is the real command in a subprocess (``symreach matrix FILE``, output
to a file), timed by ``os.wait4``: CPU (user + system of the command and its
child processes) and peak resident memory (the largest of them). Instances:

- *pooled*: ``generate_cluster(nodes, types, seed=1, pools=10)`` (node pools over
  3 zones: nodes of a pool are interchangeable, one answer per class);
- *heterogeneous*: the same with a label ``symreach.io/node-id`` unique to
  each node, so no two nodes are alike and every node is its own class.

``--formats`` runs the ``--format-nodes`` (5,000) pooled instance once per
output format for peak memory. ``--base DIR`` runs chosen
sizes on another checkout too (e.g. ``git archive`` of the commit before),
one after the other in this invocation. Every row gives the 1-minute load
average before and after it (the machine is shared). Writes
``benchmarks/results/scale_nodes.md`` (``--out FILE`` elsewhere: that file keeps
the sessions' sections). Session 9's curve:
``--pooled 20000,500,1000,2000,5000,10000 --heterogeneous "" --formats "" --limit 4000``.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Optional

import yaml

from symreach.generators.clusters import generate_cluster

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "benchmarks" / "results" / "scale_nodes.md"


def instance(nodes: int, types: int, heterogeneous: bool) -> dict[str, Any]:
    doc = generate_cluster(nodes, types, seed=1, pools=10)
    if heterogeneous:
        for i, node in enumerate(doc["nodes"]):
            node["labels"]["symreach.io/node-id"] = str(i)
    return doc


def _load() -> str:
    return f"{os.getloadavg()[0]:.1f}"


def run_matrix(code: Path, path: Path, fmt: str, limit_s: float) -> dict[str, Any]:
    """``symreach matrix`` from checkout ``code``: exit, wall, CPU, peak RSS, output size."""
    env = dict(os.environ, PYTHONPATH=str(code))
    before = _load()
    start = time.perf_counter()
    with tempfile.TemporaryFile() as out:
        proc = subprocess.Popen([sys.executable, "-m", "symreach", "matrix", str(path), "--format", fmt,
                                 "--timeout", str(limit_s), "--memory", "4096"],
                                stdout=out, stderr=subprocess.DEVNULL, env=env)
        _, status, usage = os.wait4(proc.pid, 0)
        size = out.tell()
    return {"exit": os.waitstatus_to_exitcode(status), "wall": time.perf_counter() - start,
            "cpu": usage.ru_utime + usage.ru_stime, "rss_mb": usage.ru_maxrss / 1024,
            "out_mb": size / 1e6, "load": f"{before} -> {_load()}"}


def _sizes(text: Optional[str]) -> list[int]:
    return [int(x) for x in text.split(",") if x] if text else []


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--pooled", default="500,1000,2000,5000,10000,20000")
    ap.add_argument("--heterogeneous", default="500,1000,2000,5000")
    ap.add_argument("--types", type=int, default=1000)
    ap.add_argument("--formats", default="json,csv")
    ap.add_argument("--format-nodes", type=int, default=5000,
                    help="pooled nodes of the runs in the other --formats")
    ap.add_argument("--limit", type=float, default=900.0, help="--timeout of each run (s)")
    ap.add_argument("--base", type=Path, help="another checkout to run chosen sizes on")
    ap.add_argument("--base-pooled", default="")
    ap.add_argument("--base-heterogeneous", default="")
    ap.add_argument("--out", type=Path, default=OUT)
    args = ap.parse_args()
    rows = []
    plan: list[tuple[str, Path, str, int, str]] = []
    for n in _sizes(args.pooled):
        plan.append(("this", ROOT, "pooled", n, "text"))
    for n in _sizes(args.heterogeneous):
        plan.append(("this", ROOT, "heterogeneous", n, "text"))
    for fmt in [f for f in args.formats.split(",") if f]:
        plan.append(("this", ROOT, "pooled", args.format_nodes, fmt))
    if args.base is not None:
        for n in _sizes(args.base_pooled):
            plan.append(("base", args.base, "pooled", n, "text"))
        for n in _sizes(args.base_heterogeneous):
            plan.append(("base", args.base, "heterogeneous", n, "text"))
    with tempfile.TemporaryDirectory(prefix="scale-nodes-") as work:
        for which, code, kind, nodes, fmt in plan:
            path = Path(work) / f"{kind}-{nodes}.yaml"
            if not path.exists():
                path.write_text(yaml.safe_dump(instance(nodes, args.types, kind == "heterogeneous"),
                                               sort_keys=False))
            r = run_matrix(code, path, fmt, args.limit)
            row = (f"| {which} | {kind} | {nodes:,} | {fmt} | {r['exit']} | {r['cpu']:.1f} s | "
                   f"{r['wall']:.1f} s | {r['rss_mb']:.0f} MB | {r['out_mb']:.1f} MB | {r['load']} |")
            print(row, flush=True)
            rows.append(row)
    lines = ["# The matrix as nodes grow\n",
             f"Produced by `python -m benchmarks.scale_nodes` (see its docstring), {args.types} "
             "workloads, one run per row, in the order shown, on a shared 2-core machine (the load "
             "average says how shared). CPU is user + system time of the command and its "
             "children; RSS the largest peak among them. `this` is this checkout, `base` "
             f"{args.base or '(not run)'}.\n",
             "| code | nodes | count | format | exit | CPU | wall | peak RSS | output | load (1 min) |",
             "|---|---|---:|---|---:|---:|---:|---:|---:|---|", *rows, ""]
    args.out.write_text("\n".join(lines) + "\n")
    print(args.out.read_text())


if __name__ == "__main__":
    main()
