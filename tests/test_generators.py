"""Generators: DAG families, one-safe net families, random clusters."""

from __future__ import annotations

import pytest
import yaml
from click.testing import CliRunner

from symreach.cli.generate import generate_group
from symreach.cli.output import dump_yaml
from symreach.frontends.reduction_pebbling import check_dag
from symreach.generators import clusters, dags, nets
from tests.oracles import coverable_places, reachable_markings


def _load(doc: dict):
    from symreach.loader import load_document

    return load_document(doc, filename="<generated>")


# ---------------------------------------------------------------------------
# DAGs
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("h", range(6))
def test_pyramid_shape(h):
    d = dags.pyramid(h)
    assert len(d.vertices) == (h + 1) * (h + 2) // 2
    assert len(d.edges) == h * (h + 1)
    pred = check_dag(d.vertices, d.edges)
    sinks = [v for v in d.vertices if not any(u == v for u, _ in d.edges)]
    assert sinks == [d.target]
    assert sum(1 for v in pred if not pred[v]) == h + 1  # the base level
    assert all(len(p) in (0, 2) for p in pred.values())


@pytest.mark.parametrize("h", range(6))
def test_binary_tree_shape(h):
    d = dags.binary_tree(h)
    assert len(d.vertices) == 2 ** (h + 1) - 1
    pred = check_dag(d.vertices, d.edges)
    assert sum(1 for v in pred if not pred[v]) == 2 ** h  # leaves
    assert all(len(p) in (0, 2) for p in pred.values())
    assert not any(u == d.target for u, _ in d.edges)


def test_path_and_random_dags():
    p = dags.path(5)
    assert p.edges == (("p0", "p1"), ("p1", "p2"), ("p2", "p3"), ("p3", "p4")) and p.target == "p4"
    a, b = dags.random_dag(30, seed=3), dags.random_dag(30, seed=3)
    assert a == b and a != dags.random_dag(30, seed=4)
    check_dag(a.vertices, a.edges)  # acyclic by construction
    capped = dags.random_dag(30, p=0.9, seed=1, max_indegree=2)
    assert max(sum(1 for _, v in capped.edges if v == x) for x in capped.vertices) <= 2


# ---------------------------------------------------------------------------
# nets
# ---------------------------------------------------------------------------

def _assert_one_safe(net) -> None:
    """Firing never puts a second token on a place: (Post \\ Pre) ∩ M = ∅."""
    for m in reachable_markings(net):
        for t in net.transitions:
            if t.pre <= m:
                assert not (t.produced & m), (net.name, t.name, sorted(m))


@pytest.mark.parametrize("family", sorted(nets.FAMILIES))
@pytest.mark.parametrize("n", [2, 3, 4])
def test_net_families_are_one_safe_with_documented_places(family, n):
    fam = nets.FAMILIES[family](n)
    _assert_one_safe(fam.net)
    cov = coverable_places(fam.net)
    assert fam.coverable in cov
    assert fam.never_marked not in cov
    # Only the violation place is dead: the rest of the family is live enough.
    assert set(fam.net.places) - cov == {fam.never_marked}


@pytest.mark.parametrize("family", sorted(nets.FAMILIES))
def test_net_seed_only_permutes(family):
    base = nets.FAMILIES[family](3).net
    a, b = nets.FAMILIES[family](3, seed=7).net, nets.FAMILIES[family](3, seed=7).net
    assert a == b
    assert set(a.places) == set(base.places) and set(a.transitions) == set(base.transitions)
    assert a.initial == base.initial


def test_add_dead_place():
    net = nets.add_dead_place(nets.token_ring(3).net)
    cov = coverable_places(net)
    assert "dead" in net.places and "dead" not in cov and "dead_next" not in cov
    _assert_one_safe(net)


def test_families_refuse_n_below_two():
    with pytest.raises(ValueError):
        nets.mutex(1)


# ---------------------------------------------------------------------------
# clusters
# ---------------------------------------------------------------------------

def _kinds(doc: dict) -> set[str]:
    found = set()
    for pt in doc["podTypes"]:
        aff = pt.get("affinity", {})
        if pt.get("requests"):
            found.add("requests")
        if pt.get("nodeSelector"):
            found.add("nodeSelector")
        if "nodeAffinity" in aff:
            found.add("nodeAffinity")
        if pt.get("tolerations"):
            found.add("tolerations")
        for kind in ("podAffinity", "podAntiAffinity"):
            for term in aff.get(kind, {}).get("requiredDuringSchedulingIgnoredDuringExecution", []):
                found.add(f"{kind}/{term['topologyKey']}")
        for tsc in pt.get("topologySpreadConstraints", []):
            assert tsc["whenUnsatisfiable"] == "DoNotSchedule"
            found.add("spread")
        if pt.get("hostPorts"):
            found.add("hostPorts")
    return found


ALL_KINDS = {"requests", "nodeSelector", "nodeAffinity", "tolerations", "spread", "hostPorts",
             "podAffinity/kubernetes.io/hostname", "podAffinity/topology.kubernetes.io/zone",
             "podAntiAffinity/kubernetes.io/hostname",
             "podAntiAffinity/topology.kubernetes.io/zone"}


