"""Resolution: label-level specs -> the normalized model (index sets, partitions).

Here the profile differences of SPEC 2.1 that concern *what a selector
selects* are settled once: namespaces and namespaceSelector, matchLabelKeys,
the kube-scheduler's special cases for empty and null spread selectors, the
eligible node set E of each spread constraint, and the multiplicity bounds
of counted pairs (SPEC 2.2).
"""

from __future__ import annotations

from dataclasses import replace
from typing import AbstractSet, Mapping, Optional, Sequence

from symreach.loader.labels import (
    DOES_NOT_EXIST,
    EXISTS,
    IN,
    NODE_AFFINITY,
    NODE_NAME,
    NODE_NAME_FIELD,
    NODE_UNSCHEDULABLE,
    NOT_IN,
    TAINT_TOLERATION,
    UNSCHEDULABLE_TAINT,
    LabelSelector,
    NodeSelector,
    Placement,
    Requirement,
    Toleration,
    label_key_requirements,
    tolerates,
    untolerated_taint,
)
from symreach.loader.budgets import resolve_budgets
from symreach.loader.controllers import resolve_controllers
from symreach.loader.kube_objects import HONOR, SpreadSpec, TermSpec
from symreach.reasons import NODE_AFFINITY_CONFLICT, PREFILTER_NODE_AFFINITY
from symreach.loader.v1 import Document, PodTypeSpec
from symreach.model import (
    AFTER_ALL,
    KUBERNETES,
    PODS_RESOURCE,
    AffinityTerm,
    BindingGroup,
    ClaimBinding,
    CycleOrder,
    FrozenDict,
    Instance,
    Node,
    Pair,
    PodType,
    SpreadConstraint,
    Taint,
    Topology,
)
from symreach.loader.shapes import FieldError
from symreach.loader.dra import CycleOrderSpec, DraSpec
from symreach.loader.volumes import VOLUME_RESTRICTIONS


class _Postings:
    """Members of a labelled population (pod types or nodes) indexed by label.

    ``matching`` gives the members a requirement matches, computed from the
    postings of the requirement's key instead of testing every member. The
    fast paths (In, NotIn, Exists, DoesNotExist) are the definitions of
    ``Requirement.matches`` read as set algebra; any other operator is
    evaluated with ``Requirement.matches`` once per distinct value of its key,
    which gives the same answer for every member carrying that value.
    """

    def __init__(self, labels: Sequence[Mapping[str, str]]) -> None:
        self.all: frozenset[int] = frozenset(range(len(labels)))
        self.by_key: dict[str, set[int]] = {}
        self.by_value: dict[str, dict[str, set[int]]] = {}
        for i, mapping in enumerate(labels):
            for key, value in mapping.items():
                self.by_key.setdefault(key, set()).add(i)
                self.by_value.setdefault(key, {}).setdefault(value, set()).add(i)

    def having(self, key: str) -> AbstractSet[int]:
        return self.by_key.get(key, _EMPTY)

    def with_value(self, key: str, value: str) -> AbstractSet[int]:
        return self.by_value.get(key, _NO_VALUES).get(value, _EMPTY)

    def matching(self, req: Requirement) -> AbstractSet[int]:
        """Members whose labels ``req`` matches (the result may be shared: do not mutate)."""
        op = req.operator
        if op == EXISTS:
            return self.having(req.key)
        if op == DOES_NOT_EXIST:
            return self.all - self.having(req.key)
        values = self.by_value.get(req.key, _NO_VALUES)
        if op == IN or op == NOT_IN:
            hits: AbstractSet[int] = _EMPTY
            for value in dict.fromkeys(req.values):
                members = values.get(value)
                if members:
                    hits = members if not hits else hits | members
            return hits if op == IN else self.all - hits
        out: set[int] = set() if not req.matches({}) else set(self.all - self.having(req.key))
        for value, members in values.items():
            if req.matches({req.key: value}):
                out |= members
        return out

    def selected(self, requirements: Sequence[Requirement]) -> AbstractSet[int]:
        """Members matching every requirement (AND); all members when there are none."""
        out: AbstractSet[int] = self.all
        for req in requirements:
            out = out & self.matching(req)
            if not out:
                break
        return out


_EMPTY: frozenset[int] = frozenset()
_NO_VALUES: dict[str, set[int]] = {}


def _ascending(members: AbstractSet[int]) -> frozenset[int]:
    """``members`` built as the straightforward loops built it: a frozenset filled in ascending order.

    Same elements, and also the same iteration order (engines iterate these sets).
    """
    return frozenset(sorted(members))


def _ascending_via_set(members: AbstractSet[int]) -> frozenset[int]:
    """Like ``_ascending`` for sets the reference code filled with ``set.add`` first."""
    return frozenset(set(sorted(members)))


