"""Reachability with nominated pods in force (``solvers/nominated_search.py``): a deployable answer whose
first witness a nomination blocks is searched again around the nominations, exactly.

``KSO`` holds the kso variant's answers (``benchmarks/kso_nominated``) at every state the witnesses pass
through, written in; where the variant is built (``KSO_NOMINATED``) they are re-asked.
"""

from __future__ import annotations

import copy
import json
import os
from pathlib import Path

import pytest

from benchmarks.kso_harness import admitted, kso_pending
from tests.nominated_cases import node, pod

VARIANT = Path(os.environ.get("KSO_NOMINATED", "/work/wt/nom-kso/kso"))

# q (100, 2 CPUs) is nominated to n1 (2 CPUs): p (0) does not fit n1 while q is nominated. Once q is
# scheduled on n2 its nomination ends and p fits n1.
BLOCKED = [node("n1"), node("n2"), pod("q", cpu="2", priority=100, nominated="n1"), pod("p")]
AFTER_Q = [node("n1"), node("n2"), pod("q", cpu="2", priority=100, on="n2"), pod("p")]
# q cannot be scheduled anywhere (no node has disk=ssd) and stays nominated to n1: p never fits n1,
# though it would without the nomination.
STUCK = [node("n1"), node("n2", cpu="1"), pod("q", cpu="2", priority=100, nominated="n1", nodeSelector={"disk": "ssd"}),
         pod("p")]
STATES = {"blocked": BLOCKED, "after-q": AFTER_Q, "stuck": STUCK}

# state -> pending pod -> node -> kso's first failing plugin and reasons (None: fits)
KSO = {'blocked': {'default/p': {'n1': ('NodeResourcesFit', ('Insufficient cpu',)), 'n2': None},
                   'default/q': {'n1': None, 'n2': None}},
       'after-q': {'default/p': {'n1': None, 'n2': ('NodeResourcesFit', ('Insufficient cpu',))}},
       'stuck': {'default/p': {'n1': ('NodeResourcesFit', ('Insufficient cpu',)), 'n2': None},
                 'default/q': {'n1': ('NodeAffinity', ("node(s) didn't match Pod's node affinity/selector",)),
                               'n2': ('NodeAffinity', ("node(s) didn't match Pod's node affinity/selector",))}}}


def check(tmp_path, objects: list[dict], pod_name: str, node_name: str, *extra: str) -> dict:
    import yaml
    from click.testing import CliRunner

    from symreach.cli import cli

    path = tmp_path / "state.yaml"
    path.write_text(yaml.safe_dump_all(objects))
    out = CliRunner().invoke(cli, ["check", str(path), "--pod", pod_name, "--node", node_name, "--json", *extra])
    return json.loads(out.stdout)


def nominated_caveats(data: dict) -> list[str]:
    from symreach.frontends.k8s_nominated import NOMINATED_CAVEAT

    return [c for c in data["caveats"] if NOMINATED_CAVEAT in c]


def test_the_only_witness_schedules_the_nominated_pod_first(tmp_path) -> None:
    """p on n1: kso refuses p there while q is nominated (``KSO['blocked']``) and accepts q on n2; with q
    running on n2 it accepts p on n1 (``KSO['after-q']``). The answer is that witness, without caveat."""
    data = check(tmp_path, BLOCKED, "default/p", "n1")
    assert data["verdict"] == "deployable" and not nominated_caveats(data)
    assert [(s["op"], s["pod"], s["node"]) for s in data["trace"]] == [
        ("deploy", "default/q", "n2"), ("deploy", "default/p", "n1")]
    assert data["stats"]["nominated_steps"] == [[0, "default/q"]]   # the first step is the pending q
    assert KSO["blocked"]["default/q"]["n2"] is None and KSO["after-q"]["default/p"]["n1"] is None
    assert KSO["blocked"]["default/p"]["n1"] is not None


def test_a_nomination_that_never_ends_makes_the_target_not_deployable(tmp_path) -> None:
    """q fits no node (``KSO['stuck']``), so its nomination holds for ever and p never fits n1; without the
    nomination p would."""
    data = check(tmp_path, STUCK, "default/p", "n1")
    assert data["verdict"] == "not-deployable" and not nominated_caveats(data)
    assert KSO["stuck"]["default/p"]["n1"] is not None
    assert all(v is not None for v in KSO["stuck"]["default/q"].values())
    plain = [o for o in STUCK if o["metadata"]["name"] != "q"]
    assert check(tmp_path, plain, "default/p", "n1")["verdict"] == "deployable"


