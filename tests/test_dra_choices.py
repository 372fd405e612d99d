"""Which devices a deployment takes when the scheduler's random order of pools decides: a deploy choice each.

n1 has two pools of one driver, ``n1-a`` (an a100) and ``n1-b`` (a t4). ``first``'s claim takes any
gpu, so deploying it on n1 takes either, as the pool order (a Go map's) falls; ``second`` needs the
a100 and, by a required pod affinity, a node where ``first`` runs. So ``second`` runs on n1 only
after ``first`` took the t4: the input order (pools by name) gives the a100, and only the other
choice is a witness. ``KSO`` holds the DRA kso variant's answers (``/work/wt/dra-kso/kso``,
docs/dra.md) for ``second`` in the cluster as each choice leaves it (``first`` running on n1, its
claim allocated as the scheduler writes it); ``test_expectations_are_the_variant_answers`` asks it
again where it is built.
"""

from __future__ import annotations

import copy
import json
import os
import random
from dataclasses import replace
from pathlib import Path

import pytest
import yaml

from benchmarks.kso_harness import any_state, kso_verdicts_single, symreach_verdicts
from symreach import semantics
from symreach.certify.explicit_states import check_certificate
from symreach.frontends.kubernetes import kubernetes_to_v1, load_kubernetes_documents
from symreach.loader import load_text
from symreach.model import Query
from symreach.result import Verdict
from symreach.solvers.explicit import ExplicitEngine
from symreach.solvers.registry import make_engine
from tests.test_wffc_binding import plain_bfs

VARIANT = Path(os.environ.get("KSO_DRA", "/work/wt/dra-kso/kso"))
API = "resource.k8s.io/v1"
DRA = "DynamicResources"
PINNED_N1 = {"nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n1"]}]}]}
A100, T4 = "allocates claim default/c1: n1: gpu.example.com/n1-a/a0", "allocates claim default/c1: n1: gpu.example.com/n1-b/b0"
AFFINITY = ("InterPodAffinity", ("node(s) didn't match pod affinity rules",))
# the variant's verdicts for ``second`` once ``first`` runs on n1 holding the device named
KSO = {"a0": {"n1": (DRA, ("cannot allocate all claims",)), "n2": AFFINITY},
       "b0": {"n1": None, "n2": AFFINITY}}


def _slice(pool: str, device: str, model: str) -> dict:
    return {"apiVersion": API, "kind": "ResourceSlice", "metadata": {"name": pool},
            "spec": {"driver": "gpu.example.com", "nodeName": "n1", "pool": {"name": pool, "generation": 1, "resourceSliceCount": 1},
                     "devices": [{"name": device, "attributes": {"model": {"string": model}}}]}}


def _claim(name: str, selector: str = "") -> dict:
    body: dict = {"deviceClassName": "gpu"}
    if selector:
        body["selectors"] = [{"cel": {"expression": selector}}]
    return {"apiVersion": API, "kind": "ResourceClaim", "metadata": {"name": name, "namespace": "default"},
            "spec": {"devices": {"requests": [{"name": "r", "exactly": body}]}}}


def _pod(name: str, claim: str, affinity: bool = False) -> dict:
    spec: dict = {"containers": [{"name": "c", "image": "x"}], "resourceClaims": [{"name": "g", "resourceClaimName": claim}]}
    if affinity:
        spec["affinity"] = {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
            {"labelSelector": {"matchLabels": {"app": "first"}}, "topologyKey": "kubernetes.io/hostname"}]}}
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": "default", "uid": f"uid-{name}", "labels": {"app": name}}, "spec": spec}