class _Context:
    """What resolving one document needs.

    Topologies are cached, one object per key. Pod types and nodes are indexed
    by label, so a selector's matches come from set algebra over postings, and
    resolved selectors are cached by a canonical form (many terms repeat one).
    The static filters are computed as node sets once per distinct placement.
    """

    def __init__(self, doc: Document) -> None:
        self.doc = doc
        self.kube = doc.profile == KUBERNETES
        self._topologies: dict[str, Topology] = {}
        self.pods = _Postings([p.labels for p in doc.pod_types])
        self.terminating = frozenset(u for u, pod in enumerate(doc.pod_types) if pod.terminating)
        self.pods_in: dict[str, set[int]] = {}
        for u, pod in enumerate(doc.pod_types):
            self.pods_in.setdefault(pod.namespace, set()).add(u)
        self.nodes = _Postings([n.labels for n in doc.nodes])
        self.node_names = _Postings([{NODE_NAME_FIELD: n.name} for n in doc.nodes])
        self.unschedulable = {n for n, node in enumerate(doc.nodes) if node.unschedulable}
        self.taint_groups: dict[tuple[Taint, ...], list[int]] = {}
        for n, node in enumerate(doc.nodes):
            if node.taints:
                self.taint_groups.setdefault(node.taints, []).append(n)
        self._selected: dict[tuple, frozenset[int]] = {}
        self._term_namespaces: dict[tuple, frozenset[str]] = {}
        self._affinity_nodes: dict[tuple, AbstractSet[int]] = {}
        self._tolerated_nodes: dict[tuple[Toleration, ...], AbstractSet[int]] = {}
        self._rows: dict[Placement, tuple[Optional[str], ...]] = {}

    def topology(self, key: str) -> Topology:
        if key not in self._topologies:
            self._topologies[key] = make_topology(key, self.doc.nodes)
        return self._topologies[key]

    def select(self, selector: LabelSelector, namespaces: Optional[frozenset[str]]) -> frozenset[int]:
        """Pod types matching ``selector`` within ``namespaces`` (None: all namespaces)."""
        key = (selector.nothing, frozenset(selector.requirements), namespaces)
        hit = self._selected.get(key)
        if hit is None:
            if selector.nothing:
                chosen: AbstractSet[int] = _EMPTY
            else:
                chosen = self.pods.selected(selector.requirements)
            if namespaces is not None and chosen:
                within: set[int] = set()
                for ns in namespaces:
                    within |= self.pods_in.get(ns, _EMPTY)
                chosen = chosen & within
            hit = self._selected[key] = _ascending(chosen)
        return hit

    def term_namespaces(self, owner: PodTypeSpec, term: TermSpec) -> frozenset[str]:
        """The namespaces a term sees: the owner's by default, else namespaces plus namespaceSelector."""
        if not term.namespaces and term.namespace_selector is None:
            return frozenset({owner.namespace})
        key = (term.namespaces, term.namespace_selector)
        if key not in self._term_namespaces:
            chosen = set(term.namespaces)
            if term.namespace_selector is not None:
                chosen |= {ns for ns, labels in self.doc.namespaces.items() if term.namespace_selector.matches(labels)}
            self._term_namespaces[key] = frozenset(chosen)
        return self._term_namespaces[key]

    # ---- static filters as node sets ----------------------------------------

    def affinity_nodes(self, placement: Placement) -> AbstractSet[int]:
        """Nodes passing ``placement.matches_node_affinity`` (nodeSelector AND required node affinity)."""
        key = (tuple(placement.node_selector.items()), placement.node_affinity)
        hit = self._affinity_nodes.get(key)
        if hit is None:
            out: AbstractSet[int] = self.nodes.all
            for label, value in key[0]:
                out = out & self.nodes.with_value(label, value)
            if placement.node_affinity is not None and out:
                out = out & self._node_selector_nodes(placement.node_affinity)
            hit = self._affinity_nodes[key] = out
        return hit

    def _node_selector_nodes(self, selector: NodeSelector) -> AbstractSet[int]:
        out: AbstractSet[int] = _EMPTY
        for term in selector.terms:
            if not term.label_requirements and not term.field_requirements:
                continue  # a term with no requirement matches nothing
            hits = self.nodes.selected(term.label_requirements)
            if hits:
                hits = hits & self.node_names.selected(term.field_requirements)
            out = out | hits
        return out

    def tolerated_nodes(self, tolerations: tuple[Toleration, ...]) -> AbstractSet[int]:
        """Nodes passing ``Placement.tolerates_taints`` for these tolerations."""
        hit = self._tolerated_nodes.get(tolerations)
        if hit is None:
            blocked: set[int] = set()
            for taints, members in self.taint_groups.items():
                if untolerated_taint(taints, tolerations) is not None:
                    blocked.update(members)
            hit = self._tolerated_nodes[tolerations] = self.nodes.all - blocked if blocked else self.nodes.all
        return hit

    def static_row(self, placement: Placement) -> tuple[Optional[str], ...]:
        """``static_reason(placement, node)`` for every node, in node order.

        Filled in reverse plugin order, so that the first failing filter's
        reason is the one left in each slot.
        """
        hit = self._rows.get(placement)
        if hit is not None:
            return hit
        row: list[Optional[str]] = [None] * len(self.doc.nodes)
        for n in self.nodes.all - self.affinity_nodes(placement):
            row[n] = NODE_AFFINITY
        for n in self.nodes.all - self.tolerated_nodes(placement.tolerations):
            row[n] = TAINT_TOLERATION
        if placement.node_name:
            for n, node in enumerate(self.doc.nodes):
                if placement.node_name != node.name:
                    row[n] = NODE_NAME
        if self.unschedulable and not tolerates(placement.tolerations, UNSCHEDULABLE_TAINT):
            for n in self.unschedulable:
                row[n] = NODE_UNSCHEDULABLE
        if self.kube:
            self._prefilter(placement, row)
        hit = self._rows[placement] = tuple(row)
        return hit

    def _prefilter(self, placement: Placement, row: list[Optional[str]]) -> None:
        """NodeAffinity's PreFilter outcome, which wins over every Filter plugin."""
        names = prefilter_node_names(placement.node_affinity)
        if names is None:
            return
        if not names:
            row[:] = [NODE_AFFINITY_CONFLICT] * len(row)
            return
        for n, node in enumerate(self.doc.nodes):
            if node.name not in names:
                row[n] = PREFILTER_NODE_AFFINITY


