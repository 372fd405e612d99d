"""Heterogeneous nodes and peak memory per output format: ``symreach matrix`` at 5,000 nodes.

    python -m benchmarks.scale_rss [--heterogeneous 500,1000,2000,5000]
        [--format-nodes 5000] [--formats text,wide,json,json-stream,yaml,csv,csv-stream]
        [--kinds heterogeneous,pooled] [--types 1000] [--jobs 1] [--nice 10] [--out FILE]

The instances are ``benchmarks/scale_nodes.py``'s (pooled: 10 node pools over 3
zones; heterogeneous: a label unique to each node, so every node is its own
class). Each point is the real command in a subprocess, output to a file,
timed by ``os.wait4``: CPU (user + system of the command and its children,
the supervisor included) and peak resident memory (the largest of them);
``tree RSS`` is the peak of the summed resident memory of the whole process
tree, sampled every 0.2 s from /proc (what a 1 GiB machine must hold).
``csv-stream`` and ``json-stream`` are ``-o csv --stream`` and ``-o json
--stream`` (JSON Lines). Rows: every ``--formats`` on the ``--format-nodes``
instance of each of ``--kinds``, then the other heterogeneous sizes in text.
``--jobs`` runs that many commands at once (CPU and peak RSS are per command;
wall times then include waiting for each other). Every row states the
1-minute load average before and after it and is appended to ``--out`` as it
finishes (the machine is shared).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import yaml

from benchmarks.scale_nodes import instance

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "benchmarks" / "results" / "scale_rss.md"
HEADER = ("| kind | nodes | format | exit | CPU | wall | peak RSS | tree RSS | output | load (1 min) "
          "| finished (UTC) |\n|---|---:|---|---:|---:|---:|---:|---:|---:|---|---|\n")
SAMPLE_S = 0.2


def _load() -> str:
    return f"{os.getloadavg()[0]:.1f}"


def _tree_rss_kb(root: int) -> int:
    """Summed VmRSS (KiB) of ``root`` and its descendants now (Linux /proc)."""
    total, todo = 0, [root]
    while todo:
        pid = todo.pop()
        try:
            status = Path(f"/proc/{pid}/status").read_text()
            for task in os.scandir(f"/proc/{pid}/task"):
                todo.extend(int(c) for c in Path(task.path, "children").read_text().split())
        except OSError:   # gone meanwhile
            continue
        rss = next((line for line in status.splitlines() if line.startswith("VmRSS:")), "VmRSS: 0 kB")
        total += int(rss.split()[1])
    return total


def _sample_tree(root: int, done: threading.Event, peak: list[int]) -> None:
    while not done.wait(SAMPLE_S):
        peak[0] = max(peak[0], _tree_rss_kb(root))


def command(path: Path, fmt: str, limit_s: float, nice: int = 0) -> list[str]:
    base, _, stream = fmt.partition("-")
    return ((["nice", "-n", str(nice)] if nice else []) + [sys.executable, "-m", "symreach", "matrix", str(path), "-o", base, "--timeout", str(limit_s),
             "--memory", "4096"] + (["--stream"] if stream else []))


def run(path: Path, fmt: str, limit_s: float, nice: int = 0) -> dict[str, Any]:
    """One command: exit, wall, CPU, peak RSS (largest process, whole tree), output size, load."""
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    before = _load()
    start = time.perf_counter()
    with tempfile.TemporaryFile() as out:
        proc = subprocess.Popen(command(path, fmt, limit_s, nice), stdout=out, stderr=subprocess.DEVNULL,
                                env=env)
        done, peak = threading.Event(), [0]
        sampler = threading.Thread(target=_sample_tree, args=(proc.pid, done, peak), daemon=True)
        sampler.start()
        _, status, usage = os.wait4(proc.pid, 0)
        done.set()
        sampler.join()
        size = out.seek(0, os.SEEK_END)
    return {"exit": os.waitstatus_to_exitcode(status), "wall": time.perf_counter() - start,
            "cpu": usage.ru_utime + usage.ru_stime, "rss_mb": usage.ru_maxrss / 1024,
            "tree_mb": peak[0] / 1024, "out_mb": size / 1e6, "load": f"{before} -> {_load()}"}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--heterogeneous", default="500,1000,2000,5000")
    ap.add_argument("--format-nodes", type=int, default=5000)
    ap.add_argument("--formats", default="text,wide,json,json-stream,yaml,csv,csv-stream")
    ap.add_argument("--kinds", default="heterogeneous,pooled")
    ap.add_argument("--types", type=int, default=1000)
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--nice", type=int, default=10, help="niceness of each command (0: none)")
    ap.add_argument("--limit", type=float, default=3000.0, help="--timeout of each run (s)")
    ap.add_argument("--out", type=Path, default=OUT)
    args = ap.parse_args()
    # the largest first (with --jobs, the run ends sooner), then the smaller heterogeneous sizes
    plan = [(kind, args.format_nodes, fmt) for kind in args.kinds.split(",") if kind
            for fmt in args.formats.split(",") if fmt]
    plan += [("heterogeneous", int(n), "text") for n in reversed(args.heterogeneous.split(","))
             if n and ("heterogeneous", int(n), "text") not in plan]
    lock = threading.Lock()
    with args.out.open("a") as out:
        out.write(f"\n`{' '.join(sys.argv[1:]) or '(defaults)'}`, {args.types} pod types, --jobs {args.jobs}, "
                  f"started {time.strftime('%Y-%m-%d %H:%M', time.gmtime())} UTC\n\n" + HEADER)
        out.flush()
        with tempfile.TemporaryDirectory(prefix="scale-rss-") as work:
            paths = {}
            for kind, nodes, _ in plan:
                if (kind, nodes) not in paths:
                    paths[kind, nodes] = Path(work) / f"{kind}-{nodes}.yaml"
                    paths[kind, nodes].write_text(yaml.safe_dump(
                        instance(nodes, args.types, kind == "heterogeneous"), sort_keys=False))

            def one(item: tuple[str, int, str]) -> None:
                kind, nodes, fmt = item
                r = run(paths[kind, nodes], fmt, args.limit, args.nice)
                row = (f"| {kind} | {nodes:,} | {fmt} | {r['exit']} | {r['cpu']:.1f} s | {r['wall']:.1f} s | "
                       f"{r['rss_mb']:.0f} MB | {r['tree_mb']:.0f} MB | {r['out_mb']:.1f} MB | {r['load']} | "
                       f"{time.strftime('%H:%M', time.gmtime())} |")
                with lock:
                    print(row, flush=True)
                    out.write(row + "\n")
                    out.flush()

            with ThreadPoolExecutor(max(1, args.jobs)) as pool:
                list(pool.map(one, plan))


if __name__ == "__main__":
    main()
