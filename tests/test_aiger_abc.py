"""AIGER / DIMACS export and the ABC engines (skipped without berkeley-abc)."""

from __future__ import annotations

import json
import shutil

import pytest
from click.testing import CliRunner
from pysat.formula import CNF
from pysat.solvers import Solver

from symreach import semantics
from symreach.cli.export import export_command
from symreach.encodings.aiger import AigerModel
from symreach.encodings.compile import compile_system
from symreach.encodings.dimacs import dimacs_text
from symreach.result import Verdict
from symreach.solvers.abc import AbcBmcEngine, AbcPdrEngine, AbcReachEngine
from symreach.solvers.base import Limits
from symreach.solvers.ic3 import Ic3Engine
from tests.sat_helpers import pyramid_instance

HAVE_ABC = shutil.which("berkeley-abc") is not None


def _simulate_aag(text: str, inputs_per_step):
    """A tiny AIGER simulator over the ASCII form; returns the output per step."""
    lines = text.splitlines()
    _, M, I, L, O, A = lines[0].split()
    I, L, O, A = int(I), int(L), int(O), int(A)
    ins = [int(x) for x in lines[1:1 + I]]
    latches = [tuple(map(int, x.split())) for x in lines[1 + I:1 + I + L]]
    outs = [int(x) for x in lines[1 + I + L:1 + I + L + O]]
    ands = [tuple(map(int, x.split())) for x in lines[1 + I + L + O:1 + I + L + O + A]]
    state = {lit: 0 for lit, _ in latches}
    result = []
    for vec in inputs_per_step:
        val = {0: 0}
        for lit, v in zip(ins, vec):
            val[lit] = v
        val.update(state)

        def get(x):
            return val[x & ~1] ^ (x & 1)
        for lhs, a, b in ands:
            val[lhs] = get(a) & get(b)
        result.append(get(outs[0]))
        state = {lit: get(nxt) for lit, nxt in latches}
    return result


def test_aag_simulates_the_system():
    inst = pyramid_instance(2, 4)
    res = Ic3Engine(fast_paths=False).check(inst)
    system = compile_system(inst, inst.query)
    model = AigerModel(system)
    index = {(a.op, system.type_names[a.type_index], system.node_names[a.node_index]): i
             for i, a in enumerate(system.actions)}
    vecs = []
    for step in res.trace:
        v = [0] * len(system.actions)
        v[index[(step.op, step.pod, step.node)]] = 1
        vecs.append(v)
    vecs.append([0] * len(system.actions))
    out = _simulate_aag(model.to_bytes(binary=False).decode(), vecs)
    assert out[-1] == 1 and not any(out[:-1])
    # two inputs at once: the step stutters
    both = [[1] * len(system.actions)] * 3
    assert _simulate_aag(model.to_bytes(binary=False).decode(), both) == [0, 0, 0]


def test_binary_header_and_latch_inversion():
    inst = pyramid_instance(1, 3)
    system = compile_system(inst, inst.query)
    data = AigerModel(system).to_bytes(binary=True)
    head = data.split(b"\n", 1)[0].split()
    assert head[0] == b"aig" and int(head[2]) == len(system.actions) and int(head[3]) == len(system.state_vars)


def test_dimacs_unrolling_matches_bmc_depth():
    inst = pyramid_instance(2, 4)
    system = compile_system(inst, inst.query)
    for depth, sat in ((5, False), (6, True)):
        cnf = CNF(from_string=dimacs_text(system, depth))
        with Solver(name="glucose4", bootstrap_with=cnf.clauses) as s:
            assert s.solve() is sat


def test_export_cli(tmp_path):
    from symreach.frontends.reduction_pebbling import encode_pebbling
    from symreach.generators.dags import pyramid

    d = pyramid(2)
    f = tmp_path / "p.json"
    f.write_text(json.dumps(encode_pebbling(d.vertices, d.edges, d.target, 4)))
    runner = CliRunner()
    r = runner.invoke(export_command, [str(f), "--aiger", str(tmp_path / "m.aig")])
    assert r.exit_code == 0, r.output
    assert (tmp_path / "m.aig").read_bytes().startswith(b"aig ")
    r = runner.invoke(export_command, [str(f), "--aiger", str(tmp_path / "m.aag")])
    assert (tmp_path / "m.aag").read_bytes().startswith(b"aag ")
    r = runner.invoke(export_command, [str(f), "--dimacs", str(tmp_path / "m.cnf"), "--depth", "3"])
    assert r.exit_code == 0 and "p cnf" in (tmp_path / "m.cnf").read_text()
    assert runner.invoke(export_command, [str(f), "--dimacs", str(tmp_path / "x.cnf")]).exit_code == 2


def test_abc_absent_gives_unknown(monkeypatch):
    import symreach.solvers.abc_binary as abc_binary

    monkeypatch.setattr(abc_binary, "ABC_BINARY", "berkeley-abc-that-does-not-exist")
    res = AbcPdrEngine(fast_paths=False).check(pyramid_instance(2, 4))
    assert res.verdict is Verdict.UNKNOWN and "not installed" in res.reason


@pytest.mark.skipif(shutil.which("berkeley-abc") is None, reason="berkeley-abc not installed")
@pytest.mark.parametrize("engine", [AbcPdrEngine, AbcBmcEngine, AbcReachEngine])
def test_abc_agrees_with_symreach(engine):
    for h, k in ((2, 3), (2, 4), (3, 5)):
        inst = pyramid_instance(h, k)
        ours = Ic3Engine(fast_paths=False).check(inst)
        theirs = engine(fast_paths=False).check(inst, run=Limits(timeout_s=20))
        assert theirs.verdict is ours.verdict, theirs.reason
        if theirs.verdict is Verdict.DEPLOYABLE:
            assert theirs.trace, theirs.reason
            semantics.replay(inst, theirs.trace, inst.query)


@pytest.mark.skipif(shutil.which("berkeley-abc") is None, reason="berkeley-abc not installed")
def test_abc_on_random_instances():
    from symreach.loader import load_document
    from symreach.solvers.explicit import ExplicitEngine
    from tests.random_instances import random_doc

    checked = 0
    for seed in range(8):  # every seed's document loads: an InputError fails the test
        inst = load_document(random_doc(seed))
        want = ExplicitEngine().check(inst).verdict
        got = AbcPdrEngine(fast_paths=False).check(inst, run=Limits(timeout_s=20))
        assert got.verdict is want, got.reason
        checked += 1
    assert checked == 8
