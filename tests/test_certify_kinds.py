"""Every way of deciding not-deployable writes a certificate that ``certify`` accepts,
and ``certify`` rejects each kind once tampered with.

The decisions: a static filter, Theorem 5, the may-be-present fixpoint (fast
paths of every engine), the explicit engine's exhausted state space, the BDD
and IC3 invariants, and BMC's recurrence diameter (no evidence of its own:
``--cert-out`` asks the cheapest argument that applies, else IC3).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from symreach.certify import dispatch
from symreach.cli import cli
from symreach.loader import load_document
from tests.engine_suite import aff, chain, doc, term


def run(*args):
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


def static_case():
    d = chain("kubernetes", 2)
    d["podTypes"][2]["nodeSelector"] = {"zone": "elsewhere"}
    return d


def theorem5_case():
    return doc("kubernetes", [{"name": "n", "capacity": {"cpu": "2"}}], [
        {"name": "t", "labels": {"app": "t"}, "requests": {"cpu": "3"}},
        {"name": "o", "labels": {"app": "o"}, "requests": {"cpu": "1"}}], query={"pod": "t", "node": "n"})


def may_case():
    """c needs b, b never fits: the fixpoint holds only a's pairs."""
    d = chain("kubernetes", 2)
    d["podTypes"][1]["requests"] = {"cpu": "3"}
    return d


def hard_case():
    """c needs a and b beside it (paper profile, one witness per term), b needs a,
    and the node holds two pods: each pair fits, the three never do, so the
    may-be-present fixpoint keeps c and only an invariant (or exhaustion) proves it."""
    return doc("paper", [{"name": "n", "capacity": {"cpu": "2"}}], [
        {"name": "a", "labels": {"app": "a"}, "requests": {"cpu": "1"}},
        {"name": "b", "labels": {"app": "b"}, "requests": {"cpu": "1"}, "affinity": aff(term({"app": "a"}))},
        {"name": "c", "labels": {"app": "c"}, "requests": {"cpu": "1"},
         "affinity": aff(term({"app": "a"}), term({"app": "b"}))},
    ], query={"pod": "c", "node": "n"})


# (case, engine, expected format, expected decided_by or None)
CASES = [
    ("static", static_case, "auto", "symreach-static-filter/1"),
    ("theorem5", theorem5_case, "auto", "symreach-theorem5/1"),
    ("may", may_case, "auto", "symreach-may-fixpoint/1"),
    ("may-bdd", may_case, "bdd", "symreach-may-fixpoint/1"),
    ("explicit", hard_case, "explicit", "symreach-explicit-states/1"),
    ("bdd", hard_case, "bdd", "symreach-bdd-invariant/1"),
    ("ic3", hard_case, "ic3", "symreach-sat-invariant/1"),
    ("static-explicit", static_case, "explicit", "symreach-explicit-states/1"),
]


def write_case(tmp_path: Path, make) -> Path:
    path = tmp_path / "inst.yaml"
    path.write_text(yaml.safe_dump(make()))
    return path


def cert_format(text: str) -> str:
    return json.loads(text)["format"] if text.lstrip().startswith("{") else text.splitlines()[0][2:]


@pytest.mark.parametrize("name,make,engine,fmt", CASES, ids=[c[0] for c in CASES])
def test_check_writes_a_certificate_certify_accepts(tmp_path, name, make, engine, fmt):
    inst = write_case(tmp_path, make)
    cert = tmp_path / "cert.txt"
    out = run("check", str(inst), "--engine", engine, "--quiet", "--cert-out", str(cert))
    assert out.exit_code == 1, out.output
    assert cert_format(cert.read_text()) == fmt
    ok = run("certify", str(inst), str(cert))
    assert ok.exit_code == 0, ok.output
    assert ok.output.startswith("VALID")


def test_bmc_verdict_without_evidence_gets_a_certificate_from_another_argument(tmp_path):
    from symreach.solvers.bmc import BmcEngine
    from symreach.solvers.evidence import ensure_certificate

    inst = load_document(hard_case())
    result = BmcEngine(complete=True, fast_paths=False).check(inst)
    assert result.verdict.value == "not-deployable" and result.certificate is None
    result = ensure_certificate(inst, inst.query, result)
    assert result.stats["certificate_by"] == "ic3"
    text = result.certificate.dumps()
    assert dispatch.check_text(inst, text)[0]


# ---- tampering: each kind is rejected when its claim is changed ------------------------

def tamper_static(data):
    data["blocked"][0]["reason"] = "node(s) didn't match Pod's node affinity/selector, but differently"


def tamper_static_pod(data):
    data["blocked"][0]["pod"] = "b"
    data["query"] = [[["b", "n"]]]


def tamper_theorem5(data):
    data["blocked"][0]["reason"] = "Too many pods"


def tamper_may_drop(data):
    assert data["pairs"] == [["a", "n"]]
    data["pairs"] = []


def tamper_may_cone(data):
    data["cone"] = [c for c in data["cone"] if c != "b"]


def tamper_explicit(data):
    data["states"] = data["states"][:1] + data["states"][2:]


def tamper_bdd(data):
    data["root"] = 1


TAMPERS = [
    (static_case, "auto", tamper_static),
    (static_case, "auto", tamper_static_pod),
    (theorem5_case, "auto", tamper_theorem5),
    (may_case, "auto", tamper_may_drop),
    (may_case, "auto", tamper_may_cone),
    (hard_case, "explicit", tamper_explicit),
    (hard_case, "bdd", tamper_bdd),
]


