"""symreach's DynamicResources verdicts in the shape of the kso variant's, for ``kso_dra_agreement`` and its walks.

kso stops on an allocator error (the scheduler aborts the pod's cycle: ``findNodesThatPassFilters``
cancels on a Filter status Error), so its answer is then that error for the pod, taken as that
error on every node. symreach's answer is its own semantics: ``semantics.node_failure`` per node,
and, when ``semantics.cycle_abort`` aborts the cycle, the erring node's error on every node. The
scheduler's random order of pools and slices (per node and per cycle) makes kso one run among
several: ``Ours.possible`` lists each outcome symreach's front end finds over the orders
(``k8s_dra.PodDra.orders``), and ``judged`` counts a kso verdict that is one of them, where symreach
answers another run's, apart from a disagreement. Where Go's random map order or a pointer picks an
error's text, symreach's reason marks the text and carries the pattern of every one Go can print
(``symreach.reasons.marked_reason``): kso's text agrees when the pattern admits it (``agrees``), and
``by_pattern`` counts those verdicts apart.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from benchmarks.kso_harness import Verdict, compare, normalized
from symreach import semantics
from symreach.frontends.dra_allocator import ERROR_PREFIX
from symreach.frontends.k8s_dra import DRA_KINDS, DraIndex, pod_dra
from symreach.generators.k8s_states import State
from symreach.model import Config, Instance
from symreach.reasons import DYNAMIC_RESOURCES_PLUGIN as DRA_PLUGIN, is_filter_error, reason_admits


def kso_error(text: str) -> Verdict:
    """The allocator error in kso's failure message (RuntimeError for any other failure)."""
    if ERROR_PREFIX not in text:
        raise RuntimeError(text)
    return ("DynamicResources", (ERROR_PREFIX + text.split(ERROR_PREFIX, 1)[1].splitlines()[0],))


@dataclass
class Ours:
    """symreach's answer for the pending pod, in kso's shape (``verdicts``), and what the scheduler's
    random order of pools and slices may give instead (``possible``: per node, each outcome over the
    orders, where several; ``errors``: each error a run may stop on; ``blocked``: nodes where the pod
    would fit but for the abort)."""

    verdicts: dict[str, Verdict]
    caveats: list[str]
    possible: dict[str, set] = field(default_factory=dict)
    errors: set = field(default_factory=set)
    blocked: set = field(default_factory=set)


def ours_for(inst: Instance, t: int, sigma: Config, state: State, caveats: list[str], reported: Verdict = None) -> Ours:
    """symreach's own verdicts, ``semantics.node_failure`` per node, in kso's shape: when the
    semantics aborts the cycle (``semantics.cycle_abort``: a node's own error, every earlier filter
    passing there), kso stops on the error, so the pod's answer is that error on every node. The
    scheduler filters nodes in parallel and kso in its own order, so which erring node's error is
    reported is a race: ``reported`` when symreach has it among the nodes that abort. ``state``: the
    objects as the cluster holds them in sigma, for the orders (``pod_orders``)."""
    own = {node: semantics.filter_failure(inst, t, inst.node_index(node), sigma) for node in state.nodes}
    ours = Ours({}, list(caveats))
    abort = semantics.cycle_abort(inst, t, sigma)
    erring = [(DRA_PLUGIN, why) for f in own.values() if f is not None and is_filter_error(f.reason)
              for _, why in f.alternatives]
    told = next((e for e in erring if e == reported), None) or \
        next((e for e in erring if agrees(e, reported)), None)   # a marked reason admitting kso's text
    for node in state.nodes:
        failure = semantics.node_failure(inst, t, inst.node_index(node), sigma)
        if abort is not None:
            ours.verdicts[node] = told if told is not None else (DRA_PLUGIN, abort[1].reasons)
        else:
            ours.verdicts[node] = None if failure is None else (failure.plugin, failure.reasons)
    ours.errors = {v[1][0] for v in erring}
    ours.blocked = {node for node, f in own.items() if abort is not None and f is None}
    for node, outcomes in pod_orders(state).items():   # kso evaluates DynamicResources only past the others
        if own[node] is None or own[node].plugin == DRA_PLUGIN:
            ours.possible[node] = {None if r is None else (DRA_PLUGIN, (r,)) for r in outcomes}
            ours.errors |= {r for r in outcomes if r is not None and is_filter_error(r)}
    return ours


