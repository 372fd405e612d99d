"""The executable semantics on the paper's examples and on every row of SPEC 2.1."""

from __future__ import annotations

import pytest

from symreach import reasons, semantics
from symreach.errors import InputError
from symreach.loader import load_document
from symreach.result import DELETE, DEPLOY, Step, Verdict
from symreach.solvers.explicit import ExplicitEngine

HOST = "kubernetes.io/hostname"


def aff(*terms, kind="podAffinity"):
    return {kind: {"requiredDuringSchedulingIgnoredDuringExecution": list(terms)}}


def term(labels=None, key=HOST, expressions=None, **extra):
    selector = {}
    if labels is not None:
        selector["matchLabels"] = labels
    if expressions is not None:
        selector["matchExpressions"] = expressions
    return {"labelSelector": selector, "topologyKey": key, **extra}


def doc(profile, nodes, types, initial=(), query=None):
    d = {"version": 1, "semantics": profile, "nodes": nodes, "podTypes": types, "initial": list(initial)}
    if query:
        d["query"] = query
    return d


def feasible(inst, pod, node, sigma=None):
    sigma = inst.initial_config() if sigma is None else sigma
    return semantics.first_failure(inst, inst.type_index(pod), inst.node_index(node), sigma)


def paper_26(capacity):
    """Paper section 2.6: b needs a, c needs b, one node of capacity `capacity`."""
    return doc("paper", [{"name": "n", "capacity": {"cpu": str(capacity)}}], [
        {"name": "a", "labels": {"app": "a"}, "requests": {"cpu": "1"}},
        {"name": "b", "labels": {"app": "b"}, "requests": {"cpu": "1"}, "affinity": aff(term({"app": "a"}))},
        {"name": "c", "labels": {"app": "c"}, "requests": {"cpu": "1"}, "affinity": aff(term({"app": "b"}))},
    ], query={"pod": "c", "node": "n"})


@pytest.mark.parametrize("profile", ["paper", "kubernetes"])
def test_section_2_6_example(profile):
    d = paper_26(2)
    d["semantics"] = profile
    inst = load_document(d)
    result = ExplicitEngine().check(inst)
    assert result.verdict is Verdict.DEPLOYABLE
    assert result.trace == (Step(DEPLOY, "a", "n"), Step(DEPLOY, "b", "n"),
                            Step(DELETE, "a", "n"), Step(DEPLOY, "c", "n"))
    d = paper_26(1)
    d["semantics"] = profile
    assert ExplicitEngine().check(load_document(d)).verdict is Verdict.NOT_DEPLOYABLE


def spread_zones():
    nodes = [{"name": "a1", "labels": {"zone": "a"}, "capacity": {"cpu": "10"}},
             {"name": "a2", "labels": {"zone": "a"}, "capacity": {"cpu": "10"}},
             {"name": "b1", "labels": {"zone": "b"}, "capacity": {"cpu": "10"}}]
    web = {"name": "web", "labels": {"app": "web"}, "requests": {"cpu": "1"},
           "topologySpreadConstraints": [{"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule",
                                          "labelSelector": {"matchLabels": {"app": "web"}}}]}
    return nodes, web


@pytest.mark.parametrize("profile", ["paper", "kubernetes"])
def test_section_2_4_spread_arithmetic(profile):
    """Zones a and b hold 2 and 1 matching pods, maxSkew 1: a gives 2+1-1 = 2 > 1, b gives 1+1-1 = 1."""
    nodes, web = spread_zones()
    inst = load_document(doc(profile, nodes, [web], initial=[
        {"pod": "web", "node": "a1", "count": 1}, {"pod": "web", "node": "a2", "count": 1},
        {"pod": "web", "node": "b1", "count": 1}]))
    assert feasible(inst, "web", "a1") == reasons.SPREAD
    assert feasible(inst, "web", "a2") == reasons.SPREAD
    assert feasible(inst, "web", "b1") is None


def test_spread_min_domains_makes_global_minimum_zero():
    nodes, web = spread_zones()
    web["topologySpreadConstraints"][0]["minDomains"] = 3  # only 2 zones exist
    inst = load_document(doc("kubernetes", nodes, [web], initial=[{"pod": "web", "node": "b1", "count": 1}]))
    # b: 1 + 1 - 0 = 2 > 1 ; a: 0 + 1 - 0 = 1
    assert feasible(inst, "web", "b1") == reasons.SPREAD
    assert feasible(inst, "web", "a1") is None


def self_affine(profile):
    """web is affine to app=web: the first web pod bootstraps, on any node."""
    nodes = [{"name": "n1", "capacity": {"cpu": "4"}}, {"name": "n2", "capacity": {"cpu": "4"}}]
    web = {"name": "web", "labels": {"app": "web"}, "requests": {"cpu": "1"}, "affinity": aff(term({"app": "web"}))}
    return doc(profile, nodes, [web])


