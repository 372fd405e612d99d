"""Operator moves (issue 29): reading PodDisruptionBudgets, the move options, the
deletion guard of the semantics, the refusal of engines that do not answer under
them, and the shipped example where a PDB blocks what the paper's moves reach."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from symreach import semantics
from symreach.cli import cli
from symreach.errors import InputError
from symreach.loader import load_document
from symreach.loader.budgets import desired_healthy
from symreach.loader.moves import rules_for, with_moves
from symreach.result import DELETE, Step

ROOT = Path(__file__).resolve().parent.parent
PDB_EXAMPLE = str(ROOT / "examples" / "pdb-blocks.yaml")


def doc(**budget) -> dict:
    return {"version": 1, "nodes": [{"name": "n1", "capacity": {"cpu": "2"}}],
            "podTypes": [{"name": "web", "labels": {"app": "web"}, "requests": {"cpu": "1"}, "creatable": False},
                         {"name": "db", "requests": {"cpu": "2"}}],
            "initial": [{"pod": "web", "node": "n1", "count": 2}],
            "disruptionBudgets": [{"name": "web-pdb", "selector": {"matchLabels": {"app": "web"}}, **budget}],
            "query": {"pod": "db", "node": "n1"}}


@pytest.mark.parametrize("min_available, max_unavailable, expected, desired", [
    (2, None, 5, 2), ("50%", None, 5, 3), ("34%", None, 3, 2), ("100%", None, 4, 4),
    (None, 1, 5, 4), (None, "50%", 5, 2), (None, "34%", 3, 1), (None, 0, 3, 3), (None, 9, 3, 0),
    (None, None, 3, 0),
])
def test_desired_healthy_rounds_as_the_disruption_controller(min_available, max_unavailable, expected, desired):
    assert desired_healthy(min_available, max_unavailable, expected) == desired


@pytest.mark.parametrize("budget, where", [
    ({"minAvailable": 1, "maxUnavailable": 1}, "maxUnavailable"),
    ({"minAvailable": "150%"}, "minAvailable"),
    ({"minAvailable": "half"}, "minAvailable"),
    ({"minAvailable": -1}, "minAvailable"),
    ({"minAvaliable": 1}, "minAvaliable"),
    ({"unhealthyPodEvictionPolicy": "Never"}, "unhealthyPodEvictionPolicy"),
])
def test_budget_schema_is_strict(budget, where):
    with pytest.raises(InputError) as err:
        load_document(doc(**budget))
    assert where in str(err.value)


def test_one_budget_section_only():
    raw = doc(minAvailable=1)
    raw["pdbs"] = raw["disruptionBudgets"]
    with pytest.raises(InputError):
        load_document(raw)


def test_guard_in_the_semantics_and_replay():
    inst = load_document(doc(minAvailable=1))
    (budget,) = inst.budgets
    assert budget.name == "default/web-pdb" and budget.desired_healthy == 1
    sigma = inst.initial_config()
    assert semantics.may_delete(inst, sigma, 0, 0)  # paper moves: any pod
    guarded = with_moves(inst, rules_for(inst, "operator"))
    assert semantics.may_delete(guarded, sigma, 0, 0)
    one_left = semantics.delete(guarded, sigma, 0, 0)
    assert "web-pdb" in semantics.delete_failure(guarded, one_left, 0, 0)
    twice = (Step(DELETE, "web", "n1"), Step(DELETE, "web", "n1"))
    semantics.replay(inst, twice)
    with pytest.raises(semantics.ReplayError, match="web-pdb"):
        semantics.replay(guarded, twice)
    protected = with_moves(inst, rules_for(inst, protect=[{"app": "web"}]))
    assert "protected" in semantics.delete_failure(protected, sigma, 0, 0)


def test_a_pod_matching_two_budgets_cannot_be_evicted():
    raw = doc(minAvailable=0)
    raw["disruptionBudgets"].append({"name": "all", "selector": {}})
    inst = load_document(raw)
    guarded = with_moves(inst, rules_for(inst, respect_pdb=True))
    assert "more than one" in semantics.delete_failure(guarded, inst.initial_config(), 0, 0)


def test_operator_defaults_protect_daemonset_static_and_kube_system():
    from symreach.frontends.kubernetes import load_kubernetes

    inst = load_kubernetes(PDB_EXAMPLE)
    rules = rules_for(inst, "operator")
    assert {inst.pod_types[t].name for t in rules.protected} == {
        "kube-system/kube-proxy@worker-1", "kube-system/kube-proxy@worker-2"}
    assert not rules_for(inst).restricted and rules_for(inst, "paper").protected == frozenset()
    assert rules_for(inst, protect_namespaces=["shop"]).protected == {inst.type_index("shop/web")}


def run(*args):
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


def test_example_paper_deployable_operator_blocked_by_named_pdb(tmp_path):
    target = ("--pod", "batch/report", "--node", "worker-1", "--quiet")
    assert run("check", PDB_EXAMPLE, *target).exit_code == 0
    cert = tmp_path / "cert.json"
    out = run("check", PDB_EXAMPLE, *target, "--moves", "operator", "--json", "--cert-out", str(cert))
    assert out.exit_code == 1
    answer = json.loads(out.output)
    assert answer["engine"] == "auto/explicit" and answer["stats"]["paper_verdict"] == "deployable"
    assert answer["stats"]["operator_shortcut"] == "explicit"  # the paper witness breaks the PDB
    assert "PodDisruptionBudget shop/web-pdb allows no disruption" in answer["reason"]
    assert json.loads(cert.read_text())["moves"]["respectPdb"] is True
    checked = run("certify", PDB_EXAMPLE, str(cert), "--pod", "batch/report", "--node", "worker-1")
    assert checked.exit_code == 0 and "recorded operator moves" in checked.output


def test_engines_without_operator_moves_refuse_with_one_line(tmp_path):
    out = CliRunner().invoke(cli, ["check", PDB_EXAMPLE, "--pod", "batch/report", "--node", "worker-1",
                                   "--moves", "operator", "--engine", "bdd", "--quiet"])
    assert out.exit_code == 2
    assert "engine bdd does not answer under --moves operator yet; use --engine explicit" in out.output


def test_query_moves_field(tmp_path):
    raw = doc(minAvailable=1)
    raw["query"]["moves"] = "operator"
    path = tmp_path / "q.json"
    path.write_text(json.dumps(raw))
    assert run("check", str(path), "--quiet").exit_code == 1
    assert run("check", str(path), "--quiet", "--moves", "paper").exit_code == 0
    raw["query"]["moves"] = "admin"
    with pytest.raises(InputError):
        load_document(raw)


def test_pdb_forces_a_longer_witness():
    longer = str(ROOT / "examples" / "pdb-longer.yaml")
    paper = json.loads(run("check", longer, "--shortest", "--json", "--quiet").output)
    operator = json.loads(run("check", longer, "--shortest", "--json", "--quiet", "--moves", "operator").output)
    assert len(paper["trace"]) == 2 and len(operator["trace"]) == 3
    assert operator["trace"][0]["op"] == "deploy" and operator["trace"][0]["node"] == "n2"


def test_static_pods_are_marked_and_protected_under_operator_moves():
    from symreach.frontends.kubernetes import load_kubernetes_documents

    node = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "a"},
            "status": {"allocatable": {"cpu": "2", "pods": "10"}}}
    static = {"apiVersion": "v1", "kind": "Pod",
              "metadata": {"name": "etcd-a", "namespace": "infra",
                           "annotations": {"kubernetes.io/config.mirror": "x"}},
              "spec": {"nodeName": "a", "containers": [{"name": "etcd", "image": "etcd"}]},
              "status": {"phase": "Running"}}
    inst, _ = load_kubernetes_documents([node, static], "static")
    (t,) = [t for t, pod in enumerate(inst.pod_types) if pod.static_pod]
    assert t in rules_for(inst, "operator").protected and t not in rules_for(inst, respect_pdb=True).protected


def test_group_targets_refuse_operator_moves():
    out = CliRunner().invoke(cli, ["check", str(ROOT / "examples" / "gang-training.yaml"), "--moves", "operator"])
    assert out.exit_code == 2 and "paper's moves only" in out.output


def test_why_names_the_budget_and_the_protected_pods():
    """--why under operator moves says, in the user's terms, which rules bound the
    witness: the refused eviction with its budget, each budget's floor, the
    protected pods; never an encoding name."""
    out = run("check", PDB_EXAMPLE, "--pod", "batch/report", "--node", "worker-1", "--moves", "operator", "--why")
    assert out.exit_code == 1, out.output
    why = out.output[out.output.index("why (the moves allowed"):]
    assert "PodDisruptionBudget shop/web-pdb allows no disruption" in why
    assert "PodDisruptionBudget shop/web-pdb keeps at least 2 of shop/web running" in why
    assert "protected, never deleted: kube-system/kube-proxy@worker-1" in why
    assert "present[" not in why and "count[" not in why and "None" not in why


def test_certify_explain_names_the_recorded_rules(tmp_path):
    cert = tmp_path / "cert.json"
    target = ("--pod", "batch/report", "--node", "worker-1")
    assert run("check", PDB_EXAMPLE, *target, "--moves", "operator", "--cert-out", str(cert)).exit_code == 1
    out = run("certify", PDB_EXAMPLE, str(cert), *target, "--explain")
    assert out.exit_code == 0, out.output
    assert "PodDisruptionBudget shop/web-pdb keeps at least 2 of shop/web running" in out.output
    assert "protected, never deleted: kube-system/kube-proxy@worker-1" in out.output
