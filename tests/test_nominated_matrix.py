"""Matrix cells answered exactly around nominated pods (``cli/nominated_answers.MatrixSettler``).

A nomination only adds Filter runs, so a not-deployable cell loses the nominated pods' caveat; a
deployable one is re-decided as ``check --pod T --node N`` does (its witness checked with the
nominations, else the search around them): decided, it shows that answer without the caveat;
undecided (the ``nominated-search`` guard, an unknown priority), it keeps its verdict and the caveat.
Every cell of random states (``generators/k8s_nominated_states``) equals ``check``'s answer.

``KSO`` holds the kso variant's answers (``benchmarks/kso_nominated``) in the states the arguments
pass through, written in; where the variant is built (``KSO_NOMINATED``) they are re-asked.
"""

from __future__ import annotations

import copy
import json
import os
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from benchmarks.kso_harness import admitted, kso_pending
from symreach.cli import cli
from symreach.cli.nominated_answers import is_nominated, with_nominations
from symreach.frontends.kubernetes import load_kubernetes_documents
from symreach.generators.k8s_nominated_states import nominated_states, small_states
from symreach.model import Query
from symreach.report.caveats import verdict_caveats
from symreach.result import Verdict
from symreach.run import RunContext
from symreach.solvers.registry import make_engine
from symreach.solvers.witness import decide
from tests.nominated_cases import node, pod
from tests.test_nominated_reach import BLOCKED, KSO as KSO_REACH

VARIANT = Path(os.environ.get("KSO_NOMINATED", "/work/wt/nom-kso/kso"))

# q (priority 100, 2 CPUs) is nominated to n1 (2 CPUs) but fits no node (no node has disk=ssd): its
# nomination holds for ever, so p (0) never fits n1; h (200) is above it and fits n1.
STUCK = [node("n1"), node("n2"), pod("q", cpu="2", priority=100, nominated="n1", nodeSelector={"disk": "ssd"}),
         pod("p"), pod("h", priority=200)]
KSO = {'default/h': {'n1': None, 'n2': None},
       'default/p': {'n1': ('NodeResourcesFit', ('Insufficient cpu',)), 'n2': None},
       'default/q': {'n1': ('NodeAffinity', ("node(s) didn't match Pod's node affinity/selector",)),
                     'n2': ('NodeAffinity', ("node(s) didn't match Pod's node affinity/selector",))}}


def run_cli(tmp_path, objects: list[dict], *args: str) -> str:
    path = tmp_path / "state.yaml"
    path.write_text(yaml.safe_dump_all(objects))
    out = CliRunner().invoke(cli, [args[0], str(path), *args[1:]])
    assert out.exit_code in (0, 1), out.output
    return out.stdout


def matrix_cells(tmp_path, objects: list[dict], *extra: str) -> dict[tuple[str, str], dict]:
    data = json.loads(run_cli(tmp_path, objects, "matrix", "-o", "json", *extra))
    return {(c["pod"], c["node"]): c for c in data["cells"]}


def nominated(caveats: list[str]) -> bool:
    return any(is_nominated(c) for c in caveats)