def test_symreach_gives_kso_s_verdicts_at_every_state() -> None:
    from tests.test_nominated_kso import symreach_answers

    for name, objects in STATES.items():
        assert symreach_answers(objects) == KSO[name], name


@pytest.mark.skipif(not VARIANT.exists(), reason="kso variant with nominated pods not built (benchmarks/kso_nominated)")
def test_written_answers_are_the_variants() -> None:
    names = sorted(STATES)
    pods = [sorted(KSO[c]) for c in names]
    nodes = [sorted({n for v in KSO[c].values() for n in v}) for c in names]
    asked = kso_pending([admitted(copy.deepcopy(STATES[c])) for c in names], pods, nodes, VARIANT)
    assert dict(zip(names, asked)) == KSO


def test_a_nominated_pod_of_a_type_nobody_creates_leaves_the_answer_unknown() -> None:
    """symreach never deploys a pod of a non-creatable type, so such a nominated pod's nomination would
    never end in the search: an exhausted search is no proof then."""
    from dataclasses import replace

    from symreach.frontends.k8s_nominated_filter import in_model
    from symreach.frontends.kubernetes import load_kubernetes_documents
    from symreach.model import Query
    from symreach.result import Verdict
    from symreach.run import RunContext
    from symreach.solvers.nominated_search import search

    inst, report = load_kubernetes_documents(copy.deepcopy(BLOCKED), "state.yaml")
    q, p = inst.type_index("default/q"), inst.type_index("default/p")
    index = report.nominated
    priority = {t: index.type_priority.get(pt.name) for t, pt in enumerate(inst.pod_types)}
    query = Query((frozenset({(p, inst.node_index("n1"))}),))
    found = search(inst, query, in_model(inst, index.nominations), priority, RunContext())
    assert found.verdict is Verdict.DEPLOYABLE
    types = list(inst.pod_types)
    types[q] = replace(types[q], creatable=False)
    frozen = replace(inst, pod_types=tuple(types))
    found = search(frozen, query, in_model(frozen, index.nominations), priority, RunContext())
    assert found.verdict is Verdict.UNKNOWN and "default/q" in found.reason


def test_not_deployable_certificates_are_rechecked_with_nominations_present(tmp_path) -> None:
    """A not-deployable answer's certificate is one of the model without nominations (which only take
    moves away), and ``certify`` re-checks it on the same input: valid."""
    import yaml
    from click.testing import CliRunner

    from symreach.cli import cli

    path = tmp_path / "state.yaml"
    path.write_text(yaml.safe_dump_all(BLOCKED + [pod("big", cpu="3")]))
    for engine in ("auto", "explicit"):
        cert = tmp_path / f"{engine}.cert"
        target = ["--pod", "default/big", "--node", "n1"]
        out = CliRunner().invoke(cli, ["check", str(path), *target, "--engine", engine, "--cert-out", str(cert)])
        assert out.exit_code == 1 and cert.exists(), out.output
        again = CliRunner().invoke(cli, ["certify", str(path), str(cert), *target])
        assert again.exit_code == 0 and "VALID" in again.output, again.output


def test_explain_on_a_node_answers_around_the_nominations(tmp_path) -> None:
    """``explain --node``: the verdict now counts q (kso: Insufficient cpu), and ever deployable is the
    witness that schedules q first, exact: no caveat."""
    import yaml
    from click.testing import CliRunner

    from symreach.cli import cli

    path = tmp_path / "state.yaml"
    path.write_text(yaml.safe_dump_all(BLOCKED))
    out = CliRunner().invoke(cli, ["explain", str(path), "--pod", "default/p", "--node", "n1"]).stdout
    assert "ever deployable on n1? deployable (explicit/nominations" in out
    assert "default/q, the pending one: its nomination ends" in out and "caveats" not in out
    path.write_text(yaml.safe_dump_all(STUCK))
    out = CliRunner().invoke(cli, ["explain", str(path), "--pod", "default/p", "--node", "n1"]).stdout
    assert "ever deployable on n1? not-deployable (explicit/nominations" in out and "caveats" not in out


def test_where_the_search_is_cut_short_the_first_answer_stays_marked(tmp_path) -> None:
    """``--max-states 4`` lets the engine find its first witness but stops the search around the nominations: the engine's own deployable answer
    stays, with the nomination caveat, and says why."""
    data = check(tmp_path, BLOCKED, "default/p", "n1", "--engine", "explicit", "--max-states", "4")
    assert data["verdict"] == "deployable" and nominated_caveats(data)
    assert "state limit" in data["stats"]["with nominations"]
