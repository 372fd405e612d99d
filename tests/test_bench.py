"""``symreach bench`` and the job runner of ``symreach.bench.runner``.

Small and fast: three tiny instance files, the explicit and BDD engines, and
fake engines (loaded by the children as ``tests.test_bench:Class``) that lie,
hang or eat memory, to check that the runner detects and reports each case.
"""

from __future__ import annotations

import csv
import io
import json
import re
import time

import pytest
import yaml
from click.testing import CliRunner

from symreach.bench import runner as bench
from symreach.cli.bench import bench_command
from symreach.frontends.reduction_pebbling import encode_pebbling
from symreach.result import Result, Verdict

# ---------------------------------------------------------------------------
# fake engines, imported by the job processes
# ---------------------------------------------------------------------------


class LyingEngine:
    """Asks the explicit engine, then answers the opposite."""

    name = "liar"

    def check(self, instance, query=None, limits=None):
        from symreach.solvers.explicit import ExplicitEngine

        truth = ExplicitEngine().check(instance, query, limits).verdict
        flipped = Verdict.NOT_DEPLOYABLE if truth is Verdict.DEPLOYABLE else Verdict.DEPLOYABLE
        return Result(flipped, self.name, stats={"states": -1})


class HangingEngine:
    """Ignores its time limit."""

    name = "hang"

    def check(self, instance, query=None, limits=None):
        time.sleep(60)
        raise AssertionError("should have been killed")


class SlowStartEngine:
    """Takes 3 s to construct (as ``auto`` imports every engine), then answers at once."""

    name = "slow-start"

    def __init__(self) -> None:
        time.sleep(3.0)

    def check(self, instance, query=None, limits=None):
        from symreach.solvers.explicit import ExplicitEngine

        return ExplicitEngine().check(instance, query, limits)


class HungryEngine:
    """Allocates until the address-space limit stops it."""

    name = "hungry"

    def check(self, instance, query=None, limits=None):
        hoard = []
        while True:
            hoard.append(bytearray(64 * 1024 * 1024))


class CrashingEngine:
    name = "crash"

    def check(self, instance, query=None, limits=None):
        raise RuntimeError("engine bug for the test")


HERE = "tests.test_bench"

# ---------------------------------------------------------------------------
# a folder of three tiny instances
# ---------------------------------------------------------------------------

# Path a -> b -> c: pebbling c needs 2 pebbles.
PATH = (["a", "b", "c"], [["a", "b"], ["b", "c"]], "c")

ANTI = {
    "version": 1,
    "nodes": [{"name": "n1", "capacity": {"cpu": "2"}}],
    "podTypes": [
        {"name": "db", "labels": {"app": "db"}, "requests": {"cpu": "1"}, "creatable": False},
        {"name": "web", "labels": {"app": "web"}, "requests": {"cpu": "1"},
         "affinity": {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
             {"labelSelector": {"matchLabels": {"app": "db"}},
              "topologyKey": "kubernetes.io/hostname"}]}}},
    ],
    "initial": [{"pod": "db", "node": "n1"}],
    "query": {"pod": "web", "node": "n1"},
}
EXPECTED = {"path-k2.yaml": "deployable", "path-k1.yaml": "not-deployable",
            "anti.json": "deployable"}  # delete the db pod, then deploy web


@pytest.fixture
def folder(tmp_path):
    d = tmp_path / "instances"
    d.mkdir()
    (d / "path-k2.yaml").write_text(yaml.safe_dump(encode_pebbling(*PATH, 2), sort_keys=False))
    (d / "path-k1.yaml").write_text(yaml.safe_dump(encode_pebbling(*PATH, 1), sort_keys=False))
    (d / "anti.json").write_text(json.dumps(ANTI))
    (d / "notes.txt").write_text("not an instance")
    return d


def _cells(row: str) -> list[str]:
    """The columns of a table row (cells hold single spaces, columns two or more)."""
    return re.split(r"\s{2,}", row.strip())


def _run(args):
    return CliRunner().invoke(bench_command, [str(a) for a in args], catch_exceptions=False)


