"""The lazy-deletion search against the explicit reference engine.

Differential: on seeded random small instances (both profiles, every feature
but spread, so that many fall in the fragment) the lazy engine finds a
replaying witness exactly when the explicit engine says deployable, says
``unknown`` (exhausted) when it says not-deployable, and declines, naming
the reason, outside its fragment. Mutation: with blockers computed one-sided
(existing pods' anti-affinity left out) or affinity read before the
deletions, the same differential check fails.
"""

from __future__ import annotations

import pytest

from symreach import semantics
from symreach.certify.dispatch import check_text
from symreach.errors import InputError
from symreach.loader import load_document
from symreach.result import Verdict
from symreach.solvers import lazy_moves, lazy_search
from symreach.run import RunContext
from symreach.solvers.base import Limits
from symreach.solvers.explicit import ExplicitEngine
from symreach.solvers.lazy_search import LazySearchEngine
from symreach.solvers.registry import make_engine
from tests.engine_suite import aff, chain, doc, term
from tests.random_instances import ALL_FEATURES, random_doc

SEEDS = range(400)
NO_SPREAD = ALL_FEATURES - {"spread"}
DECLINED = "outside the lazy-deletion fragment"


def _instances(profile, features=NO_SPREAD, seeds=SEEDS):
    for seed in seeds:
        try:
            yield seed, load_document(random_doc(seed, profile, features))
        except InputError:
            continue


def _compare(inst, guided: bool = True) -> str:
    """One instance: the outcome class, after checking agreement with the explicit engine.
    Raises AssertionError or ReplayError on any disagreement."""
    lazy = LazySearchEngine(fast_paths=False, guided=guided).check(inst, run=Limits(max_states=100_000))
    ex = ExplicitEngine().check(inst)
    if lazy.verdict is Verdict.DEPLOYABLE:
        semantics.replay(inst, lazy.trace, inst.query)
        assert ex.verdict is Verdict.DEPLOYABLE
        return "deployable"
    if lazy.verdict is Verdict.NOT_DEPLOYABLE:
        assert ex.verdict is Verdict.NOT_DEPLOYABLE, "lazy search missed a witness"
        ok, why = check_text(inst, lazy.certificate.dumps())
        assert ok, why
        return "proved"
    if lazy.reason.startswith(DECLINED):
        return "declined"
    # the pruned space was exhausted, the unpruned one (for the certificate) was not
    assert lazy.stats["outcome"] == "exhausted" and "certificate" in lazy.stats, lazy.reason
    assert ex.verdict is Verdict.NOT_DEPLOYABLE, "lazy search missed a witness"
    return "exhausted"


@pytest.mark.parametrize("guided", [True, False])
@pytest.mark.parametrize("profile", ["paper", "kubernetes"])
def test_differential_random(profile, guided):
    counts = {"deployable": 0, "proved": 0, "declined": 0, "exhausted": 0}
    for _, inst in _instances(profile):
        counts[_compare(inst, guided)] += 1
    # the fragment is exercised both ways, and most instances are in it
    assert counts["deployable"] >= 100 and counts["proved"] >= 50, counts
    assert counts["proved"] + counts["exhausted"] >= 150, counts
    assert counts["declined"] < counts["deployable"], counts


def test_differential_declines_spread():
    """Spread is outside the fragment: every instance with a spread constraint on a
    candidate type is declined (or decided before the search, by preprocessing)."""
    declined = 0
    for _, inst in _instances("kubernetes", ALL_FEATURES, range(200)):
        if any(p.spread for p in inst.pod_types):
            res = LazySearchEngine(fast_paths=False).check(inst)
            if res.verdict is Verdict.UNKNOWN and "topology-spread" in res.reason:
                declined += 1
        else:
            _compare(inst)
    assert declined >= 10


def _mutant_fails(monkeypatch, profile: str) -> bool:
    for _, inst in _instances(profile):
        try:
            _compare(inst)
        except (AssertionError, semantics.ReplayError):
            return True
    return False


def test_one_sided_blockers_are_caught(monkeypatch):
    """Leaving existing pods' anti-affinity (the symmetric direction) out of the
    blockers makes the search unsound; the differential check notices."""
    real = lazy_moves.blockers

    def one_sided(inst, t, n, memo=None):
        pod = inst.pod_types[t]
        out = 0
        for aterm in pod.anti_affinity:
            out |= lazy_moves.mask(inst, aterm.selects, aterm.topology.domain_nodes(n))
        return out

    assert _mutant_fails(monkeypatch, "kubernetes") is False  # the real rule passes
    monkeypatch.setattr(lazy_moves, "blockers", one_sided)
    assert _mutant_fails(monkeypatch, "kubernetes")
    monkeypatch.setattr(lazy_moves, "blockers", real)


