"""A refusal whose reason the scheduler's own run decides: the answer is the set of reasons.

DynamicResources too: the allocator visits pools in Go map order (drawn per node), so on ``dra.yaml``
it errs with the error of the pool it meets first; the kso variant with the plugin (``KSO_DRA``)
was asked 32 times (13:24 UTC, load 5.2): ``DRA_RUNS``.

VolumeBinding's ``findMatchingVolumes`` takes the first smallest PV of the informer's list, in Go
map order (random per attempt). In the states here n1 is refused in every run, but which plugin
and reason the scheduler reports depends on that order. kso (v1.35, shared/tools/kso) was asked 64
times about each (13:16 UTC, load 4.8); the verdicts it gave and how often are written in
(``KSO_RUNS``). symreach's answer is the set of verdicts some run gives (``Failure.alternatives``,
v1 ``otherRuns``), equal to kso's, with no caveat; ``explain`` and ``where`` show the set.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from benchmarks.kso_harness import any_state, find_kso, kso_verdicts_single, normalized
from benchmarks.kso_order import judge, order_nodes, seen, symreach_runs
from symreach import semantics
from symreach.cli import cli
from symreach.errors import InputError
from symreach.frontends.kubernetes import kubernetes_to_v1, load_kubernetes_documents
from symreach.loader import load_text
from symreach.report.explain import ONE_OF

DATA = Path(__file__).parent / "data" / "reason_sets"
VB, VZ = "VolumeBinding", "VolumeZone"
BIND = (VB, ("node(s) didn't find available persistent volumes to bind",))
SPACE = (VB, ("node(s) did not have enough free storage",))
ZONE = (VZ, ("node(s) had no available volume zone",))
AFFINITY = ("InterPodAffinity", ("node(s) didn't match pod affinity rules",))
KSO_RUNS = {"zone": {BIND: 57, ZONE: 7}, "space": {SPACE: 56, BIND: 8},
            "affinity": {BIND: 60, AFFINITY: 4}}   # 13:41 UTC, load 3.3
DRA = "DynamicResources"
_CEL = 'running "DynamicResources" filter plugin: claim default/order: selector #0: CEL runtime error: '
DRA_RUNS = {(DRA, (_CEL + "no such key: numa",)): 29, (DRA, (_CEL + "no such overload",)): 3}


def state(name: str):
    return any_state(list(yaml.safe_load_all((DATA / f"{name}.yaml").read_text())), "default/incoming")


@pytest.mark.parametrize("name", sorted(KSO_RUNS))
def test_the_set_of_reasons_is_the_one_kso_gives_over_its_runs(name):
    ours = symreach_runs(state(name))["n1"]
    theirs = set(KSO_RUNS[name])
    assert {normalized(v) for v in ours} == theirs and judge(ours, theirs) and seen(ours, theirs) == 2
    assert order_nodes(state(name)) == ["n1"]
    _, report = load_kubernetes_documents(copy.deepcopy(state(name).objects), "<state>")
    assert report.caveats == {}   # nothing left to mark: the set is complete


def test_a_set_missing_a_reason_kso_gives_is_a_disagreement():
    assert not judge({BIND}, {BIND, ZONE}) and not judge({BIND, ZONE}, {BIND, None}) and judge({None}, {None, BIND})


@pytest.mark.skipif(find_kso() is None, reason="kso is not built here")
def test_kso_now_gives_only_reasons_of_the_set():
    for name in KSO_RUNS:
        ours = symreach_runs(state(name))["n1"]
        for _ in range(4):
            assert normalized(kso_verdicts_single(state(name), find_kso())["n1"]) in ours


def test_explain_check_why_and_where_show_the_set():
    path = str(DATA / "zone.yaml")
    text = CliRunner().invoke(cli, ["explain", path, "--pod", "default/incoming"]).output
    assert f"n1  {ONE_OF}{BIND[1][0]}; {ZONE[1][0]}  [static" in text
    data = json.loads(CliRunner().invoke(cli, ["explain", path, "--pod", "default/incoming", "-o", "json"]).output)
    [node] = data["pods"][0]["nodes"]
    assert node["reason"] == BIND[1][0] and node["by_run"] == [list(BIND[1]), list(ZONE[1])]
    why = CliRunner().invoke(cli, ["check", path, "--pod", "default/incoming", "--node", "n1", "--why"]).output
    assert f"default/incoming on n1: with no other pod running, {ONE_OF}{BIND[1][0]}; {ZONE[1][0]}" in why
    where = json.loads(CliRunner().invoke(cli, ["where", path, "--pod", "default/incoming", "-o", "json"]).output)
    assert where["pools"][0]["reasons"]["n1"] == f"{ONE_OF}{BIND[1][0]}; {ZONE[1][0]}"


def test_other_runs_round_trip_through_format_v1_and_bad_ones_are_refused():
    v1, _ = kubernetes_to_v1(list(yaml.safe_load_all((DATA / "space.yaml").read_text())), "space.yaml")
    [entry] = next(p for p in v1["podTypes"] if p["name"] == "default/incoming")["volumes"]["filter"]
    assert entry["otherRuns"] == [{"plugin": VB, "reasons": list(BIND[1])}]
    inst = load_text(yaml.safe_dump(v1), "<v1>")
    failure = semantics.node_failure(inst, inst.type_index("default/incoming"), 0, inst.initial_config())
    assert failure.alternatives == (SPACE, BIND)
    entry["otherRuns"].append({"plugin": VB, "reasons": list(SPACE[1])})
    with pytest.raises(InputError, match="otherRuns"):
        load_text(yaml.safe_dump(v1), "<v1>")


def test_dra_errors_the_pool_order_decides_are_a_set_and_abort_the_cycle_with_one_of_them():
    from benchmarks.kso_dra_agreement import symreach_dra
    from benchmarks.kso_dra_verdicts import reason_sets

    dra = any_state(list(yaml.safe_load_all((DATA / "dra.yaml").read_text())), "default/order")
    assert symreach_runs(dra)["n1"] == set(DRA_RUNS)
    ours = symreach_dra(dra)
    assert reason_sets(ours) == {"n1": set(DRA_RUNS)} and ours.errors == {r[1][0] for r in DRA_RUNS}
    assert not ours.caveats
    data = json.loads(CliRunner().invoke(cli, ["explain", str(DATA / "dra.yaml"), "--pod", "default/order",
                                               "-o", "json"]).output)
    pod = data["pods"][0]
    assert pod["summary"].startswith(ONE_OF) and pod["nodes"][0]["by_run"] == [list(r[1]) for r in DRA_RUNS]


def test_dra_other_runs_in_format_v1():
    v1, _ = kubernetes_to_v1(list(yaml.safe_load_all((DATA / "dra.yaml").read_text())), "dra.yaml")
    [entry] = next(p for p in v1["podTypes"] if p["name"] == "default/order")["dra"]["filter"]
    first, other = list(DRA_RUNS)
    assert (entry["reasons"], entry["otherRuns"]) == (list(first[1]), [{"plugin": DRA, "reasons": list(other[1])}])
    inst = load_text(yaml.safe_dump(v1), "<v1>")
    failure = semantics.node_failure(inst, inst.type_index("default/order"), 0, inst.initial_config())
    assert failure.alternatives == tuple(DRA_RUNS) and failure.text().startswith(ONE_OF)
    entry["otherRuns"] = [{"plugin": "VolumeZone", "reasons": ["x"]}]
    with pytest.raises(InputError, match="otherRuns"):
        load_text(yaml.safe_dump(v1), "<v1>")


def test_which_erring_node_aborts_the_cycle_is_the_run_s_the_summary_names_each():
    """n2 added, whose only pool's device lacks numa: every run aborts, on n1's error (either) or n2's."""
    from symreach.report.explain import explain

    docs = list(yaml.safe_load_all((DATA / "dra.yaml").read_text()))
    n2, pool = copy.deepcopy(docs[0]), copy.deepcopy(docs[2])
    n2["metadata"] = {"name": "n2", "labels": {"kubernetes.io/hostname": "n2"}}
    pool["metadata"]["name"], pool["spec"]["nodeName"], pool["spec"]["pool"]["name"] = "s-c", "n2", "c"
    inst, _ = load_kubernetes_documents(docs + [n2, pool], "<state>")
    summary = explain(inst, inst.type_index("default/order")).failed_scheduling()
    said = [f"{why[0]} (on node {node}: the error aborts the pod's whole scheduling cycle, no node is chosen)"
            for node, why in [("n1", first[1]) for first in DRA_RUNS] + [("n2", list(DRA_RUNS)[0][1])]]
    assert summary == ONE_OF + "; ".join(said)


