"""The compiled system's estimated Python size against what tracemalloc sees.

    python -m benchmarks.system_size [--nodes 1000,2000] [--types 100] [--per-size 8] [--out FILE]

``encodings/system_size.estimate`` prices what ``compile_system`` will build
before it builds it (a whole-cone matrix cell over its budget is refused on
that figure). For cones of the generated clusters (``generate_cluster(nodes,
types, seed=1, pools=10)``, types with affinity, anti-affinity or spread,
evenly spaced), each row is one type's cone: the estimate, the peak of Python
allocations while compiling it (tracemalloc: CUDD is not involved), and their
ratio. Appends a table to ``--out`` (default: print only).
"""

from __future__ import annotations

import argparse
import os
import time
import tracemalloc
from pathlib import Path
from typing import Optional

from symreach.encodings import system_size
from symreach.encodings.compile import compile_system
from symreach.encodings.preprocess import preprocess
from symreach.generators.clusters import generate_cluster
from symreach.loader import load_document
from symreach.model import Query
from symreach.solvers.cells import cone_fixpoint


def rows(nodes: int, types: int, per_size: int) -> list[str]:
    inst = load_document(generate_cluster(nodes, types, seed=1, pools=10))
    picked = [t for t, pod in enumerate(inst.pod_types) if pod.affinity or pod.anti_affinity or pod.spread]
    out = []
    for t in picked[::max(1, len(picked) // per_size)][:per_size]:
        fx = cone_fixpoint(inst, t)
        r = next((n for n in range(len(fx.sub.nodes)) if (fx.tt, n) in fx.added), 0)
        query = Query((frozenset({(fx.tt, r)}),))
        pre = preprocess(fx.sub, query, try_greedy=False)
        need = system_size.bytes_of(system_size.estimate(fx.sub, pre.cone, pre.may, pre.deployable_pairs,
                                                         pre.counted))
        tracemalloc.start()
        system = compile_system(fx.sub, query, pre)
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        del system
        out.append(f"| {nodes:,} | {inst.pod_types[t].name} | {len(pre.may):,} | {need / 1e6:.1f} MB | "
                   f"{peak / 1e6:.1f} MB | {need / peak:.2f} |")
        print(out[-1], flush=True)
    return out


def main(argv: Optional[list[str]] = None) -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--nodes", default="1000,2000")
    ap.add_argument("--types", type=int, default=100)
    ap.add_argument("--per-size", type=int, default=8)
    ap.add_argument("--out", type=Path, default=None)
    args = ap.parse_args(argv)
    load = f"{os.getloadavg()[0]:.1f}"
    table = ["| nodes | type | pairs | estimate | compiled (peak) | ratio |", "|---:|---|---:|---:|---:|---:|"]
    for n in (int(x) for x in args.nodes.split(",") if x):
        table += rows(n, args.types, args.per_size)
    if args.out is not None:
        with args.out.open("a") as fh:
            fh.write(f"\n`python -m benchmarks.system_size --nodes {args.nodes} --types {args.types} "
                     f"--per-size {args.per_size}`, {time.strftime('%Y-%m-%d %H:%M', time.gmtime())} UTC, "
                     f"load {load} -> {os.getloadavg()[0]:.1f}\n\n" + "\n".join(table) + "\n")


if __name__ == "__main__":
    main()
