"""Shallow goals of the shared nets: witnesses a few firings deep, per engine and for ``auto``.

The family: for every net of ``/work/shared/data/petri``, the places that a
breadth-first search over markings (``families.first_marked_depth``, level
by level up to 8) first marks after 1..8 firings (coverable: the search found a firing sequence; answers.json
agrees), each encoded with Appendix B. Every such place is a goal with ``--all``; by
default one per (net, depth), the first in the net's place order, so that a
run fits in an afternoon on two shared cores (551 places in all, 262 of them
in BART).

Engines: ``auto`` (the portfolio), ``lazy`` (the lazy-deletion search), ``bmc`` (parallel steps), ``bmc-single``
(``BmcEngine(parallel=False)``, for the depth comparison), ``bdd``, ``ic3``
and ABC's ``pdr`` (``auto`` runs it too when berkeley-abc is installed). One process per job (``symreach.bench.runner.run_job``), one job at a time
per stream, 30 s per job. Goals of a net run shallow first, and a single
engine that fails on one is not run on the net's deeper goals ("skip"; as
``benchmarks.run_all`` stops a series); ``auto`` runs on every goal. Written to
``benchmarks/results/shallow_nets.md`` (one row per goal: depth in firings,
each engine's time, the BMC depths with and without parallel steps, the
engine that answered for ``auto``, and ``auto`` / best single engine).

    python -m benchmarks.shallow_nets [--timeout 30] [--all] [--nets A,B] [--engines ...]
"""

from __future__ import annotations

import json
import math
import os
import platform
import tempfile
import time
from pathlib import Path
from typing import Iterator, Optional, Sequence

import click

from benchmarks.families import DEPLOYABLE, first_marked_depth
from benchmarks.shared_data import PETRI_DIR
from symreach.bench.runner import BenchInstance, Job, JobResult, run_job
from symreach.frontends.petri_net import read_net
from symreach.frontends.reduction_petri import encode_petri
from symreach.solvers.bmc import BmcEngine

OUT = Path(__file__).resolve().parent / "results" / "shallow_nets.md"
SINGLE = "benchmarks.shallow_nets:SingleStepBmc"
ENGINES = ("auto", "lazy", "bmc", SINGLE, "bdd", "ic3", "abc-pdr")
SINGLE_ENGINES = ("lazy", "bmc", "bdd", "ic3", "abc-pdr")  # the engines auto is compared with
MAX_DEPTH = 8
MAX_MARKINGS = 10 ** 7  # the level limit stops the search first on every shared net


class SingleStepBmc(BmcEngine):
    """BMC with one deploy per step, the baseline of the parallel-step depths."""

    name = "bmc-single"

    def __init__(self) -> None:
        super().__init__(parallel=False)


def shallow_goals(names: Optional[Sequence[str]] = None, every: bool = False,
                  max_depth: int = MAX_DEPTH, data: Path = PETRI_DIR) -> Iterator[BenchInstance]:
    """The family (see the module docstring), shallow first within each net."""
    answers = json.loads((data / "answers.json").read_text())
    for name in sorted(answers) if names is None else names:
        net = read_net(data / f"{name}.pnml")
        depth = first_marked_depth(net, MAX_MARKINGS, max_depth)
        never = set(answers[name].get("not_coverable") or ())
        order = {p: i for i, p in enumerate(net.places)}
        if never & set(depth):
            raise AssertionError(f"{name}: answers.json calls a place the BFS marks never coverable")
        goals = sorted((p for p in depth if 1 <= depth[p] <= max_depth),
                       key=lambda p: (depth[p], order[p]))
        if not every:
            goals = list({depth[p]: p for p in reversed(goals)}.values())[::-1]
        for goal in goals:
            yield BenchInstance(f"shallow/{name}/{goal}", "shallow", depth[goal],
                                document=encode_petri(net, goal), expected=DEPLOYABLE,
                                series=f"shallow/{name}",
                                meta={"net": name, "goal": goal, "firings": depth[goal]})


def short(engine: str) -> str:
    return "bmc-single" if engine == SINGLE else engine


def time_of(r: Optional[JobResult]) -> Optional[float]:
    return r.time_s if r is not None and r.solved else None


def cell(r: Optional[JobResult]) -> str:
    if r is not None and r.status == "skipped":
        return "skip"
    return fmt(time_of(r))


def fmt(x) -> str:
    if x is None:
        return "—"
    return f"{x:.2f}" if isinstance(x, float) else str(x)


