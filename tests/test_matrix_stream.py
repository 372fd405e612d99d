"""The matrix written as a stream (JSON, CSV, text), and ``--memory`` keeping decided cells."""

from __future__ import annotations

import csv
import io
import json

import yaml
from click.testing import CliRunner

from symreach.cli.matrix import matrix_command
from symreach.generators.clusters import generate_cluster
from symreach.loader import load_document
from symreach.solvers import matrix as matrix_module
from symreach.solvers.matrix import matrix_table, render_csv, render_json, render_text


def test_streamed_json_is_the_plain_json_of_every_cell():
    inst = load_document(generate_cluster(12, 9, seed=3, pools=3))
    m = matrix_table(inst)
    data = json.loads(render_json(m, {"warnings": []}))
    assert data["pods"] == list(m.types) and data["nodes"] == list(m.nodes)
    assert data["cells"] == list(m.rows()) and len(data["cells"]) == 12 * 9
    assert data["stats"]["complete"] and data["warnings"] == []
    rows = list(csv.DictReader(io.StringIO(render_csv(m))))
    assert rows == [{k: r[k] for k in ("pod", "node", "verdict", "by")} for r in m.rows()]
    assert len(render_text(m).splitlines()) == 2 + 9


def test_a_memory_limit_keeps_the_cells_decided_before_it(tmp_path, monkeypatch):
    path = tmp_path / "c.yaml"
    path.write_text(yaml.safe_dump(generate_cluster(10, 8, seed=4, pools=3), sort_keys=False))
    runner = CliRunner()
    full = runner.invoke(matrix_command, [str(path), "--format", "csv"])
    assert full.exit_code == 0, full.output
    calls = []
    real = matrix_module.solve_types

    def limited(inst, types, **options):
        calls.append(types)
        if len(calls) > 3:
            raise MemoryError
        return real(inst, types, **options)

    monkeypatch.setattr(matrix_module, "solve_types", limited)
    out = runner.invoke(matrix_command, [str(path), "--format", "csv"])
    assert out.exit_code == 3, out.output
    want = {(r["pod"], r["node"]): r for r in csv.DictReader(io.StringIO(full.output))}
    got = list(csv.DictReader(io.StringIO(out.output.strip())))
    done = {inst_t for chunk in calls[:3] for inst_t in chunk}
    names = load_document(yaml.safe_load(path.read_text())).pod_types
    kept = unknown = 0
    for r in got:
        t = next(i for i, p in enumerate(names) if p.name == r["pod"])
        if t in done:
            assert r == want[(r["pod"], r["node"])]
            kept += 1
        else:
            assert (r["verdict"], r["by"]) == ("unknown", "limit"), r
            unknown += 1
    assert kept == 3 * 10 and unknown == 5 * 10
    calls.clear()
    text = runner.invoke(matrix_command, [str(path)])
    assert text.exit_code == 3 and text.output.rstrip().endswith("incomplete: memory limit")
    assert "Y" in text.output and "?" in text.output


def test_csv_is_what_the_csv_module_writes_even_for_odd_names():
    from symreach.solvers.matrix import CellView, Matrix

    names = ['a,b', 'say "hi"', "plain"]
    nodes = ("n,1", "n2")
    cells = CellView.filled(3, 2, "deployable")
    cells.set(1, [1], "not-deployable")
    how = CellView.filled(3, 2, "fixpoint-order")
    m = Matrix(tuple(names), nodes, cells, how, {"complete": True})
    want = io.StringIO()
    w = csv.DictWriter(want, fieldnames=["pod", "node", "verdict", "by"], extrasaction="ignore")
    w.writeheader()
    for row in m.rows():
        w.writerow(row)
    assert render_csv(m) == want.getvalue() and want.getvalue().count("\r\n") == 7
    data = json.loads(render_json(m))
    assert [c["pod"] for c in data["cells"]] == [n for n in names for _ in nodes]


def test_rows_in_input_order_as_types_finish_are_the_plain_output_byte_for_byte(monkeypatch):
    """Plain CSV/JSON (``RowStream(ordered=True)``) with types finishing in any order: the same
    bytes as ``write_matrix``, a row out only once every row before it is; rows held for an
    earlier one, or not held past ``HELD_CHARS``; a DaemonSet's row; caveats in JSON."""
    import random

    from symreach.frontends.dispatch import load_inputs
    from symreach.report.caveats import type_caveats
    from symreach.solvers import matrix_stream
    from symreach.solvers.matrix import write_matrix

    examples = __import__("pathlib").Path(__file__).resolve().parents[1] / "examples"
    checked = 0
    for name in ("cluster-dump.yaml", "loki-cluster.yaml", "pools-3zones.yaml"):
        loaded = load_inputs([str(examples / name)])
        m = matrix_table(loaded.instance)
        m.caveats = type_caveats(loaded.report, loaded.instance) or {0: ("a caveat",)}
        for fmt in ("csv", "json"):
            plain = io.StringIO()
            write_matrix(m, fmt, plain, {"times": {}}, {"command": "matrix"})
            for held in (matrix_stream.HELD_CHARS, 0):
                monkeypatch.setattr(matrix_stream, "HELD_CHARS", held)
                order = list(range(len(m.types)))
                random.Random(len(order) + held).shuffle(order)
                out = io.StringIO()
                rows = matrix_stream.RowStream(m, fmt, out, {"command": "matrix"}, ordered=True)
                for t in order:
                    before = len(out.getvalue())
                    rows.types_done([t])
                    written = out.getvalue()[before:]
                    assert not written or rows.next > 0
                    assert len(rows.written) == rows.next   # a prefix of the rows, nothing after a gap
                rows.finish({"times": {}} if fmt == "json" else None)
                assert out.getvalue() == plain.getvalue(), (name, fmt, held)
                checked += 1
        assert m.groups or name == "pools-3zones.yaml"
    assert checked == 12
