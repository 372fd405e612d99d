"""The scheduler's abort of a pod's whole scheduling cycle when the DRA allocator errs on a node.

kube-scheduler v1.35 ``findNodesThatPassFilters`` cancels the cycle when a node's Filter status
is an Error (not Unschedulable); DynamicResources is the last filter, so its error counts only on
a node where the pod passes every earlier one (``semantics.cycle_abort``). ``tests/data/dra/abort.yaml``:
job fits n1 (a numa-0 GPU), n2 has no GPU, n3's GPU lacks the numa attribute the class reads (a
CEL runtime error) and has 2 CPUs (job asks for 1). ``KSO`` holds the answers of the kso variant
with DynamicResources (``docs/dra.md``; it stops on the error as the scheduler does, taken as that
error on every node); ``test_expectations_are_the_variant_answers`` re-asks it where it is built.
"""

from __future__ import annotations

import copy
import json
import os
from pathlib import Path

import pytest
import yaml

from benchmarks.kso_dra_agreement import kso_dra_verdicts, symreach_dra_verdicts
from benchmarks.kso_harness import any_state
from symreach import semantics
from symreach.certify.dispatch import as_certificate
from symreach.frontends.dra_allocator import ERROR_PREFIX
from symreach.frontends.kubernetes import load_kubernetes_documents
from symreach.model import Query, num_feasible_nodes_to_find
from symreach.result import DELETE, DEPLOY, Step, Verdict
from symreach.solvers.registry import make_engine

DATA = Path(__file__).parent / "data" / "dra"
VARIANT = Path(os.environ.get("KSO_DRA", "/work/wt/dra-kso/kso"))
DRA = "DynamicResources"
ERROR = (DRA, (ERROR_PREFIX + "class numa0: selector #1: CEL runtime error: no such key: numa",))
ABORTED = {"n1": ERROR, "n2": ERROR, "n3": ERROR}
N3_FULL = {"n1": None, "n2": (DRA, ("cannot allocate all claims",)), "n3": ("NodeResourcesFit", ("Insufficient cpu",))}


def _base() -> list[dict]:
    return [o for o in yaml.safe_load_all((DATA / "abort.yaml").read_text()) if o]


def _pod(name: str, cpu: str, node: str = "", labels: dict | None = None) -> dict:
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default", "uid": f"uid-{name}"},
           "spec": {"containers": [{"name": "c", "image": "x", "resources": {"requests": {"cpu": cpu}}}]}}
    if node:
        pod["spec"]["nodeName"] = node
    if labels:
        pod["metadata"]["labels"] = labels
    return pod


def _fill() -> dict:
    """A Deployment whose pods take 1 CPU each: two of them fill n3."""
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "fill", "namespace": "default"},
            "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "fill"}}, "template": {
                "metadata": {"labels": {"app": "fill"}},
                "spec": {"containers": [{"name": "c", "image": "x", "resources": {"requests": {"cpu": "1"}}}]}}}}


# state -> the variant's answer for the pending job
STATES = {
    "n3 free: n3 errs and passes every earlier filter, the cycle aborts": ([], ABORTED),
    "n3 full (a running pod holds its 2 CPUs): n3 fails NodeResourcesFit first, no abort": (
        [_pod("filler", "2", "n3")], N3_FULL),
    "one fill pod on n3 (1 CPU left): the abort stays": ([_pod("fill-1", "1", "n3", {"app": "fill"})], ABORTED),
    "two fill pods on n3: no abort": ([_pod(f"fill-{i}", "1", "n3", {"app": "fill"}) for i in (1, 2)], N3_FULL),
}


@pytest.mark.parametrize("name", list(STATES))
def test_symreach_gives_the_variant_answer(name):
    extra, want = STATES[name]
    assert symreach_dra_verdicts(any_state(_base() + copy.deepcopy(extra), "default/job"))[0] == want


@pytest.mark.skipif(not os.access(VARIANT, os.X_OK), reason="the kso variant with DRA is not built here")
def test_expectations_are_the_variant_answers():
    checked = 0
    for extra, want in STATES.values():
        assert kso_dra_verdicts(any_state(_base() + copy.deepcopy(extra), "default/job"), VARIANT) == want
        checked += 1
    assert checked == 4