def table(rows: list[dict], engines: Sequence[str], timeout: float) -> list[str]:
    names = [short(e) for e in engines]
    head = ["| net | goal | firings | " + " | ".join(f"{n} s" for n in names)
            + " | BMC depth parallel / single | auto answered by | auto / best single |",
            "|---|---|---|" + "---|" * len(names) + "---|---|---|"]
    out = []
    for row in rows:
        res = row["results"]
        times = [cell(res.get(e)) for e in engines]
        par = res.get("bmc").stats.get("depth") if res.get("bmc") and res["bmc"].solved else None
        sin = res.get(SINGLE).stats.get("depth") if res.get(SINGLE) and res[SINGLE].solved else None
        auto = res.get("auto")
        by = (auto.stats.get("portfolio") or {}).get("answered_by") if auto and auto.solved else None
        if auto and auto.solved and by is None:
            by = "preprocessing"
        out.append(f"| {row['net']} | {row['goal']} | {row['firings']} | " + " | ".join(times)
                   + f" | {fmt(par)} / {fmt(sin)} | {fmt(by)} | {fmt(ratio(res))} |")
    return head + out


def ratio(res: dict) -> Optional[float]:
    """auto's time over the best single engine's (None when neither decided)."""
    best = [time_of(res.get(e)) for e in SINGLE_ENGINES]
    best = [t for t in best if t is not None]
    auto = time_of(res.get("auto"))
    if not best or auto is None:
        return None
    return auto / max(min(best), 0.05)


def summary(rows: list[dict], engines: Sequence[str], timeout: float) -> list[str]:
    lines = []
    for e in engines:
        solved = [r for r in rows if r["results"].get(e) and r["results"][e].solved]
        wrong = [r for r in solved if r["results"][e].verdict != DEPLOYABLE]
        lines.append(f"- {short(e)}: decided {len(solved)} of {len(rows)} within {timeout:g} s"
                     + (f", **{len(wrong)} wrong**" if wrong else ""))
    ratios = [x for x in (ratio(r["results"]) for r in rows) if x is not None]
    if ratios:
        gm = math.exp(sum(math.log(x) for x in ratios) / len(ratios))
        lines.append(f"- auto / best single engine ({', '.join(SINGLE_ENGINES)}; floor 0.05 s): geometric mean "
                     f"{gm:.2f}, max {max(ratios):.2f}, over {len(ratios)} goals")
    lost = [r for r in rows if any(r["results"].get(e) and r["results"][e].solved for e in SINGLE_ENGINES)
            and not (r["results"].get("auto") and r["results"]["auto"].solved)]
    lines.append(f"- goals a single engine ({', '.join(SINGLE_ENGINES)}) decided and auto did not: {len(lost)}"
                 + (" (" + ", ".join(f"{r['net']}/{r['goal']}" for r in lost) + ")" if lost else ""))
    pairs = [(r["results"]["bmc"].stats.get("depth"), r["results"][SINGLE].stats.get("depth"))
             for r in rows if r["results"].get("bmc") and r["results"]["bmc"].solved
             and r["results"].get(SINGLE) and r["results"][SINGLE].solved]
    if pairs:
        lines.append(f"- BMC depth with parallel steps / single steps, summed over the {len(pairs)} goals "
                     f"both decided: {sum(p for p, _ in pairs)} / {sum(s for _, s in pairs)}")
    return lines


def depth_table(rows: list[dict]) -> list[str]:
    """BMC depth with parallel steps against single steps, per goal both decided."""
    out = ["", "BMC depth (steps) with parallel steps against single steps, on the goals both decided:", "",
           "| net | goal | firings | parallel | single | saved |", "|---|---|---|---|---|---|"]
    for row in rows:
        res = row["results"]
        par, sin = res.get("bmc"), res.get(SINGLE)
        if par is None or sin is None or not (par.solved and sin.solved):
            continue
        p, q = par.stats.get("depth"), sin.stats.get("depth")
        out.append(f"| {row['net']} | {row['goal']} | {row['firings']} | {p} | {q} | {q - p} |")
    return out