def test_a_cell_a_nomination_blocks_is_check_s_answer_without_the_mark(tmp_path) -> None:
    """p on n1: deployable without the nomination, not deployable with it (kso refuses p on n1 while q
    is nominated there, and q fits no node, so the nomination never ends): the cell says so, as
    ``check`` does, unmarked; h (above q's priority) stays deployable there."""
    assert KSO["default/p"]["n1"] is not None and KSO["default/h"]["n1"] is None
    assert all(v is not None for v in KSO["default/q"].values())
    cells = matrix_cells(tmp_path, STUCK)
    fixpoint = matrix_cells(tmp_path, STUCK, "--method", "fixpoint")
    assert {k: (c["verdict"], c["caveats"]) for k, c in fixpoint.items()} == \
        {k: (c["verdict"], c["caveats"]) for k, c in cells.items()}
    csv_lines = run_cli(tmp_path, STUCK, "matrix", "-o", "csv").splitlines()
    assert "default/p,n1,not-deployable,nominations" in csv_lines
    checked = json.loads(run_cli(tmp_path, STUCK, "check", "--pod", "default/p", "--node", "n1", "--json"))
    assert checked["verdict"] == cells[("default/p", "n1")]["verdict"] == "not-deployable"
    assert cells[("default/p", "n1")]["by"] == "nominations"
    assert not nominated(checked["caveats"]) and not nominated(cells[("default/p", "n1")]["caveats"])
    assert cells[("default/p", "n2")]["verdict"] == cells[("default/h", "n1")]["verdict"] == "deployable"
    plain = [o for o in STUCK if o["metadata"]["name"] != "q"]
    assert matrix_cells(tmp_path, plain)[("default/p", "n1")]["verdict"] == "deployable"
    text = run_cli(tmp_path, STUCK, "matrix", "-o", "wide")
    assert "*" not in text.split("nodes:")[1]
    assert [line.split() for line in text.splitlines() if line.startswith("default/p")] == [["default/p", ".", "Y"]]
    # --moves both does not search the operator verdicts around the nominations: every cell of a type of
    # lower or equal priority stays marked
    both = json.loads(run_cli(tmp_path, STUCK, "matrix", "-o", "json", "--moves", "both"))
    assert all(nominated(c["caveats"]) == (c["pod"] != "default/h") for c in both["cells"])


def test_a_cell_that_stays_deployable_loses_its_mark(tmp_path) -> None:
    """p on n1 in ``BLOCKED``: its first witness is refused (kso: Insufficient cpu while q is nominated
    to n1), the witness that schedules q on n2 first holds (kso: q fits n2, then p fits n1)."""
    assert KSO_REACH["blocked"]["default/p"]["n1"] is not None and KSO_REACH["blocked"]["default/q"]["n2"] is None
    assert KSO_REACH["after-q"]["default/p"]["n1"] is None
    data = json.loads(run_cli(tmp_path, BLOCKED, "matrix", "-o", "json"))
    cell = next(c for c in data["cells"] if (c["pod"], c["node"]) == ("default/p", "n1"))
    assert cell["verdict"] == "deployable" and cell["caveats"] == []
    assert data["caveats"] == {} and data["stats"]["nominations"]["left marked"] == 0
    assert data["stats"]["nominations"]["cells re-decided"] == 4


def test_not_deployable_cells_lose_the_nominated_mark_and_keep_others(tmp_path) -> None:
    """big (3 CPUs) fits no node of 2 CPUs: not deployable with or without q's nomination, unmarked;
    g (gated, 3 CPUs) too, keeping its own caveat (PreEnqueue holds it back) without the nomination's."""
    objects = BLOCKED + [pod("big", cpu="3"), pod("g", cpu="3", schedulingGates=[{"name": "wait"}])]
    data = json.loads(run_cli(tmp_path, objects, "matrix", "-o", "json"))
    cells = {(c["pod"], c["node"]): c for c in data["cells"]}
    for n in ("n1", "n2"):
        assert cells[("default/big", n)]["verdict"] == "not-deployable" and cells[("default/big", n)]["caveats"] == []
        gated = cells[("default/g", n)]
        assert gated["verdict"] == "not-deployable" and gated["caveats"] and not nominated(gated["caveats"])
    assert "default/big" not in data["caveats"] and not nominated(data["caveats"]["default/g"])


