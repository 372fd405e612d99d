"""A WaitForFirstConsumer claim becomes bound when a pod using it is deployed (VolumeBinding's
PreBind) and stays bound: later steps see it (``Instance.bindings``, ``semantics.deploy``).

Two pods a and b share the claim ``data``; na is in zone-a, nb in zone-b (the states of
``test_kso_wffc_binding``, where kso gives each step's answer). The answers are written in.
"""

from __future__ import annotations

import copy
import json
import random
from dataclasses import replace
from collections import deque
from typing import Optional

import pytest
import yaml

from benchmarks.kso_harness import find_kso, kso_verdicts_single
from benchmarks.kso_replay import Witness, step_states
from symreach import semantics
from symreach.certify.explicit_states import check_certificate
from symreach.frontends.kubernetes import load_kubernetes_documents
from symreach.model import Query
from symreach.result import DEPLOY, Verdict
from symreach.solvers.explicit import ExplicitEngine
from symreach.solvers.registry import make_engine
from tests.test_kso_wffc_binding import CLASSES, NA, NB, SC_PROVISION, SC_STATIC, zonal
from tests.test_kso_classes import C, pod
from tests.test_kso_classes_27 import pvc, uses

NODE_AFFINITY = ("VolumeBinding", ("node(s) didn't match PersistentVolume's node affinity",))


def objects(*docs: str) -> list[dict]:
    return [yaml.safe_load(d) for d in docs]


def two_pods(storage: list[str]) -> list[dict]:
    return objects(NA, NB, *storage, pvc("data", ", storageClassName: zonal"),
                   pod("a", C + uses("data")), pod("b", C + uses("data")))


PROVISION = [SC_PROVISION]
STATIC = [SC_STATIC, zonal("pv-a", "zone-a"), zonal("pv-b", "zone-b")]


def load(objs):
    inst, report = load_kubernetes_documents(copy.deepcopy(objs), "<test>")
    return inst, report


def provisioning_only(caveats: dict) -> bool:
    """Every caveat is the provisioned volume's topology (which the CSI driver decides), on a type."""
    from symreach.frontends.k8s_volume_bindings import PROVISIONED_TOPOLOGY

    return all(PROVISIONED_TOPOLOGY in c for cs in caveats.values() for c in cs)


@pytest.mark.parametrize("storage", [PROVISION, STATIC], ids=["provisioning", "static-pvs"])
def test_a_pod_that_ran_in_zone_a_cannot_come_back_in_zone_b(storage):
    inst, report = load(two_pods(storage))
    assert (report.caveats == {} if storage is STATIC else set(report.caveats) == {"default/a", "default/b"}
            and provisioning_only(report.caveats)) and len(inst.bindings) == 1
    a, b = inst.type_index("default/a"), inst.type_index("default/b")
    na, nb = inst.node_index("na"), inst.node_index("nb")
    sigma0 = inst.initial_config()
    assert semantics.deploy_failure(inst, a, nb, sigma0) is None          # it never ran: any zone
    sigma = semantics.delete(inst, semantics.deploy(inst, sigma0, a, na), a, na)
    assert sigma[:inst.num_pairs] == sigma0[:inst.num_pairs] and sigma != sigma0   # deleted, claim still bound
    failure = semantics.node_failure(inst, a, nb, sigma)
    assert (failure.plugin, failure.reasons) == NODE_AFFINITY
    assert semantics.node_failure(inst, b, nb, sigma) == failure          # the other pod follows the claim
    assert semantics.deploy_failure(inst, b, na, sigma) is None


@pytest.mark.parametrize("storage", [PROVISION, STATIC], ids=["provisioning", "static-pvs"])
@pytest.mark.parametrize("engine", ["explicit", "auto"])
def test_two_pods_sharing_the_claim_stay_in_one_zone(storage, engine):
    inst, _ = load(two_pods(storage))
    a, b = inst.type_index("default/a"), inst.type_index("default/b")
    na, nb = inst.node_index("na"), inst.node_index("nb")
    split = Query((frozenset({(a, na), (b, nb)}),))
    result = make_engine(engine).check(inst, split)
    assert result.verdict is Verdict.NOT_DEPLOYABLE
    ok, why = check_certificate(inst, json.loads(result.certificate.dumps()))
    assert ok, why
    together = make_engine(engine).check(inst, Query((frozenset({(a, na), (b, na)}),)))
    assert together.verdict is Verdict.DEPLOYABLE
    semantics.replay(inst, together.trace)
    notes = semantics.binding_notes(inst, together.trace)
    assert notes[0] in ("binds claim default/data to PV pv-a",
                        "binds claim default/data to a volume it provisions in topology.kubernetes.io/zone=zone-a")
    assert notes[1:] == [None]


