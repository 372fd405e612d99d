"""``matrix --stream``: wall time to the first row against the total, through the CLI.

    python -m benchmarks.stream_first_row [--nodes 2000] [--types 1000] [--formats csv,json]

The instance is ``generate_cluster(nodes, types, seed=1, pools=10)`` (as
``benchmarks/scale_nodes.py`` pooled). For each format the command runs with
and without ``--stream``, one after the other in this invocation, output read
from a pipe line by line: the seconds from start to the first row (the first
line after the header) and to the end of the output. The 1-minute load
average is printed with every row (the machine is shared).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

from symreach.generators.clusters import generate_cluster

ROOT = Path(__file__).resolve().parents[1]


def timed(cmd: list[str]) -> tuple[float, float, int]:
    """(seconds to the first row, seconds to the end, exit code) of ``cmd``."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    start = time.perf_counter()
    first = None
    with subprocess.Popen(cmd, stdout=subprocess.PIPE, env=env, cwd=ROOT) as proc:
        assert proc.stdout is not None
        lines = 0
        while first is None:   # line 0 is the header (CSV) or the head object (JSON Lines)
            chunk = proc.stdout.read1(1 << 16)
            if not chunk:
                break
            lines += chunk.count(b"\n")   # count only: the plain JSON document is one 400 MB line
            if lines >= 2:
                first = time.perf_counter() - start
        while proc.stdout.read1(1 << 20):   # the rest, in large reads (the reader must not be the limit)
            pass
        code = proc.wait()
    total = time.perf_counter() - start
    return (first if first is not None else total), total, code


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--nodes", type=int, default=2000)
    ap.add_argument("--types", type=int, default=1000)
    ap.add_argument("--formats", default="csv,json")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "c.yaml"
        path.write_text(yaml.safe_dump(generate_cluster(args.nodes, args.types, seed=1, pools=10), sort_keys=False))
        print(f"{args.nodes} nodes x {args.types} pod types (pooled)")
        print("| format | stream | first row s | total s | exit | load before |")
        print("|---|---|---|---|---|---|")
        for fmt in args.formats.split(","):
            for stream in (True, False):
                load = os.getloadavg()[0]
                cmd = [sys.executable, "-m", "symreach", "matrix", str(path), "-o", fmt] + (["--stream"] * stream)
                first, total, code = timed(cmd)
                print(f"| {fmt} | {'yes' if stream else 'no'} | {first:.2f} | {total:.2f} | {code} | {load:.2f} |",
                      flush=True)


if __name__ == "__main__":
    main()
