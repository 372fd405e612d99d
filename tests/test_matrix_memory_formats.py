"""``--memory`` reached mid-matrix: every output format (and ``--stream``) keeps the cells
decided before it and prints the rest ``?`` with the reason (issue 32, item 4)."""

from __future__ import annotations

import csv
import io
import json

import pytest
import yaml
from click.testing import CliRunner

from symreach.cli.matrix import matrix_command
from symreach.generators.clusters import generate_cluster
from symreach.solvers import matrix as matrix_module

NODES, TYPES, TASKS_DONE = 10, 8, 3
CASES = [("text", False), ("wide", False), ("json", False), ("yaml", False), ("csv", False),
         ("csv", True), ("json", True)]


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    path = tmp_path_factory.mktemp("mem") / "c.yaml"
    doc = generate_cluster(NODES, TYPES, seed=4, pools=3)
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    return path, [p["name"] for p in doc["podTypes"]]


def _run(path, fmt: str, stream: bool, monkeypatch, fail_after=None):
    """The command's output and exit code; ``fail_after``: tasks before a ``MemoryError``
    (what the supervised child's address-space limit raises), and the types they decided."""
    calls: list[tuple[int, ...]] = []
    real = matrix_module.solve_types

    def limited(inst, types, **options):
        calls.append(tuple(types))
        if fail_after is not None and len(calls) > fail_after:
            raise MemoryError
        return real(inst, types, **options)

    monkeypatch.setattr(matrix_module, "solve_types", limited)
    out = CliRunner().invoke(matrix_command, [str(path), "-o", fmt] + ["--stream"] * stream,
                             catch_exceptions=False)
    return out.output, out.exit_code, {t for chunk in calls[:fail_after] for t in chunk}


def _cells(text: str, fmt: str, stream: bool) -> tuple[dict[tuple[str, str], tuple[str, str]], str]:
    """(pod, node) -> (verdict, by), and the reason the run gives (json/yaml/stream json)."""
    if fmt == "csv":
        rows = list(csv.DictReader(io.StringIO(text.strip())))
        return {(r["pod"], r["node"]): (r["verdict"], r["by"]) for r in rows}, ""
    if fmt == "json" and stream:
        lines = [json.loads(line) for line in text.splitlines() if line.strip()]
        cells = [c for row in lines[1:-1] for c in row["cells"]]
        stats = lines[-1]["stats"]
    else:
        data = json.loads(text) if fmt == "json" else yaml.safe_load(text)
        cells, stats = data["cells"], data["stats"]
    return {(c["pod"], c["node"]): (c["verdict"], c["by"]) for c in cells}, stats.get("reason", "")


def _rows(text: str, names: list[str]) -> dict[str, str]:
    """Text formats: each pod type's row (its marks), by name."""
    out = {}
    for line in text.splitlines():
        head, _, marks = line.partition(" ")
        if head in names:
            out[head] = marks.strip()
    return out


@pytest.mark.parametrize("fmt,stream", CASES)
def test_memory_limit_keeps_decided_cells_in_every_format(cluster, fmt, stream, monkeypatch):
    path, names = cluster
    full, code, _ = _run(path, fmt, stream, monkeypatch)
    assert code == 0, full
    limited, code, done = _run(path, fmt, stream, monkeypatch, fail_after=TASKS_DONE)
    assert code == 3, limited
    assert len(done) == TASKS_DONE   # one type per task on the local executor
    done_names = {names[t] for t in done}
    if fmt in ("text", "wide"):
        want, got = _rows(full, names), _rows(limited, names)
        assert set(got) == set(want) == set(names)
        kept = 0
        for name, marks in got.items():
            if name in done_names:
                assert marks == want[name]
                kept += 1
            else:
                assert set(marks.split()) == {"?"}, (name, marks)
        assert kept == TASKS_DONE and limited.rstrip().endswith("incomplete: memory limit")
        return
    want, _ = _cells(full, fmt, stream)
    got, reason = _cells(limited, fmt, stream)
    assert set(got) == set(want) and len(got) == NODES * TYPES
    kept = unknown = 0
    for (pod, node), cell in got.items():
        if pod in done_names:
            assert cell == want[(pod, node)]
            kept += 1
        else:
            assert cell == ("unknown", "limit")
            unknown += 1
    assert kept == TASKS_DONE * NODES and unknown == (TYPES - TASKS_DONE) * NODES
    if fmt != "csv":   # CSV has no place for it; text ends with it (above)
        assert reason.startswith("memory limit"), reason
