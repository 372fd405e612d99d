"""Which of several equal-size Available PVs a claim takes: the scheduler's informer order, modelled
existentially (``k8s_volume_matching``).

``volume.FindMatchingVolume`` keeps the first smallest PV of ``PVAssumeCache.ListPVs``, whose order
is a Go map's (random per call). The real scheduler answers each attempt at random, so each state
here was asked of kso many times and the outcomes it gave are written in (``KSO_RUNS``): symreach
fits on a node iff some kso run fitted there, and refuses iff none did. Deployments have one
successor per distinct outcome; the witness names the PV each step binds (``Step.binds``); replay
and the explicit certificate accept every choice the scheduler could make and refuse others.
"""

from __future__ import annotations

import copy
import json

import pytest
import yaml

from benchmarks.kso_harness import any_state, find_kso, kso_verdicts_single, normalized, symreach_verdicts
from benchmarks.kso_replay import with_bindings
from symreach import semantics
from symreach.certify.explicit_states import check_certificate
from symreach.frontends.kubernetes import load_kubernetes_documents
from symreach.model import Query
from symreach.result import DEPLOY, Step, Verdict
from symreach.solvers.explicit import ExplicitEngine
from tests.test_kso_classes import C, node, pod
from tests.test_kso_classes_27 import LOCAL_N1, SC_WFFC, VB, pv, pvc, uses

BIND_CONFLICT = (VB, ("node(s) didn't find available persistent volumes to bind",))
ZONE = "topology.kubernetes.io/zone"


def informer_state():
    """Claims a (ReadWriteOnce) and b (ReadWriteMany), PVs pv-a (both modes) and pv-b (ReadWriteOnce)
    of equal size on n1: b finds a PV only if a took pv-b."""
    docs = [node("n1"), SC_WFFC, pv("pv-a", LOCAL_N1).replace("[ReadWriteOnce]", "[ReadWriteOnce, ReadWriteMany]"),
            pv("pv-b", LOCAL_N1), pvc("a"), pvc("b").replace("[ReadWriteOnce]", "[ReadWriteMany]"),
            pod("incoming", C + uses("a", "b"))]
    return any_state([yaml.safe_load(d) for d in docs], "default/incoming")


def competing_state():
    """Claims a and b of one size; b selects PVs labelled tier=fast. pv-fast and pv-plain fit both
    otherwise: only a -> pv-plain, b -> pv-fast works."""
    docs = [node("n1"), SC_WFFC, pv("pv-fast", LOCAL_N1, meta=", labels: {tier: fast}"), pv("pv-plain", LOCAL_N1),
            pvc("a"), pvc("b", ", selector: {matchLabels: {tier: fast}}"), pod("incoming", C + uses("a", "b"))]
    return any_state([yaml.safe_load(d) for d in docs], "default/incoming")


def _zone_node(name: str) -> str:
    return node(name, labels=f"{{kubernetes.io/hostname: {name}, {ZONE}: z1}}")


CACHE = ("  nodeSelector: {kubernetes.io/hostname: n2}\n  affinity: {podAffinity: {requiredDuringSchedulingIgnoredDuring"
         f"Execution: [{{labelSelector: {{matchLabels: {{app: db}}}}, topologyKey: {ZONE}}}]}}}}\n")


def later_step_docs() -> list[dict]:
    """db (pinned to n1) binds data; cache (pinned to n2, next to a db pod in the zone) binds scratch.
    pv-any (listed first) fits both nodes, pv-n1 only n1: cache can follow only if db's data took pv-n1.
    pv-big (larger) is never taken while a smaller one fits."""
    docs = [_zone_node("n1"), _zone_node("n2"), SC_WFFC, pv("pv-any", ", storageClassName: local"),
            pv("pv-n1", LOCAL_N1), pv("pv-big", LOCAL_N1).replace("10Gi", "20Gi"), pvc("data"), pvc("scratch"),
            pod("db", "  nodeSelector: {kubernetes.io/hostname: n1}\n" + C + uses("data"), meta=", labels: {app: db}"),
            pod("cache", CACHE + C + uses("scratch"))]
    return [yaml.safe_load(d) for d in docs]


def later_step_state():
    return any_state(later_step_docs(), "default/db")