def prefilter_node_names(affinity: Optional[NodeSelector]) -> Optional[frozenset[str]]:
    """The node names NodeAffinity's PreFilter restricts a pod to, or None for no restriction.

    When every term has ``matchFields metadata.name In`` requirements, the
    candidates are the union over terms of the intersection of each term's
    name lists; an empty result rejects every node ("pod affinity terms
    conflict"). The scheduler only looks at In requirements here.
    """
    if affinity is None or not affinity.terms:
        return None
    names: set[str] = set()
    for term in affinity.terms:
        term_names: Optional[set[str]] = None
        for req in term.field_requirements:
            if req.key == NODE_NAME_FIELD and req.operator == IN:
                term_names = set(req.values) if term_names is None else term_names & set(req.values)
        if term_names is None:
            return None
        names |= term_names
    return frozenset(names)


def make_topology(key: str, nodes: tuple[Node, ...]) -> Topology:
    """Partition nodes by their value of ``key``; domains numbered by first appearance."""
    ids: dict[str, int] = {}
    domain_of: list[Optional[int]] = []
    members: list[set[int]] = []
    for n, node in enumerate(nodes):
        value = node.labels.get(key)
        if value is None:
            domain_of.append(None)
            continue
        if value not in ids:
            ids[value] = len(ids)
            members.append(set())
        domain_of.append(ids[value])
        members[ids[value]].add(n)
    return Topology(key, tuple(domain_of), tuple(frozenset(m) for m in members), tuple(ids))


def build_instance(doc: Document, source: str) -> Instance:
    ctx = _Context(doc)
    if not ctx.kube:
        _check_paper_keys(doc)
    base_block = tuple(ctx.static_row(p.placement) for p in doc.pod_types)
    volume_block, volume_only = volume_rows(doc, base_block)
    static_block, volume_failures = dra_rows(doc, volume_block, volume_only)
    pod_types = claim_terms(doc, tuple(_pod_type(ctx, spec) for spec in doc.pod_types))
    bounds = multiplicity_bounds(doc, pod_types, static_block)
    bindings, binding_groups = claim_bindings(doc, base_block, static_block, volume_failures)
    devices, device_groups_out = device_groups(doc, volume_block, volume_only, static_block, volume_failures,
                                               len(bindings))
    bindings, binding_groups = bindings + devices, binding_groups + device_groups_out
    return Instance(
        profile=doc.profile,
        nodes=doc.nodes,
        pod_types=pod_types,
        static_block=static_block,
        initial=doc.initial,
        multiplicity_bound=bounds,
        namespaces=doc.namespaces,
        source=source,
        volume_failures=volume_failures,
        run_refusals=FrozenDict(run_refusals(doc, [spec.volumes.run_refusals + spec.dra.run_refusals
                                                    for spec in doc.pod_types])),
        budgets=resolve_budgets(doc.budgets, pod_types, doc.initial),
        bindings=bindings,
        binding_groups=binding_groups,
        replica_targets=resolve_controllers(doc.controllers, pod_types, doc.nodes, doc.initial),
        cycle_orders=cycle_orders(doc),
    )


