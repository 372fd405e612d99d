"""One benchmark run: families x engines -> results, summary, plots, README.

``run_benchmark`` builds the instances (``families``), runs every available
engine on every instance through ``symreach.bench.runner`` (one process per job,
time and memory limits, at most ``parallel`` jobs at a time), checks the
verdicts against each other and against the known answers, and writes to
``out``:

- ``results.csv`` (one row per job, the interesting engine counters
  flattened) and ``results.json`` (every counter, the run's metadata and
  its failures);
- ``summary.md``: the family x engine table and the ratio tables;
- ``cactus.png``, ``scatter-A-vs-B.png`` per pair of ``RATIO_PAIRS``,
  ``time_vs_size.png``, ``bdd_nodes_vs_ic3_frames.png``, each with its data
  as ``NAME.json`` beside it;
- and, when asked, the generated section of ``benchmarks/README.md``.

The command line is ``benchmarks/run_all.py``.
"""

from __future__ import annotations

import json
import math
import os
import statistics
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional, Sequence

from benchmarks.auto_vs_best import AUTO as AUTO_ENGINE
from benchmarks.auto_vs_best import auto_section
from symreach.bench import analysis
from symreach.bench import runner as bench
from symreach.bench import tables as bench_tables
from symreach.bench.meta import run_meta
from symreach.bench.plots import scatter_name
from symreach.bench.runner import BenchInstance, Job, JobResult

ALL_ENGINES = ("explicit", "bdd", "bmc", "ic3", "lazy", "abc-pdr", "abc-bmc", "abc-reach", "auto")
# engines that run alone, after the others: ``auto`` time-slices its own engines on
# both cores, so a job beside it would take half of its schedule away
EXCLUSIVE_ENGINES = (AUTO_ENGINE,)
# (ours, reference): ratio tables printed side by side from the same run
RATIO_PAIRS = (("bdd", "abc-reach"), ("ic3", "abc-pdr"), ("bmc", "abc-bmc"), ("bdd", "ic3"),
               ("bdd", "explicit"))
README = Path(__file__).resolve().parent / "README.md"
BEGIN, END = "<!-- BEGIN GENERATED: python -m benchmarks.run_all -->", "<!-- END GENERATED -->"


@dataclass
class Run:
    results: list[JobResult]
    failures: list[bench.Failure]
    meta: dict
    skipped_engines: dict[str, str] = field(default_factory=dict)
    noise: list[dict] = field(default_factory=list)


def select_engines(wanted: Sequence[str]) -> tuple[list[str], dict[str, str]]:
    """The engines that can run here, and a note for each one that cannot."""
    usable, notes = [], {}
    for name in wanted:
        why = bench.engine_unavailable(name)
        if why is None:
            usable.append(name)
        else:
            notes[name] = why
    return usable, notes


