"""The search budget (``symreach.search_budget``): every guard of the exact searches, one knob raising them.

Per guard (those of ``tests/test_dra_orders.py``, ``tests/test_dra_slice_orders.py`` and
``tests/test_volume_runs.py`` beside): an input past a lowered guard answers with a caveat naming
the guard, its value and the budget that raises it; under a raised budget the same input answers
exactly, as the default does (whose answer the other tests compare with brute force or kso). The
budget reaches the front end through the load (``budget=``, ``using``, ``--search-budget``), and an
instance it changed says so in its certificate digest.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from benchmarks.kso_dra_agreement import symreach_dra
from benchmarks.kso_harness import any_state
from benchmarks.search_budgets import allocator_steps_input
from symreach import search_budget
from symreach.search_budget import Budget
from symreach.certify.digest import instance_digest
from symreach.cli import cli
from symreach.frontends.k8s_dra import _prefilter_names
from symreach.frontends.kubernetes import load_kubernetes_documents
from tests.test_dra import _gpu_cluster
from tests.test_dra_abort import _shared_pool
from tests.test_layering import REPO, analyse, discover


def test_a_budget_scales_every_guard_and_refuses_what_is_no_budget():
    assert [g.name for g in search_budget.GUARDS] == list(search_budget.BY_NAME) and len(search_budget.GUARDS) == 11
    four = Budget(4)
    assert all(four.limit(g.name) == 4 * g.default for g in search_budget.GUARDS)
    based = Budget(0.5, {search_budget.DRA_ORDERS: 10})
    assert based.limit(search_budget.DRA_ORDERS) == 5 and based.limit(search_budget.VOLUME_BINDINGS) == 128
    assert Budget(1e-9).limit(search_budget.DRA_STATES) == 1 and based.text() == "0.5 dra-orders=10"
    assert Budget().is_default and not four.is_default and Budget(4) == four and hash(Budget(4)) == hash(four)
    for bad in (0, -1, float("inf"), float("nan")):
        with pytest.raises(ValueError):
            Budget(bad)
    with pytest.raises(ValueError, match="unknown guard"):
        Budget(limits={"dra-order": 3})


def test_a_load_notes_where_its_budget_changed_the_outcome():
    """``over`` notes a guard passed below its default, and a search going past the default
    unstopped; nothing under the default budget, nor where the outcome is the default's."""
    name, default = search_budget.VOLUME_BINDINGS, search_budget.BY_NAME[search_budget.VOLUME_BINDINGS].default
    with search_budget.loading() as load:
        assert search_budget.over(name, default + 1) and not search_budget.over(name, default)
    assert load.departed == set()
    with search_budget.loading(Budget(limits={name: 3})) as load:
        assert not search_budget.over(name, 3) and load.departed == set()
        assert search_budget.over(name, 4) and load.departed == {name}
    with search_budget.loading(2) as load:
        assert not search_budget.over(name, default) and load.departed == set()
        assert not search_budget.over(name, default + 1) and load.departed == {name}
        assert search_budget.over(name, 2 * default + 1)
    assert search_budget.active() == search_budget.DEFAULT
    for budget, stops in ((Budget(limits={name: 3}), 4), (search_budget.DEFAULT, default + 1), (Budget(2), 2 * default + 1)):
        with search_budget.loading(budget) as load:   # a Watch asked at each step stops where ``over`` does
            watch = search_budget.Watch(name)
            used = next(k for k in range(1, 3 * default) if k > watch.at and watch.passed(k))
        assert used == stops and load.departed == ({name} if budget != search_budget.DEFAULT else set())