def test_a_cell_the_guard_stops_keeps_its_verdict_and_mark(tmp_path) -> None:
    """``--search-budget`` lowers the ``nominated-search`` guard: the cell whose witness q blocks is not
    searched, keeps deployable and the caveat (never an unmarked answer the nominations may change),
    in every format: JSON, YAML, text (``Y*``)."""
    cells = matrix_cells(tmp_path, BLOCKED, "--search-budget", "1e-6")
    cell = cells[("default/p", "n1")]
    assert cell["verdict"] == "deployable" and nominated(cell["caveats"])
    assert any("(nominated-search); --search-budget" in c for c in cell["caveats"])   # the guard, and what raises it
    assert not nominated(cells[("default/p", "n2")]["caveats"])   # its witness holds with q's nomination
    data = yaml.safe_load(run_cli(tmp_path, BLOCKED, "matrix", "-o", "yaml", "--search-budget", "1e-6"))
    assert {(c["pod"], c["node"]): c for c in data["cells"]} == cells
    assert data["stats"]["nominations"]["left marked"] == 1
    wide = run_cli(tmp_path, BLOCKED, "matrix", "-o", "wide", "--search-budget", "1e-6").splitlines()
    assert [line.split() for line in wide if line.startswith("default/p")] == [["default/p", "Y*", "Y"]]
    streamed = run_cli(tmp_path, BLOCKED, "matrix", "-o", "json", "--stream", "--search-budget", "1e-6")
    rows = [json.loads(line) for line in streamed.splitlines()[1:] if line.startswith('{"pod"')]
    assert {(c["pod"], c["node"]): c for r in rows for c in r["cells"]} == cells


def check_answer(inst, report, t: int, n: int) -> tuple[str, bool]:
    """``check --pod T --node N``'s verdict and whether it carries a nominated caveat, by check's own steps."""
    query = Query((frozenset({(t, n)}),), f"{inst.pod_types[t].name} on {inst.nodes[n].name}")
    run = RunContext.for_process()
    result = with_nominations(inst, query, decide(make_engine("explicit"), inst, query, run), report, run)
    return result.verdict.value, nominated(verdict_caveats(report, inst, query, result))


@pytest.mark.parametrize("states", ["random", "small"])
def test_every_cell_is_check_s_answer_on_random_states(tmp_path, states: str) -> None:
    """``nominated_states`` (dumps with priorities and nominations) and ``small_states`` (pending pods that
    often fit and meet each other): every cell's verdict, and whether it carries a nominated caveat, is
    ``check``'s (its engine, ``with_nominations``, ``verdict_caveats``)."""
    drawn = nominated_states(30, 5) if states == "random" else small_states(30, 23)
    cells = changed = searched = marked = 0
    for k, state in enumerate(drawn):
        if k % 4 == 3:   # a nominated pod of unknown priority: its class is not in the input
            nominee = next((o for o in state.objects if (o.get("status") or {}).get("nominatedNodeName")), None)
            if nominee is not None:
                nominee["spec"].pop("priority", None)
                nominee["spec"]["priorityClassName"] = "not-in-the-input"
        inst, report = load_kubernetes_documents(copy.deepcopy(state.objects), "<state>")
        if not report.nominated.nominations:
            continue
        path = tmp_path / "state.yaml"
        path.write_text(yaml.safe_dump_all(state.objects))
        out = CliRunner().invoke(cli, ["matrix", str(path), "-o", "json", "--method", "cells"])
        data = json.loads(out.stdout)
        assert data["stats"]["complete"], data["stats"]
        # -o json writes rows as they are decided (matrix_stream), -o yaml after the whole matrix: the same cells
        assert yaml.safe_load(CliRunner().invoke(cli, ["matrix", str(path), "-o", "yaml"]).stdout)["cells"] == data["cells"]
        searched += data["stats"]["nominations"]["searched around them"]
        for c in data["cells"]:
            if c["pod"] not in {p.name for p in inst.pod_types}:
                continue   # a DaemonSet's row
            t, n = inst.type_index(c["pod"]), inst.node_index(c["node"])
            verdict, caveat = check_answer(inst, report, t, n)
            assert (c["verdict"], nominated(c["caveats"])) == (verdict, caveat), (state.objects, c)
            cells += 1
            changed += c["by"] == "nominations"
            marked += nominated(c["caveats"])
    # the states test something: cells whose first witness a nomination blocks, some turned not deployable,
    # some left marked (an unknown priority)
    assert cells > 200 and searched > 5 and marked > 0 and (changed > 0 or states == "small"), \
        (cells, searched, changed, marked)