def test_affinity_read_before_deletions_is_caught(monkeypatch):
    """A witness that is also a blocker is deleted before the deploy: reading the
    affinity in the state before the deletions is unsound."""
    class Eager(lazy_search.Graph):
        @staticmethod
        def enabled(s, moves, stats):
            return tuple(sorted({m.bit: m for m in moves if not s & m.rep
                                 and all(s & need for need in m.needs)}.values(),
                                key=lambda m: m.bit))

    inst = load_document(_witness_also_blocker())
    every = [(t, n) for t in range(len(inst.pod_types)) for n in range(len(inst.nodes))]

    def unpruned():  # preprocessing alone already rules b out: search every pair
        res = lazy_search.search(inst, inst.query, every, RunContext())
        if res.verdict is Verdict.DEPLOYABLE:
            semantics.replay(inst, res.trace, inst.query)
        return res

    assert unpruned().verdict is Verdict.UNKNOWN  # exhausted, no certificate asked for
    monkeypatch.setattr(lazy_search, "Graph", Eager)
    with pytest.raises(semantics.ReplayError):
        unpruned()


def _lazy(d, **kw):
    return LazySearchEngine(fast_paths=False).check(load_document(d), run=Limits(**kw))


def test_existing_anti_affinity_blocker_is_deleted():
    """kubernetes: db's anti-affinity refuses web on its node; the witness deletes db first."""
    nodes = [{"name": "n", "capacity": {"cpu": "4"}}]
    types = [{"name": "db", "labels": {"app": "db"},
              "affinity": aff(term({"app": "web"}), kind="podAntiAffinity")},
             {"name": "web", "labels": {"app": "web"}}]
    res = _lazy(doc("kubernetes", nodes, types, [{"pod": "db", "node": "n", "count": 2}],
                    {"pod": "web", "node": "n"}))
    assert res.verdict is Verdict.DEPLOYABLE
    assert [(s.op, s.pod) for s in res.trace] == [("delete", "db"), ("delete", "db"), ("deploy", "web")]


def _witness_also_blocker() -> dict:
    """b needs a pod labelled x on its node and refuses pods labelled y; the only x pod
    is also y (type xy), so b is never deployable."""
    nodes = [{"name": "n"}]
    types = [{"name": "xy", "labels": {"x": "1", "y": "1"}, "creatable": False},
             {"name": "b", "labels": {"app": "b"},
              "affinity": {**aff(term({"x": "1"})),
                           **aff(term({"y": "1"}), kind="podAntiAffinity")}}]
    return doc("paper", nodes, types, [{"pod": "xy", "node": "n", "count": 1}], {"pod": "b", "node": "n"})


def test_witness_also_blocker():
    """Affinity is read after the deletions: b's only witness is one of its blockers."""
    res = _lazy(_witness_also_blocker())
    assert res.verdict is Verdict.NOT_DEPLOYABLE
    assert ExplicitEngine().check(load_document(_witness_also_blocker())).verdict is Verdict.NOT_DEPLOYABLE


def test_declines_binding_capacity_and_bootstrap():
    res = _lazy(chain("paper", 2))  # capacity 2, three pods of 1 cpu
    assert res.verdict is Verdict.UNKNOWN and "capacity can bind" in res.reason
    nodes = [{"name": "n"}]
    types = [{"name": "s", "labels": {"app": "s"}, "affinity": aff(term({"app": "s"}))}]
    res = _lazy(doc("paper", nodes, types, query={"pod": "s", "node": "n"}))
    assert res.verdict is Verdict.UNKNOWN and "bootstrap" in res.reason


def test_chain_without_capacity_pressure():
    res = _lazy(chain("kubernetes", 3))
    assert res.verdict is Verdict.DEPLOYABLE and res.stats["lazy_moves"] == 3


def test_state_limit_and_registry():
    res = _lazy(chain("paper", 3), max_states=1)
    assert res.verdict is Verdict.UNKNOWN and "state limit" in res.reason
    assert isinstance(make_engine("lazy").engine, LazySearchEngine)


def test_net_places_collapse_to_classes():
    """Appendix B: every pod marking one place is one class, so a marking is one state."""
    from symreach.frontends.petri_net import PetriNet, Transition
    from symreach.frontends.reduction_petri import encode_petri

    net = PetriNet("two-ways", ("a", "b", "g"),
                   (Transition("t1", frozenset({"a"}), frozenset({"b"})),
                    Transition("t2", frozenset({"a"}), frozenset({"b"})),
                    Transition("t3", frozenset({"b"}), frozenset({"g"}))),
                   frozenset({"a"}))
    inst = load_document(encode_petri(net, "g"))
    res = LazySearchEngine(fast_paths=False, guided=False).check(inst)
    assert res.verdict is Verdict.DEPLOYABLE and res.stats["lazy_moves"] == 9  # t1: S E P F R; t3: S E P; G
    # P-b-t1 and P-b-t2 mark the same place: one class
    moves = lazy_moves.compile_moves(inst, [(t, 0) for t in range(len(inst.pod_types))])
    rep = lazy_moves.classes(moves, [1 << inst.pair(inst.type_index("G-g"), 0)])
    b1, b2 = (inst.pair(inst.type_index(f"P-b-{a}"), 0) for a in ("t1", "t2"))
    assert rep[b1] == rep[b2]