def test_bench_folder_table_and_csv(folder, tmp_path):
    out_csv, out_json = tmp_path / "r.csv", tmp_path / "r.json"
    res = _run([folder, "--engines", "explicit,bdd", "--timeout", "20", "--csv", out_csv,
                "--json", out_json])
    assert res.exit_code == 0, res.output
    lines = res.stdout.splitlines()
    header = lines[0].split()
    assert header[:4] == ["instance", "expected", "explicit", "bdd"] and header[4] == "winner"
    for name, verdict in EXPECTED.items():
        row = _cells(next(line for line in lines if line.startswith(name)))
        word = {"deployable": "yes", "not-deployable": "no"}[verdict]
        assert row[2].split()[0] == word and row[3].split()[0] == word, row
        assert row[4] in ("explicit", "bdd")  # the winner
    assert "notes.txt" not in res.output
    rows = list(csv.DictReader(io.StringIO(out_csv.read_text())))
    assert len(rows) == 6
    assert {(r["instance"], r["engine"]) for r in rows} == {
        (f, e) for f in EXPECTED for e in ("explicit", "bdd")}
    for r in rows:
        assert r["verdict"] == EXPECTED[r["instance"]], r
        assert r["status"] == "ok" and float(r["time_s"]) >= 0 and float(r["peak_mb"]) > 0
        assert float(r["cpu_s"]) >= 0
    explicit_rows = [r for r in rows if r["engine"] == "explicit"]
    assert all(int(r["states"]) >= 1 for r in explicit_rows)  # engine stats are flattened
    data = json.loads(out_json.read_text())
    assert data["failures"] == [] and len(data["results"]) == 6


def test_bench_disagreement_fails_loudly(folder, tmp_path):
    out_csv = tmp_path / "r.csv"
    res = _run([folder, "--engines", f"explicit,{HERE}:LyingEngine", "--timeout", "20",
                "--csv", out_csv])
    assert res.exit_code == 1
    assert "BENCHMARK FAILED" in res.output
    for name in EXPECTED:
        assert f"engines disagree on {name}" in res.output
        row = next(line for line in res.output.splitlines() if line.startswith(name))
        assert row.rstrip().endswith("!!")
    assert len(out_csv.read_text().splitlines()) == 7  # results are written before failing


def test_bench_usage_errors(folder, tmp_path):
    assert _run([folder, "--engines", "nosuch"]).exit_code == 2
    empty = tmp_path / "empty"
    empty.mkdir()
    res = CliRunner().invoke(bench_command, [str(empty), "--engines", "explicit"])
    assert res.exit_code == 2 and "no instance file" in res.output


def _job(engine, expected="deployable"):
    doc = encode_pebbling(*PATH, 2 if expected == "deployable" else 1)
    inst = bench.BenchInstance(f"path/{engine}", "path", 3, document=doc, expected=expected)
    return bench.Job(inst, engine)


def test_runner_kills_hanging_engine_and_stops_memory_hogs():
    """Each limit is tested where only it can fire: the hanging engine under a
    short time limit; the memory hog and the crashing engine under a time
    limit far longer than they need on any machine, loaded or not."""
    (hang,) = bench.run_jobs([_job(f"{HERE}:HangingEngine")], timeout_s=1.0, memory_mb=400,
                             parallel=1, grace_s=1.0)
    hungry, crash = bench.run_jobs([_job(f"{HERE}:HungryEngine"), _job(f"{HERE}:CrashingEngine")],
                                   timeout_s=300.0, memory_mb=400, parallel=2, grace_s=1.0)
    assert hang.status == "timeout" and hang.verdict == "unknown" and not hang.solved
    assert hungry.status == "memout" and hungry.peak_mb < 450
    assert crash.status == "error" and "engine bug for the test" in crash.error
    res = [hang, hungry, crash]
    kinds = {f.kind for f in bench.failures(res)}
    assert kinds == {"crash"}
    assert bench.failures(res, crashes_fail=False) == []