def cluster(first_holds: str = "") -> list[dict]:
    """The cluster; ``first_holds``: ``first`` runs on n1 and its claim holds that device (a0 or b0),
    allocated and reserved as the scheduler and the resourceclaim controller write them."""
    nodes = [{"apiVersion": "v1", "kind": "Node", "metadata": {"name": n, "labels": {"kubernetes.io/hostname": n}},
              "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "10"}}} for n in ("n1", "n2")]
    gpu = {"apiVersion": API, "kind": "DeviceClass", "metadata": {"name": "gpu"},
           "spec": {"selectors": [{"cel": {"expression": 'device.driver == "gpu.example.com"'}}]}}
    first, c1 = _pod("first", "c1"), _claim("c1")
    if first_holds:
        first["spec"]["nodeName"] = "n1"
        pool = {"a0": "n1-a", "b0": "n1-b"}[first_holds]
        c1["status"] = {"allocation": {"devices": {"results": [{"request": "r", "driver": "gpu.example.com", "pool": pool,
                                                               "device": first_holds}]}, "nodeSelector": PINNED_N1},
                        "reservedFor": [{"resource": "pods", "name": "first", "uid": "uid-first"}]}
    return nodes + [gpu, _slice("n1-a", "a0", "a100"), _slice("n1-b", "b0", "t4"), c1, first,
                    _claim("c2", 'device.attributes["gpu.example.com"].model == "a100"'), _pod("second", "c2", True)]


def _loaded():
    inst, report = load_kubernetes_documents(cluster(), "<dra>")
    return inst, report, inst.type_index("default/first"), inst.type_index("default/second")


def test_deploying_first_on_n1_has_a_choice_per_pool():
    """Two successors, the input order's (the a100) first; ``second`` fits n1 after the t4's alone;
    no caveat on the order of pools is left."""
    inst, report, first, second = _loaded()
    assert not [c for cs in report.caveats.values() for c in cs if "order" in c]
    sigma = inst.initial_config()
    outcomes = semantics.deploys(inst, sigma, first, 0)
    assert [semantics.choice_text(inst, sigma, first, 0, k) for k, _ in outcomes] == [A100, T4]
    assert [semantics.node_failure(inst, second, 0, after) is None for _, after in outcomes] == [False, True]
    assert semantics.deploys(inst, sigma, first, 1) == [(None, semantics.deploy(inst, sigma, first, 1))]   # n2: no gpu


def test_the_witness_takes_the_t4_and_replays():
    """explicit (and auto) answer deployable for ``second`` on n1 with a witness that deploys ``first``
    on n1 naming the t4, replays, and whose steps' notes say so; bdd declines in one line."""
    inst, _, first, second = _loaded()
    target = Query((frozenset({(second, 0)}),))
    for engine in ("explicit", "auto"):
        result = make_engine(engine).check(inst, target)
        assert result.verdict is Verdict.DEPLOYABLE
        assert [(s.pod, s.node, s.binds) for s in result.trace] == [("default/first", "n1", T4), ("default/second", "n1", None)]
        semantics.replay(inst, result.trace, target)
        assert semantics.binding_notes(inst, result.trace) == [T4, "allocates claim default/c2: n1: gpu.example.com/n1-a/a0"]
    declined = make_engine("bdd").check(inst, target)
    assert declined.verdict is Verdict.UNKNOWN and "DRA devices" in declined.reason
    wrong = [semantics.step_of(inst, "deploy", first, 0, binds=A100), semantics.step_of(inst, "deploy", second, 0)]
    with pytest.raises(semantics.ReplayError, match="is illegal"):
        semantics.replay(inst, wrong)
    with pytest.raises(semantics.ReplayError, match="cannot bind so there"):
        semantics.replay(inst, [semantics.step_of(inst, "deploy", first, 0, binds=T4.replace("b0", "a9"))])


def test_symreach_gives_the_variant_answers_after_each_choice():
    """The cluster as each choice leaves it, loaded as an input: ``second``'s verdicts are the variant's,
    and those the semantics gives after that choice."""
    inst, _, first, second = _loaded()
    sigma = inst.initial_config()
    after = {semantics.choice_text(inst, sigma, first, 0, k)[-2:]: s for k, s in semantics.deploys(inst, sigma, first, 0)}
    for device, want in KSO.items():
        assert symreach_verdicts(any_state(cluster(device), "default/second")) == want, device
        got = {node.name: semantics.node_failure(inst, second, n, after[device]) for n, node in enumerate(inst.nodes)}
        assert {n: None if f is None else (f.plugin, f.reasons) for n, f in got.items()} == want, device


@pytest.mark.skipif(not os.access(VARIANT, os.X_OK), reason="the kso variant with DRA is not built here")
def test_expectations_are_the_variant_answers():
    for device, want in KSO.items():
        assert kso_verdicts_single(any_state(cluster(device), "default/second"), VARIANT) == want, device


def test_v1_lists_the_choices_and_reads_them_back():
    """The v1 document writes the deployment's states as a list (the input order's first); loaded back,
    the same choices; a list of one state, or a state twice, is refused."""
    v1, _ = kubernetes_to_v1(cluster(), "choices.yaml")
    first = next(p for p in v1["podTypes"] if p["name"] == "default/first")
    assert first["dra"]["allocations"]["states"][0]["nodes"] == {"n1": [1, 2]}
    inst = load_text(yaml.safe_dump(v1), "<v1>")
    t, sigma = inst.type_index("default/first"), inst.initial_config()
    assert [semantics.choice_text(inst, sigma, t, 0, k) for k, _ in semantics.deploys(inst, sigma, t, 0)] == [A100, T4]
    for bad in ([1], [1, 1]):
        doc = copy.deepcopy(v1)
        for p in doc["podTypes"]:
            if p.get("dra", {}).get("allocations"):
                p["dra"]["allocations"]["states"][0]["nodes"] = {"n1": bad}
        with pytest.raises(Exception, match="two or more distinct states"):
            load_text(yaml.safe_dump(doc), "<v1>")


def test_a_certificate_must_hold_every_choice():
    """Not deployable: ``second`` on n2 (no gpu there, and ``first`` cannot run there beside it). explicit's
    reachable set re-checks; without the state the t4 choice reaches it is refused as not closed under
    deploying ``first`` on n1 with that choice."""
    inst, _, first, second = _loaded()
    result = ExplicitEngine().check(inst, Query((frozenset({(second, 1)}),)))
    assert result.verdict is Verdict.NOT_DEPLOYABLE
    cert = json.loads(result.certificate.dumps())
    assert check_certificate(inst, cert)[0]
    c1 = cert["claims"].index("default/c1")
    keep = [k for k, row in enumerate(cert["bound"]) if row[c1] != "n1: gpu.example.com/n1-b/b0"]
    assert len(keep) < len(cert["bound"])
    forged = dict(cert, states=[cert["states"][k] for k in keep], bound=[cert["bound"][k] for k in keep])
    ok, why = check_certificate(inst, forged)
    assert not ok and "not closed under deploying" in why and "n1-b/b0" in why


def tied_instance(rng: random.Random) -> list[dict]:
    """1-2 nodes, each with 2-3 pools of one driver of 1-2 gpus (a100 or t4), sometimes one pool for
    every node; 2-3 bare pods whose claim asks one or two gpus, of a model or any, sometimes with an
    affinity to ``first``'s node: which gpus a pod takes is the pool order's, and a later pod's fit may
    hang on it."""
    nodes = [f"n{i}" for i in range(rng.choice((1, 2)))]
    objects: list[dict] = [{"apiVersion": "v1", "kind": "Node", "metadata": {"name": n, "labels": {"kubernetes.io/hostname": n}},
                            "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "10"}}} for n in nodes]
    objects.append({"apiVersion": API, "kind": "DeviceClass", "metadata": {"name": "gpu"},
                    "spec": {"selectors": [{"cel": {"expression": 'device.driver == "gpu.example.com"'}}]}})
    places = [(n, f"{n}-p{k}") for n in nodes for k in range(rng.choice((2, 3)))] + ([(None, "all")] if rng.random() < 0.3 else [])
    for node, pool in places:
        where = {"nodeName": node} if node else {"allNodes": True}
        objects.append({"apiVersion": API, "kind": "ResourceSlice", "metadata": {"name": pool},
                        "spec": {"driver": "gpu.example.com", **where, "pool": {"name": pool, "generation": 1, "resourceSliceCount": 1},
                                 "devices": [{"name": f"g{i}", "attributes": {"model": {"string": rng.choice(("a100", "t4"))}}}
                                             for i in range(rng.choice((1, 1, 2)))]}})
    for j in range(rng.choice((2, 3))):
        name = "first" if j == 0 else f"p{j}"
        model = rng.choice(("", "", "a100", "t4") if j == 0 else ("", "a100", "a100", "t4"))
        claim = _claim(f"c{j}", f'device.attributes["gpu.example.com"].model == "{model}"' if model else "")
        claim["spec"]["devices"]["requests"][0]["exactly"]["count"] = rng.choice((1, 1, 2))
        pod = _pod(name, f"c{j}", j > 0 and rng.random() < 0.8)   # then on a node where first runs
        objects += [claim, pod]
    return objects


@pytest.mark.parametrize("source", ["tied", "walks"])
def test_explicit_agrees_with_a_plain_bfs_on_random_dra_instances(source):
    """Random inputs, ``tied_instance``'s (every claim user on every node asked) and the allocation
    walks' (``benchmarks.kso_dra_walks.walk_input``: random DRA states with bare claim users and a
    Deployment taking claims from a template, a class of any driver tying pools of two drivers; one
    claim user on a node asked with the last one there): explicit's verdict is the plain search's,
    a witness replays, a certificate re-checks. Counted: each answer, the questions in instances
    where some deployment has several outcomes, and those the choices decide (every deployment's
    first choice alone answers otherwise)."""
    from benchmarks.kso_dra_walks import walk_input

    rng = random.Random(51)
    checked = {True: 0, False: 0}
    tied = decided = 0
    for i in range(400):
        objects = tied_instance(rng) if source == "tied" else walk_input(rng, i)[0]
        inst, _ = load_kubernetes_documents(objects, "<dra>")
        groups = [g for g in inst.binding_groups if g.holders]
        if not groups:
            continue
        users, n = sorted(groups[0].users), rng.randrange(len(inst.nodes))
        queries = [Query((frozenset({(t, m)}),)) for t in users for m in range(len(inst.nodes))] if source == "tied" \
            else [Query((frozenset({(rng.choice(users), n), (users[-1], n)}),))]
        alone = replace(inst, binding_groups=tuple(replace(g, choices=()) for g in inst.binding_groups))
        for query in queries:
            want = plain_bfs(inst, query, 4000)
            if want is None:
                continue
            result = ExplicitEngine().check(inst, query)
            assert result.verdict is (Verdict.DEPLOYABLE if want else Verdict.NOT_DEPLOYABLE), i
            if want:
                semantics.replay(inst, result.trace, query)
            else:
                ok, why = check_certificate(inst, json.loads(result.certificate.dumps()))
                assert ok, why
            checked[want] += 1
            if groups[0].choices:   # the same instance with every deployment's first choice alone
                tied += 1
                decided += plain_bfs(alone, query, 4000) != want
        if sum(checked.values()) >= (200 if source == "tied" else 20):
            break
    assert (checked[True], checked[False], tied, decided) == COUNTS[source]


COUNTS = {"tied": (140, 62, 178, 5), "walks": (3, 17, 5, 0)}   # walks: the generator since MESSAGE_ERRORS


@pytest.mark.parametrize("fmt", ["json", "yaml"])
def test_an_exported_witness_keeps_its_choice(tmp_path, fmt):
    """``check`` prints each deploying step with the devices it allocates; the trace file ``--trace-out``
    writes carries the choice (JSON ``binds``, a Pod annotation in YAML), so reading it back replays it."""
    from click.testing import CliRunner

    from symreach.cli import cli
    from symreach.export import parse_exported_trace

    path, out = tmp_path / "choices.yaml", tmp_path / f"trace.{fmt}"
    path.write_text(yaml.safe_dump_all(cluster()))
    run = CliRunner().invoke(cli, ["check", str(path), "--pod", "default/second", "--node", "n1", "--trace-out", str(out)])
    assert run.exit_code == 0, run.output
    assert "; " + T4 in run.output
    steps = parse_exported_trace(out.read_text(), fmt)
    assert [s.binds for s in steps] == [T4, None]
    inst, _ = load_kubernetes_documents(cluster(), "<s>")
    semantics.replay(inst, steps)


@pytest.mark.parametrize("per_order,lands", [
    ([({"a"}, {"n2"}), ({"a"}, {"n1"})], True),           # the same devices whichever order lands
    ([({"a"}, {"n2"}), ({"b"}, {"n1"})], False),          # n1 passing its filters: only the first order lands
    ([({"a", "b"}, set()), ({"a"}, {"n1"})], True),       # the order with no error gives every outcome
    ([({"a"}, set()), ({"a", "b"}, {"n1"})], False),      # b only where n1's error aborts the cycle
    ([({"a"}, set()), (set(), {"n1"})], True)])           # an order that does not fit the node: no outcome
def test_an_outcome_lands_only_under_an_order_that_lands(per_order, lands):
    """``dra_slice_orders.every_outcome_lands`` on hand-made (outcomes on the node, erring nodes) per cycle
    order: whether in every state where some order lands the pod there, every outcome can come."""
    from symreach.frontends.dra_slice_orders import every_outcome_lands

    assert every_outcome_lands([(frozenset(f), frozenset(e)) for f, e in per_order]) is lands