@pytest.mark.parametrize("profile", ["paper", "kubernetes"])
def test_self_affinity_bootstrap(profile):
    inst = load_document(self_affine(profile))
    sigma0 = inst.initial_config()
    assert feasible(inst, "web", "n1", sigma0) is None
    after = semantics.deploy(inst, sigma0, 0, 0)
    assert feasible(inst, "web", "n1", after) is None
    assert feasible(inst, "web", "n2", after) == reasons.POD_AFFINITY


# ---- one test per row of the SPEC 2.1 table: the profiles disagree ---------

def two_terms(web_terms, pods):
    nodes = [{"name": "n1", "capacity": {"cpu": "9"}}, {"name": "n2", "capacity": {"cpu": "9"}}]
    types = [{"name": "web", "labels": {"app": "web", "tier": "front"}, "affinity": aff(*web_terms)}]
    initial = []
    for name, labels, node in pods:
        types.append({"name": name, "labels": labels})
        initial.append({"pod": name, "node": node})
    return lambda profile: load_document(doc(profile, nodes, types, initial))


def test_row_witness_of_several_terms():
    """paper: each term its own witness; kubernetes: a witness must match all terms."""
    build = two_terms([term({"app": "cache"}), term({"app": "db"})],
                      [("cache", {"app": "cache"}, "n1"), ("db", {"app": "db"}, "n1")])
    assert feasible(build("paper"), "web", "n1") is None
    assert feasible(build("kubernetes"), "web", "n1") == reasons.POD_AFFINITY


def test_row_self_affinity_bootstrap_is_all_or_nothing():
    # web matches both terms; a pod matching only the second exists elsewhere.
    build = two_terms([term({"app": "web"}), term({"tier": "front"})], [("side", {"tier": "front"}, "n2")])
    assert feasible(build("paper"), "web", "n1") == reasons.POD_AFFINITY  # term 2 not waived
    assert feasible(build("kubernetes"), "web", "n1") is None  # nobody matches all terms: bootstrap
    # web matches the first term only; the second has a witness on n1.
    build = two_terms([term({"app": "web"}), term({"app": "db"})], [("db", {"app": "db"}, "n1")])
    assert feasible(build("paper"), "web", "n1") is None  # term 1 waived, term 2 witnessed
    assert feasible(build("kubernetes"), "web", "n1") == reasons.POD_AFFINITY


def test_row_existing_pods_anti_affinity():
    nodes = [{"name": "n1", "capacity": {"cpu": "9"}}]
    types = [{"name": "web", "labels": {"app": "web"}},
             {"name": "loner", "labels": {"app": "loner"},
              "affinity": aff(term({"app": "web"}), kind="podAntiAffinity")}]
    build = lambda p: load_document(doc(p, nodes, types, [{"pod": "loner", "node": "n1"}]))
    assert feasible(build("paper"), "web", "n1") is None
    assert feasible(build("kubernetes"), "web", "n1") == reasons.EXISTING_ANTI_AFFINITY


def test_row_node_lacking_topology_key():
    nodes = [{"name": "n1", "labels": {"zone": "a"}, "capacity": {"cpu": "9"}},
             {"name": "n2", "capacity": {"cpu": "9"}}]
    types = [{"name": "db", "labels": {"app": "db"}},
             {"name": "web", "labels": {"app": "web"}, "affinity": aff(term({"app": "db"}, key="zone"))},
             {"name": "solo", "labels": {"app": "solo"},
              "affinity": aff(term({"app": "db"}, key="zone"), kind="podAntiAffinity")}]
    d = doc("kubernetes", nodes, types, [{"pod": "db", "node": "n2"}])
    inst = load_document(d)
    assert feasible(inst, "web", "n2") == reasons.POD_AFFINITY  # affinity: node lacking key fails
    assert feasible(inst, "solo", "n2") is None  # own anti-affinity with a missing key is ignored
    d["semantics"] = "paper"
    with pytest.raises(InputError, match="zone"):
        load_document(d)


def test_row_selectors_and_namespaces():
    nodes = [{"name": "n1", "capacity": {"cpu": "9"}}]
    types = [{"name": "db", "namespace": "other", "labels": {"app": "db"}},
             {"name": "web", "labels": {"app": "web"}, "affinity": aff(term({"app": "db"}))}]
    d = doc("kubernetes", nodes, types, [{"pod": "db", "node": "n1"}])
    d["namespaces"] = [{"name": "default"}, {"name": "other"}]
    # kubernetes: the term sees only web's namespace; paper: a label predicate.
    assert feasible(load_document(d), "web", "n1") == reasons.POD_AFFINITY
    d["semantics"] = "paper"
    del d["namespaces"]
    types[0].pop("namespace")
    assert feasible(load_document(d), "web", "n1") is None