@pytest.mark.parametrize("make,engine,tamper", TAMPERS, ids=[t[2].__name__ for t in TAMPERS])
def test_certify_rejects_a_tampered_certificate(tmp_path, make, engine, tamper):
    inst = write_case(tmp_path, make)
    cert = tmp_path / "cert.json"
    assert run("check", str(inst), "--engine", engine, "--quiet", "--cert-out", str(cert)).exit_code == 1
    data = json.loads(cert.read_text())
    tamper(data)
    cert.write_text(json.dumps(data))
    out = run("certify", str(inst), str(cert))
    assert out.exit_code == 1, out.output
    assert out.output.startswith("INVALID")


def test_certify_rejects_a_tampered_ic3_invariant(tmp_path):
    inst = write_case(tmp_path, hard_case)
    cert = tmp_path / "inv.txt"
    assert run("check", str(inst), "--engine", "ic3", "--quiet", "--cert-out", str(cert)).exit_code == 1
    lines = cert.read_text().splitlines()
    clauses = [i for i, line in enumerate(lines) if line and not line.startswith("#")]
    assert clauses
    del lines[clauses[0]]
    cert.write_text("\n".join(lines) + "\n")
    assert run("certify", str(inst), str(cert)).exit_code == 1


def test_a_certificate_for_another_instance_is_rejected(tmp_path):
    """A valid may-fixpoint certificate stops being valid when the cluster grows."""
    inst = write_case(tmp_path, may_case)
    cert = tmp_path / "cert.json"
    assert run("check", str(inst), "--quiet", "--cert-out", str(cert)).exit_code == 1
    bigger = may_case()
    bigger["nodes"][0]["capacity"] = {"cpu": "4"}
    inst.write_text(yaml.safe_dump(bigger))
    assert run("certify", str(inst), str(cert)).exit_code == 1


def test_unknown_format_is_bad_input(tmp_path):
    inst = write_case(tmp_path, may_case)
    cert = tmp_path / "cert.json"
    cert.write_text(json.dumps({"format": "something-else/1"}))
    out = run("certify", str(inst), str(cert))
    assert out.exit_code == 2 and "unknown certificate format" in out.stderr


def test_may_checker_does_not_trust_the_target_being_outside(tmp_path):
    """A 'certificate' that lists the target pair itself proves nothing."""
    from symreach.certify import may_fixpoint

    inst = load_document(chain("kubernetes", 2))
    cone = {0, 1, 2}
    pairs = {(t, 0) for t in cone}
    ok, message = may_fixpoint.check_certificate(inst, may_fixpoint.make_certificate(inst, inst.query, cone, pairs))
    assert not ok and "inside the listed pairs" in message


# ---- the node filters, re-evaluated without the loader ------------------------------------

def _instances():
    from symreach.frontends.dispatch import load_any
    from symreach.generators.clusters import generate_cluster
    from tests.random_instances import random_doc

    root = Path(__file__).resolve().parent.parent
    yield load_any(root / "examples" / "cluster-dump.yaml")
    for seed in range(60):
        yield load_document(random_doc(seed))
    for seed in range(15):
        yield load_document(generate_cluster(8, 10, seed))
    from symreach.frontends.kubernetes import load_kubernetes_documents
    from symreach.generators.k8s_states import random_states

    for state in random_states(80, 4):  # Node objects, PreFilter names, Gt/Lt oddities
        yield load_kubernetes_documents(state.objects, "<state>")[0]


def test_node_filters_agree_with_the_loader_everywhere():
    """The independent evaluator and the loader give the same first static failure on every pair."""
    from symreach.certify.node_filters import static_failure

    pairs = 0
    for inst in _instances():
        for t, pod in enumerate(inst.pod_types):
            assert pod.manifest is not None
            for n, node in enumerate(inst.nodes):
                again = static_failure(pod.manifest, node, kube=inst.profile == "kubernetes")
                assert again == inst.static_block[t][n], (pod.name, node.name)
                pairs += 1
    assert pairs > 1000


def test_a_static_filter_the_spec_does_not_support_is_rejected():
    """A model whose static_block disagrees with the pod spec (a loader bug) is caught."""
    from dataclasses import replace

    from symreach.certify import static_filter

    inst = load_document(static_case())
    cert = static_filter.make_certificate(inst, inst.query)
    assert static_filter.check_certificate(inst, cert)[0]
    t = inst.type_index("c")
    manifest = dict(inst.pod_types[t].manifest)
    manifest.pop("nodeSelector")
    from symreach.model import FrozenDict

    types = list(inst.pod_types)
    types[t] = replace(types[t], manifest=FrozenDict(manifest))
    ok, message = static_filter.check_certificate(replace(inst, pod_types=tuple(types)), cert)
    assert not ok and "re-evaluated from the pod spec" in message


def test_theorem5_refuses_a_type_with_affinity():
    from symreach.certify import theorem5

    inst = load_document(chain("kubernetes", 2))
    cert = {"format": theorem5.FORMAT, "profile": "kubernetes", "query": [[["c", "n"]]],
            "blocked": [{"pod": "c", "node": "n", "reason": "node(s) didn't match pod affinity rules"}]}
    ok, message = theorem5.check_certificate(inst, cert)
    assert not ok and "Theorem 5 does not apply" in message


def test_explicit_state_space_too_large_to_write_falls_back(monkeypatch, tmp_path):
    """Past the state limit the explicit engine writes no set; --cert-out still gets a proof."""
    from symreach.certify import explicit_states

    monkeypatch.setattr(explicit_states, "MAX_STATES", 1)
    inst = write_case(tmp_path, hard_case)
    cert = tmp_path / "cert.txt"
    assert run("check", str(inst), "--engine", "explicit", "--quiet", "--cert-out", str(cert)).exit_code == 1
    assert cert_format(cert.read_text()) == "symreach-sat-invariant/1"
    assert run("certify", str(inst), str(cert)).exit_code == 0