def run_benchmark(instances: Sequence[BenchInstance], engines: Sequence[str], timeout_s: float,
                  memory_mb: Optional[int], parallel: int = 2, budget_s: Optional[float] = None,
                  noise_repeats: int = 0, crashes_fail: bool = True, log=print,
                  extra_meta: Optional[dict] = None,
                  family_timeout_s: Optional[dict] = None,
                  cpu_wall_factor: Optional[float] = None) -> Run:
    """``timeout_s`` per job, or ``family_timeout_s[family]`` when given.

    ``cpu_wall_factor``: that limit is in CPU seconds of the job's process tree
    instead, and the wall-clock limit (the engines' own deadline too) this many
    times longer: on a loaded machine a wall-clock limit measures the load.

    Jobs of ``EXCLUSIVE_ENGINES`` run in a second phase, one at a time, with
    a budget of their own (``budget_s`` again)."""
    usable, notes = select_engines(engines)
    for name, why in notes.items():
        log(f"note: engine {name} skipped: {why}")
    limits = {f: t for f, t in (family_timeout_s or {}).items()
              if any(i.family == f for i in instances)}
    if cpu_wall_factor:
        jobs = [Job(inst, engine, limits.get(inst.family, timeout_s) * cpu_wall_factor,
                    cpu_limit_s=limits.get(inst.family, timeout_s))
                for inst in instances for engine in usable]
    else:
        jobs = [Job(inst, engine, limits.get(inst.family, timeout_s))
                for inst in instances for engine in usable]
    per_family = ", ".join(f"{f} {t:g} s" for f, t in limits.items())
    shared = [j for j in jobs if j.engine not in EXCLUSIVE_ENGINES]
    alone = [j for j in jobs if j.engine in EXCLUSIVE_ENGINES]
    log(f"{len(instances)} instances x {len(usable)} engines = {len(jobs)} jobs "
        f"(limit {timeout_s:g} s" + (f"; {per_family}" if per_family else "")
        + (f" of CPU, wall {cpu_wall_factor:g}x that" if cpu_wall_factor else "")
        + f", {memory_mb or 'no'} MB, {parallel} at a time"
        + (f", then {', '.join(sorted({j.engine for j in alone}))} alone" if alone else "")
        + (f", budget {budget_s:g} s" + (" per phase" if alone else "") if budget_s else "") + ")")
    done = [0]
    started = run_meta()
    t0 = time.perf_counter()

    def progress(r: JobResult) -> None:
        done[0] += 1
        extra = f" ({r.error.strip().splitlines()[-1][:100]})" if r.status == "error" and r.error.strip() else ""
        log(f"[{done[0]:>4}/{len(jobs)} {time.perf_counter() - t0:6.0f}s] {r.engine:<9} "
            f"{bench_tables.cell(r):<10} {r.instance}{extra}")

    results = bench.run_jobs(shared, timeout_s, memory_mb, parallel=parallel, budget_s=budget_s,
                             on_result=progress)
    if alone:
        results += bench.run_jobs(alone, timeout_s, memory_mb, parallel=1, budget_s=budget_s,
                                  on_result=progress)
    wall = time.perf_counter() - t0
    noise = measure_noise(results, instances, timeout_s, memory_mb, parallel, noise_repeats, log) \
        if noise_repeats else []
    found = bench.failures(results, crashes_fail=crashes_fail)
    meta = {**started, "engines": usable, "skipped_engines": notes,
            "timeout_s": timeout_s, "family_timeout_s": limits, "memory_mb": memory_mb,
            "parallel": parallel, "cpu_wall_factor": cpu_wall_factor,
            "budget_s": budget_s, "jobs": len(jobs), "instances": len(instances),
            "wall_s": round(wall, 1), "total_wall_s": round(time.perf_counter() - t0, 1),
            "load_end": round(os.getloadavg()[0], 2)}
    meta["engine_options"] = {k: meta[k] for k in ("engines", "timeout_s", "family_timeout_s",
                                                  "memory_mb", "parallel", "budget_s",
                                                  "cpu_wall_factor")}
    meta.update(extra_meta or {})
    return Run(results, found, meta, notes, noise)


def measure_noise(results: Sequence[JobResult], instances: Sequence[BenchInstance], timeout_s: float,
                  memory_mb: Optional[int], parallel: int, repeats: int, log) -> list[dict]:
    """Re-run a few solved jobs of 0.3-5 s ``repeats`` more times under the same load."""
    by_id = {i.id: i for i in instances}
    picks: list[JobResult] = []
    seen_engines: dict[str, int] = {}
    for r in sorted(results, key=lambda r: (r.time_s or 0)):
        if r.solved and 0.3 <= (r.time_s or 0) <= 5 and seen_engines.get(r.engine, 0) < 2 \
                and r.engine not in EXCLUSIVE_ENGINES:
            picks.append(r)
            seen_engines[r.engine] = seen_engines.get(r.engine, 0) + 1
    jobs = [Job(by_id[r.instance], r.engine, r.limit_s, cpu_limit_s=r.cpu_limit_s)
            for r in picks for _ in range(repeats)]
    if not jobs:
        return []
    log(f"noise: re-running {len(picks)} jobs {repeats} more times")
    again = bench.run_jobs(jobs, timeout_s, memory_mb, parallel=parallel, stop_series=False)
    out = []
    for r in picks:
        times = [r.time_s] + [a.time_s for a in again
                              if a.instance == r.instance and a.engine == r.engine and a.solved]
        med = statistics.median(times)
        out.append({"instance": r.instance, "engine": r.engine, "times": [round(t, 3) for t in times],
                    "spread": round((max(times) - min(times)) / med, 3) if med else 0.0})
    return out


# ---------------------------------------------------------------------------
# writing
# ---------------------------------------------------------------------------

def write_outputs(run: Run, out: Path, plots: bool = True) -> list[Path]:
    out.mkdir(parents=True, exist_ok=True)
    files = [out / "results.csv", out / "results.json", out / "summary.md"]
    bench_tables.write_csv(run.results, files[0], run.meta)
    data = bench_tables.results_json(run.results, run.meta, run.failures)
    data["noise"] = run.noise
    files[1].write_text(json.dumps(data, indent=1, default=str) + "\n")
    files[2].write_text(generated_section(run, out) + "\n")
    if plots:
        from benchmarks.plots import plot_all

        pngs, note = plot_all(run.results, out, RATIO_PAIRS)
        if note:
            run.meta["plots_note"] = note
        files += pngs
    return files


def _t(r: Optional[JobResult]) -> str:
    if r is None:
        return "-"
    if r.solved:
        return f"{r.time_s:.3f}"
    return {"skipped": "skip", "error": "ERR", "memout": "mem"}.get(r.status, f">{r.limit_s or 0:g}")