def cycle_orders(doc: Document, per_type: Optional[list[tuple[CycleOrderSpec, ...]]] = None
                 ) -> FrozenDict[int, tuple[CycleOrder, ...]]:
    """t -> its v1 ``dra.cycleOrders`` (``per_type``: those of one allocation state) with node
    indices (``Instance.cycle_orders``)."""
    index = {node.name: n for n, node in enumerate(doc.nodes)}
    tables = [spec.dra.cycle_orders for spec in doc.pod_types] if per_type is None else per_type
    return FrozenDict({t: tuple(CycleOrder(frozenset(index[m] for m in fits), tuple((index[m], why) for m, why in errs))
                                for fits, errs in table) for t, table in enumerate(tables) if table})


def run_refusals(doc: Document, per_type: list[tuple[tuple[str, str, tuple[str, ...]], ...]]
                 ) -> dict[Pair, tuple[tuple[str, tuple[str, ...]], ...]]:
    """(t, n) -> the volume refusals of the runs where others pass (v1 ``otherRunRefusals``), per type."""
    index = {node.name: n for n, node in enumerate(doc.nodes)}
    out: dict[Pair, tuple[tuple[str, tuple[str, ...]], ...]] = {}
    for t, entries in enumerate(per_type):
        for node, plugin, why in entries:
            out[(t, index[node])] = out.get((t, index[node]), ()) + ((plugin, why),)
    return out


def volume_rows(doc: Document, static_block: tuple[tuple[Optional[str], ...], ...]) -> tuple[
        tuple[tuple[Optional[str], ...], ...], FrozenDict[Pair, tuple[str, tuple[str, ...], bool]]]:
    """Fold the volume plugins' verdicts into the static rows (``loader.volumes``).

    A PreFilter rejection replaces every reason but NodeAffinity's own PreFilter
    rejection; a Filter failure fills only the slots no earlier filter took.
    """
    failures: dict[Pair, tuple[str, tuple[str, ...], bool]] = {}
    rows = list(static_block)
    index = {node.name: n for n, node in enumerate(doc.nodes)}
    for t, spec in enumerate(doc.pod_types):
        volumes = spec.volumes
        if volumes.prefilter is None and not volumes.filters:
            continue
        rows[t] = _fold(rows[t], t, volumes.prefilter, volumes.filters, index, failures)
    return tuple(rows), FrozenDict(failures)


def dra_rows(doc: Document, rows: tuple[tuple[Optional[str], ...], ...],
             failures: FrozenDict[Pair, tuple[str, tuple[str, ...], int]]) -> tuple[
        tuple[tuple[Optional[str], ...], ...], FrozenDict[Pair, tuple[str, tuple[str, ...], int]]]:
    """Fold DynamicResources' verdicts (``loader.dra``) into the rows after the volume plugins':
    its PreFilter is the last one (an earlier PreFilter rejection stays), its Filter the last
    filter (``AFTER_ALL``: reported only when every other plugin passes on the node)."""
    out_rows, out = list(rows), dict(failures)
    index = {node.name: n for n, node in enumerate(doc.nodes)}
    for t, spec in enumerate(doc.pod_types):
        out_rows[t] = _fold_dra(out_rows[t], t, spec.dra, index, out)
    return tuple(out_rows), FrozenDict(out)


def _fold_dra(row: tuple[Optional[str], ...], t: int, dra: DraSpec, index: dict[str, int],
              failures: dict[Pair, tuple[str, tuple[str, ...], int]]) -> tuple[Optional[str], ...]:
    """One type's row with DynamicResources' verdicts folded in after the volume plugins' (``dra_rows``)."""
    out = list(row)
    if dra.prefilter is not None:
        if any(why[2] == 0 for (u, _), why in failures.items() if u == t):
            return row   # a volume plugin's PreFilter rejected the pod first
        for n in range(len(out)):
            if out[n] != NODE_AFFINITY_CONFLICT:
                out[n] = dra.prefilter[1][0]
                failures[(t, n)] = (dra.prefilter[0], dra.prefilter[1], 0)
    for node, plugin, why, others in dra.filters:
        n = index[node]
        if out[n] is None:
            out[n] = why[0]
            failures[(t, n)] = (plugin, why, AFTER_ALL, others) if others else (plugin, why, AFTER_ALL)
    return tuple(out)


def _fold(row: tuple[Optional[str], ...], t: int, prefilter, filters, index: dict[str, int],
          failures: dict[Pair, tuple[str, tuple[str, ...], bool]]) -> tuple[Optional[str], ...]:
    """One type's row with its volume verdicts folded in (``volume_rows``); records them in ``failures``."""
    out = list(row)
    if prefilter is not None:
        plugin, why = prefilter
        for n in range(len(out)):
            if out[n] != NODE_AFFINITY_CONFLICT:
                out[n] = why[0]
                failures[(t, n)] = (plugin, why, False)
    else:
        for node, plugin, why, others in filters:
            n = index[node]
            if out[n] is None:
                out[n] = why[0]
                failures[(t, n)] = (plugin, why, True, others) if others else (plugin, why, True)
    return tuple(out)


