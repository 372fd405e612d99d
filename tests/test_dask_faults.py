"""Faults on a real Dask cluster: ``dask scheduler`` and ``dask worker`` processes on
127.0.0.1 (free ports), killed by pid. Every wait is bounded."""

from __future__ import annotations

import pytest
import yaml
from click.testing import CliRunner

pytest.importorskip("distributed")

from symreach.cli.matrix import matrix_command  # noqa: E402
from symreach.generators.clusters import generate_cluster  # noqa: E402
from symreach.loader import load_document  # noqa: E402
from symreach.solvers import executor as executor_module  # noqa: E402
from symreach.solvers.executor import DaskExecutor  # noqa: E402
from symreach.solvers.matrix import matrix_table  # noqa: E402
from tests.dask_cluster import Cluster, die_once, free_port, running, slow  # noqa: E402




def heterogeneous(nodes: int, types: int) -> dict:
    doc = generate_cluster(nodes, types, seed=2, pools=4)
    for i, node in enumerate(doc["nodes"]):
        node["labels"]["id"] = str(i)
    return doc


@pytest.fixture(scope="module")
def cluster():
    with running() as c:
        yield c


def _errors(results):
    return sorted((r for r in results if isinstance(r, tuple)), key=str)


def test_unreachable_or_malformed_scheduler_is_exit_2_in_one_line(tmp_path, monkeypatch):
    monkeypatch.setattr(executor_module, "CONNECT_S", 1.0)
    path = tmp_path / "c.yaml"
    path.write_text(yaml.safe_dump(generate_cluster(4, 3, seed=1), sort_keys=False))
    runner = CliRunner()
    for address, words in ((f"tcp://127.0.0.1:{free_port()}", "no Dask scheduler answered"),
                           ("tcp://[bad", "malformed Dask scheduler address"),
                           ("foo://x:1", "malformed Dask scheduler address")):
        out = runner.invoke(matrix_command, [str(path), "--executor", "dask", "--scheduler", address])
        assert out.exit_code == 2, (address, out.output)
        assert words in out.output and len(out.output.strip().splitlines()) == 1, out.output


def test_a_worker_lost_mid_task_or_mid_run_changes_no_cell(cluster, tmp_path):
    inst = load_document(heterogeneous(200, 30))
    local = matrix_table(inst)
    workers = cluster.add_workers(2)
    with DaskExecutor(cluster.address) as ex:
        cluster.wait_for(2, ex.client())
        # a task that kills its own worker: the scheduler runs it again on the other
        marker = str(tmp_path / "died")
        got = list(ex.map(die_once, marker, range(6), {}, on_error=lambda i, m: (i, m)))
        assert sorted(got) == list(range(6)) and (tmp_path / "died").exists()
        assert sum(w.poll() is None for w in workers) == 1
        cluster.add_workers(1)          # joins: gets the shared instance from the scheduler
        cluster.wait_for(2, ex.client())
        killed = []

        def progress(done: int, total: int) -> None:
            if not killed:
                live = [w for w in cluster.workers if w.poll() is None]
                cluster.kill(live[0])
                killed.append(live[0].pid)

        remote = matrix_table(inst, executor=ex, progress=progress)
    assert killed and remote.stats["complete"], remote.stats
    assert dict(remote.cells) == dict(local.cells) and dict(remote.how) == dict(local.how)
    for w in cluster.workers:
        cluster.kill(w)


def test_every_worker_lost_gives_up_the_tasks_left_with_the_reason(cluster, tmp_path, monkeypatch):
    workers = cluster.add_workers(2)
    with DaskExecutor(cluster.address, workerless_s=1.0) as ex:
        cluster.wait_for(2, ex.client())
        got = []
        for r in ex.map(slow, 0.2, range(12), {}, on_error=lambda i, m: (i, m)):
            got.append(r)
            if len(got) == 1:
                for w in workers:
                    cluster.kill(w)
    done = [r for r in got if isinstance(r, int)]
    lost = _errors(got)
    assert len(got) == 12 and done and lost
    assert all("every Dask worker was lost" in m for _, m in lost), lost
    # through the command: no worker at all -> every cell unknown with the reason, exit 3
    monkeypatch.setattr(executor_module, "WORKERLESS_S", 1.0)
    path = tmp_path / "c.yaml"
    path.write_text(yaml.safe_dump(generate_cluster(6, 4, seed=1, pools=2), sort_keys=False))
    out = CliRunner().invoke(matrix_command, [str(path), "--executor", "dask", "--scheduler", cluster.address])
    assert out.exit_code == 3, out.output
    assert out.output.rstrip().splitlines()[-1] == \
        "incomplete: 4 pod type(s) failed: every Dask worker was lost (none for 1 s)"


def test_the_scheduler_lost_keeps_what_was_done(tmp_path, capfd):
    own = Cluster()
    try:
        workers = own.add_workers(2)
        with DaskExecutor(own.address) as ex:
            own.wait_for(2, ex.client())
            got = []
            for r in ex.map(slow, 0.2, range(12), {}, on_error=lambda i, m: (i, m)):
                got.append(r)
                if len(got) == 1:
                    own.kill(own.scheduler)
        done = [r for r in got if isinstance(r, int)]
        lost = _errors(got)
        assert len(got) == 12 and done and lost
        assert all(m.startswith("the Dask scheduler was lost") for _, m in lost), lost
        assert "Traceback" not in capfd.readouterr().err
    finally:
        for w in workers:
            own.kill(w)
        own.close()


def test_tasks_still_out_at_the_time_limit_are_given_up_in_time(cluster):
    from symreach.errors import clear_deadline, set_deadline

    cluster.add_workers(1)
    try:
        with DaskExecutor(cluster.address) as ex:
            cluster.wait_for(1, ex.client())
            set_deadline(2.0)
            got = list(ex.map(slow, 0.5, range(20), {}, on_error=lambda i, m: (i, m)))
    finally:
        clear_deadline()
        for w in cluster.workers:
            cluster.kill(w)
    lost = _errors(got)
    assert len(got) == 20 and lost and len(lost) < 20
    assert all(m == "timeout: the time limit was reached" for _, m in lost)


def test_an_unreachable_scheduler_is_given_at_most_what_is_left_of_the_timeout(tmp_path):
    import re

    path = tmp_path / "c.yaml"
    path.write_text(yaml.safe_dump(generate_cluster(4, 3, seed=1), sort_keys=False))
    address = f"tcp://127.0.0.1:{free_port()}"
    out = CliRunner().invoke(matrix_command, [str(path), "--executor", "dask", "--scheduler", address,
                                              "--timeout", "1.5"])
    assert out.exit_code == 2, out.output
    waited = re.search(r"within ([0-9.]+) s", out.output)
    assert waited and float(waited.group(1)) <= 1.5 < executor_module.CONNECT_S, out.output
