"""NodeVolumeLimits is presence-based: a CSI volume counts once per node while some pod using it
is there (kso: ``tests/test_kso_classes_27.py``, ``volume_limit_*``). Every engine either answers
exactly or declines where an attach limit can bind, ``auto`` sends such instances to explicit,
and the certificates re-check.
"""

from __future__ import annotations

import pytest
import yaml

from symreach import semantics
from symreach.certify.dispatch import as_certificate
from symreach.certify import theorem5
from symreach.frontends.kubernetes import load_kubernetes_documents
from symreach.model import Query
from symreach.result import Verdict
from symreach.solvers.registry import DECLINED, available_engines, make_engine
from tests.test_kso_classes import C, node, pod
from tests.test_kso_classes_27 import CSINODE_1, SC_EBS, bound_pvc, csi_pv, uses

VA_B = ("apiVersion: storage.k8s.io/v1\nkind: VolumeAttachment\nmetadata: {name: va-b}\nspec: {attacher: "
        "ebs.csi.aws.com, nodeName: n1, source: {persistentVolumeName: pv-b}}\n")
VOLUMES = [SC_EBS, CSINODE_1, csi_pv("pv-a", "a"), bound_pvc("a", "pv-a"), csi_pv("pv-b", "b"),
           bound_pvc("b", "pv-b")]


def deployment(name: str, spec: str) -> str:
    return (f"apiVersion: apps/v1\nkind: Deployment\nmetadata: {{name: {name}, namespace: default}}\n"
            f"spec:\n  replicas: 0\n  selector: {{matchLabels: {{app: {name}}}}}\n  template:\n"
            f"    metadata: {{labels: {{app: {name}}}}}\n    spec:\n"
            + "".join("    " + line + "\n" for line in spec.splitlines()))


def instance(*docs: str):
    inst, _ = load_kubernetes_documents([yaml.safe_load(d) for d in (node("n1"), *VOLUMES, *docs)], "<state>")
    return inst


def target(inst, pod_type: str) -> Query:
    return Query((frozenset({(inst.type_index(pod_type), inst.node_index("n1"))}),))


# n1 holds b through a VolumeAttachment (limit 1 reached). ``app`` uses a: on the empty node a is
# new and 1 + 1 > 1; while the bare pod ``keeper`` (using a) runs there, a is no new attachment.
HELPED = (VA_B, pod("keeper", "  nodeName: n1\n" + C + uses("a")), deployment("app", C + uses("a")))
# Without ``keeper`` nothing can ever make a old on n1: never.
ALONE = (VA_B, deployment("app", C + uses("a")))


def test_the_semantics_counts_a_shared_volume_once():
    inst = instance(*HELPED)
    app, n1 = inst.type_index("default/app"), inst.node_index("n1")
    assert semantics.attach_binds(inst)
    assert semantics.node_failure(inst, app, n1, inst.initial_config()) is None
    empty = (0,) * inst.num_pairs
    assert semantics.node_failure(inst, app, n1, empty).reasons == ("node(s) exceed max volume count",)


@pytest.mark.parametrize("engine", ["explicit", "auto"])
def test_exact_engines_answer_both_ways_and_certify(engine):
    helped, alone = instance(*HELPED), instance(*ALONE)
    got = make_engine(engine).check(helped, target(helped, "default/app"))
    assert got.verdict is Verdict.DEPLOYABLE   # replayed by the registry's wrapper
    never = make_engine(engine).check(alone, target(alone, "default/app"))
    assert never.verdict is Verdict.NOT_DEPLOYABLE
    assert never.certificate is not None
    assert never.certificate.check(alone, target(alone, "default/app"))[0]


def test_theorem5_does_not_claim_a_pair_a_sharing_pod_can_help():
    """On the empty node app fails NodeVolumeLimits, but keeper's pod makes its volume old."""
    inst = instance(*HELPED)
    query = target(inst, "default/app")
    assert theorem5.make_certificate(inst, query) is None
    forged = {"format": theorem5.FORMAT, "profile": inst.profile,
              "query": [[["default/app", "n1"]]],
              "blocked": [{"pod": "default/app", "node": "n1", "reason": "node(s) exceed max volume count"}]}
    ok, why = theorem5.check_certificate(inst, forged)
    assert not ok and "shares a CSI volume" in why


