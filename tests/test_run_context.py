"""One run context (issue 25, item 1): one deadline on one clock, one cancel token,
and engines that keep nothing of a call on themselves. No wall-clock thresholds:
deadlines here are already spent (0 s) or absent."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from symreach.errors import LimitReached, clear_deadline, set_deadline
from symreach.result import Verdict
from symreach.run import CancelToken, RunContext
from symreach.solvers.base import Limits, as_context
from symreach.solvers.bdd import BddEngine
from symreach.solvers.registry import make_engine
from tests.sat_helpers import pyramid_instance

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


def test_a_spent_deadline_or_a_cancelled_token_stops_every_phase():
    spent = RunContext.within(0.0)
    assert spent.past() and spent.remaining() == 0.0
    with pytest.raises(LimitReached, match="time limit of 0 s was reached during preprocessing"):
        spent.check("preprocessing")
    token = CancelToken()
    run = RunContext(cancel=token)
    assert not run.past() and run.remaining() is None
    token.cancel()
    assert run.past()
    with pytest.raises(LimitReached, match="cancelled during export"):
        run.check("export")


def test_limits_are_a_plain_value_and_the_process_deadline_only_a_bridge():
    assert as_context(Limits(timeout_s=None, max_states=7)).max_states == 7
    assert as_context(None).deadline is None
    set_deadline(0.0)
    try:
        assert RunContext.for_process().past()
    finally:
        clear_deadline()
    assert RunContext.for_process().deadline is None


def test_only_the_supervisor_and_the_run_context_read_the_process_deadline():
    """The process-wide deadline is the supervisor's bridge: every other module asks a RunContext."""
    import re

    package = Path(__file__).resolve().parent.parent / "symreach"
    readers = sorted(str(p.relative_to(package.parent)) for p in package.rglob("*.py")
                     if re.search(r"\b(current_deadline|set_deadline|clear_deadline)\b", p.read_text())
                     and p.name != "errors.py")
    assert readers == ["symreach/cli/process.py", "symreach/run.py"], readers


@pytest.mark.parametrize("engine", ["explicit", "lazy", "bdd", "bmc", "ic3", "auto"])
def test_every_engine_answers_unknown_on_a_spent_or_cancelled_run(engine):
    inst = pyramid_instance(4, 6)
    token = CancelToken()
    token.cancel()
    for run in (RunContext.within(0.0), RunContext(cancel=token)):
        assert make_engine(engine).check(inst, inst.query, run).verdict is Verdict.UNKNOWN


def test_the_bdd_engine_keeps_no_per_call_state():
    engine = BddEngine()
    before = dict(vars(engine))
    inst = pyramid_instance(3, 4)
    engine.check(inst, inst.query, RunContext(counters="on"))
    engine.check(inst, inst.query, RunContext(counters="off"))
    assert vars(engine) == before


# ---- every phase polls it: loading, export, the matrix's cells -----------------------------------
# Each phase gets a context that is already spent or cancelled and must stop before its work; a
# token that cancels itself at its n-th poll shows where a phase looks (between objects, steps).

class CancelsAtPoll(CancelToken):
    """A token that counts the polls and cancels itself at poll ``at``."""

    def __init__(self, at: int) -> None:
        super().__init__()
        self.at, self.polls = at, 0

    def pause(self) -> bool:
        self.polls += 1
        if self.polls >= self.at:
            self.cancel()
        return super().pause()


def stopped_runs() -> list[RunContext]:
    token = CancelToken()
    token.cancel()
    return [RunContext.within(-1.0), RunContext(cancel=token)]


def test_loading_stops_before_reading_on_a_spent_or_cancelled_run(monkeypatch):
    from symreach.frontends import dispatch

    reads = []
    monkeypatch.setattr(dispatch.yaml_source, "read_file_text", lambda *a: reads.append(a) or "")
    for run in stopped_runs():
        with pytest.raises(LimitReached, match="during loading"):
            dispatch.load_inputs([str(EXAMPLES / "cluster-dump.yaml")], run=run)
    assert reads == []


def test_the_kubernetes_front_end_polls_between_objects():
    from symreach.frontends.dispatch import load_inputs

    count = CancelsAtPoll(10 ** 9)
    load_inputs([str(EXAMPLES / "cluster-dump.yaml")], run=RunContext(cancel=count))
    objects = len(yaml.safe_load((EXAMPLES / "cluster-dump.yaml").read_text())["items"])
    assert count.polls >= objects > 10  # once per object converted, at least
    stop = CancelsAtPoll(count.polls - 1)  # cancelled near the end: stops there, mid-conversion
    with pytest.raises(LimitReached, match="cancelled during loading"):
        load_inputs([str(EXAMPLES / "cluster-dump.yaml")], run=RunContext(cancel=stop))
    assert stop.polls == count.polls - 1


def test_export_stops_on_a_spent_or_cancelled_run_and_polls_each_unrolling_step():
    from symreach.encodings.aiger import AigerModel
    from symreach.encodings.compile import compile_system
    from symreach.encodings.dimacs import dimacs_text
    from symreach.loader import load_instance

    inst = load_instance(EXAMPLES / "paper-2.6.yaml")
    system = compile_system(inst, inst.query)
    for run in stopped_runs():
        with pytest.raises(LimitReached, match="during export"):
            dimacs_text(system, 10 ** 9, run=run)  # would never end without the poll
        with pytest.raises(LimitReached, match="during export"):
            AigerModel(system, run)
    token = CancelsAtPoll(5)
    with pytest.raises(LimitReached, match="cancelled during export"):
        dimacs_text(system, 10 ** 9, run=RunContext(cancel=token))
    assert token.polls == 5  # one poll per unrolling step
    assert dimacs_text(system, 3, run=RunContext()).startswith("c symreach BMC unrolling, depth 3")


def test_matrix_cells_are_unknown_on_a_spent_or_cancelled_run(monkeypatch):
    from symreach.frontends.dispatch import load_inputs
    from symreach.solvers import cells, matrix

    inst = load_inputs([str(EXAMPLES / "cluster-dump.yaml")]).instance
    width = len(inst.nodes)

    def no_work(*_args, **_kwargs):
        raise AssertionError("the cone was computed on a spent run")

    monkeypatch.setattr(cells, "affinity_cone", no_work)
    spent = RunContext.within(-1.0)
    # the deadline a remote worker gets is wall-clock time, turned back into a context there
    answer = cells.solve_type(inst, 0, deadline_at=spent.wall_deadline())
    assert [(c.nodes, c.verdict, c.how) for c in answer.classes] == [(tuple(range(width)), "unknown", "deadline")]
    m = matrix.cells_matrix(inst, run=spent)
    assert not m.stats["complete"] and m.stats["reason"].startswith("timeout")
    assert set(m.cells.values()) == {"unknown"} and len(m.cells) == width * len(inst.pod_types)
    token = CancelToken()
    token.cancel()
    monkeypatch.setattr(matrix, "solve_types", no_work)
    m = matrix.cells_matrix(inst, run=RunContext(cancel=token))
    assert m.stats["reason"] == "cancelled" and set(m.cells.values()) == {"unknown"}