def test_the_aborted_node_names_the_erring_node_and_its_reason():
    inst, report = load_kubernetes_documents(_base(), "<abort>")
    t, sigma = inst.type_index("default/job"), inst.initial_config()
    assert semantics.filter_failure(inst, t, 0, sigma) is None   # n1 alone would fit
    why = semantics.node_failure(inst, t, 0, sigma)
    assert why.plugin == DRA and why.reason.startswith(ERROR[1][0]) and "on node n3" in why.reason
    assert semantics.node_failure(inst, t, 2, sigma).reasons == ERROR[1]   # n3: its own error
    assert semantics.deploy_failure(inst, t, 0, sigma) == why.reason
    assert not [c for c in report.caveats.get("default/job", []) if "abort" in c]   # exact: no caveat
    from symreach.report.explain import explain

    said = explain(inst, t)   # the scheduler reports the error alone, not a count per reason
    assert said.failed_scheduling() == why.reason and [v.reason for v in said.nodes][0] == why.reason


def test_a_deletion_that_frees_the_erring_node_blocks_the_type():
    """n3 full: job fits n1. Deleting the filler first lets job pass NodeResourcesFit on n3, where the
    allocator errs: the deployment on n1 is refused, naming n3 (the variant: the first two rows of STATES)."""
    inst, _ = load_kubernetes_documents(_base() + [_pod("filler", "2", "n3")], "<abort>")
    target = Query((frozenset({(inst.type_index("default/job"), 0)}),))
    deploy = Step(DEPLOY, "default/job", "n1")
    semantics.replay(inst, [deploy], target)
    with pytest.raises(semantics.ReplayError) as err:
        semantics.replay(inst, [Step(DELETE, "default/filler", "n3"), deploy], target)
    assert "step 1: deploy default/job on n1 is illegal" in str(err.value) and "on node n3" in str(err.value)
    assert ERROR[1][0] in str(err.value)


def test_explicit_fills_the_erring_node_to_lift_the_abort():
    """Two fill pods on n3 lift the abort: explicit counts the pairs of a node where an allocator errs up
    to its capacity (``semantics.abort_cap``; one pod per pair would miss it), the witness replays, its
    end state is the variant's last row of STATES; bdd declines in one line, auto routes to explicit."""
    inst, _ = load_kubernetes_documents(_base() + [_fill()], "<abort>")
    job, fill = inst.type_index("default/job"), inst.type_index("default/fill")
    assert semantics.abort_cap(inst, fill, 2) == 2 and semantics.abort_cap(inst, fill, 0) == 0
    target = Query((frozenset({(job, 0)}),))
    for engine in ("explicit", "auto"):
        result = make_engine(engine).check(inst, target)
        assert result.verdict is Verdict.DEPLOYABLE
        assert [(s.op, s.pod, s.node) for s in result.trace] == [
            (DEPLOY, "default/fill", "n3"), (DEPLOY, "default/fill", "n3"), (DEPLOY, "default/job", "n1")]
    declined = make_engine("bdd").check(inst, target)
    assert declined.verdict is Verdict.UNKNOWN and "does not encode" in declined.reason


def test_the_abort_makes_a_certified_not_deployable():
    """Nothing can fill n3: job never runs on n1. explicit's reachable set is re-checked with the abort;
    a kind that assumes guards pods only make stricter is refused on such an instance."""
    inst, _ = load_kubernetes_documents(_base(), "<abort>")
    job = inst.type_index("default/job")
    target = Query((frozenset({(job, 0)}),))
    result = make_engine("explicit").check(inst, target)
    assert result.verdict is Verdict.NOT_DEPLOYABLE
    assert result.certificate.check(inst, target)[0]
    forged = as_certificate({"format": "symreach-static-filter/1", "query": json.loads(
        result.certificate.dumps())["query"]})
    ok, why = forged.check(inst, target)
    assert not ok and "DynamicResources error can abort" in why


