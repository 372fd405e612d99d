"""Readable "never": certificates of every kind turn into a handful of true lemmas."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from symreach.cli import cli
from symreach.certify import lemmas as lemma_module
from symreach.certify.dispatch import parse
from symreach.frontends.dispatch import load_any

ROOT = Path(__file__).resolve().parent.parent
DUMP = str(ROOT / "examples" / "cluster-dump.yaml")
CAP1 = str(ROOT / "examples" / "paper-2.6-capacity1.yaml")


def run(*args):
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


def why_lines(output: str) -> list[str]:
    lines = output.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("why ("))
    return [line[4:] for line in lines[start + 1:] if line.startswith("  - ")]


@pytest.fixture(scope="module")
def pyramid(tmp_path_factory):
    from symreach.frontends.reduction_pebbling import encode_pebbling
    from symreach.generators.dags import pyramid as make

    dag = make(3)
    path = tmp_path_factory.mktemp("peb") / "p.yaml"
    path.write_text(yaml.safe_dump(encode_pebbling(dag.vertices, dag.edges, dag.target, 4)))
    return path


@pytest.mark.parametrize("args,expected", [
    # b and the a it needs never fit on n1 together: the may-be-present fixpoint decides
    ((CAP1, "--engine", "bdd"), "never b on n1: its affinity term app=a needs a pod on n1 (a matches), and none can run there beside it"),
    ((CAP1, "--engine", "explicit"), "never c on n1: its affinity (app=b) needs b on n1, and none of them ever runs"),
    ((DUMP, "--pod", "payments/payments-api", "--node", "general-b"),
     "never payments/payments-db on general-b: node(s) didn't match Pod's node affinity/selector"),
    ((DUMP, "--pod", "payments/payments-api", "--node", "gpu-b"),
     "never payments/payments-api on gpu-b: node(s) had untolerated taint(s)"),
])
def test_check_why_on_the_readme_examples_prints_a_handful(args, expected):
    out = run("check", *args, "--why", "--quiet")
    assert out.exit_code == 1, out.output
    lines = why_lines(out.output)
    assert 1 <= len(lines) <= lemma_module.MAX_LEMMAS
    assert any(line.startswith(expected) for line in lines), lines


@pytest.mark.parametrize("engine", ["bdd", "ic3", "explicit"])
def test_an_invariant_projects_to_the_capacity_lemma(tmp_path, engine):
    """Each pair of c, b, a fits on the node, the three do not: only an invariant proves it."""
    from tests.test_certify_kinds import hard_case

    path = tmp_path / "hard.yaml"
    path.write_text(yaml.safe_dump(hard_case()))
    out = run("check", str(path), "--engine", engine, "--why", "--quiet")
    assert out.exit_code == 1, out.output
    assert "c on n: with a on n, b on n running, Insufficient cpu: requests 1000m, 0m free of 2000m on n" \
        in why_lines(out.output)


@pytest.mark.parametrize("engine", ["bdd", "ic3"])
def test_invariants_project_to_the_pebbling_lemma(pyramid, engine):
    """Hundreds of BDD nodes or several IC3 clauses say one thing: the two pebbles
    the apex needs are never on the node together."""
    out = run("check", str(pyramid), "--engine", engine, "--why", "--quiet")
    assert out.exit_code == 1
    lines = why_lines(out.output)
    assert lines[0] == "never P-v3_0 on n"
    assert lines[1].startswith("never both P-v2_0 and P-v2_1 on n")
    assert len(lines) <= 3


def test_certify_explain_reads_a_written_certificate(pyramid, tmp_path):
    cert = tmp_path / "inv.txt"
    assert run("check", str(pyramid), "--engine", "ic3", "--quiet", "--cert-out", str(cert)).exit_code == 1
    out = run("certify", str(pyramid), str(cert), "--explain")
    assert out.exit_code == 0 and out.output.startswith("VALID")
    assert "never both P-v2_0 and P-v2_1 on n" in out.output


def test_without_pyeda_the_lemmas_are_unminimised_but_true(pyramid, tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "pyeda.inter", None)  # import fails as if not installed
    cert = tmp_path / "inv.json"
    assert run("check", str(pyramid), "--engine", "bdd", "--quiet", "--cert-out", str(cert)).exit_code == 1
    inst = load_any(pyramid)
    lines, how = lemma_module.lemmas(inst, parse(cert.read_text()))
    assert "unminimised" in how
    assert lines[0] == "never P-v3_0 on n"
    assert any("P-v2_0" in line and "P-v2_1" in line for line in lines[1:])


def test_with_pyeda_espresso_minimises(pyramid, tmp_path):
    pytest.importorskip("pyeda.inter")
    cert = tmp_path / "inv.json"
    assert run("check", str(pyramid), "--engine", "bdd", "--quiet", "--cert-out", str(cert)).exit_code == 1
    lines, how = lemma_module.lemmas(load_any(pyramid), parse(cert.read_text()))
    assert "Espresso" in how and len(lines) == 2


def test_every_boolean_lemma_holds_in_every_reachable_configuration(pyramid):
    """The projected lemmas are implied by the invariant: check them on the explicit reachable set."""
    from symreach.solvers.explicit import ExplicitEngine

    inst = load_any(pyramid)
    result = ExplicitEngine().check(inst)
    states = result.certificate.states
    cube = {(inst.type_index("P-v2_0"), inst.node_index("n")), (inst.type_index("P-v2_1"), inst.node_index("n"))}
    assert not any(all(sigma[inst.pair(t, n)] for t, n in cube) for sigma in states)