def test_row_empty_spread_selector():
    nodes, web = spread_zones()
    web["topologySpreadConstraints"][0]["labelSelector"] = {}
    initial = [{"pod": "web", "node": "a1", "count": 1}, {"pod": "web", "node": "a2", "count": 1}]
    # kubernetes: an empty selector counts nothing, never blocks; paper: it matches every pod.
    assert feasible(load_document(doc("kubernetes", nodes, [web], initial)), "web", "a1") is None
    assert feasible(load_document(doc("paper", nodes, [web], initial)), "web", "a1") == reasons.SPREAD


def test_row_spread_eligibility_taint_policy():
    nodes, web = spread_zones()
    nodes[2]["taints"] = [{"key": "t", "value": "v", "effect": "NoSchedule"}]
    initial = [{"pod": "web", "node": "a1", "count": 1}]
    # default nodeTaintsPolicy Ignore: zone b (tainted, empty) counts: a1 gives 1+1-0 = 2 > 1.
    assert feasible(load_document(doc("kubernetes", nodes, [web], initial)), "web", "a2") == reasons.SPREAD
    web["topologySpreadConstraints"][0]["nodeTaintsPolicy"] = "Honor"
    assert feasible(load_document(doc("kubernetes", nodes, [web], initial)), "web", "a2") is None


def test_row_capacity_pods_unit_and_zero_requests():
    nodes = [{"name": "n1", "capacity": {"cpu": "1", "pods": 1}}]
    types = [{"name": "big", "requests": {"cpu": "2"}}, {"name": "free", "requests": {}}]
    d = doc("kubernetes", nodes, types, [{"pod": "big", "node": "n1"}])
    # kubernetes: one pods unit each -> too many pods; paper: pods is an ordinary resource.
    assert feasible(load_document(d), "free", "n1") == reasons.TOO_MANY_PODS
    d["semantics"] = "paper"
    # paper checks every resource, zero requests included: cpu is overcommitted by big.
    assert feasible(load_document(d), "free", "n1") == reasons.insufficient("cpu")
    nodes[0]["capacity"] = {"cpu": "1"}
    d["semantics"] = "kubernetes"
    assert feasible(load_document(d), "free", "n1") is None  # zero requests are never checked


def test_row_host_ports():
    nodes = [{"name": "n1", "capacity": {"cpu": "9"}}]
    types = [{"name": "a", "hostPorts": [{"port": 80}]}, {"name": "b", "hostPorts": [{"port": 80, "protocol": "TCP"}]},
             {"name": "c", "hostPorts": [{"port": 80, "protocol": "UDP"}]}]
    inst = load_document(doc("kubernetes", nodes, types, [{"pod": "a", "node": "n1"}]))
    assert feasible(inst, "b", "n1") == reasons.NODE_PORTS
    assert feasible(inst, "c", "n1") is None


def test_row_first_failing_reason_follows_plugin_order():
    nodes = [{"name": "n1", "capacity": {"cpu": "1"}, "taints": [{"key": "k", "value": "v", "effect": "NoSchedule"}]},
             {"name": "n2", "capacity": {"cpu": "1"}}]
    types = [{"name": "web", "requests": {"cpu": "2"}, "affinity": aff(term({"app": "none"}))}]
    inst = load_document(doc("kubernetes", nodes, types))
    assert feasible(inst, "web", "n1") == reasons.TAINT_TOLERATION  # before capacity and affinity
    assert feasible(inst, "web", "n2") == reasons.insufficient("cpu")  # before affinity


def test_replay_rejects_illegal_steps():
    inst = load_document(paper_26(1))
    with pytest.raises(semantics.ReplayError):
        semantics.replay(inst, (Step(DEPLOY, "b", "n"),))
    with pytest.raises(semantics.ReplayError):
        semantics.replay(inst, (Step(DELETE, "a", "n"),))


def test_max_per_node_is_part_of_the_model():
    """An explicit multiplicity bound is enforced by the semantics, not only by engines."""
    nodes, web = spread_zones()
    del web["topologySpreadConstraints"]
    web["maxPerNode"] = 1
    inst = load_document(doc("kubernetes", nodes, [web], [{"pod": "web", "node": "b1"}]))
    t, n = inst.type_index("web"), inst.node_index("b1")
    assert semantics.first_failure(inst, t, n, inst.initial_config()) is None  # Hard itself holds
    assert semantics.deploy_failure(inst, t, n, inst.initial_config()) == semantics.REASON_MAX_PER_NODE
    with pytest.raises(semantics.ReplayError, match="maxPerNode"):
        semantics.replay(inst, (Step(DEPLOY, "web", "b1"),))
