"""``symreach matrix`` through the CLI on a real Dask cluster against the local executor.

    python -m benchmarks.dask_end_to_end [--nodes 2000] [--types 1000] [--workers 2] [--repeat 3]
                                          [--format csv] [--stream] [--heterogeneous] [--append] [--no-trace]

Starts ``dask scheduler`` and ``--workers`` ``dask worker --nthreads 1`` processes on
127.0.0.1 (a free port), waits until the workers have joined, then runs the
command as a user does (through ``benchmarks.dask_trace``, which stamps the
client's milestones: the critical path, less sensitive to load than the wall
clock; ``--no-trace``: ``python -m symreach`` itself), alternating ``--executor local`` and ``--executor dask
--scheduler ADDRESS`` ``--repeat`` times each, output to a file. Per run: wall
clock, the command's own CPU (``os.wait4``: the client, which loads the file,
plans the tasks, ships the instance once and writes the output) and the
workers' CPU during the run (``/proc/PID/stat``). Outputs of all runs must be
byte-identical (``--stream``: the same lines, in the order types finished).
Every row states the 1-minute load average before and after (the machine is
shared: the target of 1.6x is for two otherwise idle cores); the ratio is
given per interleaved pair and as the median of the pairs. The cluster's
start-up is not in the figures (a cluster is started once for many runs).
The scheduler and each worker run in a session of their own (as when a user
starts them from their own shells or units; ``--same-session``: in this
one). It matters on a loaded Linux machine: with ``sched_autogroup`` every
session gets an equal share of the CPUs, so workers in the benchmark's own
session share the one share the local run has.
Writes ``benchmarks/results/dask_end_to_end.md`` (``--append``: adds the run
as a section).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Optional

import yaml

from benchmarks.scale_nodes import instance

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "benchmarks" / "results" / "dask_end_to_end.md"
TICK = os.sysconf("SC_CLK_TCK")
SESSION = {False: "each in a session of its own", True: "in the benchmark's session"}


def _load() -> str:
    return f"{os.getloadavg()[0]:.1f}"


def _cpu(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait_workers(address: str, n: int, env: dict) -> None:
    code = (f"from distributed import Client; c = Client({address!r}, timeout=60); "
            f"c.wait_for_workers({n}, timeout=120); c.close()")
    subprocess.run([sys.executable, "-c", code], env=env, check=True, timeout=180)


def run(cmd: list[str], env: dict, out: Path, workers: list[int], trace: Optional[Path] = None) -> dict:
    """One run of ``cmd`` (``symreach``'s arguments; ``trace``: through ``benchmarks.dask_trace``)."""
    if trace is not None:
        trace.unlink(missing_ok=True)
    cmd = [sys.executable, "-m", "symreach", *cmd] if trace is None else \
        [sys.executable, "-m", "benchmarks.dask_trace", str(trace), *cmd]
    before, w0 = _load(), sum(_cpu(p) for p in workers)
    start = time.perf_counter()
    with out.open("wb") as fh:
        proc = subprocess.Popen(cmd, stdout=fh, stderr=subprocess.DEVNULL, env=env)
        _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    return {"exit": os.waitstatus_to_exitcode(status), "wall": wall,
            "client": usage.ru_utime + usage.ru_stime,
            "workers": sum(_cpu(p) for p in workers) - w0, "load": f"{before} -> {_load()}",
            "sha": hashlib.sha256(b"\n".join(sorted(out.read_bytes().splitlines()))).hexdigest()[:12],
            "path": _critical_path(trace) if trace is not None else None}


PHASES = (("start", "shipped"), ("shipped", "loaded"), ("start", "loaded"), ("loaded", "first_rows"),
          ("first_rows", "last_rows"), ("last_rows", "exit"))


def _critical_path(trace: Path) -> dict[str, float]:
    """Seconds between the client's milestones (``benchmarks.dask_trace``), by phase."""
    events: dict[str, float] = {}
    for line in trace.read_text().splitlines():
        for name, at in json.loads(line)["events"].items():
            events[name] = max(at, events.get(name, at)) if name == "exit" else min(at, events.get(name, at))
    return {f"{a}-{b}": events[b] - events[a] for a, b in PHASES if a in events and b in events}


def _path_text(path: Optional[dict[str, float]]) -> str:
    """start -> shipped (Dask: connected, input sent) -> loaded (here, or the workers' outline)
    -> first rows -> last rows -> exit."""
    if not path:
        return ""
    shipped = path.get("start-shipped")
    head = (f"{shipped:.2f} + {path['shipped-loaded']:.2f}" if shipped is not None and "shipped-loaded" in path
            else f"{path.get('start-loaded', float('nan')):.2f}")
    return (f"{head} / {path.get('loaded-first_rows', float('nan')):.2f} / "
            f"{path.get('first_rows-last_rows', float('nan')):.2f} / {path.get('last_rows-exit', float('nan')):.2f}")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--nodes", type=int, default=2000)
    ap.add_argument("--types", type=int, default=1000)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--format", default="csv")
    ap.add_argument("--stream", action="store_true")
    ap.add_argument("--append", action="store_true")
    ap.add_argument("--same-session", action="store_true")
    ap.add_argument("--heterogeneous", action="store_true")
    ap.add_argument("--out", type=Path, default=OUT)
    ap.add_argument("--no-trace", action="store_true", help="run symreach itself, not through "
                    "benchmarks.dask_trace (no critical-path column)")
    args = ap.parse_args()
    env = dict(os.environ, PYTHONPATH=str(ROOT), DASK_DISTRIBUTED__WORKER__PROFILE__ENABLED="False")
    dask = str(Path(sys.executable).with_name("dask"))
    port = _free_port()
    address = f"tcp://127.0.0.1:{port}"
    procs = []
    rows = []
    with tempfile.TemporaryDirectory(prefix="dask-e2e-") as work:
        path = Path(work) / "cluster.yaml"
        path.write_text(yaml.safe_dump(instance(args.nodes, args.types, args.heterogeneous), sort_keys=False))
        try:
            procs.append(subprocess.Popen([dask, "scheduler", "--host", "127.0.0.1", "--port", str(port),
                                           "--dashboard-address", ":0", "--no-show"], env=env,
                                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                          start_new_session=not args.same_session))
            for i in range(args.workers):
                procs.append(subprocess.Popen([dask, "worker", address, "--nthreads", "1", "--no-nanny",
                                               "--dashboard-address", ":0", "--name", f"w{i}"], env=env,
                                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                              start_new_session=not args.same_session))
            time.sleep(1)
            _wait_workers(address, args.workers, env)
            workers = [p.pid for p in procs[1:]]
            base = ["matrix", str(path), "--format", args.format]
            base += ["--stream"] if args.stream else []
            trace = None if args.no_trace else Path(work) / "trace.jsonl"
            for i in range(args.repeat):
                for label, extra in (("local", []), ("dask", ["--executor", "dask", "--scheduler", address])):
                    r = run(base + extra, env, Path(work) / f"{label}-{i}.out", workers, trace)
                    r["label"] = label
                    rows.append(r)
                    print(r, flush=True)
        finally:
            for p in procs:
                if p.poll() is None:
                    os.kill(p.pid, signal.SIGKILL)
                    p.wait()
    local = [r["wall"] for r in rows if r["label"] == "local"]
    remote = [r["wall"] for r in rows if r["label"] == "dask"]
    pairs = sorted(a / b for a, b in zip(local, remote))
    same = len({r["sha"] for r in rows}) == 1
    flags = f"`--format {args.format}{' --stream' if args.stream else ''}`"
    lines = [f"## {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}: {args.nodes} x {args.types}, {flags}\n",
             f"Produced by `python -m benchmarks.dask_end_to_end` (see its docstring): "
             f"{args.nodes} nodes ({'heterogeneous' if args.heterogeneous else 'pooled'}), {args.types} "
             f"workloads, {flags} (sha256 of the sorted lines), a `dask scheduler` and {args.workers} `dask "
             "worker --nthreads 1` processes on this 2-core machine ("
             f"{SESSION[args.same_session]}), "
             "runs interleaved in one invocation.\n",
             "Critical path (seconds, the client's milestones, `benchmarks.dask_trace`): to the input "
             "loaded (Dask: connected and input shipped + the workers' parse and plan) / to the first "
             "results / first to last results / last results to exit.\n",
             "| run | executor | exit | wall | client CPU | workers' CPU | critical path | output sha256 "
             "| load (1 min) |",
             "|---:|---|---:|---:|---:|---:|---|---|---|"]
    for i, r in enumerate(rows):
        lines.append(f"| {i + 1} | {r['label']} | {r['exit']} | {r['wall']:.1f} s | {r['client']:.1f} s | "
                     f"{r['workers']:.1f} s | {_path_text(r['path'])} | {r['sha']} | {r['load']} |")
    lines += ["", f"Identical output in every run: {same}. Local wall over Dask wall per pair: "
              f"{', '.join(f'{x:.2f}x' for x in pairs)} (median {pairs[len(pairs) // 2]:.2f}x); "
              f"mean {sum(local) / len(local):.1f} s local, {sum(remote) / len(remote):.1f} s Dask.", ""]
    text = "\n".join(lines) + "\n"
    if args.append and args.out.exists():
        args.out.write_text(args.out.read_text().rstrip("\n") + "\n\n" + text)
    else:
        args.out.write_text("# `symreach matrix` end to end: a Dask cluster against the local executor\n\n" + text)
    print(text)


if __name__ == "__main__":
    main()
