"""Certificates of not-deployable BDD runs: accepted as produced, rejected when corrupted."""

from __future__ import annotations

import copy
import json

import pytest

from symreach.certify.bdd_invariant import check_certificate, dump_certificate
from symreach.encodings.compile import compile_system
from symreach.encodings.preprocess import preprocess
from symreach.frontends.reduction_pebbling import encode_pebbling
from symreach.generators.dags import pyramid
from symreach.loader import load_document
from symreach.result import Verdict
from symreach.solvers.bdd import BddEngine, Reachability
from symreach.solvers.bdd_images import SymbolicSystem
from tests.engine_suite import chain


def pebbling(h, k):
    dag = pyramid(h)
    return load_document(encode_pebbling(dag.vertices, dag.edges, dag.target, k))


def spread_instance():
    d = chain("kubernetes", 1)
    d["podTypes"][2]["topologySpreadConstraints"] = [{
        "maxSkew": 1, "topologyKey": "kubernetes.io/hostname", "whenUnsatisfiable": "DoNotSchedule",
        "labelSelector": {"matchLabels": {"app": "a"}}}]
    d["nodes"].append({"name": "m", "capacity": {"cpu": "2"}})
    d["podTypes"][0]["maxPerNode"] = 2
    inst = load_document(d)
    assert inst.counted_pairs()
    return inst


CASES = {"pyramid": lambda: pebbling(3, 4), "chain": lambda: load_document(chain("paper", 1)),
         "spread": spread_instance}


@pytest.mark.parametrize("name", sorted(CASES))
@pytest.mark.parametrize("direction", ["forward", "backward"])
def test_certificate_accepted(name, direction):
    inst = CASES[name]()
    result = BddEngine(fast_paths=False, direction=direction).check(inst)
    assert result.verdict is Verdict.NOT_DEPLOYABLE
    cert = json.loads(json.dumps(result.certificate))  # survives a JSON round trip
    ok, why = check_certificate(inst, inst.query, cert)
    assert ok, why


def _cert(inst):
    return BddEngine(fast_paths=False).check(inst).certificate


def test_rejects_everything_invariant():
    inst = pebbling(3, 4)
    cert = _cert(inst)
    cert["root"] = 1
    ok, why = check_certificate(inst, inst.query, cert)
    assert not ok and "target" in why


def test_rejects_empty_invariant():
    inst = pebbling(3, 4)
    cert = _cert(inst)
    cert["root"] = 0
    ok, why = check_certificate(inst, inst.query, cert)
    assert not ok and "initial" in why


def test_rejects_swapped_node():
    inst = pebbling(3, 4)
    cert = _cert(inst)
    bad = copy.deepcopy(cert)
    var, lo, hi = bad["nodes"][-1]
    bad["nodes"][-1] = [var, hi, lo]
    assert not check_certificate(inst, inst.query, bad)[0]


def test_rejects_open_cone():
    inst = load_document(chain("paper", 1))
    cert = _cert(inst)
    cert["cone"] = [x for x in cert["cone"] if x != "a"]
    cert["pairs"] = [p for p in cert["pairs"] if p["pod"] != "a"]
    ok, why = check_certificate(inst, inst.query, cert)
    assert not ok


def test_rejects_non_inductive_invariant():
    """Remove one reachable, non-initial state from the reached set."""
    inst = pebbling(3, 4)
    pre = preprocess(inst, inst.query, try_greedy=False)
    system = compile_system(inst, inst.query, pre)
    sym = SymbolicSystem(system)
    reach = Reachability(sym)
    reach.run()
    some = sym.cube_of(sym.state_of(reach.R & ~sym.initial))
    cert = dump_certificate(inst, inst.query, system, sym, reach.R & ~some)
    ok, why = check_certificate(inst, inst.query, cert)
    assert not ok and "inductive" in why


def test_rejects_wrong_instance():
    """A certificate for capacity 1 does not prove capacity 2 (which is deployable)."""
    cert = _cert(load_document(chain("paper", 1)))
    inst2 = load_document(chain("paper", 2))
    assert not check_certificate(inst2, inst2.query, cert)[0]