def claim_bindings(doc: Document, base_block: tuple[tuple[Optional[str], ...], ...],
                   static_block: tuple[tuple[Optional[str], ...], ...],
                   volume_failures: FrozenDict[Pair, tuple[str, tuple[str, ...], bool]],
                   ) -> tuple[tuple[ClaimBinding, ...], tuple[BindingGroup, ...]]:
    """The claims pod types' ``volumes.binds`` name (one ``ClaimBinding`` each) and their groups:
    the types naming the same claims agree on the joint states; every type using one of them
    binds in the group too unless it never runs (a PreFilter rejection), else the binding would
    depend on which pod came first."""
    index = {node.name: n for n, node in enumerate(doc.nodes)}
    groups: dict[tuple[str, ...], list[int]] = {}
    owner: dict[str, tuple[str, ...]] = {}
    for t, spec in enumerate(doc.pod_types):
        binds = spec.volumes.binds
        if binds is None:
            continue
        for claim in binds.claims:
            if owner.setdefault(claim, binds.claims) != binds.claims:
                raise FieldError(spec.path + ("volumes", "binds", "claims"),
                                 f"claim {claim} is in another group {list(owner[claim])}")
        groups.setdefault(binds.claims, []).append(t)
    for spec in doc.pod_types:
        used = {f"{spec.namespace}/{c}" for c in spec.volumes.claims} & set(owner)
        if used and spec.volumes.binds is None and spec.volumes.prefilter is None:
            claim = sorted(used)[0]
            raise FieldError(spec.path + ("volumes", "binds"), f"claim {claim} is bound by "
                             f"{doc.pod_types[groups[owner[claim]][0]].name}'s deployment: every pod type using it needs its binds")
    claims_out: list[ClaimBinding] = []
    groups_out: list[BindingGroup] = []
    for names, types in groups.items():
        first = doc.pod_types[types[0]].volumes.binds
        bounds = [state.bound for state in first.states]
        for t in types[1:]:
            if [state.bound for state in doc.pod_types[t].volumes.binds.states] != bounds:
                raise FieldError(doc.pod_types[t].path + ("volumes", "binds", "states"),
                                 f"differs from {doc.pod_types[types[0]].name}'s joint bindings of {list(names)}")
        base = len(claims_out)
        outcomes = [tuple(sorted({b[k] for b in bounds if b[k] is not None})) for k in range(len(names))]
        claims_out += [ClaimBinding(name, outs) for name, outs in zip(names, outcomes)]
        states = tuple(tuple(0 if o is None else outcomes[k].index(o) + 1 for k, o in enumerate(b)) for b in bounds)
        rows, failures, attach, following, choices, refusals = [], [], [], [], [], []
        frees, held_pods, held_attach = [], [], []
        for s in range(len(states)):
            bound: dict[Pair, tuple[str, tuple[str, ...], bool]] = {}
            row_of, attach_of, next_of, choices_of = {}, {}, {}, {}
            free_of, pods_of, moved_of = {}, {}, {}
            for t in types:
                spec = doc.pod_types[t]
                state = spec.volumes.binds.states[s]
                if s == 0:
                    row_of[t] = static_block[t]
                    bound.update({p: v for p, v in volume_failures.items() if p[0] == t})
                    attach_of[t] = (spec.volumes.attach, spec.volumes.attach_own)
                else:
                    row_of[t] = _fold_dra(_fold(base_block[t], t, state.prefilter, state.filters, index, bound), t,
                                          spec.dra, index, bound)
                    attach_of[t] = (state.attach, state.attach_own)
                on = dict(state.on)
                next_of[t] = tuple(on.get(node.name, -1) for node in doc.nodes)
                if state.choices:
                    several = dict(state.choices)
                    choices_of[t] = tuple(several.get(node.name, ()) for node in doc.nodes)
                off = dict(state.frees)
                free_of[t] = tuple(off.get(node.name, ()) for node in doc.nodes)
                pods_of.update({(t, index[n]): c for n, c in state.held_pods.items()})
                moved_of.update({(t, index[n]): d for n, d in state.held_attach.items()})
            rows.append(FrozenDict(row_of))
            failures.append(FrozenDict(bound))
            refusals.append(FrozenDict(run_refusals(doc, [doc.pod_types[t].volumes.binds.states[s].run_refusals
                                                          if t in types else () for t in range(len(doc.pod_types))])))
            attach.append(FrozenDict(attach_of))
            following.append(FrozenDict(next_of))
            choices.append(FrozenDict(choices_of))
            frees.append(FrozenDict(free_of))
            held_pods.append(FrozenDict(pods_of))
            held_attach.append(FrozenDict(moved_of))
        held = any(held_pods)   # a pod slot of pods holding another driver's PV (``BindingGroup.held_pods``)
        groups_out.append(BindingGroup(tuple(range(base, len(claims_out))), frozenset(types), states, tuple(rows),
                                       tuple(failures), tuple(attach), tuple(following),
                                       tuple(frees) if held else (), held_pods=tuple(held_pods) if held else (),
                                       held_attach=tuple(held_attach) if held else (),
                                       choices=tuple(choices) if any(choices) else (),
                                       interchangeable=first.interchangeable,
                                       run_refusals=tuple(refusals) if any(refusals) else ()))
    return tuple(claims_out), tuple(groups_out)


