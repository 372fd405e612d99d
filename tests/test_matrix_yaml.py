"""``matrix -o yaml`` written cell by cell: byte for byte ``yaml.safe_dump`` of the JSON document."""

from __future__ import annotations

import io
import json

import pytest
import yaml
from click.testing import CliRunner

from symreach.cli.matrix import matrix_command
from symreach.generators.clusters import generate_cluster
from symreach.loader import load_document
from symreach.solvers.matrix import CellView, Matrix, matrix_table, write_json
from symreach.solvers.matrix_yaml import write_yaml

# Strings PyYAML quotes, wraps or escapes differently: each must come out as safe_dump writes it.
ODD = ["a: b", "'q'", "yes", "123", "- x", "#c", "", "ünï", "x" * 130,
       "a caveat with many words " * 6, 'say "hi"\tthere', "null", "~", "a\nb"]


def _both(m: Matrix, extra=None, head=None) -> tuple[str, str]:
    j, y = io.StringIO(), io.StringIO()
    write_json(m, j, extra, head)
    write_yaml(m, y, extra, head)
    return j.getvalue(), y.getvalue()


def _same_as_safe_dump(m: Matrix, extra=None, head=None) -> int:
    """Asserts the YAML is exactly safe_dump of the JSON document; returns how many cells it holds."""
    j, y = _both(m, extra, head)
    doc = json.loads(j)
    assert y == yaml.safe_dump(doc, sort_keys=False, default_flow_style=False, allow_unicode=True)
    assert yaml.safe_load(y) == doc
    return len(doc["cells"])


def test_odd_strings_and_caveats_are_written_as_safe_dump_writes_them():
    types, nodes = tuple(ODD), tuple(f"n-{s}" for s in ODD[:5]) + ("plain",)
    cells = {(t, n): ("deployable", "not-deployable", "unknown")[(t + n) % 3]
             for t in range(len(types)) for n in range(len(nodes))}
    how = {(t, n): ODD[(t * n) % len(ODD)] for t in range(len(types)) for n in range(len(nodes))}
    m = Matrix(types, nodes, cells, how, {"complete": False, "reason": ODD[9], "odd": {1, 2}},
               caveats={0: (ODD[9], ODD[0]), 3: (ODD[13],)})
    m.groups = {}
    rows = [{"pod": t, "marks": {k: ODD[(i + j) % len(ODD)] for j, k in enumerate(ODD[:6])}} for i, t in
            enumerate(types)] + [{"pod": "none", "marks": {}}]
    n = _same_as_safe_dump(m, {"pools": [{"key": ODD[1], "nodes": list(nodes)}], "rows": rows,
                               "warnings": ODD[:3]},
                           {"schema_version": 1, "command": "matrix"})
    assert n == len(types) * len(nodes) == 84


def test_a_daemonsets_row_has_no_cell_where_it_has_no_pod():
    m = Matrix(("ds-a", "ds-b", "web"), ("n1", "n2"),
               CellView([bytearray([0, 0]), bytearray([1, 1]), bytearray([0, 1])], 2, ["deployable",
                                                                                        "not-deployable"]),
               CellView.filled(3, 2, "theorem-5"), {"complete": True},
               groups={"ds": {0: 0, 1: 1}})
    assert _same_as_safe_dump(m) == 4   # the DaemonSet on two nodes, web on two


def test_no_cells():
    m = Matrix((), ("n1",), {}, {}, {"complete": True})
    j, y = _both(m)
    assert "cells: []\n" in y and _same_as_safe_dump(m) == 0


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_generated_clusters(seed):
    m = matrix_table(load_document(generate_cluster(9, 7, seed=seed, pools=3)))
    assert _same_as_safe_dump(m, {"warnings": []}) == 63


def test_the_command_writes_the_json_documents_keys_as_yaml(tmp_path):
    path = tmp_path / "c.yaml"
    path.write_text(yaml.safe_dump(generate_cluster(8, 6, seed=5, pools=2), sort_keys=False))
    runner = CliRunner()
    y = runner.invoke(matrix_command, [str(path), "-o", "yaml"], catch_exceptions=False)
    j = runner.invoke(matrix_command, [str(path), "-o", "json"], catch_exceptions=False)
    assert y.exit_code == j.exit_code == 0
    got, want = yaml.safe_load(y.output), json.loads(j.output)
    for doc in (got, want):
        doc.pop("times")
        doc["stats"].pop("time_s", None)
    assert got == want and list(got) == list(want) and len(got["cells"]) == 48
