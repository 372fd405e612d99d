"""Matrix at scale: node-pool symmetry, and a two-worker Dask LocalCluster (not a unit test).

    python -m benchmarks.symmetry_matrix [--nodes 5000] [--types 1000] [--pools 10]
                                         [--sample 10] [--dask-nodes 500] [--dask-types 100]

1. A generated cluster (``generate_cluster(..., pools=P)``: P node pools over
   3 zones, T workloads): the full ``matrix`` (cells method) with symmetry,
   timed; then without symmetry on an evenly spaced sample of pod types,
   timed per type, projected to all T types (mean per type x T), and checked
   cell by cell against the symmetric run on the sampled types.
2. A smaller cluster's matrix with the local executor and with a two-worker
   ``LocalCluster``: same cells, and the wall-clock speed-up (the LocalCluster
   start-up is included).

Times are ``time.perf_counter`` wall clock of runs made back to back in one
process; the machine is shared, so only the ratios mean anything. Writes
``benchmarks/results/symmetry_matrix.md``.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from symreach.generators.clusters import generate_cluster
from symreach.loader import load_document
from symreach.solvers.cells import solve_type
from symreach.solvers.executor import DaskExecutor, LocalExecutor, dask_available
from symreach.solvers.matrix import matrix_table

OUT = Path(__file__).resolve().parent / "results" / "symmetry_matrix.md"


CPU: dict[str, float] = {}


def timed(fn, label: str = ""):
    """Wall seconds and the value; this process's CPU seconds go to ``CPU[label]``."""
    start, cpu = time.perf_counter(), time.process_time()
    value = fn()
    if label:
        CPU[label] = time.process_time() - cpu
    return time.perf_counter() - start, value


def sampled_rows(nodes: int, types: int, pools: int, sample: int, cell_timeout: float) -> list[str]:
    """Both sides on the same evenly spaced sample of pod types, projected to all types
    (for a machine too loaded to run the full matrix in the time available)."""
    load_s, inst = timed(lambda: load_document(generate_cluster(nodes, types, seed=1, pools=pools)),
                         "load")
    print(f"loaded {nodes} nodes, {types} types in {load_s:.1f} s", flush=True)
    picked = sorted({round(i * (types - 1) / max(1, sample - 1)) for i in range(sample)})
    cpu = {True: 0.0, False: 0.0}
    wall = {True: 0.0, False: 0.0}
    classes = {True: 0, False: 0}
    agree = 0
    for t in picked:
        got = {}
        for sym in (True, False):
            dt, answer = timed(lambda: solve_type(inst, t, symmetry=sym, cell_timeout=cell_timeout),
                               "cell")
            wall[sym] += dt
            cpu[sym] += CPU["cell"]
            classes[sym] += answer.stats["classes"]
            got[sym] = {n: cls.verdict for cls in answer.classes for n in cls.nodes}
        agree += got[True] == got[False]
        print(f"  type {t}: cpu symmetry {CPU['cell']:.2f} s (last run: no symmetry)", flush=True)
    k = types / len(picked)
    return [
        f"## {nodes} nodes in {pools} pools over 3 zones, {types} workloads (sample of "
        f"{len(picked)} pod types, projected)\n",
        "| run | pod types run | classes solved | CPU time | projected CPU, all types |",
        "|---|---:|---:|---:|---:|",
        f"| load (generate + `load_document`) | | | {CPU['load']:.1f} s | |",
        f"| matrix cells, symmetry | {len(picked)} | {classes[True]:,} | {cpu[True]:.1f} s | "
        f"{cpu[True] * k:.0f} s |",
        f"| matrix cells, no symmetry | {len(picked)} | {classes[False]:,} | {cpu[False]:.1f} s | "
        f"{cpu[False] * k:.0f} s |",
        "",
        f"Speed-up of symmetry: {cpu[False] / max(cpu[True], 1e-9):.1f}x (CPU). The two agree "
        f"cell by cell on {agree}/{len(picked)} sampled types. Wall clock of the sample: "
        f"{wall[True]:.1f} s with, {wall[False]:.1f} s without symmetry.",
        "",
    ]