def test_a_guard_read_again_later_departs_wherever_its_value_may_matter():
    """``over_later`` (``filter-runs``: the solve's search reads the value the instance records): a
    departure where the use passes the smaller of the default and the budget's value and they differ;
    none under the default budget nor below both values."""
    name, default = search_budget.FILTER_RUNS, search_budget.BY_NAME[search_budget.FILTER_RUNS].default
    cases = [(search_budget.DEFAULT, 3 * default, True, set()), (Budget(2), default, False, set()),
             (Budget(2), default + 1, False, {name}), (Budget(2), 3 * default, True, {name}),
             (Budget(0.5), default // 2, False, set()), (Budget(0.5), default // 2 + 1, True, {name}),
             (Budget(0.5), 3 * default, True, {name})]
    for budget, used, passed, departed in cases:
        with search_budget.loading(budget) as load:
            assert search_budget.over_later(name, used) is passed and load.departed == departed, (budget, used)
    assert len(cases) == 7


def test_past_the_allocator_steps_guard_the_relaxed_fit_is_marked():
    """5 + 1 devices of 8 + 2 under one matchAttribute: no fit, found after 400 to 800 steps. Past a
    guard of 200 the relaxation (constraints unchecked) fits, with the caveat; 4 times it, exact."""
    run = allocator_steps_input(8, 3)
    assert run() == (False, "cannot allocate all claims")
    low = Budget(limits={search_budget.DRA_ALLOCATOR_STEPS: 200})
    with search_budget.using(low):
        caveat, reason = run()
    assert caveat and reason is None
    with search_budget.using(Budget(4, low.limits)):
        assert run() == (False, "cannot allocate all claims")


def test_the_allocator_steps_caveat_names_the_guard():
    from benchmarks.search_budgets import _pools  # the same case, the outcome's text
    from symreach.frontends.dra_allocator import allocate_in_order

    devices = [{"name": f"a{k}", "attributes": {"numa": {"int": 0}}} for k in range(6)]
    claim = {"metadata": {"name": "c", "namespace": "default"}, "spec": {"devices": {
        "requests": [{"name": "r", "exactly": {"deviceClassName": "c", "count": 2}}],
        "constraints": [{"matchAttribute": "d/numa"}]}}}
    with search_budget.using(Budget(limits={search_budget.DRA_ALLOCATOR_STEPS: 2})):
        found = allocate_in_order([claim], _pools([devices]), {"c": {"spec": {}}}, set())
    assert found.reason is None and found.caveats == [
        "DRA: the allocator's search on this node went past the search budget of 2 allocator steps "
        "(dra-allocator-steps); a search budget of 4 raises it; the verdict is whether distinct matching devices "
        "exist (constraints and errors not checked)"]


def test_past_the_cycle_guards_the_shared_slices_mark_the_fit():
    """``tests/test_dra_abort.py``'s shared pool: 2 cycle orders x 2 nodes, one run each. Past a
    ``dra-cycle-searches`` guard of 1 the fits are marked (no table); 4 times it, exact and unmarked."""
    exact = symreach_dra(any_state(_shared_pool(), "default/job"))
    low = Budget(limits={search_budget.DRA_CYCLE_SEARCHES: 1})
    with search_budget.using(low):
        marked = symreach_dra(any_state(_shared_pool(), "default/job"))
    [caveat] = [c for c in marked.caveats if "search budget" in c]
    assert caveat == ("DRA: the fit on n1, n2 depends on the order of a pool's slices, which the scheduler draws "
                      "once per cycle for every node, and every order that fits there makes another node err; the "
                      "model draws the order per node (the fit may be too lenient): telling the orders apart went "
                      "past the search budget of 5,040 cycle orders (dra-cycle-orders) or 1 allocator runs "
                      "(dra-cycle-searches); a search budget of 4 raises it")
    with search_budget.using(Budget(4, low.limits)):
        raised = symreach_dra(any_state(_shared_pool(), "default/job"))
    assert (raised.verdicts, raised.possible, raised.caveats) == (exact.verdicts, exact.possible, exact.caveats)
    assert not [c for c in exact.caveats if "search budget" in c]


def _answers(inst) -> list:
    """``tests/test_dra.py``'s three count questions on the gpu cluster (the Deployment's pods)."""
    from symreach.model import CountTarget, Query
    from symreach.semantics import replay
    from symreach.solvers.explicit import ExplicitEngine

    w, p0 = inst.type_index("default/train"), inst.type_index("default/p0")
    every = frozenset((w, n) for n in range(2))
    out = []
    for pods, with_p0 in ((4, False), (4, True), (3, True)):
        alternatives = (frozenset({(p0, 0)}), frozenset({(p0, 1)})) if with_p0 else (frozenset(),)
        result = ExplicitEngine().check(inst, Query(alternatives, counts=(CountTarget(every, pods),)))
        if result.trace is not None:
            replay(inst, result.trace)
        out.append(result.verdict.name)
    return out


@pytest.mark.parametrize("guard,base,factor", [(search_budget.DRA_STATES, 10, 4), (search_budget.DRA_STATE_WORK, 40, 4)])
def test_past_the_dra_state_guards_the_allocations_are_not_state(guard, base, factor):
    """2 nodes x 2 gpus, the Deployment and p0: 21 joint allocations, 2 users on 2 nodes (84
    evaluations). Past a lowered guard: a caveat naming it, no allocation state, and the instance
    records the budget (its digest differs); raised, the states and answers are the default's
    (``tests/test_dra.py``: 4 pods, not 4 beside p0, 3 beside it) and the digest too."""
    objects = _gpu_cluster(2, 2, 1)
    default, report = load_kubernetes_documents(objects, "<dra>")
    assert not report.caveats and default.search_budget is None
    assert _answers(default) == ["DEPLOYABLE", "NOT_DEPLOYABLE", "DEPLOYABLE"]
    low = Budget(limits={guard: base})
    marked, report = load_kubernetes_documents(objects, "<dra>", budget=low)
    notes = [c for cs in report.caveats.values() for c in cs if "search budget" in c]
    assert notes and set(notes) == {
        "DRA: listing the joint device allocations that deployments and deletions reach went past the search budget "
        f"of {low.limit(search_budget.DRA_STATES):,} joint device allocations (dra-states) or "
        f"{low.limit(search_budget.DRA_STATE_WORK):,} states x users x nodes (dra-state-work); a search budget of 4 raises it"}
    assert not any(g.holders for g in marked.binding_groups)
    assert marked.search_budget == f"1 {guard}={base}" and instance_digest(marked) != instance_digest(default)
    raised, report = load_kubernetes_documents(objects, "<dra>", budget=Budget(factor, low.limits))
    assert not report.caveats and raised.binding_groups == default.binding_groups
    assert raised.search_budget is None and instance_digest(raised) == instance_digest(default)
    assert _answers(raised) == _answers(default)


def test_past_the_pool_orders_guard_the_devices_taken_are_the_input_orders():
    """One node with 8 one-gpu pools, p0's claim asking 4: listing every choice of 4 pools needs 2,081
    allocator runs, past the default 1,000: p0's deployment takes the input order's gpus alone (2
    states), with a caveat naming the guard and the factor that reaches it (3); raised, its 70 outcomes
    are each a deploy choice (71 states), no caveat, and the instance records the budget."""
    objects = [o for o in _gpu_cluster(1, 0, 1) if o["kind"] not in ("ResourceSlice", "Deployment")] + [
        {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": f"g{k}"},
         "spec": {"driver": "gpu.example.com", "nodeName": "n0", "devices": [{"name": "x"}],
                  "pool": {"name": f"g{k}", "generation": 1, "resourceSliceCount": 1}}} for k in range(8)]
    next(o for o in objects if o["kind"] == "ResourceClaim")["spec"]["devices"]["requests"][0]["exactly"]["count"] = 4
    default, report = load_kubernetes_documents(objects, "<dra>")
    assert report.caveats == {"default/p0": [
        "DRA: which devices a deployment on n0 takes depends on the scheduler's random order of pools and slices; "
        "listing every outcome went past the search budget of 1,000 allocator runs (dra-pool-orders); a search "
        "budget of 4 raises it (modelled there: the input order's alone)"]}
    raised, report = load_kubernetes_documents(objects, "<dra>", budget=Budget(3))
    group, = [g for g in raised.binding_groups if g.holders]
    p0 = raised.type_index("default/p0")
    assert report.caveats == {} and len(group.states) == 71 and len(group.choices[0][p0][0]) == 70
    assert [len(g.states) for g in default.binding_groups if g.holders] == [2]
    assert raised.search_budget == "3" and default.search_budget is None


# ``k8s_dra._prefilter_names`` as it was before it read the affinity through the v1 loader's rule
def _old_prefilter_names(spec: dict):
    def d(v):
        return v if isinstance(v, dict) else {}

    def lst(v):
        return v if isinstance(v, list) else []
    affinity = d(d(d(spec.get("affinity")).get("nodeAffinity")).get("requiredDuringSchedulingIgnoredDuringExecution"))
    names = None
    for term in [d(t) for t in lst(affinity.get("nodeSelectorTerms"))]:
        own = None
        for r in (d(r) for r in lst(term.get("matchFields"))):
            if r.get("key") == "metadata.name" and r.get("operator") == "In":
                values = {str(v) for v in lst(r.get("values"))}
                own = values if own is None else own & values
        if own is None:
            return None
        names = own if names is None else names | own
    return names


def test_prefilter_names_read_as_the_v1_loader_reads_them():
    """Random valid required node affinities (terms of matchFields In/NotIn on metadata.name and
    matchExpressions): the PreFilterResult names are those the old reading gave."""
    rng = random.Random(27)
    checked = named = 0
    for _ in range(600):
        terms = []
        for _ in range(rng.randint(0, 3)):
            term: dict = {}
            if rng.random() < 0.8:
                term["matchFields"] = [{"key": "metadata.name", "operator": rng.choice(["In", "In", "NotIn"]),
                                        "values": [rng.choice(["n1", "n2", "n3"])]} for _ in range(rng.randint(0, 2))]
            if rng.random() < 0.4:
                term["matchExpressions"] = [{"key": "zone", "operator": "In", "values": ["a"]}]
            terms.append(term)
        spec = {"affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution":
                                              {"nodeSelectorTerms": terms}}}} if rng.random() < 0.9 else {}
        old = _old_prefilter_names(spec)
        new = _prefilter_names(spec)
        assert (None if new is None else set(new)) == old, spec
        checked += 1
        named += old is not None
    assert checked == 600 and named > 60