def device_groups(doc: Document, volume_block: tuple[tuple[Optional[str], ...], ...],
                  volume_only: FrozenDict[Pair, tuple[str, tuple[str, ...], int]],
                  static_block: tuple[tuple[Optional[str], ...], ...],
                  volume_failures: FrozenDict[Pair, tuple[str, tuple[str, ...], int]], base: int,
                  ) -> tuple[tuple[ClaimBinding, ...], tuple[BindingGroup, ...]]:
    """DRA devices as state (``loader.dra`` ``allocations``): one ``BindingGroup`` over the slots
    the types name (they must agree on the joint states), its slots numbered from ``base`` in
    ``Instance.bindings``. Entry 0 is the input's value; a claim slot's holders are the types
    naming the claim (``dra.claims``), and it is released to its unallocated entry."""
    types = [t for t, spec in enumerate(doc.pod_types) if spec.dra.allocations is not None]
    if not types:
        return (), ()
    first = doc.pod_types[types[0]].dra.allocations
    helds = [state.held for state in first.states]
    for t in types[1:]:
        spec = doc.pod_types[t]
        if spec.dra.allocations.slots != first.slots or [s.held for s in spec.dra.allocations.states] != helds:
            raise FieldError(spec.path + ("dra", "allocations"),
                             f"differs from {doc.pod_types[types[0]].name}'s joint allocations")
    if any(doc.pod_types[t].volumes.binds is not None for t in types):
        raise FieldError(doc.pod_types[types[0]].path + ("dra", "allocations"),
                         "a type with DRA allocations cannot also bind volume claims")
    unallocated = "(unallocated)"
    outcomes = [tuple(sorted({unallocated if h[k] is None else h[k] for h in helds} -
                             {unallocated if helds[0][k] is None else helds[0][k]})) for k in range(len(first.slots))]
    claims = tuple(ClaimBinding(name, outs, helds[0][k]) for k, (name, outs) in enumerate(zip(first.slots, outcomes)))
    states = tuple(tuple(0 if h[k] == helds[0][k] else outcomes[k].index(unallocated if h[k] is None else h[k]) + 1
                         for k in range(len(h))) for h in helds)
    holders = []
    for slot in first.slots:
        ns, _, name = slot.partition("/")
        holders.append(frozenset(t for t, spec in enumerate(doc.pod_types) if spec.namespace == ns and name in spec.dra.claims))
    releases = tuple(tuple(dict(state.releases).get(slot, -1) for slot in first.slots) for state in first.states)
    index = {node.name: n for n, node in enumerate(doc.nodes)}
    rows, failures, following, frees, refusals, tables, choices = [], [], [], [], [], [], []
    for s in range(len(states)):
        found: dict[Pair, tuple[str, tuple[str, ...], int]] = {}
        refusals.append(FrozenDict(run_refusals(doc, [doc.pod_types[t].dra.allocations.states[s].run_refusals
                                                      if t in types else () for t in range(len(doc.pod_types))])))
        tables.append(cycle_orders(doc, [doc.pod_types[t].dra.allocations.states[s].cycle_orders if t in types and s
                                         else () for t in range(len(doc.pod_types))]))
        row_of, next_of, free_of, choices_of = {}, {}, {}, {}
        for t in types:
            state = doc.pod_types[t].dra.allocations.states[s]
            if s == 0:
                row_of[t] = static_block[t]
                found.update({p: v for p, v in volume_failures.items() if p[0] == t})
            else:
                found.update({p: v for p, v in volume_only.items() if p[0] == t})
                row_of[t] = _fold_dra(volume_block[t], t, DraSpec(state.prefilter, state.filters), index, found)
            on, off = dict(state.on), dict(state.frees)
            next_of[t] = tuple(on.get(node.name, -1) for node in doc.nodes)
            free_of[t] = tuple(off.get(node.name, ()) for node in doc.nodes)
            if state.choices:   # the scheduler's order of pools and slices decides the devices taken
                several = dict(state.choices)
                choices_of[t] = tuple(several.get(node.name, ()) for node in doc.nodes)
        rows.append(FrozenDict(row_of))
        failures.append(FrozenDict(found))
        following.append(FrozenDict(next_of))
        frees.append(FrozenDict(free_of))
        choices.append(FrozenDict(choices_of))
    attach = tuple(FrozenDict({t: (doc.pod_types[t].volumes.attach, doc.pod_types[t].volumes.attach_own)
                               for t in types}) for _ in states)
    group = BindingGroup(tuple(range(base, base + len(claims))), frozenset(types), states, tuple(rows),
                         tuple(failures), attach, tuple(following), tuple(frees), tuple(holders), releases,
                         choices=tuple(choices) if any(choices) else (),
                         run_refusals=tuple(refusals) if any(refusals) else (),
                         cycle_orders=tuple(tables) if any(tables) else ())
    return claims, (group,)


