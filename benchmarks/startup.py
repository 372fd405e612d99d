"""Start-up cost of the command line, side by side across checkouts, against ``python -c pass``.

    python -m benchmarks.startup --checkout before=/tmp/startup-before --checkout after=. \\
        --repeats 7 --out benchmarks/results/startup.md

Every command runs in a fresh process with ``PYTHONPATH`` set to its checkout;
the commands of all checkouts are interleaved round after round, so load
changes hit them alike. CPU is the user + system time of the whole process
tree (``RUSAGE_CHILDREN`` around each run: the supervisor, its child and any
engine worker they waited for). Bytecode is compiled once into a private
``PYTHONPYCACHEPREFIX`` before measuring, as an installed package has its
``.pyc`` files (``--no-pyc`` measures without them).

CPU time grows with the machine's load (caches and cores are shared), so
``--instructions`` also counts the instructions each command executes once,
under valgrind's callgrind (``SYMREACH_NO_SUPERVISOR=1``: one process): a
figure that does not depend on load, to compare checkouts on a busy machine.
"""

from __future__ import annotations

import argparse
import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator, Optional

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = "examples/paper-2.6.yaml"
COMMANDS = {
    "python -c pass": ["-c", "pass"],
    "import symreach.cli": ["-c", "import symreach.cli"],
    f"symreach check {EXAMPLE}": ["-m", "symreach", "check", "--quiet", EXAMPLE],
}


def _children_cpu() -> float:
    use = resource.getrusage(resource.RUSAGE_CHILDREN)
    return use.ru_utime + use.ru_stime


def run_once(checkout: Path, args: list[str], env: dict) -> tuple[float, float]:
    """(CPU s of the process tree, wall s) of one command."""
    env = dict(env, PYTHONPATH=str(checkout))
    cpu0, t0 = _children_cpu(), time.perf_counter()
    proc = subprocess.run([sys.executable, *args], cwd=checkout, env=env, stdout=subprocess.DEVNULL,
                          stderr=subprocess.PIPE, text=True, timeout=120)
    wall, cpu = time.perf_counter() - t0, _children_cpu() - cpu0
    if proc.returncode not in (0, 1):
        raise SystemExit(f"{' '.join(args)} in {checkout}: exit {proc.returncode}: {proc.stderr[-500:]}")
    return cpu, wall


def instructions(checkout: Path, args: list[str], env: dict) -> float:
    """Millions of instructions ``python args`` executes (callgrind), as the supervised child would."""
    env = dict(env, PYTHONPATH=str(checkout), SYMREACH_NO_SUPERVISOR="1")
    with tempfile.TemporaryDirectory(prefix="symreach-callgrind-") as out:
        proc = subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}/cg", sys.executable,
                               *args], cwd=checkout, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                              text=True, timeout=600)
    found = re.search(r"Collected : (\d+)", proc.stderr)
    if found is None:
        raise SystemExit(f"valgrind gave no count for {' '.join(args)}: {proc.stderr[-500:]}")
    return int(found.group(1)) / 1e6


