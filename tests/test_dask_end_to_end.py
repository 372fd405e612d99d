"""``matrix --executor dask`` end to end on real ``dask scheduler``/``dask worker`` processes:
the workers parse the input and plan the chunks themselves (``solvers.dask_source``), and
every fault has its test, each worker or scheduler killed by pid at a point the test
observes (the input shipped, a build started, the first results in), never after a sleep.
The command-line variants of a worker lost mid-run and of the scheduler lost are ``slow``
(8-12 s each at load 18); ``test_dask_faults`` has them on the executor in CI."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

pytest.importorskip("distributed")

from symreach.cli import matrix as matrix_cli  # noqa: E402
from symreach.cli import cli  # noqa: E402
from symreach.solvers import dask_source, executor as executor_module, registry  # noqa: E402
from symreach.solvers.executor import DaskExecutor  # noqa: E402
from tests.dask_cluster import GATE_ENV, add, gated_build, running, wait_until  # noqa: E402
from tests.test_dask_faults import heterogeneous  # noqa: E402

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


@pytest.fixture()
def cluster():
    with running() as c:
        yield c


@pytest.fixture(scope="module")
def instance_file(tmp_path_factory) -> str:
    path = tmp_path_factory.mktemp("e2e") / "c.yaml"
    path.write_text(yaml.safe_dump(heterogeneous(80, 16), sort_keys=False))
    return str(path)


@pytest.fixture(scope="module")
def local_csv(instance_file) -> str:
    out = CliRunner().invoke(cli, ["matrix", instance_file, "-o", "csv"])
    assert out.exit_code == 0, out.output
    return out.stdout


def _dask(cluster, *args: str):
    return CliRunner().invoke(cli, ["matrix", *args, "--executor", "dask", "--scheduler", cluster.address])


def _started(cluster, n: int) -> None:
    from distributed import Client

    with Client(cluster.address, timeout=30) as client:
        cluster.wait_for(n, client)


def _plans(monkeypatch) -> list[bool]:
    """Whether each run's tasks used the workers' own instance and plan."""
    seen: list[bool] = []
    plan = dask_source.WorkerLoaded.plan

    def spy(self, instance):
        chunks = plan(self, instance)
        seen.append(self.remote)
        return chunks
    monkeypatch.setattr(dask_source.WorkerLoaded, "plan", spy)
    return seen


def _on_first_results(monkeypatch, action) -> list[int]:
    """``action()`` once the first batch of results is in (the matrix's progress callback)."""
    calls: list[int] = []

    def progress(command, unit):
        def report(done: int, total: int) -> None:
            calls.append(done)
            if len(calls) == 1:
                assert done < total, "one task held every type: nothing left to lose"
                action()
        return report
    monkeypatch.setattr(matrix_cli, "task_progress", progress)
    return calls


def test_workers_load_the_input_and_the_output_is_the_local_one(cluster, instance_file, local_csv,
                                                                monkeypatch):
    cluster.add_workers(2)
    _started(cluster, 2)
    seen = _plans(monkeypatch)
    out = _dask(cluster, instance_file, "-o", "csv")
    assert out.exit_code == 0, out.output
    assert out.stdout == local_csv
    streamed = _dask(cluster, instance_file, "-o", "csv", "--stream")
    assert streamed.exit_code == 0, streamed.output
    rows = streamed.stdout.splitlines()
    assert rows[0] == local_csv.splitlines()[0] and sorted(rows) == sorted(local_csv.splitlines())
    # Kubernetes objects from two files, read as one cluster
    inputs = [str(EXAMPLES / "cluster-dump.yaml"), str(EXAMPLES / "custom-resource.yaml")]
    here = CliRunner().invoke(cli, ["matrix", *inputs, "-o", "json"])
    there = _dask(cluster, *inputs, "-o", "json")
    assert here.exit_code == there.exit_code == 0, (here.output, there.output)
    cells = json.loads(here.stdout)["cells"]
    assert len(cells) > 50 and json.loads(there.stdout)["cells"] == cells
    assert seen == [True, True, True]


def test_csv_is_loaded_and_checked_by_the_workers_alone(cluster, tmp_path, monkeypatch, capfd):
    """-o csv needs names alone: this process parses nothing, a worker's InputError is the
    user's one line (file:line: field), exit 2, and its warnings are printed here."""
    cluster.add_workers(2)
    _started(cluster, 2)
    from symreach.frontends import dispatch

    parsed: list[int] = []
    real = dispatch.load_sources
    monkeypatch.setattr(dispatch, "load_sources", lambda *a, **k: parsed.append(1) or real(*a, **k))
    text = (EXAMPLES / "loki-cluster.yaml").read_text()
    assert text.count("cpu: 3920m") > 1
    bad = tmp_path / "bad.yaml"
    bad.write_text(text.replace("cpu: 3920m", "cpu: lots", 1))
    warned = str(EXAMPLES / "custom-resource.yaml")
    runs = [(bad, (), 2, [f"symreach: error: {bad}:26: document 1, items[0] (Node worker-a1): "
                          "nodes[0].capacity.cpu: invalid quantity 'lots'"]),
            (warned, (), 0, ["symreach: warning: custom resources not modelled", "symreach: warning: volumes"]),
            (warned, ("--strict",), 2, ["symreach: warning: custom", "symreach: error: --strict: the input raised"])]
    for path, extra, code, lines in runs:
        here = CliRunner().invoke(cli, ["matrix", str(path), "-o", "csv", *extra])
        n = len(parsed)
        there = _dask(cluster, str(path), "-o", "csv", *extra)
        assert len(parsed) == n, f"{path} {extra}: parsed by the client"
        assert (there.exit_code, there.stdout, there.stderr) == (code, here.stdout, here.stderr)
        said = here.stderr.splitlines()
        assert all(any(line.startswith(want) for line in said) for want in lines), said
        assert said[-1].startswith(lines[-1]) and bool(here.stdout) == (code == 0)
    assert len(parsed) == len(runs)   # the local runs, each once
    assert "Traceback" not in capfd.readouterr().err


@pytest.mark.slow   # the executor-level case runs in CI (test_dask_faults)
def test_a_worker_lost_while_the_input_is_parsed_or_mid_run_changes_no_cell(cluster, instance_file, local_csv,
                                                                            monkeypatch):
    cluster.add_workers(3)
    _started(cluster, 3)
    ship = dask_source.WorkerLoaded.ship_sources

    def ship_then_kill(self, sources):
        ship(self, sources)                 # every worker is parsing now, one is planning
        cluster.kill(cluster.live()[0])
    monkeypatch.setattr(dask_source.WorkerLoaded, "ship_sources", ship_then_kill)
    killed = _on_first_results(monkeypatch, lambda: cluster.kill(cluster.live()[0]))
    out = _dask(cluster, instance_file, "-o", "csv")
    assert out.exit_code == 0, out.output
    assert out.stdout == local_csv and killed and len(cluster.live()) == 1


def test_every_worker_lost_mid_run_keeps_what_was_done_exit_3(cluster, instance_file, monkeypatch):
    monkeypatch.setattr(executor_module, "WORKERLESS_S", 1.0)
    cluster.add_workers(2)
    _started(cluster, 2)
    calls = _on_first_results(monkeypatch, lambda: [cluster.kill(w) for w in cluster.live()])
    out = _dask(cluster, instance_file, "-o", "csv")
    assert out.exit_code == 3, out.output
    cells = [line.split(",") for line in out.stdout.rstrip().splitlines()[1:]]
    decided = [c for c in cells if c[2] != "unknown"]
    assert calls and decided and len(decided) < len(cells)
    assert all(c[3] == "task-failed" for c in cells if c[2] == "unknown")
    assert out.stderr.count("\n") == 1 and "every Dask worker was lost (none for 1 s)" in out.stderr, out.stderr


@pytest.mark.slow   # the executor-level case runs in CI (test_dask_faults)
def test_the_scheduler_lost_is_one_line_exit_3_and_keeps_what_was_done(cluster, instance_file, local_csv,
                                                                       monkeypatch, capfd):
    cluster.add_workers(2)
    _started(cluster, 2)
    _on_first_results(monkeypatch, lambda: cluster.kill(cluster.scheduler))
    out = _dask(cluster, instance_file, "-o", "csv")
    assert out.exit_code == 3, out.output
    lines = out.stdout.rstrip().splitlines()[1:]
    local = set(local_csv.splitlines())
    decided = [line for line in lines if ",unknown," not in line]
    assert decided and all(line in local for line in decided)
    assert len(decided) < len(lines)
    assert out.stderr.count("\n") == 1 and "the Dask scheduler was lost" in out.stderr, out.stderr
    assert "Traceback" not in capfd.readouterr().err


def test_the_shared_object_reaches_a_worker_lost_mid_build_and_one_that_joins(cluster, tmp_path):
    workers = cluster.add_workers(2)
    with DaskExecutor(cluster.address) as ex:
        cluster.wait_for(2, ex.client())
        on = ex.share(f"{tmp_path}|100".encode(), gated_build)
        assert wait_until(lambda: len(list(tmp_path.glob("building-*"))) == 2)
        cluster.kill(workers[0])            # lost while building the shared object
        (tmp_path / "go").write_text("")
        assert sorted(ex.map(add, on, range(8), {})) == list(range(100, 108))
        cluster.add_workers(1)               # builds it on joining
        cluster.wait_for(2, ex.client())
        cluster.kill(workers[1])
        assert sorted(ex.map(add, on, range(8), {})) == list(range(100, 108))
        assert len(list(tmp_path.glob("building-*"))) == 3
        ex.unshare(on)


def test_check_completes_when_the_worker_running_the_race_is_killed(cluster, tmp_path, monkeypatch):
    marker = tmp_path / "gate"
    monkeypatch.setitem(registry.ENGINES, "gate", ("tests.dask_cluster", "GateEngine"))
    cluster.add_workers(2, env={GATE_ENV: str(marker)})
    from distributed import Client

    with Client(cluster.address, timeout=30) as client:
        cluster.wait_for(2, client)
        client.run(registry.register, "gate", "tests.dask_cluster", "GateEngine")
    killed: list[int] = []

    def kill_when_gated() -> None:
        if wait_until(lambda: marker.exists() and marker.read_text()):
            killed.append(int(marker.read_text()))
            cluster.kill_pid(killed[0])
    killer = threading.Thread(target=kill_when_gated, daemon=True)
    killer.start()
    out = CliRunner().invoke(cli, ["check", str(EXAMPLES / "paper-2.6.yaml"), "--engine", "gate", "-q", "-o", "json",
                                   "--executor", "dask", "--scheduler", cluster.address])
    killer.join(timeout=5)
    assert out.exit_code == 0, out.output
    data = json.loads(out.stdout)
    assert data["verdict"] == "deployable" and data["stats"]["dask_race"]["winner"] == "gate"
    assert killed and len(cluster.live()) == 1
