"""``--executor dask``: the same matrix and bench results as the local executor,
on a LocalCluster with two worker processes."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

pytest.importorskip("distributed")

from symreach.bench.distributed import run_jobs_on  # noqa: E402
from symreach.bench.runner import BenchInstance, Job  # noqa: E402
from symreach.cli.bench import bench_command  # noqa: E402
from symreach.cli.matrix import matrix_command  # noqa: E402
from symreach.generators.clusters import generate_cluster  # noqa: E402
from symreach.loader import load_document  # noqa: E402
from symreach.solvers.executor import DaskExecutor, LocalExecutor  # noqa: E402
from symreach.solvers.matrix import matrix_table  # noqa: E402
from tests.random_instances import random_doc  # noqa: E402


@pytest.fixture(scope="module")
def dask_executor():
    with DaskExecutor(workers=2) as executor:
        yield executor


def test_matrix_on_a_local_cluster_equals_the_local_matrix(dask_executor):
    inst = load_document(generate_cluster(40, 12, seed=2, pools=4))
    local = matrix_table(inst, executor=LocalExecutor())
    seen = []
    remote = matrix_table(inst, executor=dask_executor, progress=lambda d, t: seen.append(d))
    assert dict(remote.cells) == dict(local.cells)
    assert dict(remote.how) == dict(local.how)
    assert seen == sorted(seen) and seen[-1] == len(inst.pod_types)   # streamed as tasks end
    assert remote.stats["executor"] == "dask" and remote.stats["complete"]


def test_a_failing_task_marks_its_cells_unknown_not_dropped(dask_executor):
    def boom(shared, item):
        if item == 1:
            raise ValueError("no")
        return item

    got = list(dask_executor.map(boom, None, [0, 1, 2], {}, on_error=lambda i, m: (i, m)))
    assert sorted(g for g in got if isinstance(g, int)) == [0, 2]
    (lost,) = [g for g in got if isinstance(g, tuple)]
    assert lost[0] == 1 and "ValueError" in lost[1]
    with pytest.raises(RuntimeError, match="failed on the cluster"):
        list(dask_executor.map(boom, None, [1], {}))


def test_bench_jobs_on_a_local_cluster(dask_executor):
    docs = [random_doc(s) for s in range(3)]
    jobs = [Job(BenchInstance(f"r{i}", "random", i, document=d), "explicit")
            for i, d in enumerate(docs)]
    results = run_jobs_on(dask_executor, jobs, timeout_s=60, memory_mb=2048)
    assert [r.instance for r in results] == ["r0", "r1", "r2"]
    assert all(r.status == "ok" for r in results)


def test_cli_matrix_and_bench_accept_the_dask_executor(tmp_path):
    import yaml

    path = tmp_path / "c.yaml"
    path.write_text(yaml.safe_dump(generate_cluster(12, 6, seed=4, pools=3), sort_keys=False))
    runner = CliRunner()
    local = runner.invoke(matrix_command, [str(path), "--format", "csv"])
    remote = runner.invoke(matrix_command, [str(path), "--format", "csv", "--executor", "dask",
                                            "--workers", "2"])
    assert local.exit_code == remote.exit_code == 0, remote.output
    assert local.output == remote.output
    bad = runner.invoke(matrix_command, [str(path), "--scheduler", "tcp://127.0.0.1:1"])
    assert bad.exit_code == 2 and "--scheduler needs --executor dask" in bad.output
    out = runner.invoke(bench_command, [str(tmp_path), "--engines", "explicit,bdd",
                                        "--executor", "dask", "--timeout", "60"])
    assert out.exit_code == 0, out.output
    assert "c.yaml" in out.output