def test_other_engines_decline_in_one_line():
    inst, _ = load(two_pods(PROVISION))
    result = make_engine("bdd").check(inst, Query((frozenset({(0, 0)}),)))
    assert result.verdict is Verdict.UNKNOWN and "WaitForFirstConsumer" in result.reason
    assert "\n" not in result.reason


def test_a_pod_with_two_claims_binds_both_and_the_sharer_follows():
    """A pod with two unbound claims binds both where it is deployed (the binder matches them
    together); a pod sharing one of them then follows it."""
    objs = objects(NA, NB, SC_PROVISION, pvc("data", ", storageClassName: zonal"),
                   pvc("logs", ", storageClassName: zonal"),
                   pod("a", C + uses("data", "logs")), pod("b", C + uses("data")))
    inst, report = load(objs)
    assert provisioning_only(report.caveats) and [c.claim for c in inst.bindings] == ["default/data", "default/logs"]
    assert len(inst.binding_groups) == 1 and len(inst.binding_groups[0].states) == 5   # unbound, a or b on each zone
    a, b = inst.type_index("default/a"), inst.type_index("default/b")
    na, nb = inst.node_index("na"), inst.node_index("nb")
    sigma = semantics.deploy(inst, inst.initial_config(), a, na)
    assert semantics.binding_note(inst, inst.initial_config(), a, na) == (
        "binds claim default/data to a volume it provisions in topology.kubernetes.io/zone=zone-a; "
        "binds claim default/logs to a volume it provisions in topology.kubernetes.io/zone=zone-a")
    failure = semantics.node_failure(inst, b, nb, sigma)
    assert (failure.plugin, failure.reasons) == NODE_AFFINITY
    # b first binds data only; a then binds logs in b's zone only
    sigma = semantics.deploy(inst, inst.initial_config(), b, nb)
    assert semantics.node_failure(inst, a, na, sigma).plugin == "VolumeBinding"
    assert semantics.binding_note(inst, sigma, a, nb) == (
        "binds claim default/logs to a volume it provisions in topology.kubernetes.io/zone=zone-b")


def test_a_forged_joint_binding_is_refused():
    """A certificate state binding a claim to an outcome its group cannot reach with the others."""
    objs = objects(NA, NB, SC_PROVISION, pvc("data", ", storageClassName: zonal"),
                   pvc("logs", ", storageClassName: zonal"), pod("a", C + uses("data", "logs")))
    inst, _ = load(objs)
    a, na, nb = inst.type_index("default/a"), inst.node_index("na"), inst.node_index("nb")
    result = ExplicitEngine().check(inst, Query((frozenset({(a, na)}), )))
    assert result.verdict is Verdict.DEPLOYABLE
    unreachable = ExplicitEngine().check(inst, Query((frozenset({(a, na), (a, nb)}),)))
    cert = json.loads(unreachable.certificate.dumps())
    assert check_certificate(inst, cert)[0]
    zone_a = "provisioned:topology.kubernetes.io/zone=zone-a"
    zone_b = "provisioned:topology.kubernetes.io/zone=zone-b"
    cert["bound"][0] = [zone_a, zone_b]   # one pod binds both claims in one zone: never split
    ok, why = check_certificate(inst, cert)
    assert not ok and "cannot be bound together" in why


KSO = find_kso()


