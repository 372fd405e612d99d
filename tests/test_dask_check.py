"""``check --executor dask``: the engines raced on a real Dask cluster (``dask scheduler``
and ``dask worker`` processes, ``tests.dask_cluster``), answers checked on the client."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

pytest.importorskip("distributed")

from symreach import semantics  # noqa: E402
from symreach.cli import cli  # noqa: E402
from symreach.loader import load_instance  # noqa: E402
from symreach.result import Verdict  # noqa: E402
from symreach.run import RunContext  # noqa: E402
from symreach.solvers import executor as executor_module  # noqa: E402
from symreach.solvers.base import resolve_query  # noqa: E402
from symreach.solvers.dask_race import race, race_engines_for  # noqa: E402
from symreach.solvers.executor import DaskExecutor  # noqa: E402
from tests.dask_cluster import free_port  # noqa: E402
from tests.test_dask_faults import cluster  # noqa: E402,F401  (its module-scoped fixture)

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
DEPLOYABLE = str(EXAMPLES / "paper-2.6.yaml")
NEVER = str(EXAMPLES / "paper-2.6-capacity1.yaml")


def _check(*args: str):
    return CliRunner().invoke(cli, ["check", *args, "-q", "-o", "json"])


def test_every_worker_lost_is_unknown_exit_3_with_the_reason(cluster, monkeypatch):
    for w in cluster.workers:   # none alive: the race's tasks wait for a worker in vain
        cluster.kill(w)
    monkeypatch.setattr(executor_module, "WORKERLESS_S", 1.0)
    out = _check(DEPLOYABLE, "--executor", "dask", "--scheduler", cluster.address)
    assert out.exit_code == 3, out.output
    data = json.loads(out.output)
    assert data["verdict"] == "unknown"
    assert data["reason"] == "every Dask worker was lost (none for 1 s)"


def test_same_verdicts_as_local_with_the_evidence_checked_here(cluster):
    cluster.add_workers(2)
    checked = 0
    with DaskExecutor(cluster.address) as ex:
        cluster.wait_for(2, ex.client())
        for path, verdict, code in ((DEPLOYABLE, Verdict.DEPLOYABLE, 0), (NEVER, Verdict.NOT_DEPLOYABLE, 1)):
            local = _check(path)
            remote = _check(path, "--executor", "dask", "--scheduler", cluster.address)
            assert local.exit_code == remote.exit_code == code, (local.output, remote.output)
            local_data, remote_data = json.loads(local.output), json.loads(remote.output)
            assert remote_data["verdict"] == local_data["verdict"] == verdict.value
            winner = remote_data["stats"]["dask_race"]["winner"]
            assert remote_data["engine"] == f"auto/{winner}"
            # the race itself, in process: a witness that replays, a certificate that checks
            inst = load_instance(path)
            query = resolve_query(inst, None)
            engines = race_engines_for(inst, "auto")
            assert {"bdd", "ic3", "bmc"} <= set(engines)
            result = race(ex, inst, query, RunContext.within(60.0), engines)
            assert result.verdict is verdict, result.reason
            if verdict is Verdict.DEPLOYABLE:
                semantics.replay(inst, result.trace, query)
            else:
                assert result.certificate is not None and result.certificate.check(inst, query)[0]
            checked += 1
    assert checked == 2


def test_unreachable_or_malformed_scheduler_is_exit_2(monkeypatch):
    monkeypatch.setattr(executor_module, "CONNECT_S", 1.0)
    runner = CliRunner()
    for address, words in ((f"tcp://127.0.0.1:{free_port()}", "no Dask scheduler answered"),
                           ("tcp://[bad", "malformed Dask scheduler address")):
        out = runner.invoke(cli, ["check", DEPLOYABLE, "-q", "--executor", "dask", "--scheduler", address])
        assert out.exit_code == 2, (address, out.output)
        assert words in out.output and len(out.output.strip().splitlines()) == 1, out.output
    out = runner.invoke(cli, ["check", DEPLOYABLE, "-q", "--scheduler", "tcp://127.0.0.1:1"])
    assert out.exit_code == 2 and "--scheduler needs --executor dask" in out.output


class _Scripted:
    """An executor whose tasks 'return' what the test says, in order (no cluster)."""

    def __init__(self, outcomes) -> None:
        self.outcomes = outcomes
        self.closed = False
        self.taken = 0

    def client(self):
        return None

    def map(self, fn, shared, items, options, on_error=None):
        try:
            for outcome in self.outcomes:
                self.taken += 1
                yield outcome
        finally:
            self.closed = True


def test_a_workers_answer_is_trusted_only_once_checked_here():
    from symreach.solvers.registry import make_engine

    inst = load_instance(DEPLOYABLE)
    query = resolve_query(inst, None)
    good = make_engine("explicit").check(inst, query)
    assert good.verdict is Verdict.DEPLOYABLE and len(good.trace) > 1
    bogus = make_engine("explicit").check(inst, query)
    bogus.engine, bogus.trace = "bmc", bogus.trace[:-1]   # stops short of the target
    ex = _Scripted([("bmc", bogus), ("ic3", good), ("bdd", good)])
    result = race(ex, inst, query, RunContext.within(60.0), ["bmc", "ic3", "bdd"])
    assert result.verdict is Verdict.DEPLOYABLE and result.stats["dask_race"]["winner"] == "ic3"
    assert ex.closed and ex.taken == 2   # stopped at the first checked answer: the rest cancelled
    semantics.replay(inst, result.trace, query)


def test_the_scheduler_lost_is_unknown_in_one_line():
    inst = load_instance(NEVER)
    lost = "the Dask scheduler was lost (CommClosedError)"
    ex = _Scripted([("bdd", lost), ("ic3", lost)])
    result = race(ex, inst, resolve_query(inst, None), RunContext.within(60.0), ["bdd", "ic3"])
    assert result.verdict is Verdict.UNKNOWN and result.reason == lost