def test_budgets_imports_nothing_of_the_package():
    known = discover()
    assert analyse("symreach.search_budget", REPO / "symreach" / "search_budget.py", known).targets == set()


def test_the_command_line_raises_the_budget_and_names_its_option(tmp_path: Path):
    """``--search-budget FACTOR``: 0.002 puts the dra-states guard at 8 (the input has 21 states), so
    3 pods of the Deployment on n0 (2 gpus) look deployable, with a caveat naming the option and the
    factor that raises it; the default answers not-deployable with a certificate, which certify
    accepts for the instance check loaded and refuses for the one a smaller budget loads."""
    path = tmp_path / "gpus.yaml"
    path.write_text(yaml.safe_dump_all(_gpu_cluster(2, 2, 1)))
    cert = tmp_path / "cert.json"
    ask = ["--pod", "default/train", "--node", "n0", "--count", "3"]
    small = CliRunner().invoke(cli, ["check", str(path), *ask, "--search-budget", "0.002", "-o", "json"])
    answer = json.loads(small.output)
    assert answer["verdict"] == "deployable"
    assert any("a search budget" not in c and "--search-budget 0.008 raises it" in c for c in answer["caveats"])
    exact = CliRunner().invoke(cli, ["check", str(path), *ask, "-o", "json", "--engine", "explicit",
                                     "--cert-out", str(cert)])
    answer = json.loads(exact.output)
    assert answer["verdict"] == "not-deployable" and not answer.get("caveats")
    assert CliRunner().invoke(cli, ["certify", str(path), str(cert), *ask]).exit_code == 0
    refused = CliRunner().invoke(cli, ["certify", str(path), str(cert), *ask, "--search-budget", "0.002"])
    assert refused.exit_code == 1 and "another instance" in refused.output, refused.output
    bad = CliRunner().invoke(cli, ["check", str(path), *ask, "--search-budget", "0"])
    assert bad.exit_code == 2 and "--search-budget" in bad.output