def test_runner_limit_starts_when_the_check_begins():
    """Construction and loading are not the engine's time: a 3 s start-up under a
    0.5 s limit (+ 0.5 s grace) is not a timeout; the hanging engine still is."""
    slow, hang = bench.run_jobs([_job(f"{HERE}:SlowStartEngine"), _job(f"{HERE}:HangingEngine")],
                                timeout_s=0.5, memory_mb=None, parallel=2, grace_s=0.5)
    assert slow.status == "ok" and slow.verdict == "deployable"
    assert hang.status == "timeout" and "after its check began" in hang.error


def _r(instance, engine, verdict, expected=None):
    status = "ok" if verdict in bench.DECIDED else "unknown"
    return bench.JobResult(instance, "f", 1, engine, expected, status, verdict, time_s=0.1)


def test_failures_against_ground_truth_and_between_engines():
    ok = [_r("a", "x", "deployable", "deployable"), _r("a", "y", "unknown", "deployable")]
    assert bench.failures(ok) == []
    wrong = [_r("b", "x", "not-deployable", "deployable")]
    assert [f.kind for f in bench.failures(wrong)] == ["wrong"]
    split = [_r("c", "x", "deployable"), _r("c", "y", "not-deployable")]
    found = bench.failures(split)
    assert [f.kind for f in found] == ["disagreement"]
    assert "x=deployable" in found[0].message and "y=not-deployable" in found[0].message
    assert "BENCHMARK FAILED" in bench.failure_report(found)


def test_series_stop_after_first_failure():
    insts = [bench.BenchInstance(f"s/{n}", "s", n, document=encode_pebbling(*PATH, 2),
                                 series="s") for n in (3, 1, 2)]
    res = bench.run_jobs([bench.Job(i, f"{HERE}:HangingEngine") for i in insts], timeout_s=0.5,
                         parallel=1, grace_s=0.5)
    by = {r.instance: r.status for r in res}
    assert by == {"s/1": "timeout", "s/2": "skipped", "s/3": "skipped"}
    assert [r.instance for r in res] == ["s/3", "s/1", "s/2"]  # input order is kept


DUMP = """\
apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: Node
  metadata: {name: n1}
  status: {allocatable: {cpu: "2", memory: 4Gi, pods: "110"}}
- apiVersion: apps/v1
  kind: Deployment
  metadata: {name: web, namespace: default}
  spec:
    selector: {matchLabels: {app: web}}
    template:
      metadata: {labels: {app: web}}
      spec:
        containers: [{name: c, image: nginx, resources: {requests: {cpu: 500m}}}]
"""


def test_bench_kubernetes_dump_needs_a_query(tmp_path):
    d = tmp_path / "dumps"
    d.mkdir()
    (d / "cluster.yaml").write_text(DUMP)
    res = CliRunner().invoke(bench_command, [str(d), "--engines", "explicit"])
    assert res.exit_code == 2 and "no query" in res.output
    res = _run([d, "--engines", "explicit", "--pod", "default/web", "--node", "n1"])
    assert res.exit_code == 0, res.output
    assert next(line for line in res.output.splitlines()
                if line.startswith("cluster.yaml")).split()[2] == "yes"


def test_bench_takes_files_folders_and_standard_input(folder, tmp_path):
    """Each file given, each file of a folder given (recursively) and ``-`` is one instance."""
    nested = tmp_path / "more" / "deeper"
    nested.mkdir(parents=True)
    (nested / "path-k1.yaml").write_text((folder / "path-k1.yaml").read_text())
    res = CliRunner().invoke(bench_command, [str(folder / "anti.json"), str(tmp_path / "more"), "-",
                                             "--engines", "explicit", "--timeout", "20"],
                             input=(folder / "path-k2.yaml").read_text(), catch_exceptions=False)
    assert res.exit_code == 0, res.output
    rows = [line.split()[0] for line in res.stdout.splitlines()
            if line.split() and line.split()[0].endswith((".yaml", ".json"))]
    assert sorted(rows) == ["anti.json", "path-k1.yaml", "stdin.yaml"]
