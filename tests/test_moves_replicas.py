"""--keep-replicas and auto under operator moves (issue 29): the v1 ``controllers:`` section,
controllers and StatefulSet claim pinning read from Kubernetes objects, the witness in
operator terms, certificates that record and re-check the floors, and each branch of
``solvers/operator_shortcut``."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest
import yaml
from click.testing import CliRunner

from symreach import semantics
from symreach.certify.explicit_states import check_certificate
from symreach.cli import cli
from symreach.errors import InputError
from symreach.frontends.dispatch import Source, load_kubernetes_sources
from symreach.loader import load_document
from symreach.loader.moves import rules_for
from symreach.model import Query
from symreach.report.operator_steps import operator_steps
from symreach.result import Verdict
from symreach.solvers.operator_shortcut import EXPLICIT, PAPER_NOT_DEPLOYABLE, PAPER_WITNESS
from symreach.solvers.registry import make_engine
from tests.test_inputs import dump, node


def doc(**controller) -> dict:
    """web (a controller's, 1 cpu) on n1 and n2; batch needs all of n1 (2 cpu); n2 has room for one more web."""
    body = {"kind": "Deployment", "name": "web", "namespace": "shop", "replicas": 2, "podTypes": ["shop/web"]}
    body.update(controller)
    return {"version": 1, "nodes": [{"name": "n1", "capacity": {"cpu": "2"}}, {"name": "n2", "capacity": {"cpu": "3"}}],
            "podTypes": [{"name": "shop/web", "namespace": "shop", "labels": {"app": "web"}, "requests": {"cpu": "1"}},
                         {"name": "batch", "requests": {"cpu": "2"}}],
            "initial": [{"pod": "shop/web", "node": "n1", "count": 1}, {"pod": "shop/web", "node": "n2", "count": 1}],
            "controllers": [body], "query": {"pod": "batch", "node": "n1"}}


def keep(inst, **rules):
    return replace(inst, moves=rules_for(inst, None, keep_replicas=True, **rules))


def run(*args):
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


@pytest.mark.parametrize("change, field", [
    ({"podTypes": ["nope"]}, "controllers[0].podTypes[0]"),
    ({"pods": [{"name": "web-0"}]}, "controllers[0].pods[0]"),
    ({"replicas": -1}, "controllers[0].replicas"),
    ({"kind": "DaemonSet"}, "controllers[0].kind"),
])
def test_controllers_section_mistakes_are_input_errors(change, field):
    with pytest.raises(InputError) as err:
        load_document(doc(**change))
    assert field in str(err.value)


def test_floor_is_min_of_replicas_and_running_pods():
    assert [r.replicas for r in load_document(doc(replicas=5)).replica_targets] == [2]
    assert [r.replicas for r in load_document(doc(replicas=1)).replica_targets] == [1]


def test_keep_replicas_turns_the_deletion_into_a_move_and_says_so():
    inst = load_document(doc())
    paper = make_engine("explicit").check(inst)
    assert [s.op for s in paper.trace] == ["delete", "deploy"]
    result = make_engine("explicit").check(keep(inst))
    assert result.verdict is Verdict.DEPLOYABLE and len(result.trace) == 3
    with pytest.raises(semantics.ReplayError, match="does not cover"):  # the paper witness leaves web short
        semantics.replay(keep(inst), paper.trace, inst.query)
    steps = operator_steps(keep(inst), result.trace, ["shop/web-1", "shop/web-a", "default/batch-1"])
    assert [s.action for s in steps] == ["scale", "scale", "create"]
    assert steps[0].replicas == (2, 3) and steps[1].replicas == (3, 2) and steps[0].controller == "Deployment shop/web"


def test_check_prints_operator_terms_and_json_steps(tmp_path):
    path = tmp_path / "keep.yaml"
    path.write_text(yaml.safe_dump(doc()))
    text = run("check", str(path), "--keep-replicas")
    assert text.exit_code == 0 and "in operator terms:" in text.output
    assert "scale Deployment shop/web from 2 to 3 replicas" in text.output
    data = json.loads(run("check", str(path), "--moves", "operator", "-o", "json").output)
    assert [s["action"] for s in data["stats"]["operator_steps"]] == ["scale", "scale", "create"]


def test_pinned_statefulset_member_blocks_and_certificate_records_the_floors(tmp_path):
    pinned = doc(kind="StatefulSet", pods=[{"name": "web-0", "nodes": ["n1"]}, {"name": "web-1"}])
    inst = keep(load_document(pinned))
    result = make_engine("explicit").check(inst)
    assert result.verdict is Verdict.NOT_DEPLOYABLE   # web-0's volume keeps it on n1
    cert = json.loads(result.certificate.dumps())
    assert cert["moves"]["keepReplicas"] is True
    assert check_certificate(inst, cert)[0]
    cert["moves"]["keepReplicas"] = False   # a forged certificate without the floors
    ok, why = check_certificate(inst, cert)
    assert not ok and "covers the target" in why
    free = doc(kind="StatefulSet", pods=[{"name": "web-0", "nodes": ["n1", "n2"]}, {"name": "web-1"}])
    assert make_engine("explicit").check(keep(load_document(free))).verdict is Verdict.DEPLOYABLE
    path = tmp_path / "sts.yaml"
    path.write_text(yaml.safe_dump(pinned))
    assert "cannot all run where their volume claims allow" in run("check", str(path), "--keep-replicas", "--why").output


def sts_dump(extra_node: bool) -> str:
    """StatefulSet web (web-0 on n1 in zone a, web-1 on n2 in zone b, each claim on a zonal PV);
    batch needs all of n2, so web-1 must leave n2 -- and can come back only in zone b."""
    def pv(name, zone):
        return {"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": name},
                "spec": {"capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"], "csi": {"driver": "d", "volumeHandle": name},
                         "nodeAffinity": {"required": {"nodeSelectorTerms": [{"matchExpressions": [
                             {"key": "topology.kubernetes.io/zone", "operator": "In", "values": [zone]}]}]}}}}

    def pvc(name, volume):
        return {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": name, "namespace": "default"},
                "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}},
                         "volumeName": volume}}

    container = [{"name": "c", "image": "i", "resources": {"requests": {"cpu": "2"}},
                  "volumeMounts": [{"name": "data", "mountPath": "/d"}]}]
    sts = {"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": "web", "namespace": "default"},
           "spec": {"replicas": 2, "serviceName": "web", "selector": {"matchLabels": {"app": "web"}},
                    "template": {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": container}},
                    "volumeClaimTemplates": [{"metadata": {"name": "data"},
                                              "spec": {"accessModes": ["ReadWriteOnce"],
                                                       "resources": {"requests": {"storage": "1Gi"}}}}]}}

    def pod(i, where):
        return {"apiVersion": "v1", "kind": "Pod",
                "metadata": {"name": f"web-{i}", "namespace": "default", "labels": {"app": "web"},
                             "ownerReferences": [{"apiVersion": "apps/v1", "kind": "StatefulSet", "name": "web",
                                                  "controller": True, "uid": "u"}]},
                "spec": {"nodeName": where, "containers": container,
                         "volumes": [{"name": "data", "persistentVolumeClaim": {"claimName": f"data-web-{i}"}}]},
                "status": {"phase": "Running"}}

    batch = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "batch", "namespace": "default"},
             "spec": {"containers": [{"name": "c", "image": "i", "resources": {"requests": {"cpu": "3"}}}]}}
    nodes = [node("n1", "a"), node("n2", "b")] + ([node("n3", "b")] if extra_node else [])
    return dump(*nodes, pv("pv0", "a"), pv("pv1", "b"), pvc("data-web-0", "pv0"), pvc("data-web-1", "pv1"),
                sts, pod(0, "n1"), pod(1, "n2"), batch)


