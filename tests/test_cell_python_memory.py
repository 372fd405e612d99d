"""The Python side of a whole-cone cell is bounded too (``encodings/system_size``): a
system estimated over the cell's budget is refused before it is built, the cell is
``unknown`` with the reason, and the rest of the matrix is decided as without the bound."""

from __future__ import annotations

import pytest

from symreach.encodings import system_size
from symreach.encodings.compile import compile_system
from symreach.encodings.preprocess import preprocess
from symreach.loader import load_document
from symreach.solvers import cells
from symreach.solvers.matrix import matrix_table
from tests.random_instances import random_doc

REASON = "engine/bdd: memory limit of the cell"


def _engine_cells_forced(monkeypatch) -> None:
    """Cells skip the fixpoint's orders and the cut, and the engine its fast paths: the
    whole-cone engine compiles the system of each such cell."""
    from symreach.solvers import registry

    real = registry.make_engine
    monkeypatch.setattr(registry, "make_engine", lambda name, **o: real(name, fast_paths=False, **o))
    monkeypatch.setattr(cells, "greedy_witness", lambda *a: None)
    monkeypatch.setattr(cells, "short_lived_witness", lambda *a: None)
    monkeypatch.setattr(cells, "REDUCE_ABOVE", 10 ** 9)


def test_compile_refuses_a_system_over_the_ceiling_before_building_it(monkeypatch):
    built = []
    real = compile_system.__globals__["_Compiler"].build
    monkeypatch.setattr(compile_system.__globals__["_Compiler"], "build",
                        lambda self: built.append(1) or real(self))
    refused = 0
    for seed in range(12):
        inst = load_document(random_doc(seed + 300))
        query = inst.query
        pre = preprocess(inst, query, try_greedy=False)
        need = system_size.bytes_of(system_size.estimate(inst, pre.cone, pre.may, pre.deployable_pairs,
                                                         pre.counted))
        if not need:
            continue
        with system_size.ceiling(need):          # at the estimate: built
            compile_system(inst, query, pre)
        before = len(built)
        with system_size.ceiling(need - 1), pytest.raises(MemoryError, match="over the cell's"):
            compile_system(inst, query, pre)
        assert len(built) == before              # nothing was built
        compile_system(inst, query, pre)          # no ceiling, no bound
        refused += 1
    assert refused >= 8, refused


def _matrices(monkeypatch, budget: int):
    """(matrix with the bound, matrix without) on the first random instances with engine cells."""
    _engine_cells_forced(monkeypatch)
    out = []
    for seed in range(40):
        inst = load_document(random_doc(seed + 900, replicas=3))
        monkeypatch.setattr(cells, "CELL_PYTHON_BYTES", budget)
        bounded = matrix_table(inst)
        monkeypatch.setattr(cells, "CELL_PYTHON_BYTES", 2 ** 40)
        free = matrix_table(inst)
        if any(how.startswith("engine/") for how in free.how.values()):
            out.append((inst, bounded, free))
        if len(out) == 4:
            break
    return out


def test_a_cell_over_the_python_budget_is_unknown_and_the_others_are_decided(monkeypatch):
    cases = _matrices(monkeypatch, budget=1)
    assert len(cases) == 4
    refused = kept = 0
    for inst, bounded, free in cases:
        assert "limit" not in set(bounded.how.values())   # every type's cells were computed
        for cell, how in free.how.items():
            got = (bounded.cells[cell], bounded.how[cell])
            if got == ("unknown", REASON):
                assert how.startswith("engine/bdd") and how != REASON, cell
                refused += 1
            else:
                assert got == (free.cells[cell], how), cell
                kept += 1
    assert refused >= 4 and kept >= 20, (refused, kept)


def test_the_budget_follows_the_address_space_left(monkeypatch):
    monkeypatch.setattr(cells, "address_space_left", lambda: None)
    assert cells.cell_python_bytes() == cells.CELL_PYTHON_BYTES
    monkeypatch.setattr(cells, "address_space_left", lambda: 100 * 2 ** 20)
    assert cells.cell_python_bytes() == int(100 * 2 ** 20 * (1 - cells.CUDD_SHARE))
    monkeypatch.setattr(cells, "address_space_left", lambda: 100 * 2 ** 30)
    assert cells.cell_python_bytes() == cells.CELL_PYTHON_BYTES