def pod_orders(state: State) -> dict[str, tuple]:
    """``k8s_dra.PodDra.orders`` of the pending pod: per node, each outcome over the scheduler's orders
    of pools and slices, where they differ (the front end's own index, rebuilt from the objects)."""
    index = DraIndex()
    pod = None
    for o in state.objects:
        meta = o.get("metadata") or {}
        if o["kind"] in DRA_KINDS:
            index.add(o["kind"], o, meta.get("namespace") or "default", meta.get("name"))
        elif o["kind"] == "Pod" and f"{meta.get('namespace') or 'default'}/{meta['name']}" == state.pending:
            pod = o
    nodes = [{"name": o["metadata"]["name"], "labels": o["metadata"].get("labels") or {}}
             for o in state.objects if o["kind"] == "Node"]
    if pod is None:
        return {}
    meta = pod["metadata"]
    return pod_dra(index, pod.get("spec") or {}, pod.get("status"), meta.get("namespace") or "default", meta,
                   nodes).orders


def reason_sets(ours: Ours) -> dict[str, set]:
    """The nodes refused in every order of pools and slices with reasons that differ between the orders:
    each one's set of reasons (what symreach answers there: ``semantics.Failure.alternatives``)."""
    return {node: outcomes for node, outcomes in ours.possible.items() if None not in outcomes and len(outcomes) > 1}


def agrees(ours: Verdict, theirs: Verdict, exact: bool = False) -> bool:
    """Whether kso's verdict is symreach's: the same plugin and reasons, a marked reason of symreach's
    admitting kso's text (``reasons.reason_admits``; not when ``exact``)."""
    if ours is None or theirs is None:
        return ours is None and theirs is None
    ours, theirs = normalized(ours), normalized(theirs)
    if exact or ours == theirs:
        return ours == theirs
    return ours[0] == theirs[0] and len(ours[1]) == len(theirs[1]) and \
        all(reason_admits(o, k) for o, k in zip(ours[1], theirs[1]))


def judged(theirs: dict[str, Verdict], ours: Ours, index: int, exact: bool = False) -> tuple[list, int]:
    """The disagreements, and how many node verdicts agree with another run of the scheduler (an order of
    pools and slices other than symreach's, whose outcome symreach lists: ``Ours.possible``). A text of
    kso's that a marked reason's pattern admits agrees (not when ``exact``: ``by_pattern``)."""
    found = [d for d in compare(index, theirs, ours.verdicts) if not agrees(d.symreach, d.kso, exact)]
    if not found:
        return [], 0
    kso_err = next(iter(theirs.values()))
    if all(v == kso_err for v in theirs.values()) and kso_err is not None and is_filter_error(kso_err[1][0]):
        # kso stopped on an error: another run's if some node symreach lets pass errs so in some order
        known = any(agrees((DRA_PLUGIN, (e,)), kso_err, exact) for e in ours.errors)
        return ([], len(found)) if known else (found, 0)
    other = [d for d in found if any(agrees(o, d.kso, exact) for o in ours.possible.get(d.node, ()))]
    return [d for d in found if d not in other], len(other)


def by_pattern(theirs: dict[str, Verdict], ours: Ours, index: int) -> int:
    """How many node verdicts agree only because a marked reason's pattern admits kso's text (an error
    whose message Go's random map order or a pointer picks): judged apart by exact texts, not with patterns."""
    exact, patterned = judged(theirs, ours, index, True), judged(theirs, ours, index)
    return len(exact[0]) - len(patterned[0])