def claim_terms(doc: Document, pod_types: tuple[PodType, ...]) -> tuple[PodType, ...]:
    """A ReadWriteOncePod claim: no other pod using it may run anywhere (VolumeRestrictions).

    One anti-affinity term over a single cluster-wide domain per such claim,
    selecting the types of the claim's namespace that use it.
    """
    if not any(spec.volumes.read_write_once_pod for spec in doc.pod_types):
        return pod_types
    everywhere = Topology("(cluster)", tuple(0 for _ in doc.nodes),
                          (frozenset(range(len(doc.nodes))),) if doc.nodes else (), ("cluster",))
    users: dict[tuple[str, str], set[int]] = {}
    for u, spec in enumerate(doc.pod_types):
        for claim in spec.volumes.claims:
            users.setdefault((spec.namespace, claim), set()).add(u)
    out = list(pod_types)
    for t, spec in enumerate(doc.pod_types):
        terms = tuple(AffinityTerm(selects=frozenset(sorted(users[(spec.namespace, claim)])), topology=everywhere,
                                   plugin=VOLUME_RESTRICTIONS) for claim in spec.volumes.read_write_once_pod)
        if terms:
            out[t] = replace(out[t], anti_affinity=out[t].anti_affinity + terms)
    return tuple(out)


def _check_paper_keys(doc: Document) -> None:
    """Paper profile: a node lacking a topology key in use is ill-formed input (SPEC 2.1)."""
    lacking: dict[str, Optional[Node]] = {}  # key -> the first node without it
    for spec in doc.pod_types:
        keyed = [(t.topology_key, t.path) for t in spec.affinity.pod_affinity + spec.affinity.pod_anti_affinity]
        keyed += [(s.topology_key, s.path) for s in spec.spread]
        for key, path in keyed:
            if key not in lacking:
                lacking[key] = next((node for node in doc.nodes if key not in node.labels), None)
            node = lacking[key]
            if node is not None:
                raise FieldError(
                    path + ("topologyKey",),
                    f"node '{node.name}' has no label '{key}'; the paper semantics needs every "
                    "topology key on every node",
                )


def _pod_type(ctx: _Context, spec: PodTypeSpec) -> PodType:
    return PodType(
        name=spec.name,
        namespace=spec.namespace,
        labels=spec.labels,
        requests=spec.requests,
        creatable=spec.creatable,
        host_ports=spec.host_ports,
        affinity=tuple(_term(ctx, spec, t) for t in spec.affinity.pod_affinity),
        anti_affinity=tuple(_term(ctx, spec, t) for t in spec.affinity.pod_anti_affinity),
        spread=tuple(_spread(ctx, spec, s) for s in spec.spread),
        max_per_node=spec.max_per_node,
        manifest=spec.manifest,
        static_pod=spec.static_pod,
        attach=spec.volumes.attach,
        attach_own=spec.volumes.attach_own,
        disks=spec.volumes.disks,
        prefilter_named=ctx.kube and bool(prefilter_node_names(spec.placement.node_affinity)),
    )


def _term(ctx: _Context, owner: PodTypeSpec, term: TermSpec) -> AffinityTerm:
    selector = term.selector.with_requirements(
        label_key_requirements(term.match_label_keys, owner.labels, IN)
        + label_key_requirements(term.mismatch_label_keys, owner.labels, NOT_IN)
    )
    if not ctx.kube:
        return AffinityTerm(selects=ctx.select(selector, None), topology=ctx.topology(term.topology_key))
    namespaces = ctx.term_namespaces(owner, term)
    selects = ctx.select(selector, namespaces)
    if _pending_sees_every_namespace(term):
        # The term of a *pending* pod: kube-scheduler v1.35 keeps its
        # namespaceSelector after unrolling it into namespaces and then matches
        # it against an empty label set (InterPodAffinity.PreFilter), so a
        # selector that matches no labels (NotIn, DoesNotExist) admits pods of
        # every namespace. Running pods' terms see the real namespace labels.
        pending = ctx.select(selector, None)
        if pending != selects:
            return AffinityTerm(selects=pending, topology=ctx.topology(term.topology_key), existing_selects=selects)
    return AffinityTerm(selects=selects, topology=ctx.topology(term.topology_key))