def _chain_net_instance():
    from symreach.frontends.petri_net import PetriNet, Transition
    from symreach.frontends.reduction_petri import encode_petri

    net = PetriNet("chain", ("a", "b", "c", "g"),
                   (Transition("t1", frozenset({"a"}), frozenset({"b"})),
                    Transition("t2", frozenset({"b"}), frozenset({"c"})),
                    Transition("t3", frozenset({"c"}), frozenset({"g"}))),
                   frozenset({"a"}))
    return load_document(encode_petri(net, "g"))


def test_auto_answers_from_the_lazy_search_alone():
    import multiprocessing as mp

    from symreach.solvers.portfolio import AutoEngine

    inst = _chain_net_instance()
    res = AutoEngine(engines=("bmc", "lazy"), jobs=2).check(inst, run=Limits(timeout_s=120))
    assert res.verdict is Verdict.DEPLOYABLE and res.engine == "auto/lazy"
    assert res.stats["portfolio"]["answered_by"] == "lazy" and res.stats["portfolio"]["resident"] == "lazy"
    semantics.replay(inst, res.trace, inst.query)
    assert not mp.active_children()  # nothing was forked


def test_second_engine_takes_half_the_rotation():
    from symreach.solvers.schedule import holders

    engines = ["bdd", "ic3", "bmc", "lazy", "abc-pdr"]
    held = {e: 0 for e in engines}
    for i in range(12):
        running = holders(engines, "bmc", 2, i, "lazy")
        assert "bmc" in running and len(running) == 2
        for e in running:
            held[e] += 1
    assert held == {"bmc": 12, "lazy": 6, "bdd": 2, "ic3": 2, "abc-pdr": 2}
    assert holders(engines, "bmc", 2, 3, None) == holders(engines, "bmc", 2, 3)
    # alone for the first slices
    assert all(holders(engines, "bmc", 2, i, "lazy", 4) == {"bmc", "lazy"} for i in range(4))
    assert holders(engines, "bmc", 2, 4, "lazy", 4) == holders(engines, "bmc", 2, 4, "lazy")


def test_closure_certificate_rejects_tampering():
    """The checker re-derives everything: a missing state, a free target type or a
    state covering the target are each rejected."""
    import json

    from symreach.certify.lazy_closure import check_certificate

    found = 0
    for _, inst in _instances("kubernetes", NO_SPREAD, range(300)):
        res = LazySearchEngine(fast_paths=False).check(inst)
        if res.verdict is not Verdict.NOT_DEPLOYABLE or len(res.certificate.states) < 2:
            continue
        cert = res.certificate.to_json()
        assert check_certificate(inst, cert)[0]
        biggest = max(range(len(cert["states"])), key=lambda i: len(cert["states"][i]))
        for i in range(len(cert["states"])):  # dropping a maximal state breaks closure or sigma0
            fewer = json.loads(json.dumps(cert))
            del fewer["states"][i]
            if not check_certificate(inst, fewer)[0]:
                found += 1
                break
        freed = dict(cert, free=cert["free"] + [p for p, _ in cert["query"][0]])
        assert not check_certificate(inst, freed)[0]
        everything = dict(cert, states=cert["states"] + [list(range(len(cert["pairs"])))])
        if all(list(p) in cert["pairs"] for p in cert["query"][0]):
            assert not check_certificate(inst, everything)[0]
        assert biggest >= 0
    assert found >= 3


def test_the_indexed_closure_certificate_is_the_one_its_sets_give():
    """The search lists its states as indices (``ClosureCertificate.indexed``): the same
    document as from the sets of pairs, and the checker accepts it."""
    from symreach.certify.lazy_closure import check_certificate, make_certificate
    from symreach.frontends.reduction_petri import encode_petri
    from symreach.generators.nets import philosophers

    family = philosophers(4)
    inst = load_document(encode_petri(family.net, family.never_marked))
    cert = LazySearchEngine().check(inst).certificate
    document = cert.to_json()
    assert len(document["states"]) > 100
    assert document == make_certificate(inst, inst.query, cert.free, cert.states)
    assert check_certificate(inst, document)[0]