@pytest.mark.skipif(KSO is None, reason="kso (shared/tools/kso) not available")
@pytest.mark.parametrize("storage", [PROVISION, STATIC], ids=["provisioning", "static-pvs"])
def test_kso_replays_the_witness_with_the_claim_bound(storage):
    """Deploy a on na (binds), delete it, deploy b on na: each step's state, with the claim bound
    after step 1, is asked of kso; it accepts each step and refuses nb once the claim is bound."""
    objs = two_pods(storage)
    inst, report = load(objs)
    a, b = inst.type_index("default/a"), inst.type_index("default/b")
    na = inst.node_index("na")
    trace = (semantics.step_of(inst, DEPLOY, a, na), semantics.step_of(inst, "delete", a, na),
             semantics.step_of(inst, DEPLOY, b, na))
    semantics.replay(inst, trace)
    pods = {f"default/{o['metadata']['name']}": o for o in objs if o["kind"] == "Pod"}
    w = Witness(0, [o for o in objs if o["kind"] != "Pod"] + list(pods.values()), "default/b", "na", trace, pods,
                {}, inst)
    states = step_states(w)
    assert len(states) == 2
    first, second = (kso_verdicts_single(state, KSO) for state, _ in states)
    assert first == {"na": None, "nb": None}
    assert second["na"] is None and second["nb"] == NODE_AFFINITY
    assert any(o["kind"] == "PersistentVolume" and (o["spec"].get("claimRef") or {}).get("name") == "data"
               for o in states[1][0].objects)


# ---- differential: explicit against a plain BFS over the semantics ---------------------------

def random_volume_instance(rng: random.Random) -> list[str]:
    """Nodes in two zones, a WaitForFirstConsumer class (static PVs, provisioning, or both), one to
    three claims, pods using one or two of them: shared PVs, multi-claim pods, claims shared by pods."""
    zones = ["zone-a", "zone-b"]
    docs = [node(f"n{i}", rng.choice(zones), rng.choice(("1", "2"))) for i in range(rng.choice((2, 3)))]
    kind = rng.choice(("static", "static", "provision", "both"))
    provision = SC_PROVISION.replace(
        "volumeBindingMode", "allowedTopologies: [{matchLabelExpressions: [{key: topology.kubernetes.io/zone, "
        "values: [zone-a]}]}]\nvolumeBindingMode") if rng.random() < 0.3 else SC_PROVISION
    docs.append(SC_STATIC if kind == "static" else provision)
    if kind != "provision":
        # an odd PV allows ReadWriteMany too: equal-size PVs of one zone then differ, and which one a
        # claim takes is the scheduler's choice (``semantics.deploys``)
        docs += [zonal(f"pv-{i}", rng.choice(zones)).replace("storage: 10Gi", f"storage: {rng.choice(SIZES)}")
                 .replace("[ReadWriteOnce]", "[ReadWriteOnce, ReadWriteMany]" if i % 2 else "[ReadWriteOnce]")
                 for i in range(rng.choice((1, 2, 3)))]
    claims = ["data", "logs", "tmp"][:rng.choice((1, 2, 2, 3))]
    docs += [pvc(c, ", storageClassName: zonal").replace("storage: 10Gi", f"storage: {rng.choice(SIZES[:2])}")
             for c in claims]
    cpu = "  containers: [{name: c, image: pause, resources: {requests: {cpu: '1'}}}]\n"
    for i in range(rng.choice((2, 3))):
        docs.append(pod(f"p{i}", cpu + uses(*rng.sample(claims, rng.choice((1, 1, 2)) if len(claims) > 1 else 1))))
    if rng.random() < 0.3:   # a pod with its own generic ephemeral claim, which may take a PV
        docs.append(pvc("e-scratch", ", storageClassName: zonal", ", ownerReferences: [{apiVersion: v1, kind: Pod, "
                                                               "name: e, uid: uid-default-e, controller: true}]"))
        docs.append(pod("e", cpu + "  volumes: [{name: scratch, ephemeral: {volumeClaimTemplate: {spec: {accessModes: "
                                   "[ReadWriteOnce], storageClassName: zonal, resources: {requests: {storage: 5Gi}}}}}}]\n"))
    return docs


SIZES = ("5Gi", "10Gi", "20Gi")


def node(name: str, zone: str, cpu: str) -> str:
    return (f"apiVersion: v1\nkind: Node\nmetadata: {{name: {name}, labels: {{kubernetes.io/hostname: {name}, "
            f"topology.kubernetes.io/zone: {zone}}}}}\nstatus: {{allocatable: {{cpu: '{cpu}', memory: 8Gi, pods: '110'}}}}\n")


