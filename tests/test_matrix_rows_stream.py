"""``matrix --stream``: rows written as their pod types finish, the same cells as without it."""

from __future__ import annotations

import csv
import io
import json
import sys
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from symreach.cli.matrix import matrix_command
from symreach.generators.clusters import generate_cluster
from symreach.solvers import matrix as matrix_module

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


def _cluster(tmp_path, types: int = 8, nodes: int = 6) -> Path:
    path = tmp_path / "c.yaml"
    path.write_text(yaml.safe_dump(generate_cluster(types, nodes, seed=5, pools=3), sort_keys=False))
    return path


def _cells_of_jsonl(text: str) -> tuple[dict, list[dict], dict]:
    lines = [json.loads(line) for line in text.splitlines() if line.strip()]
    head, rows, tail = lines[0], lines[1:-1], lines[-1]
    assert all(set(r) == {"pod", "cells"} and all(c["pod"] == r["pod"] for c in r["cells"]) for r in rows)
    return head, [c for r in rows for c in r["cells"]], tail


def test_the_first_row_is_written_before_the_last_type_is_computed(tmp_path, monkeypatch):
    path = _cluster(tmp_path)
    seen: list[tuple[tuple[int, ...], int]] = []   # (types of a task, stdout bytes when it started)
    real = matrix_module.solve_types

    def recording(inst, types, **options):
        sys.stdout.flush()
        seen.append((tuple(types), len(sys.stdout.buffer.getvalue())))
        return real(inst, types, **options)

    monkeypatch.setattr(matrix_module, "solve_types", recording)
    for fmt, header_lines in (("csv", 1), ("json", 1)):
        seen.clear()
        out = CliRunner().invoke(matrix_command, [str(path), "-o", fmt, "--stream"], catch_exceptions=False)
        assert out.exit_code == 0, out.output
        assert len(seen) >= 2   # more than one task, or nothing could come first
        header = len("".join(out.output.splitlines(keepends=True)[:header_lines]).encode())
        assert seen[0][1] <= header + 2            # nothing but the header before the first task
        assert seen[-1][1] > header + 2, fmt       # a row was out before the last task started


@pytest.mark.parametrize("example", ["paper-2.6.yaml", "loki-cluster.yaml", "cluster-dump.yaml", "pdb-blocks.yaml"])
def test_streamed_cells_are_the_plain_output_cells(example):
    path = str(EXAMPLES / example)
    runner = CliRunner()
    plain_csv = runner.invoke(matrix_command, [path, "-o", "csv"], catch_exceptions=False)
    streamed_csv = runner.invoke(matrix_command, [path, "-o", "csv", "--stream"], catch_exceptions=False)
    assert streamed_csv.exit_code == plain_csv.exit_code
    want = list(csv.DictReader(io.StringIO(plain_csv.output.strip())))
    got = list(csv.DictReader(io.StringIO(streamed_csv.output.strip())))
    key = lambda r: (r["pod"], r["node"])  # noqa: E731
    assert want and sorted(got, key=key) == sorted(want, key=key)
    plain = json.loads(runner.invoke(matrix_command, [path, "-o", "json"], catch_exceptions=False).output)
    head, cells, tail = _cells_of_jsonl(
        runner.invoke(matrix_command, [path, "-o", "json", "--stream"], catch_exceptions=False).output)
    assert head["command"] == "matrix" and head["pods"] == plain["pods"] and head["nodes"] == plain["nodes"]
    assert len(cells) == len(plain["cells"]) == len(want)
    assert sorted(cells, key=key) == sorted(plain["cells"], key=key)
    assert tail["stats"]["complete"] == plain["stats"]["complete"] and tail["caveats"] == plain["caveats"]


def test_a_memory_limit_writes_the_undecided_rows_last_with_the_reason(tmp_path, monkeypatch):
    path = _cluster(tmp_path, 8, 5)
    calls = []
    real = matrix_module.solve_types

    def limited(inst, types, **options):
        calls.append(tuple(types))
        if len(calls) > 3:
            raise MemoryError
        return real(inst, types, **options)

    monkeypatch.setattr(matrix_module, "solve_types", limited)
    out = CliRunner().invoke(matrix_command, [str(path), "-o", "json", "--stream"], catch_exceptions=False)
    assert out.exit_code == 3, out.output
    head, cells, tail = _cells_of_jsonl(out.output)
    types, nodes = len(head["pods"]), len(head["nodes"])
    assert tail["stats"]["complete"] is False and tail["stats"]["reason"].startswith("memory limit")
    unknown = [c for c in cells if c["by"] == "limit"]
    assert all(c["verdict"] == "unknown" for c in unknown)
    done = {t for chunk in calls[:3] for t in chunk}
    assert 0 < len(done) < types and len(cells) == types * nodes and len(unknown) == (types - len(done)) * nodes
    # the undecided rows come after every decided one
    order = [c["by"] == "limit" for c in cells]
    assert order == sorted(order)


def test_the_supervisors_copy_lists_no_rows(tmp_path, monkeypatch):
    """Made before any row is written, it must stay true later: the trailer alone (rendering
    every row as ? again was most of the --stream slowdown and hundreds of MB at scale)."""
    from symreach.cli import process

    path = _cluster(tmp_path)
    sent: list[dict] = []
    monkeypatch.setattr(process, "tell_supervisor", sent.append)
    for fmt in ("csv", "json"):
        sent.clear()
        out = CliRunner().invoke(matrix_command, [str(path), "-o", fmt, "--stream"], catch_exceptions=False)
        assert out.exit_code == 0 and len(out.output.splitlines()) > 3
        copies = [m["fallback"] for m in sent if "fallback" in m]
        assert len(copies) == 1, sent
        if fmt == "csv":
            assert copies[0] == ""
        else:
            (tail,) = [json.loads(line) for line in copies[0].splitlines()]
            assert "pod" not in tail and tail["stats"]["complete"] is False
            assert tail["stats"]["reason"].startswith(process.REASON + " (rows not written")