def _nodes(count: int, gpus: int, zone: str = "") -> list[dict]:
    """count extra nodes m0.. like n1 (4 CPUs), the first ``gpus`` of them with a numa-0 GPU (job fits
    there), the others without (cannot allocate); ``zone``: their zone label."""
    out = []
    for i in range(count):
        meta = {"name": f"m{i}", "labels": {"topology.kubernetes.io/zone": zone}} if zone else {"name": f"m{i}"}
        out.append({"apiVersion": "v1", "kind": "Node", "metadata": meta,
                    "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "10"}}})
        if i < gpus:
            out.append({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": f"m{i}-gpu"},
                        "spec": {"driver": "gpu.example.com", "nodeName": f"m{i}", "devices": [
                            {"name": "g", "attributes": {"numa": {"int": 0}}}],
                            "pool": {"name": f"m{i}", "generation": 1, "resourceSliceCount": 1}}})
    return out


def test_num_feasible_nodes_to_find_is_the_schedulers():
    """v1.35 ``numFeasibleNodesToFind``, default adaptive percentage: all below 100, then
    max(100, n * max(50 - n/125, 5) / 100) in integer arithmetic."""
    got = {n: num_feasible_nodes_to_find(n) for n in (3, 99, 100, 101, 206, 207, 1000, 5000, 6000)}
    assert got == {3: 3, 99: 99, 100: 100, 101: 100, 206: 100, 207: 101, 1000: 420, 5000: 500, 6000: 300}


def test_nodes_beyond_k_never_shrink_with_more_nodes():
    """n - k(n) is nondecreasing: ``cycle_runs_past`` answers False from the whole node count before
    it counts a PreFilterResult's fewer candidates (no k + 1 feasible among all: none among fewer)."""
    beyond = [n - num_feasible_nodes_to_find(n) for n in range(20_001)]
    assert all(a <= b for a, b in zip(beyond, beyond[1:])) and beyond[101] == 1


def _job_on_n1(inst, t: int, lands: bool) -> None:
    """explicit's answer for job on n1: a witness that replays, or a certificate that re-checks."""
    target = Query((frozenset({(t, 0)}),))
    result = make_engine("explicit").check(inst, target)
    assert result.verdict is (Verdict.DEPLOYABLE if lands else Verdict.NOT_DEPLOYABLE)
    if lands:
        semantics.replay(inst, result.trace, target)
    else:
        assert result.certificate.check(inst, target)[0]


def _decided_exactly_on_n1(inst, report, t: int, sigma, lands: bool) -> None:
    """n1's verdict (a fit, or DynamicResources' error on another node aborting the cycle), unmarked,
    and explicit's evidence for it."""
    verdict = semantics.node_failure(inst, t, 0, sigma)
    assert (verdict is None) is lands
    if not lands:
        assert verdict.plugin == DRA and "on node" in verdict.reason
    assert not [c for c in report.caveats.get("default/job", []) if "numFeasibleNodesToFind" in c]
    _job_on_n1(inst, t, lands)


# gpus among 117 extra nodes (120 in all, k = 100) -> whether job lands on n1 despite n3's error
BOUNDARY = {5: False, 99: False, 100: True, 117: True}


@pytest.mark.parametrize("gpus", list(BOUNDARY))
def test_above_100_nodes_the_abort_holds_iff_no_run_stops_before_the_erring_node(gpus):
    """120 nodes, one zone: k = ``numFeasibleNodesToFind`` = 100, and the scan cancels only once the
    k + 1st feasible node is counted. With 1 + gpus feasible nodes <= k (few, or exactly k at the
    boundary) every run evaluates n3 and the cycle aborts; with k + 1 some run (erring node last in its
    zone, start at the list's head) stops first and job lands on n1 and on every other feasible node.
    One zone: any order is the scheduler's, so the answer is exact and carries no mark.

    kso's variant (``KSO``) cannot sample these runs: it filters every node in its own order and stops
    on the first error, as a cycle with fewer than 101 nodes does (kube-scheduler's
    ``findNodesThatPassFilters`` with ``numFeasibleNodesToFind``, ``nextStartNodeIndex`` and the
    parallel ``Until`` cancelled at ``length > numNodesToFind`` is what this test writes in); an
    error from a node filtered before that cancel is reported (``errCh.ReceiveError``)."""
    lands = BOUNDARY[gpus]
    inst, report = load_kubernetes_documents(_base() + _nodes(117, gpus), "<abort>")
    t, sigma = inst.type_index("default/job"), inst.initial_config()
    assert len(inst.nodes) == 120 and num_feasible_nodes_to_find(120) == 100
    feasible = [n for n in range(120) if semantics.filter_failure(inst, t, n, sigma) is None]
    assert len(feasible) == 1 + gpus
    assert semantics.node_failure(inst, t, 2, sigma).reasons == ERROR[1]   # n3: its own error either way
    verdicts = [semantics.node_failure(inst, t, n, sigma) for n in feasible]
    if lands:
        assert verdicts == [None] * len(feasible) and semantics.cycle_abort(inst, t, sigma) is None
    else:
        assert all(v.plugin == DRA and "on node n3" in v.reason for v in verdicts)
    assert not [c for c in report.caveats.get("default/job", []) if "numFeasibleNodesToFind" in c]
    _job_on_n1(inst, t, lands)


@pytest.mark.parametrize("nodes,marked", [(100, False), (101, False), (102, False), (250, False), (300, False),
                                          (350, True)])
def test_several_zones_beyond_the_exact_search_are_marked(nodes, marked):
    """101 candidates cannot hold k + 1 = 101 feasible nodes besides n3: every node is evaluated (exact
    whatever the zones); from 102 on, with nodes in two zones, ``filter_runs`` decides the runs exactly
    within its bound (``exact_domain``), also where the parallel scan has more chunks than workers
    (250 nodes: 17 chunks for 16 workers; 300 too); 350 nodes in two zones of unequal size are beyond it: marked
    (``test_three_zones_past_sixteen_chunks_are_decided_exactly``: 300 in three equal zones are not)."""
    base = _base()
    for o in base:
        if o["kind"] == "Node":
            o["metadata"]["labels"] = {"topology.kubernetes.io/zone": "a"}
    inst, report = load_kubernetes_documents(base + _nodes(nodes - 3, 0, "b"), "<abort>")
    assert len(inst.nodes) == nodes
    said = [c for c in report.caveats.get("default/job", []) if "numFeasibleNodesToFind" in c]
    assert len(said) == int(marked)


def test_a_zone_of_erring_nodes_alone_is_passed_by_the_run_that_starts_after_it():
    """n3 (erring) alone in zone a, n1, n2 and 117 nodes in zone b, 101 of them feasible: every order
    interleaves n3 in the first round, so the run from the list's head may meet it; the run starting
    past it (erring nodes first in their zones) counts 101 feasible nodes first: job lands (exact: 120 nodes are in
    ``filter_runs.exact_domain``, no mark)."""
    base = _base()
    for o in base:
        if o["kind"] == "Node":
            o["metadata"]["labels"] = {"topology.kubernetes.io/zone": "a" if o["metadata"]["name"] == "n3" else "b"}
    inst, report = load_kubernetes_documents(base + _nodes(117, 100, "b"), "<abort>")
    t, sigma = inst.type_index("default/job"), inst.initial_config()
    assert semantics.node_failure(inst, t, 0, sigma) is None and semantics.cycle_abort(inst, t, sigma) is None
    inst, _ = load_kubernetes_documents(base + _nodes(117, 99, "b"), "<abort>")
    assert "on node n3" in semantics.node_failure(inst, t, 0, sigma).reason   # 100 feasible: every run meets n3


def test_the_matrix_fixpoint_method_hands_the_abort_to_the_cells():
    """The whole-system BDD fixpoint encodes no abort (nor DRA allocation state): the matrix asks the cells,
    whose explicit engine keeps job off n1 (and the fixpoint's decline is said in the stats)."""
    from symreach.solvers.matrix import matrix_table

    inst, _ = load_kubernetes_documents(_base(), "<abort>")
    m = matrix_table(inst, method="fixpoint")
    job = inst.type_index("default/job")
    assert [m.cells[(job, n)] for n in range(3)] == ["not-deployable"] * 3
    assert "declined" in m.stats["fixpoint"]


def _shared_pool() -> list[dict]:
    """One pool of two slices for every node: slice a's device has numa 0, slice b's none."""
    def piece(name: str, device: str, attributes: dict) -> dict:
        return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": name},
                "spec": {"driver": "gpu.example.com", "allNodes": True, "devices": [{"name": device, "attributes": attributes}],
                         "pool": {"name": "shared", "generation": 1, "resourceSliceCount": 2}}}
    keep = [o for o in _base() if o["kind"] in ("Node", "DeviceClass", "ResourceClaim", "Pod") and o["metadata"]["name"] != "n3"]
    return keep + [piece("a", "d0", {"numa": {"int": 0}}), piece("b", "d1", {"model": {"string": "t4"}})]


def test_a_slice_order_shared_by_nodes_is_exact_here():
    """Slice a first: job fits n1 and n2; b first: the runtime error on both (the cycle aborts). The slices
    are listed once per cycle for every node, the model draws their order per node: the fit stands for
    one run (slice a first, for both nodes), so the answer is exact and unmarked (``dra_slice_orders``)."""
    from benchmarks.kso_dra_agreement import symreach_dra

    ours = symreach_dra(any_state(_shared_pool(), "default/job"))
    assert ours.verdicts == {"n1": None, "n2": None}
    assert ours.possible == {n: {None, ERROR} for n in ("n1", "n2")}
    assert not [c for c in ours.caveats if "once per cycle" in c]


@pytest.mark.skipif(not os.access(VARIANT, os.X_OK), reason="the kso variant with DRA is not built here")
def test_the_variant_gives_a_listed_outcome_for_the_shared_slices():
    got = kso_dra_verdicts(any_state(_shared_pool(), "default/job"), VARIANT)
    assert got in ({"n1": None, "n2": None}, {"n1": ERROR, "n2": ERROR})


V1 = """version: 1
semantics: kubernetes
nodes: [{name: n1, capacity: {cpu: 2, pods: 10}}, {name: n2, capacity: {cpu: 1, pods: 10}}]
podTypes:
- name: p
  requests: {cpu: 1}
  dra: {filter: [{node: n2, plugin: DynamicResources, reasons: ['running "DynamicResources" filter plugin: boom']}]}
%s"""


@pytest.mark.parametrize("filler,verdict", [("- name: q\n  requests: {cpu: 1}\n", Verdict.DEPLOYABLE),
                                            ("", Verdict.NOT_DEPLOYABLE)])
def test_a_v1_error_verdict_without_allocation_state(filler, verdict):
    """A v1 file's Filter reason in the error wording is an error status (``loader.dra``): no DRA group,
    yet the abort is dynamic (q filling n2 lifts it), so every engine but explicit declines and auto
    routes there."""
    from symreach.loader import load_text

    inst = load_text(V1 % filler, "<v1>")
    assert not inst.binding_groups and inst.filter_errors == {0: frozenset({1})}
    target = Query((frozenset({(0, 0)}),))
    assert {make_engine(e).check(inst, target).verdict for e in ("explicit", "auto")} == {verdict}
    for engine in ("bdd", "ic3", "lazy"):
        result = make_engine(engine).check(inst, target)
        assert result.verdict is Verdict.UNKNOWN and "abort" in result.reason, engine


def _sequential_runs(zones: dict[str, tuple[int, int, int]], own: str, k: int) -> bool:
    """Brute force over every node order the scheduler's node tree can list (each zone's nodes in any
    order, zones in any order, interleaved round robin as ``nodeTree.list``) and every start index:
    does one worker filtering the list alone count k + 1 feasible nodes, one of own's among the first
    k, before an erring node?"""
    from itertools import permutations

    kinds = {z: "F" * f + "O" * o + "R" * r for z, (f, o, r) in zones.items()}
    for zone_order in permutations(zones):
        for per_zone in _product([sorted(set(permutations(kinds[z]))) for z in zone_order]):
            listed = [(zone_order[i], seq[j]) for j in range(max(map(len, per_zone), default=0))
                      for i, seq in enumerate(per_zone) if j < len(seq)]
            for start in range(len(listed)):
                found = []
                for zone, kind in listed[start:] + listed[:start]:
                    if kind == "R":
                        break
                    if kind == "F":
                        found.append(zone)
                    if len(found) > k:
                        if own in found[:k]:
                            return True
                        break
    return False


def _product(choices):
    from itertools import product

    return product(*choices)


def test_the_constructed_runs_exist_and_one_zone_is_exact():
    """Every (feasible, others, erring) split of up to 6 nodes over one or two zones, k = 1..3 (the
    scheduler's k is at least 100; the arithmetic does not depend on it): ``zone_runs_past`` says True
    only where a brute-forced sequential run misses every erring node (sound: the pod really lands),
    equals it with one zone (exact, as any run needs k + 1 feasible nodes, asserted too)."""
    from itertools import product

    checked = exact = 0
    splits = [s for s in product(range(4), range(2), range(3)) if sum(s) <= 4]
    for k in (1, 2, 3):
        for a in splits:
            for b in [None] + splits:
                zones = {"a": a} if b is None else {"a": a, "b": b}
                if not any(r for _, _, r in zones.values()) or a[0] == 0 or sum(map(sum, zones.values())) > 6:
                    continue
                ours = semantics.zone_runs_past(zones, "a", k)
                brute = _sequential_runs(zones, "a", k)
                assert not ours or brute, (zones, k)
                assert not brute or sum(f for f, _, _ in zones.values()) > k
                if b is None:
                    assert ours == brute, (zones, k)
                    exact += 1
                checked += 1
    assert checked > 300 and exact >= 20


def _erring(count: int, zone: str) -> list[dict]:
    """count nodes e0.. like n3: 2 CPUs and a GPU without the numa attribute (the allocator errs)."""
    out = []
    for i in range(count):
        out.append({"apiVersion": "v1", "kind": "Node",
                    "metadata": {"name": f"e{i}", "labels": {"topology.kubernetes.io/zone": zone}},
                    "status": {"allocatable": {"cpu": "2", "memory": "8Gi", "pods": "10"}}})
        out.append({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": f"e{i}-gpu"},
                    "spec": {"driver": "gpu.example.com", "nodeName": f"e{i}", "devices": [
                        {"name": "g", "attributes": {"model": {"string": "t4"}}}],
                        "pool": {"name": f"e{i}", "generation": 1, "resourceSliceCount": 1}}})
    return out


def _two_zones(gpus_a: int, erring_a: int, gpus_b: int) -> list[dict]:
    """n1 (fits), n2 (no GPU), n3 (errs) and ``gpus_a`` GPU nodes and ``erring_a`` erring nodes in zone a;
    ``gpus_b`` GPU nodes in zone b (named b-m0..)."""
    base = _base()
    for o in base:
        if o["kind"] == "Node":
            o["metadata"]["labels"] = {"topology.kubernetes.io/zone": "a"}
    other = _nodes(gpus_b, gpus_b, "b")
    for o in other:
        o["metadata"]["name"] = "b-" + o["metadata"]["name"]
        if o["kind"] == "ResourceSlice":
            o["spec"]["nodeName"] = "b-" + o["spec"]["nodeName"]
            o["spec"]["pool"]["name"] = "b-" + o["spec"]["pool"]["name"]
    return base + _nodes(gpus_a, gpus_a, "a") + _erring(erring_a, "a") + other


# (GPU nodes in a besides n1, erring nodes in a besides n3, GPU nodes in b) -> job lands on n1
TWO_ZONES = {(39, 2, 61): True, (0, 5, 101): False}


@pytest.mark.parametrize("split", list(TWO_ZONES))
def test_two_zones_above_100_nodes_are_decided_exactly(split):
    """Zone a: 40 feasible nodes, n2, 3 erring; zone b: 61 feasible (105 nodes, k = 100, 7 chunks of 15
    for 7 workers). The two constructed runs of ``zone_runs_past`` both meet an erring node (the old
    answer: not deployable, marked); ``filter_runs`` finds the run (erring nodes last in zone a, held
    back in the chunk suffixes of workers that stall while the others count 101 feasible nodes): job lands
    on n1, no mark. Zone a with n1, n2 and 6 erring, zone b 101 feasible (109 nodes, one feasible node
    to spare): every run meets an erring node or drops n1, exactly (no mark either)."""
    lands = TWO_ZONES[split]
    inst, report = load_kubernetes_documents(_two_zones(*split), "<abort>")
    t, sigma = inst.type_index("default/job"), inst.initial_config()
    k = num_feasible_nodes_to_find(len(inst.nodes))
    feasible = [n for n in range(len(inst.nodes)) if semantics.filter_failure(inst, t, n, sigma) is None]
    assert len(feasible) == 1 + split[0] + split[2] and len(feasible) > k
    zones = {"a": (1 + split[0], 1, 1 + split[1]), "b": (split[2], 0, 0)}
    assert not semantics.zone_runs_past(zones, "a", k)   # the old constructed runs: too strict
    _decided_exactly_on_n1(inst, report, t, sigma, lands)


def _zone(prefix: str, zone: str, gpus: int, others: int, erring: int) -> list[dict]:
    """Nodes of zone ``zone`` named ``prefix``-...: ``gpus`` where job fits, ``others`` without a GPU,
    ``erring`` where the allocator errs."""
    out = _nodes(gpus + others, gpus, zone) + _erring(erring, zone)
    for o in out:
        o["metadata"]["name"] = f"{prefix}-{o['metadata']['name']}"
        if o["kind"] == "ResourceSlice":
            o["spec"]["nodeName"] = f"{prefix}-{o['spec']['nodeName']}"
            o["spec"]["pool"]["name"] = f"{prefix}-{o['spec']['pool']['name']}"
    return out


# erring nodes in zone a besides n3 -> job lands on n1
THREE_ZONES = {44: True, 49: False}


@pytest.mark.parametrize("erring", list(THREE_ZONES))
def test_three_zones_past_sixteen_chunks_are_decided_exactly(erring):
    """300 nodes (k = 144, 18 chunks of 17 for 16 workers: one worker takes two in turn). Zone a: n1
    and 24 more where job fits, n2 and 29 without a GPU, n3 and 44 erring nodes; zone b: 98 fit, 2 err;
    zone c: 100 fit. The two constructed runs of ``zone_runs_past`` meet an erring node (the old
    answer: not deployable, marked: more chunks than workers); ``filter_runs`` finds a run (zone a's
    erring nodes left in the tail and in the suffixes of chunks whose workers stall): job lands on n1,
    no mark. With 5 more erring nodes in a (fewer feasible ones) no run misses them all: the abort
    holds, exactly (no mark either). ``tests/test_filter_runs.py`` proves the search on small splits."""
    lands = THREE_ZONES[erring]
    base = _base()
    for o in base:
        if o["kind"] == "Node":
            o["metadata"]["labels"] = {"topology.kubernetes.io/zone": "a"}
    gpus = 24 - (erring - 44)
    docs = base + _zone("a", "a", gpus, 29, erring) + _zone("b", "b", 98, 0, 2) + _zone("c", "c", 100, 0, 0)
    inst, report = load_kubernetes_documents(docs, "<abort>")
    t, sigma = inst.type_index("default/job"), inst.initial_config()
    k = num_feasible_nodes_to_find(len(inst.nodes))
    assert len(inst.nodes) == 300 and k == 144
    zones = {"a": (1 + gpus, 30, 1 + erring), "b": (98, 0, 2), "c": (100, 0, 0)}
    feasible = [n for n in range(300) if semantics.filter_failure(inst, t, n, sigma) is None]
    assert len(feasible) == sum(f for f, _, _ in zones.values())
    assert not semantics.zone_runs_past(zones, "a", k) and not semantics.zone_runs_past(zones, None, k)
    _decided_exactly_on_n1(inst, report, t, sigma, lands)


# nodes of ``_two_zones(0, 5, 101)`` the job's PreFilterResult leaves out -> job lands on n1
PREFILTERED = {(): True, ("n2",): True, ("n2", "b-m0", "b-m1"): False}


@pytest.mark.parametrize("left_out", list(PREFILTERED))
def test_a_prefilter_result_is_one_zone_with_k_from_its_names(left_out):
    """The 109 nodes of the state that aborts above, job restricted by ``matchFields metadata.name In``
    (a term per name) to all but n2: the scheduler filters the 108 named nodes in Go map order (any order: one zone), k =
    100 from their count, and 102 are feasible: a run counts 101 before an erring node, job lands on n1
    (where the zones' order alone aborts). Leaving out two feasible nodes of b too: 100 feasible, every
    run filters every candidate: the abort holds. Naming every node is a PreFilterResult too (map
    order, not the zones' round robin: ``PodType.prefilter_named``): 102 of 109 feasible, job lands.
    Exact each way: no mark."""
    docs = _two_zones(0, 5, 101)
    names = [o["metadata"]["name"] for o in docs if o["kind"] == "Node" and o["metadata"]["name"] not in left_out]
    for o in docs:
        if o["kind"] == "Pod":
            o["spec"]["affinity"] = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": [name]}]}
                                      for name in names]}}}
    lands = PREFILTERED[left_out]
    inst, report = load_kubernetes_documents(docs, "<abort>")
    t, sigma = inst.type_index("default/job"), inst.initial_config()
    assert (semantics.node_failure(inst, t, 0, sigma) is None) is lands
    assert (semantics.cycle_abort(inst, t, sigma) is None) is lands
    assert not [c for c in report.caveats.get("default/job", []) if "numFeasibleNodesToFind" in c]
    _job_on_n1(inst, t, lands)