def plain_bfs(inst, query, cap: Optional[int] = None) -> Optional[bool]:
    """Every deployment and deletion the semantics allows, no saturation, no symmetry: whether the target
    is reachable, None once more than ``cap`` configurations are seen."""
    start = inst.initial_config()
    seen, frontier = {start}, deque([start])
    while frontier:
        sigma = frontier.popleft()
        if semantics.query_holds(inst, query, sigma):
            return True
        succ = [after for t in range(len(inst.pod_types)) for n in range(len(inst.nodes))
                if semantics.deploy_failure(inst, t, n, sigma) is None
                for _, after in semantics.deploys(inst, sigma, t, n)]   # each PV (DRA devices) the scheduler may take
        succ += [after for p, c in enumerate(sigma[:inst.num_pairs]) if c    # each DRA holding a deletion may free
                 for _, after in semantics.deletions(inst, sigma, *inst.unpair(p))]
        for s in succ:
            if s not in seen:
                seen.add(s)
                frontier.append(s)
        if cap is not None and len(seen) > cap:
            return None
    return False


COUNTS = (35, 85, 24, 85, 33, 12)


def test_explicit_agrees_with_a_plain_bfs_on_random_instances():
    rng = random.Random(27)
    checked = {True: 0, False: 0}
    changed = multi = ephemeral = chosen = 0
    while sum(checked.values()) < 120:
        inst, _ = load(objects(*random_volume_instance(rng)))
        if not inst.bindings:
            continue
        types, nodes = len(inst.pod_types), len(inst.nodes)
        pairs = [(t, n) for t in range(types) for n in range(nodes)]
        query = Query((frozenset(rng.sample(pairs, 2)),))
        want = plain_bfs(inst, query)
        result = ExplicitEngine().check(inst, query)
        assert result.verdict is (Verdict.DEPLOYABLE if want else Verdict.NOT_DEPLOYABLE)
        if want:
            semantics.replay(inst, result.trace, query)
        else:
            ok, why = check_certificate(inst, json.loads(result.certificate.dumps()))
            assert ok, why
        changed += plain_bfs(replace(inst, bindings=(), binding_groups=()), query) != want
        multi += any(len(g.claims) > 1 for g in inst.binding_groups)
        ephemeral += any(b.claim.startswith("(ephemeral)/") for b in inst.bindings)
        chosen += any(g.choices for g in inst.binding_groups)
        checked[want] += 1
    # 120 instances with a binding: how many of each answer, how many the binding decides, in how
    # many claims depend on each other (a multi-claim pod, or a PV two claims could take), in
    # how many an ephemeral claim may take a PV, in how many a deployment may bind one of several PVs
    assert (checked[True], checked[False], changed, multi, ephemeral, chosen) == COUNTS


# ---- the v1 field and the commands -----------------------------------------------------------

def v1_document(binds_b: object) -> dict:
    """Two types sharing claim data, as the front end writes them; ``binds_b`` is b's ``binds``."""
    node = lambda name, zone: {"name": name, "labels": {"kubernetes.io/hostname": name,  # noqa: E731
                                                        "topology.kubernetes.io/zone": zone}, "capacity": {"cpu": "4"}}
    binds = {"claims": ["default/data"], "states": [
        {"bound": [None], "nodes": {"na": 1}},
        {"bound": ["PV pv-a"], "filter": [{"node": "nb", "plugin": "VolumeBinding",
                                           "reasons": ["node(s) didn't match PersistentVolume's node affinity"]}]}]}
    types = [{"name": "a", "volumes": {"claims": ["data"], "binds": binds}},
             {"name": "b", "volumes": {"claims": ["data"], **({"binds": binds_b} if binds_b is not None else {})}}]
    return {"version": 1, "semantics": "kubernetes", "nodes": [node("na", "zone-a"), node("nb", "zone-b")],
            "podTypes": types}