def test_statefulset_from_kubernetes_keeps_identity_and_claim_pinning():
    inst, _ = load_kubernetes_sources([Source("s.yaml", sts_dump(extra_node=True))])
    (target,) = inst.replica_targets
    zone_b = {inst.node_index("n2"), inst.node_index("n3")}
    assert target.name == "StatefulSet default/web" and target.replicas == 2
    assert dict(target.members) == {"web-0": frozenset({inst.node_index("n1")}), "web-1": frozenset(zone_b)}
    query = Query((frozenset({(inst.type_index("default/batch"), inst.node_index("n2"))}),))
    result = make_engine("explicit").check(keep(inst), query)
    assert result.verdict is Verdict.DEPLOYABLE
    names = [f"default/{'web-1' if s.op == 'delete' else s.pod.split('/')[-1] + '-x'}" for s in result.trace]
    steps = operator_steps(keep(inst), result.trace, names)
    replaced = [s for s in steps if s.action == "replace"]
    assert replaced and replaced[0].pod == replaced[0].replaces == "default/web-1"   # it comes back as web-1
    assert replaced[0].node == "n3"                                                  # in its volume's zone
    evicted = next(s for s in steps if s.action in ("evict", "delete"))
    assert evicted.index < replaced[0].index and evicted.pod == "default/web-1"      # gone before it returns
    inst2, _ = load_kubernetes_sources([Source("s.yaml", sts_dump(extra_node=False))])
    query2 = Query((frozenset({(inst2.type_index("default/batch"), inst2.node_index("n2"))}),))
    assert make_engine("explicit").check(keep(inst2), query2).verdict is Verdict.NOT_DEPLOYABLE
    assert make_engine("explicit").check(inst2, query2).verdict is Verdict.DEPLOYABLE


