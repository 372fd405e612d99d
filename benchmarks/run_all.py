"""Run the engine comparison and regenerate the results and the README.

    python -m benchmarks.run_all            # full run, about 25 min on 2 cores
    python -m benchmarks.run_all --quick    # ~1 min smoke run into benchmarks/results/quick
    python -m benchmarks.run_all --families mcc --shallow   # + the shallow-net section

Exit status: 0 when every decided verdict agrees with the other engines and
with the known answers and no engine crashed; 1 otherwise (the problems are
printed in a loud block at the end); 2 for bad options.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import click

from benchmarks import families, shallow_nets
from benchmarks.harness import ALL_ENGINES, README, generated_section, run_benchmark, update_readme, \
    write_outputs
from symreach.bench import runner as bench
from symreach.bench import tables as bench_tables

RESULTS = Path(__file__).resolve().parent / "results"

# Full run: 2 jobs at a time on 2 cores, then ``auto`` alone: about 25 minutes at a
# load average of 2 (the two phases took 1,000 and 300 s). Series stop at an engine's
# first failure, and a budget per phase cuts the largest jobs if the machine is
# slower than that (the whole run stays under about 50 minutes).
FULL_BUDGET = 25 * 60.0


@click.command(context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--quick", is_flag=True, help="Small sizes and short limits; results in results/quick, "
                                            "README untouched.")
@click.option("--engines", default=",".join(ALL_ENGINES), show_default=True,
              help="Comma-separated engine names; unavailable ones are skipped with a note.")
@click.option("--families", "family_names", default=",".join(families.FAMILIES), show_default=True,
              help="Comma-separated families.")
@click.option("--timeout", type=click.FloatRange(min=0.1), default=None,
              help=f"Seconds per job, for every family [full: {families.FULL.timeout_s:g}, "
                   f"pebbling {families.FULL.timeout_for('pyramid'):g}, mcc "
                   f"{families.FULL.timeout_for('mcc'):g}; quick: {families.QUICK.timeout_s:g}].")
@click.option("--memory-mb", type=click.IntRange(min=64), default=2048, show_default=True,
              help="Address-space limit per job.")
@click.option("--jobs", "parallel", type=click.IntRange(min=1), default=2, show_default=True,
              help="Jobs at a time.")
@click.option("--budget", type=click.FloatRange(min=1), default=None,
              help=f"Start no job after this many seconds [full: {FULL_BUDGET:g}].")
@click.option("--noise", type=click.IntRange(min=0), default=None,
              help="Re-run a few jobs this many times to measure timing noise [full: 2, quick: 0].")
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Output folder [results or results/quick].")
@click.option("--readme/--no-readme", default=None, help="Regenerate benchmarks/README.md "
                                                         "[full: yes, quick: no].")
@click.option("--no-plots", is_flag=True, help="Skip the PNG plots.")
@click.option("--tolerate-crashes", is_flag=True, help="Engine crashes are reported but do not "
                                                       "fail the run.")
@click.option("--cpu-limits", "cpu_wall_factor", type=click.FloatRange(min=1), default=None,
              metavar="FACTOR", help="Each job's limit is CPU seconds of its process tree, and its "
                                     "wall-clock limit FACTOR times that (a loaded machine).")
@click.option("--shallow/--no-shallow", default=False, show_default=True,
              help="Also run the shallow-net section (benchmarks/shallow_nets.py: auto and every "
                   "engine per goal, one job at a time) into <out>/shallow_nets.md.")
def main(quick, engines, family_names, timeout, memory_mb, parallel, budget, noise, out, readme,
         no_plots, tolerate_crashes, cpu_wall_factor, shallow) -> None:
    """Every engine on every benchmark family; CSV, JSON, plots and README."""
    start = time.perf_counter()
    plan = families.QUICK if quick else families.FULL
    family_timeouts = {} if timeout else dict(plan.family_timeout_s)
    shallow_timeout = timeout
    timeout = timeout or plan.timeout_s
    budget = budget if budget is not None else (None if quick else FULL_BUDGET)
    noise = noise if noise is not None else (0 if quick else 2)
    out = out or (RESULTS / "quick" if quick else RESULTS)
    readme = (not quick) if readme is None else readme
    names = [f.strip() for f in family_names.split(",") if f.strip()]
    try:
        instances = families.build(plan, names)
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="--families")
    click.echo(f"built {len(instances)} instances in {time.perf_counter() - start:.1f} s")
    command = "python -m benchmarks.run_all" + (" --quick" if quick else "") + \
        (f" --cpu-limits {cpu_wall_factor:g}" if cpu_wall_factor else "")
    run = run_benchmark(instances, [e.strip() for e in engines.split(",") if e.strip()], timeout,
                        memory_mb, parallel=parallel, budget_s=budget, noise_repeats=noise,
                        crashes_fail=not tolerate_crashes, log=lambda s: click.echo(s),
                        extra_meta={"command": command, "plan": "quick" if quick else "full"},
                        family_timeout_s=family_timeouts, cpu_wall_factor=cpu_wall_factor)
    run.meta["total_wall_s"] = round(time.perf_counter() - start, 1)
    files = write_outputs(run, out, plots=not no_plots)
    if readme:
        update_readme(generated_section(run, out))
        files.append(README)
    if shallow:
        files.append(shallow_nets.run_section(quick, shallow_timeout, memory_mb, out, log=click.echo))
    run.meta["total_wall_s"] = round(time.perf_counter() - start, 1)
    click.echo("")
    click.echo(bench_tables.format_grid(*bench_tables.summary_rows(run.results)))
    click.echo("")
    for path in files:
        click.echo(f"wrote {path}")
    click.echo(f"total wall time {run.meta['total_wall_s']:.0f} s")
    if run.failures:
        click.echo(bench.failure_report(run.failures), err=True)
        sys.exit(1)
    click.echo("OK: all decided verdicts agree (with each other and with the known answers)")


if __name__ == "__main__":
    main(prog_name="python -m benchmarks.run_all")