def after_db(choice_pv: str):
    """The state kso reads once db runs on n1 with data bound to ``choice_pv``; cache pending."""
    inst, _ = load_kubernetes_documents(copy.deepcopy(later_step_docs()), "<s>")
    db, n1 = inst.type_index("default/db"), inst.node_index("n1")
    sigma = next(s for k, s in semantics.deploys(inst, inst.initial_config(), db, n1)
                 if semantics.choice_text(inst, inst.initial_config(), db, n1, k).endswith(choice_pv))
    base = [o for o in later_step_docs() if o["kind"] != "Pod"]
    pods = [o for o in later_step_docs() if o["kind"] == "Pod"]
    running = copy.deepcopy(pods[0])
    running["spec"]["nodeName"] = "n1"
    return any_state(with_bindings(base, inst, sigma) + [running, pods[1]], "default/cache"), inst, sigma


REFUSED = BIND_CONFLICT
SELECTOR = ("NodeAffinity", ("node(s) didn't match Pod's node affinity/selector",))
# kso (v1.35.4, shared/tools/kso) asked 64 times about each state (10:18 UTC, load 1.7): the outcomes
# it gave (the pending pod's verdict per node) and how often.
KSO_RUNS = {
    "informer_state": {(("n1", REFUSED),): 56, (("n1", None),): 8},
    "competing_state": {(("n1", REFUSED),): 55, (("n1", None),): 9},
    "later_step_state": {(("n1", None), ("n2", SELECTOR)): 64},
    "after_db_any": {(("n1", SELECTOR), ("n2", REFUSED)): 64},
    "after_db_n1": {(("n1", SELECTOR), ("n2", None)): 64},
}


def after_db_any():
    return after_db("pv-any")[0]


def after_db_n1():
    return after_db("pv-n1")[0]


@pytest.mark.parametrize("name", sorted(KSO_RUNS))
def test_symreach_fits_where_some_kso_run_fits_and_refuses_where_none_does(name):
    """Existential over the scheduler's runs: fit iff some run fitted; a refusal is one kso gave."""
    ours = symreach_verdicts(globals()[name]())
    outcomes = [dict(outcome) for outcome in KSO_RUNS[name]]
    for node_name, verdict in ours.items():
        theirs = [outcome[node_name] for outcome in outcomes]
        if verdict is None:
            assert None in theirs, node_name
        else:
            assert None not in theirs and verdict in theirs, node_name


def test_informer_order_verdict_is_existential_and_unmarked():
    """kso refused 15 and admitted 1 of 16 runs (and the counts in ``KSO_RUNS`` of 64 more): some run
    of the scheduler fits, so the pod can reach n1; no caveat is left."""
    state = informer_state()
    assert symreach_verdicts(state) == {"n1": None}
    _, report = load_kubernetes_documents(state.objects, "<state>")
    assert report.caveats == {}


def test_two_claims_competing_for_two_pvs_bind_the_one_assignment_that_works():
    state = competing_state()
    assert symreach_verdicts(state) == {"n1": None}
    inst, report = load_kubernetes_documents(copy.deepcopy(state.objects), "<state>")
    assert report.caveats == {}
    t, n1, sigma0 = inst.type_index("default/incoming"), inst.node_index("n1"), inst.initial_config()
    [(choice, _)] = semantics.deploys(inst, sigma0, t, n1)
    assert choice is None and semantics.binding_note(inst, sigma0, t, n1) == (
        "binds claim default/a to PV pv-plain; binds claim default/b to PV pv-fast")