def test_v1_binds_field_is_read_and_checked():
    from symreach.errors import InputError
    from symreach.loader import load_document

    good = v1_document(v1_document(None)["podTypes"][0]["volumes"]["binds"])
    inst = load_document(good, "<v1>")
    assert [(b.claim, b.outcomes) for b in inst.bindings] == [("default/data", ("PV pv-a",))]
    assert [(g.states, g.next[0][0]) for g in inst.binding_groups] == [(((0,), (1,)), (1, -1))]
    state = lambda bound, **more: {"bound": bound, **more}  # noqa: E731
    bad = {
        "a type using the claim without binds": v1_document(None),
        "a first state with a binding": v1_document({"claims": ["default/data"], "states": [state(["PV x"])]}),
        "other joint bindings than a's": v1_document({"claims": ["default/data"], "states": [state([None])]}),
        "a claim in two groups": v1_document({"claims": ["default/data", "default/logs"],
                                              "states": [state([None, None])]}),
        "an unknown node": v1_document({"claims": ["default/data"], "states": [state([None], nodes={"nz": 0})]}),
        "a next state out of range": v1_document({"claims": ["default/data"], "states": [state([None], nodes={"na": 3})]}),
        "a bound list of the wrong length": v1_document({"claims": ["default/data"], "states": [state([None, None])]}),
    }
    for what, doc in bad.items():
        with pytest.raises(InputError) as err:
            load_document(doc, "<v1>")
        assert "binds" in str(err.value), what


def test_check_and_matrix_commands(tmp_path):
    from click.testing import CliRunner

    from symreach.cli import cli

    path = tmp_path / "wffc.yaml"
    path.write_text(yaml.safe_dump_all(two_pods(PROVISION)))
    run = CliRunner().invoke
    split = run(cli, ["check", str(path), "--pod", "default/b", "--node", "nb", "--with", "default/a@na"])
    # The answers read the provisioned volume's zone, which the CSI driver decides: marked.
    assert split.exit_code == 1 and split.stdout.splitlines()[0] == "not-deployable*"
    together = run(cli, ["check", str(path), "--pod", "default/b", "--node", "na", "--with", "default/a@na"]).stdout
    assert "binds claim default/data to a volume it provisions in topology.kubernetes.io/zone=zone-a" in together
    assert together.splitlines()[0] == "deployable*" and "the CSI driver decide it" in together
    matrix = run(cli, ["matrix", str(path), "-o", "wide"]).stdout.splitlines()
    assert [line.split() for line in matrix if line.startswith("default/")] == [
        ["default/a", "Y*", "Y*"], ["default/b", "Y*", "Y*"]]


def test_random_volume_states_load_with_their_bindings():
    """The volume-dense random states (running pods' ephemeral volumes under attach limits included:
    states 6, 13, 25, 26)."""
    from symreach.generators.k8s_states import random_states

    bound = 0
    for state in random_states(30, 301, True):
        inst, _ = load(state.objects)
        bound += bool(inst.bindings)
    assert bound == BOUND_STATES


BOUND_STATES = 9   # of the 30


def test_certify_rechecks_the_joint_bindings(tmp_path):
    """``symreach certify`` accepts the explicit certificate of a split that a shared claim forbids,
    and refuses it once a state binds a's two claims in different zones, which no run reaches
    (only a binds logs, together with data; the digest is kept)."""
    from click.testing import CliRunner

    from symreach.cli import cli

    objs = objects(NA, NB, SC_PROVISION, pvc("data", ", storageClassName: zonal"),
                   pvc("logs", ", storageClassName: zonal"), pod("a", C + uses("data", "logs")),
                   pod("b", C + uses("data")))
    path, cert = tmp_path / "two.yaml", tmp_path / "cert.json"
    path.write_text(yaml.safe_dump_all(objs))
    target = ["--pod", "default/b", "--node", "nb", "--with", "default/a@na"]
    run = CliRunner().invoke
    checked = run(cli, ["check", str(path), *target, "--engine", "explicit", "--cert-out", str(cert)])
    assert checked.exit_code == 1 and checked.stdout.splitlines()[0] == "not-deployable*"   # provisioned topology
    accepted = run(cli, ["certify", str(path), str(cert), *target])
    assert accepted.exit_code == 0, accepted.stdout
    data = json.loads(cert.read_text())
    row = next(i for i, r in enumerate(data["bound"]) if all(r))
    data["bound"][row] = [data["bound"][row][0], "provisioned:topology.kubernetes.io/zone=zone-b"
                          if data["bound"][row][0].endswith("zone-a") else "provisioned:topology.kubernetes.io/zone=zone-a"]
    cert.write_text(json.dumps(data))
    refused = run(cli, ["certify", str(path), str(cert), *target])
    assert refused.exit_code == 1 and "cannot be bound together" in refused.stdout
