"""The committed benchmark results agree with themselves: what each plot shows (its
data file beside the PNG) counts what the tables count (``results.csv`` and the
generated README section), all from the one run of ``python -m benchmarks.run_all``.
"""

from __future__ import annotations

import csv
import json
import re
from pathlib import Path

import pytest

from symreach.bench import analysis
from symreach.bench.runner import JobResult

RESULTS = Path(__file__).resolve().parents[1] / "benchmarks" / "results"
README = RESULTS.parent / "README.md"


def _float(x: str):
    return float(x) if x not in ("", None) else None


@pytest.fixture(scope="module")
def results() -> list[JobResult]:
    path = RESULTS / "results.csv"
    if not path.exists():
        pytest.skip("no benchmark results committed")
    with path.open() as handle:
        return [JobResult(r["instance"], r["family"], float(r["size"]), r["engine"], r["expected"] or None,
                          r["status"], r["verdict"], limit_s=_float(r["limit_s"]), time_s=_float(r["time_s"]),
                          cpu_s=_float(r["cpu_s"]), cpu_limit_s=_float(r.get("cpu_limit_s", "")))
                for r in csv.DictReader(handle)]


def _data(name: str) -> dict:
    return json.loads((RESULTS / name).read_text())


def test_cactus_counts_equal_the_tables(results):
    cactus = _data("cactus.json")
    engines = analysis.engines_in(results)
    solved = {e: sum(r.solved for r in results if r.engine == e) for e in engines}
    assert {e: d["solved"] for e, d in cactus["engines"].items()} == solved
    assert all(len(d["times"]) == d["solved"] for d in cactus["engines"].values())
    assert cactus["instances"] == len(analysis.instances_in(results))
    # the README's "per engine over all families" table, from the same run
    text = README.read_text()
    rows = {m.group(1): m.group(2) for m in re.finditer(r"^\| (\S+) \| (\d+)/\d+ \| ", text, re.M)
            if m.group(1) in solved}
    assert rows and {e: int(n) for e, n in rows.items()} == solved


def _ties(results, a: str, b: str) -> int:
    """Instances both engines decided in the same time as written in results.csv."""
    cells: dict[str, dict[str, JobResult]] = {}
    for r in results:
        cells.setdefault(r.instance, {})[r.engine] = r
    return sum(1 for c in cells.values() if a in c and b in c and c[a].solved and c[b].solved
               and c[a].time_s == c[b].time_s)


def test_scatter_counts_equal_the_pair_tables(results):
    files = sorted(RESULTS.glob("scatter-*.json"))
    assert files
    for path in files:
        data = json.loads(path.read_text())
        stats = analysis.pair_stats(results, data["x_engine"], data["y_engine"])
        counts = dict(data["counts"])
        # results.csv keeps 4 decimals: a pair faster by less than that is a tie there
        ties = _ties(results, data["x_engine"], data["y_engine"])
        assert stats.a_faster <= counts.pop("x_faster") <= stats.a_faster + ties, path.name
        assert counts == {"both": stats.both, "x_only": stats.a_only, "y_only": stats.b_only,
                          "neither": stats.neither}, path.name
        assert len(data["points"]) == stats.both + stats.a_only + stats.b_only + stats.neither
        assert path.with_suffix(".png").exists()


def test_time_vs_size_counts_equal_the_tables(results):
    families = _data("time_vs_size.json")["families"]
    checked = 0
    for family, engines in families.items():
        for engine, d in engines.items():
            rs = [r for r in results if r.family == family and r.engine == engine]
            assert len(d["solved"]) == sum(r.solved for r in rs)
            assert len(d["unsolved"]) == sum(not r.solved and r.status != "skipped" for r in rs)
            checked += 1
    assert checked == len({(r.family, r.engine) for r in results})