def test_the_witness_picks_the_pv_a_later_step_needs_and_the_other_choice_is_reachable():
    inst, report = load_kubernetes_documents(copy.deepcopy(later_step_docs()), "<s>")
    assert report.caveats == {}
    db, cache = inst.type_index("default/db"), inst.type_index("default/cache")
    n1, n2, sigma0 = inst.node_index("n1"), inst.node_index("n2"), inst.initial_config()
    # both choices are successors, the input order's (pv-any) first
    texts = [semantics.choice_text(inst, sigma0, db, n1, k) for k in semantics.binding_choices(inst, sigma0, db, n1)]
    assert texts == ["binds claim default/data to PV pv-any", "binds claim default/data to PV pv-n1"]
    result = ExplicitEngine().check(inst, Query((frozenset({(cache, n2)}),)))
    assert result.verdict is Verdict.DEPLOYABLE
    assert result.trace == (Step(DEPLOY, "default/db", "n1", binds="binds claim default/data to PV pv-n1"),
                            Step(DEPLOY, "default/cache", "n2"))
    semantics.replay(inst, result.trace)
    assert semantics.binding_notes(inst, result.trace) == [
        "binds claim default/data to PV pv-n1", "binds claim default/scratch to PV pv-any"]
    assert result.trace[0].to_json()["binds"] == "binds claim default/data to PV pv-n1"
    # the other choice: reachable, and there cache cannot follow (kso's answers: KSO_AFTER)
    for pv_name, expected in (("pv-any", {"n1": SELECTOR, "n2": BIND_CONFLICT}),
                              ("pv-n1", {"n1": SELECTOR, "n2": None})):
        _, _, sigma = after_db(pv_name)
        assert {m.name: _verdict(inst, cache, k, sigma) for k, m in enumerate(inst.nodes)} == expected
    forged = (Step(DEPLOY, "default/db", "n1", binds="binds claim default/data to PV pv-any"), result.trace[1])
    with pytest.raises(semantics.ReplayError, match="illegal"):
        semantics.replay(inst, forged)
    impossible = (Step(DEPLOY, "default/db", "n1", binds="binds claim default/data to PV pv-n2"),)
    with pytest.raises(semantics.ReplayError, match="cannot bind so there"):
        semantics.replay(inst, impossible)


def _verdict(inst, t, n, sigma):
    failure = semantics.node_failure(inst, t, n, sigma)
    return None if failure is None else (failure.plugin, failure.reasons)


def test_a_certificate_must_hold_every_choice_and_no_forged_binding():
    inst, _ = load_kubernetes_documents(copy.deepcopy(later_step_docs()), "<s>")
    cache, n1 = inst.type_index("default/cache"), inst.node_index("n1")
    result = ExplicitEngine().check(inst, Query((frozenset({(cache, n1)}),)))   # cache is pinned to n2
    assert result.verdict is Verdict.NOT_DEPLOYABLE
    cert = json.loads(result.certificate.dumps())
    assert check_certificate(inst, cert)[0]
    data = cert["claims"].index("default/data")
    rows = [i for i, bound in enumerate(cert["bound"]) if bound[data] == "PV pv-n1"]
    assert rows and len(rows) < len(cert["states"])
    dropped = dict(cert, states=[s for i, s in enumerate(cert["states"]) if i not in rows],
                   bound=[b for i, b in enumerate(cert["bound"]) if i not in rows])
    ok, why = check_certificate(inst, dropped)
    assert not ok and "not closed under deploying default/db on n1 (binds claim default/data to PV pv-n1)" in why
    scratch = cert["claims"].index("default/scratch")
    forged_row = list(cert["bound"][0])
    forged_row[scratch] = "PV pv-big"   # never the smallest PV that fits
    forged = dict(cert, states=cert["states"] + [cert["states"][0]], bound=cert["bound"] + [forged_row])
    ok, why = check_certificate(inst, forged)
    assert not ok and "unknown binding outcome" in why


KSO = find_kso()


def _kso_outcomes(state, runs: int) -> set:
    return {tuple((n, normalized(v)) for n, v in sorted(kso_verdicts_single(state, KSO).items()))
            for _ in range(runs)}


@pytest.mark.slow
@pytest.mark.skipif(KSO is None, reason="kso (shared/tools/kso) not available")
def test_kso_outcomes_are_as_written():
    """Re-asks kso (64 runs per state): every outcome it gives is one written in ``KSO_RUNS``."""
    for name, written in KSO_RUNS.items():
        assert _kso_outcomes(globals()[name](), 64) <= set(written)