@contextmanager
def startup_env(pyc: bool) -> Iterator[dict]:
    """The environment every measured run gets: bytecode cached in a fresh folder (``pyc``) or not
    written at all, and no PYTHONPATH of the caller's."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONDONTWRITEBYTECODE", "PYTHONPATH")}
    with tempfile.TemporaryDirectory(prefix="symreach-startup-") as cache:
        if pyc:
            env["PYTHONPYCACHEPREFIX"] = cache
        else:
            env["PYTHONDONTWRITEBYTECODE"] = "1"
        yield env


def count_instructions(checkouts: list[tuple[str, Path]], pyc: bool) -> dict:
    """{(label, command): millions of instructions}, bytecode compiled beforehand as in ``measure``."""
    with startup_env(pyc) as env:
        run_once(ROOT, COMMANDS["python -c pass"], env)  # bytecode of the standard library
        out = {("", "python -c pass"): instructions(ROOT, COMMANDS["python -c pass"], env)}
        for label, checkout in checkouts:
            for name, args in list(COMMANDS.items())[1:]:
                run_once(checkout, args, env)  # bytecode
                out[(label, name)] = instructions(checkout, args, env)
    return out


def measure(checkouts: list[tuple[str, Path]], repeats: int, pyc: bool) -> dict:
    """{(label, command): [(cpu, wall), ...]}; ``python -c pass`` once per round."""
    with startup_env(pyc) as env:
        out: dict = {}
        for label, checkout in checkouts:  # warm-up: bytecode, page cache
            for args in COMMANDS.values():
                run_once(checkout, args, env)
        for _ in range(repeats):
            out.setdefault(("", "python -c pass"), []).append(run_once(ROOT, COMMANDS["python -c pass"], env))
            for label, checkout in checkouts:
                for name, args in list(COMMANDS.items())[1:]:
                    out.setdefault((label, name), []).append(run_once(checkout, args, env))
    return out


def report(data: dict, checkouts: list[tuple[str, Path]], repeats: int, pyc: bool, loads: tuple,
           counts: Optional[dict] = None) -> str:
    base = statistics.median(c for c, _ in data[("", "python -c pass")])
    lines = [f"# Start-up: `symreach` against `python -c pass` ({time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())})",
             "", f"`python -m benchmarks.startup {' '.join(f'--checkout {l}={p}' for l, p in checkouts)} "
             f"--repeats {repeats}{'' if pyc else ' --no-pyc'}{' --instructions' if counts else ''}`: medians of {repeats} runs, checkouts "
             f"interleaved; CPU = user + system of the whole process tree; bytecode "
             f"{'cached' if pyc else 'not cached'}. {os.cpu_count()} cores; load average "
             f"{loads[0]:.2f} at start, {loads[1]:.2f} at the end.", "",
             "| checkout | command | CPU s | wall s | CPU / `python -c pass` |", "|---|---|---|---|---|"]
    for (label, name), runs in data.items():
        cpu = statistics.median(c for c, _ in runs)
        wall = statistics.median(w for _, w in runs)
        lines.append(f"| {label or '-'} | `{name}` | {cpu:.3f} | {wall:.3f} | {cpu / base:.2f} |")
    labels = [label for label, _ in checkouts]
    check = f"symreach check {EXAMPLE}"
    if len(labels) == 2:
        a, b = (statistics.median(c for c, _ in data[(label, check)]) for label in labels)
        lines += ["", f"`{check}`: {labels[1]} / {labels[0]} CPU = {b / a:.2f}."]
    if counts:
        base_count = counts[("", "python -c pass")]
        lines += ["", "Instructions executed (callgrind, one run each, `SYMREACH_NO_SUPERVISOR=1`; independent of "
                  "load):", "", "| checkout | command | M instructions | / `python -c pass` |", "|---|---|---|---|"]
        lines += [f"| {label or '-'} | `{name}` | {count:.0f} | {count / base_count:.2f} |"
                  for (label, name), count in counts.items()]
        if len(labels) == 2:
            a, b = (counts[(label, check)] for label in labels)
            lines += ["", f"`{check}`: {labels[1]} / {labels[0]} instructions = {b / a:.2f}."]
    return "\n".join(lines) + "\n"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--checkout", action="append", default=[],
                    help="LABEL=PATH of a checkout (repeatable); default: this one")
    ap.add_argument("--repeats", type=int, default=7)
    ap.add_argument("--no-pyc", action="store_true", help="Measure without cached bytecode.")
    ap.add_argument("--instructions", action="store_true",
                    help="Also count instructions under valgrind's callgrind (independent of load).")
    ap.add_argument("--out", type=Path, default=None, help="Write the Markdown table here too.")
    args = ap.parse_args()
    checkouts = [(c.split("=", 1)[0], Path(c.split("=", 1)[1]).resolve()) for c in args.checkout] \
        or [("this", ROOT)]
    load0 = os.getloadavg()[0]
    data = measure(checkouts, args.repeats, not args.no_pyc)
    load1 = os.getloadavg()[0]
    if args.instructions and shutil.which("valgrind") is None:
        raise SystemExit("--instructions needs valgrind")
    counts = count_instructions(checkouts, not args.no_pyc) if args.instructions else None
    text = report(data, checkouts, args.repeats, not args.no_pyc, (load0, load1), counts)
    print(text)
    if args.out:
        args.out.write_text(text)


if __name__ == "__main__":
    main()