@pytest.mark.parametrize("seed", range(3))
def test_cluster_uses_every_constraint_kind_and_loads(seed):
    doc = clusters.generate_cluster(nodes=40, pod_types=12, seed=seed)
    assert doc["semantics"] == "kubernetes"
    assert _kinds(doc) == ALL_KINDS
    nodes = doc["nodes"]
    assert all("pods" in n["capacity"] for n in nodes)
    pools = {n["labels"]["pool"] for n in nodes}
    assert {"system", "gpu", "general"} <= pools
    assert any(t["key"] == "nvidia.com/gpu" for n in nodes for t in n.get("taints", []))
    assert any(t["key"] == "node-role.kubernetes.io/control-plane"
               for n in nodes for t in n.get("taints", []))
    inst = _load(doc)
    assert len(inst.nodes) == 40 and len(inst.pod_types) == 12
    assert inst.query is not None
    # The initial configuration respects static filters.
    for (t, n) in inst.initial:
        assert inst.static_block[t][n] is None


def test_cluster_is_deterministic_for_a_seed():
    a = dump_yaml(clusters.generate_cluster(nodes=50, pod_types=15, seed=11))
    b = dump_yaml(clusters.generate_cluster(nodes=50, pod_types=15, seed=11))
    c = dump_yaml(clusters.generate_cluster(nodes=50, pod_types=15, seed=12))
    assert a == b and a != c
    assert yaml.safe_load(a) == clusters.generate_cluster(nodes=50, pod_types=15, seed=11)


def test_cluster_scales_to_thousands_of_nodes():
    doc = clusters.generate_cluster(nodes=3000, pod_types=100, seed=1)  # about 0.5 s on an idle machine
    assert len(doc["nodes"]) == 3000 and len({n["name"] for n in doc["nodes"]}) == 3000


def test_large_cluster_loads():
    inst = _load(clusters.generate_cluster(nodes=1000, pod_types=60, seed=2))
    assert len(inst.nodes) == 1000 and len(inst.pod_types) == 60


@pytest.mark.parametrize("seed", range(12))
def test_small_clusters_are_tiny_and_explorable(seed):
    from symreach.solvers.base import Limits
    from symreach.solvers.explicit import ExplicitEngine

    doc = clusters.generate_cluster(seed=seed, small=True)
    assert 2 <= len(doc["nodes"]) <= 3 and 2 <= len(doc["podTypes"]) <= 4
    assert all(n["capacity"]["pods"] <= 3 for n in doc["nodes"])
    assert dump_yaml(doc) == dump_yaml(clusters.generate_cluster(seed=seed, small=True))
    inst = _load(doc)
    result = ExplicitEngine().check(inst, run=Limits(timeout_s=10, max_states=200_000))
    assert result.verdict.value in ("deployable", "not-deployable"), result.reason


def test_small_clusters_exercise_capacity():
    """Over many seeds, some small instance has a node whose cpu cannot hold every type."""
    def cpu(q: str) -> int:
        return int(q[:-1]) if q.endswith("m") else int(q) * 1000

    binding = 0
    for seed in range(30):
        doc = clusters.generate_cluster(seed=seed, small=True)
        total = sum(cpu(p["requests"]["cpu"]) for p in doc["podTypes"])
        binding += any(cpu(n["capacity"]["cpu"]) < total for n in doc["nodes"])
    assert binding >= 20


# ---------------------------------------------------------------------------
# command line
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("args", [
    ["pebbling", "--shape", "pyramid", "--height", "3", "-k", "5"],
    ["pebbling", "--shape", "tree", "--height", "2", "-k", "3"],
    ["pebbling", "--shape", "path", "--height", "4", "-k", "2"],
    ["pebbling", "--shape", "random", "--height", "8", "-k", "3", "--seed", "2"],
    ["net", "--family", "ring", "-n", "3"],
    ["net", "--family", "mutex", "-n", "2", "--goal", "never"],
    ["net", "--family", "philosophers", "-n", "2", "--goal", "dead"],
    ["cluster", "--nodes", "20", "--pod-types", "6", "--seed", "3"],
    ["cluster", "--small", "--seed", "5"],
])
def test_cli_generate_outputs_loadable_deterministic_yaml(args):
    runner = CliRunner()
    first = runner.invoke(generate_group, args)
    assert first.exit_code == 0, first.output
    assert runner.invoke(generate_group, args).output == first.output
    _load(yaml.safe_load(first.output))


def test_cli_generate_net_errors():
    res = CliRunner().invoke(generate_group, ["net", "--family", "mutex", "-n", "2", "--goal", "zz"])
    assert res.exit_code == 2 and "has no place 'zz'" in res.output
    res = CliRunner().invoke(generate_group, ["net", "--family", "mutex", "-n", "1"])
    assert res.exit_code == 2


def test_cli_generate_dag_only_and_net_only():
    import json

    res = CliRunner().invoke(generate_group, ["pebbling", "--shape", "pyramid", "--height", "2",
                                              "-k", "4", "--dag-only"])
    assert json.loads(res.output) == dags.pyramid(2).to_json()
    res = CliRunner().invoke(generate_group, ["net", "--family", "mutex", "-n", "2", "--net-only"])
    assert json.loads(res.output) == nets.mutex(2).net.to_json()


def test_cluster_queries_use_both_forms():
    forms = set()
    for seed in range(12):
        doc = clusters.generate_cluster(nodes=30, pod_types=10, seed=seed)
        forms.add("nodeSelector" if "nodeSelector" in doc["query"] else "node")
        if "nodeSelector" in doc["query"]:
            inst = _load(doc)
            matching = sum(n["labels"]["pool"] == doc["query"]["nodeSelector"]["pool"]
                           for n in doc["nodes"])
            assert 1 <= len(inst.query.alternatives) <= matching
    assert forms == {"node", "nodeSelector"}