@pytest.mark.parametrize("fmt", ["json", "yaml"])
def test_an_exported_witness_keeps_its_choices(tmp_path, fmt):
    """The trace files ``check --trace-out`` writes carry each step's binding (JSON ``binds``, a Pod
    annotation in YAML), so reading one back replays the same choices."""
    from click.testing import CliRunner

    from symreach.cli import cli
    from symreach.export import parse_exported_trace

    path, out = tmp_path / "later.yaml", tmp_path / f"trace.{fmt}"
    path.write_text(yaml.safe_dump_all(later_step_docs()))
    run = CliRunner().invoke(cli, ["check", str(path), "--pod", "default/cache", "--node", "n2", "--trace-out", str(out)])
    assert run.exit_code == 0, run.output
    steps = parse_exported_trace(out.read_text(), fmt)
    assert [s.binds for s in steps] == ["binds claim default/data to PV pv-n1", None]
    inst, _ = load_kubernetes_documents(copy.deepcopy(later_step_docs()), "<s>")
    semantics.replay(inst, steps)


def test_interchangeable_pvs_are_one_choice_and_a_step_may_name_any_free_one():
    """pv-1 and pv-2 differ only in their names, paths and a label no claim selects (VolumeZone reads
    zone and region labels only): one choice (the states name one free PV), no caveat; a witness
    naming pv-2, then pv-1, replays; naming pv-2 twice does not."""
    docs = [node("n1"), SC_WFFC, pv("pv-1", LOCAL_N1),
            pv("pv-2", LOCAL_N1.replace("/x", "/y"), meta=", labels: {owner: ops}"), pvc("a"), pvc("b"),
            pod("p", C + uses("a")), pod("q", C + uses("b"))]
    inst, report = load_kubernetes_documents([yaml.safe_load(d) for d in docs], "<s>")
    assert report.caveats == {} and inst.binding_groups[0].interchangeable == (frozenset({"pv-1", "pv-2"}),)
    p, q, n1, sigma0 = inst.type_index("default/p"), inst.type_index("default/q"), 0, inst.initial_config()
    assert [semantics.choice_text(inst, sigma0, p, n1, k) for k in semantics.binding_choices(inst, sigma0, p, n1)] \
        == ["binds claim default/a to PV pv-1"]
    swapped = (Step(DEPLOY, "default/p", "n1", binds="binds claim default/a to PV pv-2"),
               Step(DEPLOY, "default/q", "n1", binds="binds claim default/b to PV pv-1"))
    semantics.replay(inst, swapped)
    assert semantics.binding_notes(inst, swapped) == [s.binds for s in swapped]
    twice = (swapped[0], Step(DEPLOY, "default/q", "n1", binds="binds claim default/b to PV pv-2"))
    with pytest.raises(semantics.ReplayError, match="an earlier step took pv-2"):
        semantics.replay(inst, twice)


def test_a_certificate_may_name_interchangeable_pvs_either_way():
    """The explicit certificate's rows renamed within the class {pv-1, pv-2} are the same states for
    the checker; naming one PV for both claims is refused."""
    docs = [node("n1"), SC_WFFC, pv("pv-1", LOCAL_N1), pv("pv-2", LOCAL_N1.replace("/x", "/y")), pvc("a"), pvc("b"),
            pod("p", C + uses("a")), pod("q", C + uses("b")), pod("r", "  nodeSelector: {disk: none}\n" + C)]
    inst, _ = load_kubernetes_documents([yaml.safe_load(d) for d in docs], "<s>")
    result = ExplicitEngine().check(inst, Query((frozenset({(inst.type_index("default/r"), 0)}),)))
    assert result.verdict is Verdict.NOT_DEPLOYABLE
    cert = json.loads(result.certificate.dumps())
    swap = {"PV pv-1": "PV pv-2", "PV pv-2": "PV pv-1"}
    renamed = [[swap.get(o, o) for o in row] for row in cert["bound"]]
    # every row binding a claim; the joint bindings are 4 (a and b each name their own PV whatever
    # the order: ``k8s_volume_matching.Runs.own``), so these renamed rows are none of them
    assert sum(row != orig for row, orig in zip(renamed, cert["bound"])) == 8
    assert len(inst.binding_groups[0].states) == 4
    ok, why = check_certificate(inst, dict(cert, bound=renamed))
    assert ok, why
    both = [row for row in cert["bound"] if row.count(None) == 0][0]
    forged = dict(cert, bound=[["PV pv-1", "PV pv-1"] if row == both else row for row in cert["bound"]])
    ok, why = check_certificate(inst, forged)
    assert not ok and "unknown binding outcome in ['PV pv-1', 'PV pv-1']" in why   # b never names pv-1 now