DECLINING = [e for e in ("bdd", "bmc", "ic3", "lazy", "abc-pdr") if e in available_engines()]


@pytest.mark.parametrize("engine", DECLINING)
def test_other_engines_decline_where_the_limit_can_bind(engine):
    inst = instance(*HELPED)
    got = make_engine(engine).check(inst, target(inst, "default/app"))
    assert got.verdict is Verdict.UNKNOWN
    assert got.reason == DECLINED.format(engine=engine, what=semantics.unencoded_volume_checks(inst))


def test_other_engines_answer_where_the_limit_cannot_bind():
    """Limit 1 and one volume in all: the check is constant true, so every engine is exact."""
    inst = instance(deployment("app", C + uses("a")))
    assert not semantics.attach_binds(inst)
    verdicts = {e: make_engine(e).check(inst, target(inst, "default/app")).verdict for e in DECLINING}
    assert len(verdicts) == len(DECLINING) >= 3
    assert set(verdicts.values()) == {Verdict.DEPLOYABLE}


def test_certificate_of_the_never_answer_is_bound_to_the_attach_fields():
    """The digest covers the attach fields: the certificate of ALONE is refused on HELPED."""
    alone, helped = instance(*ALONE), instance(*HELPED)
    cert = as_certificate(make_engine("explicit").check(alone, target(alone, "default/app")).certificate)
    assert not cert.check(helped, target(helped, "default/app"))[0]


def test_matrix_cells_agree_with_explicit_where_the_limit_can_bind():
    """The matrix's Theorem 5 shortcut asks the attach count on the empty node, and its
    engine cells go to explicit: every cell equals explicit's answer (``other`` uses b,
    which n1's VolumeAttachment already holds at a limit of 1: never there)."""
    from symreach.solvers.cells import solve_type

    inst = instance(*HELPED, deployment("other", C + uses("b")), node("n2"))
    cells = {}
    for t in range(len(inst.pod_types)):
        for answer in solve_type(inst, t).classes:
            cells.update({(t, n): answer.verdict for n in answer.nodes})
    explicit = {(t, n): make_engine("explicit").check(inst, Query((frozenset({(t, n)}),))).verdict.value
                for t in range(len(inst.pod_types)) for n in range(len(inst.nodes))}
    assert len(cells) == len(explicit) == 6
    assert cells == explicit
    assert cells[(inst.type_index("default/other"), inst.node_index("n1"))] == "not-deployable"


def test_disk_conflicts_are_answered_by_explicit_and_declined_by_the_others():
    """web writes the GCE disk pd1 that the running bare pod db holds on n1: web can run on n1
    only once db is gone (deleted by the witness); engines without disk conflicts decline."""
    disk = "  volumes: [{name: d, gcePersistentDisk: {pdName: pd1}}]\n"
    inst, _ = load_kubernetes_documents([yaml.safe_load(d) for d in (
        node("n1"), pod("db", "  nodeName: n1\n" + C + disk), deployment("web", C + disk))], "<state>")
    query = target(inst, "default/web")
    assert semantics.unencoded_volume_checks(inst) == "in-tree disk conflicts (VolumeRestrictions)"
    web, n1 = inst.type_index("default/web"), inst.node_index("n1")
    assert semantics.node_failure(inst, web, n1, inst.initial_config()).reasons == ("node(s) had no available disk",)
    for engine in ("explicit", "auto"):
        got = make_engine(engine).check(inst, query)
        assert got.verdict is Verdict.DEPLOYABLE and [s.op for s in got.trace] == ["delete", "deploy"]
    for engine in DECLINING:
        assert make_engine(engine).check(inst, query).verdict is Verdict.UNKNOWN