# 3 equal zones of 136 nodes: the first count of 3 equal zones past the default filter-runs guard
PAST = 408


def _three_equal(nodes: int, erring: int) -> tuple[list[dict], dict[str, tuple[int, int, int]]]:
    """``nodes`` in zones a, b, c of equal size: zone a n1 and GPU nodes (job fits), n2 and 29 without
    a GPU, n3 and ``erring`` erring nodes; b 2 erring nodes, the rest fit; c every node fits. With
    the zones' (feasible, others, erring) counts."""
    size = nodes // 3
    gpus = size - 32 - erring
    base = _base()
    for o in base:
        if o["kind"] == "Node":
            o["metadata"]["labels"] = {"topology.kubernetes.io/zone": "a"}
    docs = base + _zone("a", "a", gpus, 29, erring) + _zone("b", "b", size - 2, 0, 2) + _zone("c", "c", size, 0, 0)
    return docs, {"a": (1 + gpus, 30, 1 + erring), "b": (size - 2, 0, 2), "c": (size, 0, 0)}


def test_a_raised_search_budget_decides_the_runs_past_the_default_bound():
    """408 nodes in 3 equal zones (k = 191, 21 chunks of 20): past the default ``filter-runs`` guard
    (``filter_runs.exact_domain``; 405 are within), so the type is marked, naming the guard and the
    factor that raises it (2). Loaded under that budget: no mark, the instance records the guard's
    value (and its digest the budget), and the solve's search reads it: job lands on n1 exactly as
    ``runs_past`` with no bound says (zone a's 66 erring nodes: only the exact search finds the run,
    ``tests/test_filter_runs.py`` proves it against the brute force). A budget lowering the guard to
    1,000 steps marks the type too, and the solve, reading that value, falls back to the constructed
    runs (job does not land: too strict, as the mark says)."""
    from symreach import filter_runs, search_budget
    from symreach.certify.digest import instance_digest
    from symreach.search_budget import Budget

    k, sizes = num_feasible_nodes_to_find(PAST), [PAST // 3] * 3
    assert filter_runs.exact_domain(PAST - 3, 3, num_feasible_nodes_to_find(PAST - 3), sizes=[PAST // 3 - 1] * 3)
    assert not filter_runs.exact_domain(PAST, 3, k, sizes=sizes)
    factor = -(-filter_runs.work(PAST, 3, k, sizes=sizes) // filter_runs.MAX_WORK)
    docs, zones = _three_equal(PAST, 65)
    exact = filter_runs.runs_past(tuple(zones.values()), 0, k, filter_runs.chunk_size(PAST), filter_runs.PARALLELISM,
                                  bound=10 ** 100)
    assert exact and not semantics.zone_runs_past(zones, "a", k)

    def marks(report) -> list[str]:
        return [c for c in report.caveats.get("default/job", []) if "numFeasibleNodesToFind" in c]

    default, report = load_kubernetes_documents(docs, "<abort>")
    assert [m.split("; the model")[0] for m in marks(report)] == [
        "DRA: with more than 100 candidate nodes in several zones the scheduler stops filtering after "
        "numFeasibleNodesToFind feasible nodes in an order the input does not give, so a run may not evaluate a "
        "node where the allocator errs"]
    assert marks(report)[0].endswith(
        "the exact search of the runs of 408 nodes in 3 zones went past the search budget of 1,000,000,000 search "
        f"steps (filter-runs); a search budget of {factor} raises it") and factor == 2
    assert default.search_budget is None and default.filter_runs_work is None
    raised, report = load_kubernetes_documents(docs, "<abort>", budget=Budget(factor))
    assert not marks(report) and raised.search_budget == "2" and raised.filter_runs_work == 2 * filter_runs.MAX_WORK
    assert instance_digest(raised) != instance_digest(default)
    t, sigma = raised.type_index("default/job"), raised.initial_config()
    assert len(raised.nodes) == PAST and (semantics.node_failure(raised, t, 0, sigma) is None) is exact
    _job_on_n1(raised, t, exact)
    low = Budget(limits={search_budget.FILTER_RUNS: 1000})
    lowered, report = load_kubernetes_documents(docs, "<abort>", budget=low)
    assert len(marks(report)) == 1 and lowered.filter_runs_work == 1000
    assert "on node" in semantics.node_failure(lowered, t, 0, sigma).reason