def ratio_section(results: Sequence[JobResult], a: str, b: str) -> Optional[str]:
    """Per instance: time of a, time of b, a/b — from the same run."""
    ra = {r.instance: r for r in results if r.engine == a}
    rb = {r.instance: r for r in results if r.engine == b}
    if not ra or not rb:
        return None
    rows, ratios, a_only, b_only = [], [], 0, 0
    for inst in ra:
        x, y = ra[inst], rb.get(inst)
        if y is None or not (x.solved or y.solved):
            continue
        if x.solved and y.solved:
            ratio = max(x.time_s, 1e-3) / max(y.time_s, 1e-3)
            ratios.append(ratio)
            text = f"{ratio:.2f}"
        elif x.solved:
            a_only += 1
            text = f"< {max(x.time_s, 1e-3) / (y.limit_s or 1):.2g}" if y.status != "error" else "-"
        else:
            b_only += 1
            text = f"> {(x.limit_s or 1) / max(y.time_s, 1e-3):.2g}" if x.status != "error" else "-"
        rows.append([inst, _t(x), _t(y), text])
    if not rows:
        return None
    geo = math.exp(sum(math.log(r) for r in ratios) / len(ratios)) if ratios else float("nan")
    faster = sum(r < 1 for r in ratios)
    head = (f"### {a} vs {b}\n\nBoth solved {len(ratios)}: {a} faster on {faster}, {b} faster on "
            f"{len(ratios) - faster}; geometric mean of {a}/{b} = {geo:.2f}. "
            f"Only {a} solved {a_only}, only {b} solved {b_only}. Ratios below 1 favour {a}; "
            f"`< x` / `> x` bound the ratio when one side hit the limit.\n\n")
    return head + bench_tables.format_grid(["instance", f"{a} s", f"{b} s", f"{a}/{b}"], rows, markdown=True)


def generated_section(run: Run, out: Path) -> str:
    meta = run.meta
    m = meta["machine"]
    lines = [f"## Latest run ({meta['date']})", "",
             f"`{meta.get('command', 'python -m benchmarks.run_all')}` on {m['cores']} cores "
             f"({m['cpu'] or 'unknown CPU'}, {m['memory_gb']} GB), Python {m['python']}. "
             f"{meta['instances']} instances x {len(meta['engines'])} engines = {meta['jobs']} jobs, "
             f"at most {meta['parallel']} at a time"
             + (" (then `auto` alone, one job at a time)" if AUTO_ENGINE in meta["engines"] else "")
             + f", limit {_limits(meta)} and "
             f"{meta['memory_mb'] or 'no'} MB per job; the run took {meta['total_wall_s']:.0f} s "
             f"of wall time. symreach {meta.get('symreach_version', '?')}, commit "
             f"`{_short_commit(meta.get('commit'))}`; 1-minute load average "
             f"{meta.get('load_start', '?')} at the start, {meta.get('load_end', '?')} at the end "
             f"(per job in `results.csv`: `load_start`, `load_end`).", ""]
    if run.skipped_engines:
        lines += ["Engines not run:", ""]
        lines += [f"- `{e}`: {why}" for e, why in run.skipped_engines.items()]
        lines.append("")
    cut = sum(r.status == "skipped" and r.error.startswith("time budget") for r in run.results)
    if cut:
        lines += [f"The time budget was spent before {cut} jobs could start; they count as "
                  "`skip` below.", ""]
    if run.failures:
        lines += [f"**This run FAILED ({len(run.failures)} problems):**", ""]
        lines += [f"- {f.kind}: {f.message}" for f in run.failures]
        lines.append("")
    else:
        lines += ["All decided verdicts agree with each other and with the known answers; no "
                  "engine crashed.", ""]
    lines += ["### Summary per family and engine", "",
              "`solved`: decided jobs / jobs; times are wall seconds of `engine.check` over the "
              "solved jobs (loading excluded); `unk/t-o`: the engine gave up or was killed at the "
              "limit; `skip`: not run because the engine already failed on a smaller instance of "
              "the same series.", ""]
    lines.append(bench_tables.format_grid(*bench_tables.summary_rows(run.results), markdown=True))
    lines.append("")
    lines += ["### Per engine over all families", "",
              "`fastest`: instances the engine decided first (wall time of `engine.check`); "
              "`only solver`: instances no other engine decided; PAR-2: mean time per job, "
              "twice the limit for a job not decided (skipped jobs included).", ""]
    lines.append(bench_tables.format_grid(*_merge_engine_tables(run.results), markdown=True))
    lines.append("")
    lines += ["### Engine pairs", "", "Geometric mean of a's time over b's on the instances both "
              "decided (below 1: a is faster); `only a`: decided by a and not by b.", ""]
    lines.append(bench_tables.format_grid(*analysis.pair_rows(run.results), markdown=True))
    lines.append("")
    pngs = [p for p in ["cactus.png", *[scatter_name(a, b) for a, b in RATIO_PAIRS],
                        "time_vs_size.png", "bdd_nodes_vs_ic3_frames.png"] if (out / p).exists()]
    if pngs:
        rel = os.path.relpath(out, README.parent)
        lines += ["### Plots", ""] + [f"![{p[:-4]}]({rel}/{p})" for p in pngs] + [""]
    elif meta.get("plots_note"):
        lines += [f"Plots: {meta['plots_note']}.", ""]
    lines += ["## Ratios side by side (same run)", ""]
    for a, b in RATIO_PAIRS:
        section = ratio_section(run.results, a, b)
        if section:
            lines += [section, ""]
        elif a in meta["engines"] or b in meta["engines"]:
            missing = [e for e in (a, b) if e not in meta["engines"]]
            if missing:
                lines += [f"### {a} vs {b}", "", f"Not available in this run: "
                          f"{', '.join(missing)} did not run.", ""]
    section = auto_section(run.results)
    if section:
        lines += [section, ""]
    if run.noise:
        spreads = [n["spread"] for n in run.noise]
        lines += ["## Noise", "",
                  f"{len(run.noise)} solved jobs were re-run under the same load; the spread "
                  f"(max - min) / median of their times was {min(spreads):.0%} to "
                  f"{max(spreads):.0%} (median {statistics.median(spreads):.0%}). Ratios closer to "
                  "1 than that are not significant.", ""]
        lines.append(bench_tables.format_grid(["instance", "engine", "times s", "spread"],
                                       [[n["instance"], n["engine"],
                                         ", ".join(f"{t:.2f}" for t in n["times"]),
                                         f"{n['spread']:.0%}"] for n in run.noise], markdown=True))
        lines.append("")
    lines += ["## Per instance", "", "`yes`/`no`: deployable / not deployable and the time in s; "
              "`unk`: engine gave up; `t/o`: killed at the limit; `mem`: memory limit; `ERR`: "
              "crash; `skip`: not run; `!!`: a failure on this instance.", ""]
    bad = {f.instance for f in run.failures}
    lines.append(bench_tables.format_grid(*bench_tables.instance_rows(run.results, bad), markdown=True))
    return "\n".join(lines).rstrip() + "\n"