def _pending_sees_every_namespace(term: TermSpec) -> bool:
    selector = term.namespace_selector
    return selector is not None and not selector.is_empty() and selector.matches({})


def _spread(ctx: _Context, owner: PodTypeSpec, spec: SpreadSpec) -> SpreadConstraint:
    selector = spec.selector.with_requirements(label_key_requirements(spec.match_label_keys, owner.labels, IN))
    if ctx.kube and (selector.nothing or selector.is_empty()):
        # kube-scheduler: a null selector matches nothing; countPodsMatchSelector
        # counts 0 for an empty one, which still matches the incoming pod.
        counts: frozenset[int] = frozenset()
    else:
        # countPodsMatchSelector skips terminating pods (kubernetes#87621).
        counts = ctx.select(selector, frozenset({owner.namespace}) if ctx.kube else None) - ctx.terminating
    return SpreadConstraint(
        counts=counts,
        self_match=selector.matches(owner.labels),
        max_skew=spec.max_skew,
        min_domains=spec.min_domains,
        eligible=_eligible(ctx, owner, spec),
        topology=ctx.topology(spec.topology_key),
    )


def _eligible(ctx: _Context, owner: PodTypeSpec, spec: SpreadSpec) -> frozenset[int]:
    """E: the nodes with every topology key of the owner's spread constraints, filtered by
    the inclusion policies. The paper takes E as given; the v1 format has no field for it,
    so both profiles derive it this way (in the paper profile every node has every key)."""
    out: AbstractSet[int] = ctx.nodes.all
    for key in {s.topology_key for s in owner.spread}:
        out = out & ctx.nodes.having(key)
    if spec.node_affinity_policy == HONOR:
        out = out & ctx.affinity_nodes(owner.placement)
    if spec.node_taints_policy == HONOR:
        out = out & ctx.tolerated_nodes(owner.placement.tolerations)
    return _ascending_via_set(out)


def multiplicity_bounds(
    doc: Document, pod_types: tuple[PodType, ...], static_block: tuple[tuple[Optional[str], ...], ...]
) -> FrozenDict[Pair, int]:
    """For each counted pair, the largest count it can reach (SPEC 2.2, Definition 3)."""
    counted: dict[int, set[int]] = {}
    for pod in pod_types:
        for constraint in pod.spread:
            for u in constraint.counts:
                counted.setdefault(u, set()).update(constraint.eligible)
    bounds: dict[Pair, int] = {}
    initial_of: dict[int, dict[int, int]] = {}  # type -> node -> initial count
    for (u, m), count in doc.initial.items():
        initial_of.setdefault(u, {})[m] = count
    # Nodes often share one capacity: number the distinct ones once.
    shape_ids: dict[tuple, int] = {}
    shape_of = [shape_ids.setdefault(tuple(sorted(node.capacity.items())), len(shape_ids)) for node in doc.nodes]
    for u in sorted(counted):
        pod = pod_types[u]
        row = static_block[u]
        nodes = sorted(counted[u])
        initial_counts = initial_of.get(u, {})
        if not pod.creatable:
            bounds.update(((u, m), initial_counts.get(m, 0)) for m in nodes)
            continue
        # Capacity bounds per node shape, computed at the first unblocked node
        # of each shape, so that an unbounded pair is reported at its first node.
        by_shape: dict[int, int] = {}
        for m in nodes:
            if row[m] is None and shape_of[m] not in by_shape:
                bound = _capacity_bound(doc, pod, doc.nodes[m])
                if bound is None:
                    raise FieldError(
                        doc.pod_types[u].path,
                        f"pod type '{pod.name}' is counted by a topology spread constraint on node "
                        f"'{doc.nodes[m].name}' but nothing bounds how many of its pods fit there; give it a "
                        "positive resource request that the node's capacity limits, or set maxPerNode",
                    )
                by_shape[shape_of[m]] = bound
        for m in nodes:
            initial = initial_counts.get(m, 0)
            bound = initial if row[m] is not None else by_shape[shape_of[m]]
            bounds[(u, m)] = bound if bound >= initial else initial
    return FrozenDict(bounds)


def _capacity_bound(doc: Document, pod: PodType, node: Node) -> Optional[int]:
    """min over positive effective requests of capacity // request, maxPerNode, host ports."""
    requests = {r: q for r, q in pod.requests.items() if q > 0}
    if doc.profile == KUBERNETES and PODS_RESOURCE in node.capacity:
        requests[PODS_RESOURCE] = 1
    candidates = [node.capacity.get(r, 0) // q for r, q in requests.items()]
    if pod.max_per_node is not None:
        candidates.append(pod.max_per_node)
    if pod.host_ports:
        candidates.append(1)
    return min(candidates) if candidates else None