def test_a_later_plugin_s_refusal_where_some_run_passes_the_volume_plugins_is_one_of_a_set():
    """``affinity.yaml``: the runs where the volume plugins pass meet InterPodAffinity's refusal; the
    others VolumeBinding's. v1 ``otherRunRefusals`` carries the latter; a bad entry is refused."""
    v1, _ = kubernetes_to_v1(list(yaml.safe_load_all((DATA / "affinity.yaml").read_text())), "affinity.yaml")
    volumes = next(p for p in v1["podTypes"] if p["name"] == "default/incoming")["volumes"]
    assert volumes["otherRunRefusals"] == [{"node": "n1", "plugin": VB, "reasons": list(BIND[1])}]
    assert "filter" not in volumes
    inst = load_text(yaml.safe_dump(v1), "<v1>")
    failure = semantics.node_failure(inst, inst.type_index("default/incoming"), 0, inst.initial_config())
    assert failure.alternatives == (AFFINITY, BIND)
    volumes["otherRunRefusals"].append(volumes["otherRunRefusals"][0])
    with pytest.raises(InputError, match="otherRunRefusals"):
        load_text(yaml.safe_dump(v1), "<v1>")


def test_the_seed_706_walk_probe_s_refusal_on_n2_is_the_set_kso_gave():
    """``test_kso_walk_order``'s probe: n2 refused in all 64 kso runs, with both VolumeBinding reasons in
    57 and the node-affinity one alone in 7; symreach's set is those two."""
    from tests.test_kso_walk_order import PROBE_RUNS, probe_state

    assert symreach_runs(probe_state())["n2"] == {outcome["n2"] for outcome, _ in PROBE_RUNS}


def test_an_error_some_orders_only_meet_is_one_of_the_summaries_the_scheduler_may_give():
    """``test_dra_features._order_state``: pool a first fits, pool b first errs (the variant gives both).
    n1 fits (some run does); the FailedScheduling summary is one of 1/1 available or the abort (v1
    ``otherRunRefusals`` of ``dra``)."""
    from symreach.report.explain import explain
    from tests.test_dra_features import ORDER_ERROR, _order_state

    inst, _ = load_kubernetes_documents(copy.deepcopy(_order_state().objects), "<state>")
    t = inst.type_index("default/order")
    assert semantics.node_failure(inst, t, 0, inst.initial_config()) is None
    expl = explain(inst, t)
    assert expl.feasible_now == ("n1",) and expl.aborted is None
    assert expl.failed_scheduling() == (f"{ONE_OF}1/1 nodes are available; {ORDER_ERROR} (on node n1: the error "
                                        "aborts the pod's whole scheduling cycle, no node is chosen)")