def _short_commit(commit: Optional[str]) -> str:
    if not commit:
        return "unknown"
    return commit[:12] + ("+dirty" if commit.endswith("+dirty") else "")


def _limits(meta: dict) -> str:
    special = meta.get("family_timeout_s") or {}
    text = f"{meta['timeout_s']:g} s"
    if special:
        text += " (" + ", ".join(f"{f}: {t:g} s" for f, t in special.items()) + ")"
    if meta.get("cpu_wall_factor"):
        text += (f" of CPU (the job's process tree), wall-clock {meta['cpu_wall_factor']:g}x "
                 f"that")
    return text


def _merge_engine_tables(results: Sequence[JobResult]) -> tuple[list[str], list[list[str]]]:
    """``engine_totals`` and ``analysis.engine_summary_rows`` side by side, one row per engine."""
    head_a, rows_a = engine_totals(results)
    head_b, rows_b = analysis.engine_summary_rows(results)
    return head_a + head_b[2:], [a + b[2:] for a, b in zip(rows_a, rows_b)]


def engine_totals(results: Sequence[JobResult]) -> tuple[list[str], list[list[str]]]:
    headers = ["engine", "solved", "total s", "median s", "peak MB (max)"]
    rows = []
    for engine in bench_tables.engines_in(results):
        rs = [r for r in results if r.engine == engine]
        times = [r.time_s for r in rs if r.solved and r.time_s is not None]
        mem = [r.peak_mb for r in rs if r.peak_mb]
        rows.append([engine, f"{len(times)}/{len(rs)}", f"{sum(times):.1f}" if times else "-",
                     f"{statistics.median(times):.3f}" if times else "-",
                     f"{max(mem):.0f}" if mem else "-"])
    return headers, rows


def update_readme(section: str, readme: Path = README) -> None:
    """Replace the generated part of the README (between the markers) with ``section``."""
    text = readme.read_text() if readme.exists() else "# Benchmarks\n"
    block = f"{BEGIN}\n\n{section.rstrip()}\n\n{END}"
    if BEGIN in text and END in text:
        head, rest = text.split(BEGIN, 1)
        tail = rest.split(END, 1)[1]
        text = head + block + tail
    else:
        text = text.rstrip() + "\n\n" + block + "\n"
    readme.write_text(text)
