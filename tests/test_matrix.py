"""The matrix agrees with one explicit run per pair."""

from __future__ import annotations

import csv
import io
import json

import pytest

from symreach.loader import load_document
from symreach.solvers.matrix import DEPLOYABLE, matrix_table, render_csv, render_json, render_text
from symreach.model import Query
from symreach.result import Verdict
from symreach.solvers.explicit import ExplicitEngine
from tests.engine_suite import chain
from tests.random_instances import random_doc


@pytest.mark.parametrize("seed", range(25))
def test_matrix_matches_explicit(seed):
    inst = load_document(random_doc(seed + 7000))
    m = matrix_table(inst)
    for t in range(len(inst.pod_types)):
        for n in range(len(inst.nodes)):
            q = Query((frozenset({(t, n)}),))
            want = ExplicitEngine().check(inst, q).verdict is Verdict.DEPLOYABLE
            assert (m.cells[(t, n)] == DEPLOYABLE) == want, (seed, t, n)


def test_renderers():
    m = matrix_table(load_document(chain("paper", 2)))
    assert "Y" in render_text(m)
    data = json.loads(render_json(m))
    assert {c["pod"] for c in data["cells"]} == {"a", "b", "c"}
    rows = list(csv.DictReader(io.StringIO(render_csv(m))))
    assert all(r["verdict"] == "deployable" for r in rows)
    m1 = matrix_table(load_document(chain("paper", 1)))
    assert m1.cells[(0, 0)] == "deployable" and m1.cells[(1, 0)] == "not-deployable"