def symmetry_rows(nodes: int, types: int, pools: int, sample: int, cell_timeout: float) -> list[str]:
    load_s, inst = timed(lambda: load_document(generate_cluster(nodes, types, seed=1, pools=pools)),
                         "load")
    print(f"loaded {nodes} nodes, {types} types in {load_s:.1f} s", flush=True)
    sym_s, m = timed(lambda: matrix_table(inst, symmetry=True, cell_timeout=cell_timeout,
                                          progress=lambda d, t: d % 50 or print(f"  {d}/{t} types", flush=True)),
                     "sym")
    print(f"symmetric matrix {sym_s:.1f} s, {m.stats['classes']} classes", flush=True)
    picked = sorted({round(i * (types - 1) / max(1, sample - 1)) for i in range(sample)})
    plain_s = plain_cpu = 0.0
    agree = 0
    for t in picked:
        dt, answer = timed(lambda: solve_type(inst, t, symmetry=False, cell_timeout=cell_timeout),
                           "plain")
        plain_s += dt
        plain_cpu += CPU["plain"]
        got = {n: cls.verdict for cls in answer.classes for n in cls.nodes}
        agree += all(m.cells[(t, n)] == got[n] for n in range(nodes))
        print(f"  no symmetry, type {t}: {dt:.1f} s", flush=True)
    projected = plain_s / len(picked) * types
    projected_cpu = plain_cpu / len(picked) * types
    unknown = sum(v == "unknown" for v in m.cells.values())
    return [
        f"## {nodes} nodes in {pools} pools over 3 zones, {types} workloads\n",
        "| run | cells | classes solved | wall time | CPU time |",
        "|---|---:|---:|---:|---:|",
        f"| load (generate + `load_document`) | | | {load_s:.1f} s | {CPU['load']:.1f} s |",
        f"| matrix, symmetry | {len(m.cells):,} | {m.stats['classes']:,} | {sym_s:.1f} s | "
        f"{CPU['sym']:.1f} s |",
        f"| matrix, no symmetry (sample of {len(picked)} types) | {len(picked) * nodes:,} | "
        f"{len(picked) * nodes:,} | {plain_s:.1f} s | {plain_cpu:.1f} s |",
        f"| matrix, no symmetry, projected to {types} types | {len(m.cells):,} | | "
        f"{projected:.0f} s | {projected_cpu:.0f} s |",
        "",
        f"Speed-up of symmetry (projected, CPU): {projected_cpu / CPU['sym']:.1f}x. Complete: "
        f"{m.stats['complete']} ({unknown} unknown cells). The no-symmetry sample agrees with "
        f"the symmetric matrix on {agree}/{len(picked)} types, cell by cell. How the cells "
        "were decided: " + ", ".join(f"{k} {v:,}" for k, v in sorted(_hows(m).items())) + ".",
        "",
    ]


def _hows(m) -> dict[str, int]:
    out: dict[str, int] = {}
    for v in m.how.values():
        out[v] = out.get(v, 0) + 1
    return out


def dask_rows(nodes: int, types: int, pools: int, cell_timeout: float) -> list[str]:
    inst = load_document(generate_cluster(nodes, types, seed=2, pools=pools))
    local_s, local = timed(lambda: matrix_table(inst, executor=LocalExecutor(),
                                                cell_timeout=cell_timeout))
    print(f"local {local_s:.1f} s", flush=True)

    ex = DaskExecutor(workers=2)
    start_s, _ = timed(ex.client)
    try:
        remote_s, remote = timed(lambda: matrix_table(inst, executor=ex, cell_timeout=cell_timeout))
    finally:
        ex.close()
    print(f"dask start {start_s:.1f} s, matrix {remote_s:.1f} s", flush=True)
    same = dict(local.cells) == dict(remote.cells) and dict(local.how) == dict(remote.how)
    return [
        f"## {nodes} nodes, {types} workloads: local executor vs two-worker LocalCluster\n",
        "| executor | cells | wall time |",
        "|---|---:|---:|",
        f"| local (one process) | {len(local.cells):,} | {local_s:.1f} s |",
        f"| dask LocalCluster, 2 workers (start-up excluded) | {len(remote.cells):,} | "
        f"{remote_s:.1f} s |",
        f"| LocalCluster start-up | | {start_s:.1f} s |",
        "",
        f"Same cells (verdict and how decided): {same}. Speed-up: {local_s / remote_s:.2f}x "
        f"({local_s / (remote_s + start_s):.2f}x with start-up).",
        "",
    ]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--nodes", type=int, default=5000)
    ap.add_argument("--types", type=int, default=1000)
    ap.add_argument("--pools", type=int, default=10)
    ap.add_argument("--sample", type=int, default=10)
    ap.add_argument("--dask-nodes", type=int, default=500)
    ap.add_argument("--dask-types", type=int, default=100)
    ap.add_argument("--cell-timeout", type=float, default=10.0)
    ap.add_argument("--skip-symmetry", action="store_true")
    ap.add_argument("--skip-dask", action="store_true")
    ap.add_argument("--sample-only", action="store_true",
                    help="Run both sides on the sample only and project (loaded machines).")
    ap.add_argument("--out", type=Path, default=OUT)
    args = ap.parse_args()
    lines = ["# Matrix: node-pool symmetry and Dask\n",
             "Produced by `python -m benchmarks.symmetry_matrix` (see its docstring). Wall clock "
             "on a shared 2-core machine; ratios are from runs made back to back.\n"]
    if not args.skip_symmetry and args.sample_only:
        lines += sampled_rows(args.nodes, args.types, args.pools, args.sample, args.cell_timeout)
    elif not args.skip_symmetry:
        lines += symmetry_rows(args.nodes, args.types, args.pools, args.sample, args.cell_timeout)
    if not args.skip_dask and dask_available():
        lines += dask_rows(args.dask_nodes, args.dask_types, args.pools, args.cell_timeout)
    args.out.write_text("\n".join(lines) + "\n")
    print(args.out.read_text())


if __name__ == "__main__":
    main()