def write(path: Path, header: list[str], rows: list[dict], engines, timeout: float) -> None:
    """The markdown table, and the raw results beside it (``.json``, for ``--merge``)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(header + table(rows, engines, timeout) + [""]
                              + summary(rows, engines, timeout) + depth_table(rows)) + "\n")
    raw = [dict(row, results={e: r.to_json() for e, r in row["results"].items()}) for row in rows]
    path.with_suffix(".json").write_text(json.dumps({"header": header, "engines": list(engines),
                                                     "timeout": timeout, "rows": raw}, indent=1))


def merge(parts: Sequence[Path], out: Path) -> None:
    """One table from runs of disjoint engine sets over the same goals."""
    rows: dict[tuple[str, str], dict] = {}
    engines: list[str] = []
    header: list[str] = []
    timeout = 0.0
    for part in parts:
        data = json.loads(part.read_text())
        header = header or [line for line in data["header"] if not line.startswith("Wall time")]
        header += [f"{part.name}: {line}" for line in data["header"] if line.startswith("Wall time")]
        timeout = max(timeout, data["timeout"])
        engines += [e for e in data["engines"] if e not in engines]
        for row in data["rows"]:
            key = (row["net"], row["goal"])
            merged = rows.setdefault(key, dict(row, results={}))
            merged["results"].update({e: JobResult(**r) for e, r in row["results"].items()})
    note = ("Merged from " + ", ".join(p.name for p in parts) + " (engine sets run as separate "
            "sequential streams at the same time).")
    write(out, header + [note, ""], list(rows.values()), [e for e in ENGINES if e in engines], timeout)


def run(instances: Sequence[BenchInstance], engines: Sequence[str], timeout: float, memory_mb: int,
        out: Path, command: str, log=print) -> list[dict]:
    """Every engine on every goal, one job at a time; the table is rewritten after each goal."""
    header = ["# Shallow goals of the shared nets (Appendix B), per engine and for auto", "",
              f"`{command}`; {platform.machine()}, Python {platform.python_version()}, 2 cores shared "
              f"with other work, one job at a time, {timeout:g} s and {memory_mb} MB per job. "
              "Goals and engines: see `benchmarks/shallow_nets.py`. Times are the wall time of "
              "`engine.check` (— = not decided within the limit; skip = not run because the engine "
              "failed a shallower goal of the same net; auto is never skipped); every decided "
              "verdict is checked against the BFS. Depths are BMC steps (a step: any deletions, then one deploy "
              "or a set of non-interfering deploys); firings are the net's BFS depth.", ""]
    rows: list[dict] = []
    failed: set[tuple[str, str]] = set()  # (engine, net): skip that net's deeper goals
    loads: list[float] = []
    start = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="shallow-") as work:
        for inst in instances:
            row = {"net": inst.meta["net"], "goal": inst.meta["goal"], "firings": inst.meta["firings"],
                   "results": {}}
            for engine in engines:
                if engine != "auto" and (engine, row["net"]) in failed:
                    row["results"][engine] = JobResult(inst.id, inst.family, inst.size, engine,
                                                       inst.expected, "skipped", limit_s=timeout)
                    continue
                r = run_job(Job(inst, engine), timeout, memory_mb, work)
                row["results"][engine] = r
                if not r.solved:
                    failed.add((engine, row["net"]))
                if r.solved and r.verdict != inst.expected:
                    log(f"WRONG: {short(engine)} says {r.verdict} on {inst.id}")
            rows.append(row)
            loads.append(os.getloadavg()[0])
            log(table([row], engines, timeout)[-1])
            write(out, header + [f"Wall time so far {time.perf_counter() - start:.0f} s; 1-minute load "
                                 f"average after each goal: min {min(loads):.1f}, mean "
                                 f"{sum(loads) / len(loads):.1f}, max {max(loads):.1f}.", ""], rows,
                  engines, timeout)
    return rows


QUICK_NETS = ("ERK-PT-000001", "Sudoku-PT-AN01")


def run_section(quick: bool, timeout: Optional[float], memory_mb: int, out_dir: Path, log=print) -> Path:
    """The family as a section of ``benchmarks.run_all``: quick runs two small nets at 5 s."""
    instances = list(shallow_goals(QUICK_NETS if quick else None))
    timeout = timeout or (5.0 if quick else 30.0)
    out = out_dir / OUT.name
    command = "python -m benchmarks.run_all" + (" --quick" if quick else "") + " (shallow section)"
    log(f"shallow nets: {len(instances)} goals x {len(ENGINES)} engines, {timeout:g} s each")
    run(instances, ENGINES, timeout, memory_mb, out, command, log=log)
    return out


@click.command(context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--timeout", type=click.FloatRange(min=0.1), default=30.0, show_default=True)
@click.option("--memory-mb", type=click.IntRange(min=64), default=4096, show_default=True)
@click.option("--all", "every", is_flag=True, help="Every shallow place, not one per (net, depth).")
@click.option("--nets", default="", help="Comma-separated net names [all].")
@click.option("--max-depth", type=click.IntRange(min=1), default=MAX_DEPTH, show_default=True)
@click.option("--engines", default=",".join(short(e) for e in ENGINES), show_default=True)
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), default=OUT, show_default=True)
@click.option("--merge", "merge_parts", default="", help="Comma-separated .json files of earlier "
                                                         "runs to merge into --out (runs nothing).")
def main(timeout, memory_mb, every, nets, max_depth, engines, out, merge_parts) -> None:
    """Run the shallow-goal family and write its table."""
    if merge_parts:
        merge([Path(p) for p in merge_parts.split(",") if p], out)
        click.echo(f"wrote {out}")
        return
    names = [n for n in nets.split(",") if n] or None
    chosen = [SINGLE if e == "bmc-single" else e for e in engines.split(",") if e]
    instances = list(shallow_goals(names, every, max_depth))
    click.echo(f"{len(instances)} goals")
    command = "python -m benchmarks.shallow_nets" + (" --all" if every else "") \
        + (f" --nets {nets}" if nets else "") + f" --timeout {timeout:g}"
    run(instances, chosen, timeout, memory_mb, out, command, log=click.echo)
    click.echo(f"wrote {out}")


if __name__ == "__main__":
    main(prog_name="python -m benchmarks.shallow_nets")