def test_dask_workers_load_under_the_command_s_budget():
    """``matrix --executor dask``: the workers load the shipped text under the command's budget,
    so their instance is the client's, and their caveats name the option too."""
    import pickle

    from symreach.cli.executor_options import load_shipped_sources
    from symreach.frontends import zoneinfo_db
    from symreach.frontends.dispatch import Source, load_sources

    sources = [Source("gpus.yaml", yaml.safe_dump_all(_gpu_cluster(2, 2, 1)))]
    payload = pickle.dumps((sources, "default"))
    small = Budget(0.002)
    shipped = load_shipped_sources(zoneinfo_db.current(), payload, budget=small)
    here = load_sources(sources, budget=small).instance
    assert shipped.instance == here and here.search_budget == "0.002"
    assert any("--search-budget 0.008 raises it" in c for cs in shipped.summary.caveats.values() for c in cs)
    assert load_shipped_sources(zoneinfo_db.current(), payload).instance.search_budget is None


def test_the_command_line_names_its_option_in_caveats_and_warnings():
    """Below cli/ a caveat names the search budget that raises a guard; the commands name their option."""
    from symreach.cli.options import with_option_names
    from symreach.frontends.kubernetes import Report

    text = "past the search budget of 3 joint bindings (volume-bindings); a search budget of 0.04 raises it"
    report = Report(caveats={"default/p": [text, "other"]})
    report.warn("volumes", "document 3 (Pod default/p): " + text)
    with_option_names(report)
    named = text.replace("a search budget of 0.04", "--search-budget 0.04")
    assert report.caveats == {"default/p": [named, "other"]}
    assert report.warnings == ["document 3 (Pod default/p): " + named] and report.notes[0][1] == report.warnings[0]
