"""Witnesses that can never run beside the pod they would enable (``encodings.coexist``):
the may-be-present fixpoint ignores them, stays an over-approximation of the
reachable pairs, and its certificate is re-checked from the semantics."""

from __future__ import annotations

import pytest

from symreach.certify import may_fixpoint as may_certificate
from symreach.encodings import preprocess as pre_mod
from symreach.encodings.preprocess import fits_alone, may_fixpoint, preprocess
from symreach.loader import load_document
from symreach.model import Query
from symreach.result import Verdict
from symreach.solvers.explicit import ExplicitEngine
from tests.engine_suite import aff, doc, term
from tests.random_instances import random_doc


def port_pair(cpu: str = "4", port_b: int = 8080) -> dict:
    """web needs metrics on its own host, and both hold host port 8080 (kubernetes)."""
    return doc("kubernetes", [{"name": f"n{i}", "capacity": {"cpu": cpu}} for i in range(3)], [
        {"name": "metrics", "labels": {"app": "metrics"}, "requests": {"cpu": "1"},
         "hostPorts": [{"port": port_b}]},
        {"name": "web", "labels": {"app": "web"}, "requests": {"cpu": "1"},
         "hostPorts": [{"port": 8080}], "affinity": aff(term({"app": "metrics"}))},
    ], query={"pod": "web", "node": "n1"})


def test_a_host_port_clash_with_the_only_witness_is_decided_by_the_fixpoint():
    inst = load_document(port_pair())
    pre = preprocess(inst, inst.query)
    assert pre.decided is not None and pre.decided.verdict is Verdict.NOT_DEPLOYABLE
    assert pre.stats["decided_by"] == "may-fixpoint"
    assert ExplicitEngine().check(inst).verdict is Verdict.NOT_DEPLOYABLE
    cert = may_certificate.make_certificate(inst, inst.query, pre.cone, pre.may)
    ok, message = may_certificate.check_certificate(inst, cert)
    assert ok, message


@pytest.mark.parametrize("cpu, port", [("1", 8080), ("4", 9090)])
def test_capacity_alone_clashes_and_different_ports_do_not(cpu, port):
    """cpu 1: both pods cannot fit on one node (capacity clash); port 9090: they can."""
    inst = load_document(port_pair(cpu, port))
    pre = preprocess(inst, inst.query)
    expected = Verdict.NOT_DEPLOYABLE if cpu == "1" else Verdict.DEPLOYABLE
    assert ExplicitEngine().check(inst).verdict is expected
    assert pre.decided is not None and pre.decided.verdict is expected


def test_the_checker_rejects_a_pair_dropped_without_a_clash():
    """With different ports, web on n1 may be deployed from metrics on n1: leaving it
    out of the listed pairs is refused by the semantics-based closure check."""
    inst = load_document(port_pair("4", 9090))
    metrics, web = inst.type_index("metrics"), inst.type_index("web")
    listed = {(metrics, n) for n in range(3)} | {(web, 0), (web, 2)}
    cert = may_certificate.make_certificate(inst, inst.query, {metrics, web}, listed)
    ok, message = may_certificate.check_certificate(inst, cert)
    assert not ok and "not closed" in message


def _fixpoint(inst):
    cone = frozenset(range(len(inst.pod_types)))
    candidates = {(t, n) for t in cone if inst.pod_types[t].creatable
                  for n in range(len(inst.nodes)) if fits_alone(inst, t, n)}
    added, _ = may_fixpoint(inst, cone, candidates, frozenset(p for p, c in inst.initial.items() if c))
    return cone, frozenset(added)


def test_random_instances_fixpoint_contains_every_reachable_pair(monkeypatch):
    """Differential: every pair the explicit engine reaches is in the fixpoint, and
    the fixpoint's certificate is accepted for every pair outside it. Some
    instances must lose pairs to the clash rule, or this test tests nothing."""
    sharper = checked = 0
    for seed in range(300):
        inst = load_document(random_doc(seed + 5000))
        cone, may = _fixpoint(inst)
        with monkeypatch.context() as m:
            m.setattr(pre_mod, "clash", lambda *a: False)
            _, plain = _fixpoint(inst)
        assert may <= plain
        sharper += may < plain
        for t in cone:
            for n in range(len(inst.nodes)):
                query = Query((frozenset({(t, n)}),))
                if (t, n) in may:
                    continue
                checked += 1
                assert ExplicitEngine().check(inst, query).verdict is Verdict.NOT_DEPLOYABLE, (seed, t, n)
                cert = may_certificate.make_certificate(inst, query, cone, may)
                ok, message = may_certificate.check_certificate(inst, cert)
                assert ok, (seed, message)
    assert sharper >= 3 and checked > 100