def test_auto_answers_from_a_paper_not_deployable_with_a_certificate_certify_accepts(tmp_path):
    never = doc()
    never["podTypes"][1]["requests"] = {"cpu": "9"}   # fits nowhere, whatever the moves
    path, cert = tmp_path / "never.yaml", tmp_path / "cert.json"
    path.write_text(yaml.safe_dump(never))
    out = run("check", str(path), "--moves", "operator", "-o", "json", "--cert-out", str(cert))
    data = json.loads(out.output)
    assert out.exit_code == 1 and data["stats"]["operator_shortcut"] == PAPER_NOT_DEPLOYABLE
    assert "moves" not in json.loads(cert.read_text())          # the paper question's certificate
    checked = run("certify", str(path), str(cert))
    assert checked.exit_code == 0 and "VALID" in checked.output


def test_auto_returns_a_paper_witness_that_keeps_the_rules():
    easy = doc()
    easy["nodes"].append({"name": "n3", "capacity": {"cpu": "2"}})
    easy["query"] = {"pod": "batch", "node": "n3"}   # no deletion needed
    inst = load_document(easy)
    rules_inst = replace(inst, moves=rules_for(inst, "operator"))
    result = make_engine("auto").check(rules_inst)
    assert result.verdict is Verdict.DEPLOYABLE and result.stats["operator_shortcut"] == PAPER_WITNESS
    semantics.replay(rules_inst, result.trace, rules_inst.query)


def test_auto_falls_back_to_the_explicit_operator_search():
    inst = load_document(doc())
    rules_inst = replace(inst, moves=rules_for(inst, "operator"))
    result = make_engine("auto").check(rules_inst)
    assert result.verdict is Verdict.DEPLOYABLE and result.stats["operator_shortcut"] == EXPLICIT
    assert "paper_witness_refused" in result.stats and result.engine == "auto/explicit"
    semantics.replay(rules_inst, result.trace, rules_inst.query)


PDB_EXAMPLE = "examples/pdb-blocks.yaml"


def test_matrix_moves_both_marks_the_cells_operator_rules_forbid():
    text = run("matrix", PDB_EXAMPLE, "--moves", "both")
    assert text.exit_code == 0
    rows = {line.split()[0]: line.split()[1:] for line in text.output.splitlines() if line.startswith(("batch/", "shop/"))}
    assert rows["batch/report"] == ["Y!"] and rows["shop/web"] == ["Y"]
    assert "! the paper's moves reach it" in text.output
    data = json.loads(run("matrix", PDB_EXAMPLE, "--moves", "both", "-o", "json").output)
    forbids = [(c["pod"], c["node"]) for c in data["cells"] if c["operator_forbids"]]
    assert forbids == [("batch/report", "worker-1"), ("batch/report", "worker-2")]
    assert all(c["operator"] == c["verdict"] for c in data["cells"] if not c["operator_forbids"])
    assert len(data["cells"]) == 6 and "operator" not in json.loads(
        run("matrix", PDB_EXAMPLE, "-o", "json").output)["cells"][0]


def test_explain_moves_both_marks_and_names_the_budget():
    args = ("explain", PDB_EXAMPLE, "--pod", "batch/report", "--node", "worker-1", "--moves", "both")
    text = run(*args)
    assert "with operator moves? ! not-deployable" in text.output
    assert "PodDisruptionBudget shop/web-pdb allows no disruption" in text.output
    (pod,) = json.loads(run(*args, "-o", "json").output)["pods"]
    assert pod["reachability"]["verdict"] == "deployable" and pod["reachability"]["operator"]["forbidden"] is True


def test_operator_cells_share_a_verdict_only_where_asking_each_cell_agrees():
    from symreach.frontends.dispatch import load_any
    from symreach.solvers.operator_cells import operator_cells, operator_verdict

    checked = 0
    for path in ("examples/pools-3zones.yaml", "examples/pdb-longer.yaml"):
        inst = load_any(path)
        rules_inst = replace(inst, moves=rules_for(inst, "operator"))
        pairs = [(t, n) for t in range(len(inst.pod_types)) for n in range(len(inst.nodes))]
        paper = {p: "deployable" for p in pairs}   # ask every cell
        shared = operator_cells(rules_inst, paper, pairs, 30.0)
        for t, n in pairs:
            assert shared[(t, n)] == operator_verdict(rules_inst, t, n, 30.0), (path, t, n)
            checked += 1
    assert checked > 40
