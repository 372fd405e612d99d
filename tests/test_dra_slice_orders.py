"""One order of a pool's slices per scheduling cycle, shared by every node (``dra_slice_orders``).

v1.35 DynamicResources lists the ResourceSlices once in PreFilter (``ListWithDeviceTaintRules``,
``structured.NewAllocator``) and ``Allocate`` runs per node over that list. ``tests/test_dra_abort.py``'s
shared pool (slice a's device has the numa attribute the class reads, slice b's lacks it: a CEL
runtime error) reaches n1 and n2: per node each could fit or err, but the variant (``KSO_DRA``)
only ever gives both fit or both err, never one of each, as one order for both nodes makes it.
"""

from __future__ import annotations

import itertools
import os
import random
from collections import Counter
from pathlib import Path

import pytest

from benchmarks.kso_dra_agreement import kso_dra_verdicts, symreach_dra
from benchmarks.kso_harness import any_state
from symreach.frontends import dra_slice_orders
from symreach.frontends.dra_allocator import Pool
from tests.test_dra_abort import ERROR, _shared_pool

VARIANT = Path(os.environ.get("KSO_DRA", "/work/wt/dra-kso/kso"))
RUNS = 16
# The variant's outcomes over RUNS runs (measured: 13 both fit, 3 both err; never mixed, which
# independent per-node orders would give in half the runs).
VARIANT_OUTCOMES = {(None, None), (ERROR, ERROR)}


def test_symreach_fits_both_unmarked_and_lists_the_error():
    ours = symreach_dra(any_state(_shared_pool(), "default/job"))
    assert ours.verdicts == {"n1": None, "n2": None}
    assert ours.possible == {"n1": {None, ERROR}, "n2": {None, ERROR}}
    assert not [c for c in ours.caveats if "once per cycle" in c]


@pytest.mark.skipif(not os.access(VARIANT, os.X_OK), reason="the kso variant with DRA is not built here")
def test_the_variant_never_mixes_the_nodes_outcomes():
    seen = Counter()
    for _ in range(RUNS):
        got = kso_dra_verdicts(any_state(_shared_pool(), "default/job"), VARIANT)
        seen[(got["n1"], got["n2"])] += 1
    assert sum(seen.values()) == RUNS
    assert set(seen) <= VARIANT_OUTCOMES and (None, None) in seen


def _joint(table, n, passing) -> bool:
    """The exact reading: one cycle order under which n fits and no passing node errs."""
    return any(n in fits and not (errs & passing) for fits, errs in table)


def _per_node(table, n, passing) -> bool:
    """The model's: n fits under some order, and no passing node errs under every order."""
    always = set.intersection(*[errs for _, errs in table])
    return any(n in fits for fits, _ in table) and not (always & passing)


def test_the_nodes_judge_leaves_out_are_exact_in_every_state():
    """Random outcome tables over 4 nodes: where ``judge`` does not name a fitting node, the joint
    and the per-node readings agree for every set of nodes passing their earlier filters; where it
    names one, some set makes them differ (so the mark is never needless)."""
    rng = random.Random(5)
    nodes = ["n1", "n2", "n3", "n4"]
    checked = named = 0
    for _ in range(400):
        table = []
        for _ in range(rng.randint(1, 4)):
            fits = {n for n in nodes if rng.random() < 0.4}
            errs = {n for n in nodes if n not in fits and rng.random() < 0.4}
            table.append((fits, errs))
        fitting = [n for n in nodes if any(n in f for f, _ in table)]
        marked = dra_slice_orders.judge(table, fitting)
        for n in fitting:
            others = [m for m in nodes if m != n]
            sets = [set(c) | {n} for k in range(len(others) + 1) for c in itertools.combinations(others, k)]
            differs = any(_joint(table, n, p) != _per_node(table, n, p) for p in sets)
            assert differs == (n in marked), (table, n)
            checked += 1
            named += n in marked
    assert checked > 500 and named > 50


def test_beyond_the_bound_every_fitting_node_is_marked():
    slices = [[type("D", (), {"slice_id": k})()] for k in range(6)]   # 6! = 720 orders
    pools = {n: [Pool("d", "p", list(slices))] for n in ("n1", "n2")}
    assert dra_slice_orders.cycle_orders(dra_slice_orders.shared_pools(pools)) is None
    assert dra_slice_orders.inexact_fits([], pools, {}, set(), ["n1"]) == ["n1"]


def test_beyond_the_search_budget_every_fitting_node_is_marked():
    slices = [[type("D", (), {"slice_id": k})()] for k in range(5)]   # 5! = 120 cycle orders
    pools = {f"n{i}": [Pool("d", "p", list(slices))] for i in range(dra_slice_orders.BUDGET // 120 + 1)}
    assert len(dra_slice_orders.cycle_orders(dra_slice_orders.shared_pools(pools))) == 120
    assert dra_slice_orders.inexact_fits([], pools, {}, set(), ["n1", "n2"]) == ["n1", "n2"]