@pytest.mark.skipif(not VARIANT.exists(), reason="kso variant with nominated pods not built (benchmarks/kso_nominated)")
def test_written_answers_are_the_variants() -> None:
    asked = kso_pending([admitted(copy.deepcopy(STUCK))], [sorted(KSO)], [["n1", "n2"]], VARIANT)
    assert asked == [KSO]


def test_a_witness_holds_through_a_choice_left_undecided(tmp_path) -> None:
    """p0's priority class is not in the input: a new pod of its type on n0 is not decided (compared with
    p0's own nomination there), the pending p0 itself is (its own nomination is not added). r0 needs a
    p0 pod on its node: the witness deploys the pending p0, then r0. ``trace_holds`` takes the decided
    choice, as the search does, so the search's witness holds (it was an internal error), and the
    matrix cell is ``check``'s answer."""
    p0 = pod("p0", priority=None, nominated="n0", priorityClassName="not-in-the-input")
    objects = [node("n0"), node("n1"), p0, pod("r0", affinity={"podAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": [
            {"labelSelector": {"matchLabels": {"app": "p0"}}, "topologyKey": "kubernetes.io/hostname"}]}})]
    checked = json.loads(run_cli(tmp_path, objects, "check", "--pod", "default/r0", "--node", "n0", "--json"))
    assert checked["verdict"] == "deployable", checked
    cell = matrix_cells(tmp_path, objects)[("default/r0", "n0")]
    assert (cell["verdict"], nominated(cell["caveats"])) == (checked["verdict"], nominated(checked["caveats"]))


def where_cells(tmp_path, objects: list[dict], pod_name: str, *extra: str) -> dict[tuple[str, str], tuple]:
    """``where --pod`` as (pod, node) -> (verdict, caveats), the matrix cells' shape."""
    data = json.loads(run_cli(tmp_path, objects, "where", "--pod", pod_name, "-o", "json", *extra))
    return {(pod_name, node): (verdict, pool["caveats"].get(node, []))
            for pool in data["pools"] for verdict, nodes in pool["nodes"].items() for node in nodes}


def test_where_is_the_matrix_row_with_its_marks(tmp_path) -> None:
    """``where`` answers one row of the matrix, cell by cell the same verdict and caveats: settled with the
    nominations (STUCK's p on n1 turned not deployable, said why), marked where the guard stops the search
    (``n1*`` in text), on random states with nominations too."""
    stuck = where_cells(tmp_path, STUCK, "default/p")
    assert stuck == {("default/p", "n1"): ("not-deployable", []), ("default/p", "n2"): ("deployable", [])}
    assert "n1: the pending pods nominated to it" in run_cli(tmp_path, STUCK, "where", "--pod", "default/p")
    guarded = where_cells(tmp_path, BLOCKED, "default/p", "--search-budget", "1e-6")
    assert guarded[("default/p", "n1")][0] == "deployable" and nominated(guarded[("default/p", "n1")][1])
    text = run_cli(tmp_path, BLOCKED, "where", "--pod", "default/p", "--search-budget", "1e-6")
    assert "can:     n1*, n2" in text and any(line.startswith("* pending pod default/q") for line in text.splitlines())
    compared = marked = 0
    for state in [s for s in nominated_states(12, 5) if s.nominated][:6] + [STUCK, BLOCKED]:
        objects = state if isinstance(state, list) else state.objects
        cells = matrix_cells(tmp_path, objects)
        for name in sorted({pod_name for pod_name, _ in cells}):
            row = {k: (c["verdict"], c["caveats"]) for k, c in cells.items() if k[0] == name}
            assert where_cells(tmp_path, objects, name) == row, (objects, name)
            compared += len(row)
            marked += sum(bool(c) for _, c in row.values())
    assert compared > 30 and marked > 0, (compared, marked)
