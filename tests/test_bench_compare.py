"""``symreach bench`` as a comparison: winners, ratios, PAR-2, pairs, progress,
the CPU limit, plots with their data, and the run's metadata.

Small instances (tests/test_bench.py's folder) and synthetic results; no
assertion depends on how fast the machine is.
"""

from __future__ import annotations

import csv
import io
import json
import math
import os
import time

import pytest
from click.testing import CliRunner

from symreach.bench import analysis
from symreach.bench import runner as bench
from symreach.bench.progress import BenchProgress
from symreach.cli.bench import bench_command
from tests.test_bench import EXPECTED, _job, folder  # noqa: F401  (a fixture)

HERE = "tests.test_bench_compare"


class BurningEngine:
    """Spins on the CPU, ignoring its time limit."""

    name = "burn"

    def check(self, instance, query=None, limits=None):
        while True:
            pass


class ForkingBurner:
    """Leaves the spinning to a child process (as ``auto``'s workers and ABC do)."""

    name = "fork-burn"

    def check(self, instance, query=None, limits=None):
        pid = os.fork()
        if pid == 0:
            while True:
                pass
        os.waitpid(pid, 0)


def _r(instance, engine, verdict, time_s, limit_s=10.0, status=None):
    status = status or ("ok" if verdict in bench.DECIDED else "timeout")
    return bench.JobResult(instance, "fam", 1, engine, None, status, verdict, limit_s=limit_s,
                           time_s=time_s, cpu_s=time_s)


RESULTS = [
    _r("i1", "a", "deployable", 1.0), _r("i1", "b", "deployable", 4.0), _r("i1", "c", "unknown", 10.0),
    _r("i2", "a", "not-deployable", 2.0), _r("i2", "b", "not-deployable", 0.5),
    _r("i2", "c", "not-deployable", 0.5),
    _r("i3", "a", "unknown", 10.0), _r("i3", "b", "unknown", 10.0), _r("i3", "c", "deployable", 3.0),
    _r("i4", "a", "unknown", 10.0), _r("i4", "b", "unknown", 10.0), _r("i4", "c", "unknown", 10.0),
]


def test_winner_ratio_par2_pairs_and_unique_solvers():
    wins = analysis.winners(RESULTS)
    assert {i: w.engine for i, w in wins.items()} == {"i1": "a", "i2": "b", "i3": "c", "i4": None}
    assert analysis.ratio_to_best(RESULTS[1], wins["i1"]) == pytest.approx(4.0)
    assert analysis.ratio_to_best(RESULTS[2], wins["i1"]) is None
    # PAR-2 of a: (1 + 2 + 20 + 20) / 4
    assert analysis.par2(RESULTS, "a") == pytest.approx(43 / 4)
    ab = analysis.pair_stats(RESULTS, "a", "b")
    assert (ab.both, ab.a_only, ab.b_only, ab.neither, ab.a_faster) == (2, 0, 0, 2, 1)
    assert ab.geo_mean == pytest.approx(math.sqrt(1 / 4 * 2 / 0.5))
    assert analysis.unique_solves(RESULTS) == {"a": [], "b": [], "c": ["i3"]}
    headers, rows = analysis.engine_summary_rows(RESULTS)
    assert headers[:4] == ["engine", "solved", "fastest", "only solver"]
    assert [r[:4] for r in rows] == [["a", "2/4", "1", "0"], ["b", "2/4", "1", "0"],
                                     ["c", "2/4", "1", "1"]]
    assert len(analysis.pair_rows(RESULTS)[1]) == 3  # every pair of three engines


def test_progress_bar_on_a_terminal_and_lines_elsewhere():
    now = [0.0]
    out = io.StringIO()
    bar = BenchProgress(4, 2, stream=out, tty=True, clock=lambda: now[0])
    job = _job("explicit")
    bar.on_start(job)
    bar.on_start(job)
    now[0] = 10.0
    bar.on_result(RESULTS[0])
    assert "1/4 done, 1 running" in bar.line() and "ETA 0m30s" in bar.line()
    bar.close()
    assert out.getvalue().startswith("\r") and out.getvalue().endswith("\n")
    plain = io.StringIO()
    lines = BenchProgress(2, 1, stream=plain, tty=False, clock=lambda: now[0])
    lines.on_start(job)
    lines.on_result(RESULTS[0])
    lines.on_result(RESULTS[2])
    lines.close()
    text = plain.getvalue().splitlines()
    assert len(text) == 2 and "\r" not in plain.getvalue()
    assert text[0].startswith("[1/2") and "i1" in text[0] and "t/o" in text[1]


@pytest.mark.parametrize("engine", ["BurningEngine", "ForkingBurner"])
def test_cpu_limit_counts_the_whole_process_tree(engine):
    """Both spin far past a 0.5 s CPU limit under a wall limit they never reach first."""
    (res,) = bench.run_jobs([_job(f"{HERE}:{engine}")], timeout_s=600.0, memory_mb=None,
                            parallel=1, cpu_limit_s=0.5)
    assert res.status == "cpu-out" and not res.solved, res.error
    assert res.cpu_limit_s == 0.5 and "CPU limit" in res.error
    assert res.cpu_s is not None and res.load_start is not None and res.load_end is not None


def test_bench_cli_summary_plots_and_metadata(folder, tmp_path):  # noqa: F811
    pytest.importorskip("matplotlib")
    out_csv, out_json, plots = tmp_path / "r.csv", tmp_path / "r.json", tmp_path / "plots"
    res = CliRunner().invoke(bench_command, [str(folder), "--engines", "explicit,bdd", "--timeout", "60",
                                             "--cpu-limit", "60", "--plot", str(plots),
                                             "--csv", str(out_csv), "--json", str(out_json)],
                             catch_exceptions=False)
    assert res.exit_code == 0, res.output
    for title in ("per engine:", "per engine pair:", "PAR-2"):
        assert title in res.stdout
    assert "[6/6" in res.output  # the progress: one line per job (stderr, not a terminal)
    data = json.loads(out_json.read_text())
    meta = data["meta"]
    assert meta["symreach_version"] and "commit" in meta and meta["machine"]["cores"] >= 1
    assert meta["machine"]["cpu"] is not None and meta["engine_options"]["cpu_limit_s"] == 60
    assert isinstance(meta["load_start"], float) and isinstance(meta["load_end"], float)
    assert len(data["results"]) == 6
    assert all(r["cpu_s"] is not None and r["time_s"] is not None for r in data["results"])
    rows = list(csv.DictReader(io.StringIO(out_csv.read_text())))
    assert len(rows) == 6 and all(r["symreach_version"] and r["cores"] and r["load_start"] for r in rows)
    names = sorted(p.name for p in plots.iterdir())
    assert names == sorted(["cactus.png", "cactus.json", "scatter-explicit-vs-bdd.png",
                            "scatter-explicit-vs-bdd.json", "time_vs_size.png", "time_vs_size.json"])
    cactus = json.loads((plots / "cactus.json").read_text())
    assert cactus["instances"] == 3 and {e: d["solved"] for e, d in cactus["engines"].items()} == {
        "explicit": 3, "bdd": 3}
    scatter = json.loads((plots / "scatter-explicit-vs-bdd.json").read_text())
    assert scatter["counts"]["both"] == 3 and len(scatter["points"]) == 3
    sizes = json.loads((plots / "time_vs_size.json").read_text())["families"]
    assert sum(len(d["solved"]) for f in sizes.values() for d in f.values()) == 6
