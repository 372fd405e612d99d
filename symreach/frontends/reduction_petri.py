"""Appendix B of the paper: the encoding E_PN of a 1-safe Petri net.

``encode_petri(net, g)`` returns a symreach instance (format v1, a plain dict)
in which the pod type ``G_g`` is deployable on the single node exactly when
place ``g`` is coverable in ``net`` (Theorem 18). It follows the appendix
literally; nothing is optimised away.

Appendix notation → what is emitted. ``s[L]`` is "the selector matching the
pod types that carry label L"; every term has topologyKey
``kubernetes.io/hostname`` (the unique node's hostname domain).

==========  =====================  ==============================================
appendix    type name              labels / required affinity / anti-affinity
==========  =====================  ==============================================
n           node ``n``             one node, no capacity, no requests (``semantics: paper``)
⊥           label key ``bottom``   fresh: no pod type carries it; ``s[⊥]`` is
                                   ``matchExpressions: [{key: bottom, operator: Exists}]``
I_p         ``I-<p>``              carries ``place = p``; affinity ``s[⊥]``;
            (p ∈ M0)               anti-affinity ``s[place = p]``. Initially 1 pod;
                                   once deleted it can never be deployed again.
R_0         ``R0``                 carries ``ready``; affinity ``s[⊥]``;
                                   anti-affinity ``s[ready]``. Initially 1 pod.
S_a         ``S-<a>``              carries ``start`` and ``start = a``; affinity
                                   ``s[ready]`` and ``s[place = p]`` for p ∈ Pre(a);
                                   anti-affinity ``s[start]``, ``s[end]``.
E_a         ``E-<a>``              carries ``execute`` and ``execute = a``;
                                   affinity ``s[start = a]``; anti-affinity
                                   ``s[ready]``, ``s[execute]``, and
                                   ``s[place = p]`` for p ∈ Consumed(a).
P_{p,a}     ``P-<p>-<a>``          carries ``place = p``; affinity
            (p ∈ Produced(a))      ``s[execute = a]``; anti-affinity ``s[place = p]``.
F_a         ``F-<a>``              carries ``end`` and ``end = a``; affinity
                                   ``s[execute = a]`` and ``s[place = p]`` for
                                   p ∈ Post(a); anti-affinity ``s[end]``.
R_a         ``R-<a>``              carries ``ready``; affinity ``s[end = a]``;
                                   anti-affinity ``s[ready]``, ``s[start]``,
                                   ``s[execute]``.
G_g         ``G-<g>``              carries the fresh label ``goal``; affinity
                                   ``s[place = g]``. The query is (G_g, n).
==========  =====================  ==============================================

Labels. "carries X and X = a" is one Kubernetes label ``X: a``: ``s[X]`` is the
selector ``X Exists`` and ``s[X = a]`` is ``matchLabels {X: a}``. ``ready`` and
``goal`` are carried as ``ready: ""`` and ``goal: <g>``. Label values are the
place and transition identifiers, made valid Kubernetes label values
(``_names.LabelValues``). Type names are sanitized and made unique
(``_names.UniqueNames``).

Consumed(a) = Pre(a) \\ Post(a), Preserved(a) = Pre(a) ∩ Post(a),
Produced(a) = Post(a) \\ Pre(a) (``petri_net.Transition``).

The encoding needs the paper's per-term witness semantics (Definition 1), so
the document says ``semantics: paper``. No type matches one of its own
affinity terms, so the self-affinity bootstrap never applies. ``creatable`` is
left at its default: the initial-only types I_p and R_0 are blocked from
redeployment by their affinity to ``s[⊥]``, exactly as in the appendix.
"""

from __future__ import annotations

from typing import Any, Iterable

from symreach.errors import InputError
from symreach.frontends.naming import LabelValues, UniqueNames
from symreach.frontends.petri_net import PetriNet

HOSTNAME = "kubernetes.io/hostname"
NODE = "n"

# Label keys of the construction.
PLACE = "place"
START = "start"
EXECUTE = "execute"
END = "end"
READY = "ready"
GOAL = "goal"
BOTTOM = "bottom"  # ⊥: fresh, carried by no pod type

Role = tuple[str, ...]


def petri_type_names(net: PetriNet, goal: str) -> dict[Role, str]:
    """The pod-type name of every role of E_PN(net, goal), in emission order.

    Roles: ``("I", p)``, ``("R0",)``, ``("S", a)``, ``("E", a)``,
    ``("P", p, a)``, ``("F", a)``, ``("R", a)``, ``("G", g)``.
    """
    names = UniqueNames()
    out: dict[Role, str] = {}
    for p in net.places:
        if p in net.initial:
            out[("I", p)] = names.take(f"I-{p}")
    out[("R0",)] = names.take("R0")
    for t in net.transitions:
        a = t.name
        out[("S", a)] = names.take(f"S-{a}")
        out[("E", a)] = names.take(f"E-{a}")
        for p in net.places:
            if p in t.produced:
                out[("P", p, a)] = names.take(f"P-{p}-{a}")
        out[("F", a)] = names.take(f"F-{a}")
        out[("R", a)] = names.take(f"R-{a}")
    out[("G", goal)] = names.take(f"G-{goal}")
    return out


def _has(key: str) -> dict[str, Any]:
    """s[key]: pods carrying label key ``key``."""
    return {"matchExpressions": [{"key": key, "operator": "Exists"}]}


def _eq(key: str, value: str) -> dict[str, Any]:
    """s[key = value]."""
    return {"matchLabels": {key: value}}


def _terms(selectors: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{"labelSelector": s, "topologyKey": HOSTNAME} for s in selectors]


def _pod_type(name: str, labels: dict[str, str], affinity: list[dict[str, Any]],
              anti: list[dict[str, Any]]) -> dict[str, Any]:
    aff: dict[str, Any] = {}
    if affinity:
        aff["podAffinity"] = {"requiredDuringSchedulingIgnoredDuringExecution": _terms(affinity)}
    if anti:
        aff["podAntiAffinity"] = {"requiredDuringSchedulingIgnoredDuringExecution": _terms(anti)}
    doc: dict[str, Any] = {"name": name, "labels": labels}
    if aff:
        doc["affinity"] = aff
    return doc


def encode_petri(net: PetriNet, goal: str, node: str = NODE) -> dict[str, Any]:
    """E_PN(net, goal): a format-v1 document whose query is (G_goal, node)."""
    if goal not in net.places:
        raise InputError(f"net {net.name} has no place {goal!r}", field_path="goal")
    names = petri_type_names(net, goal)
    pval = LabelValues()
    tval = LabelValues()
    # Places in declaration order, so the emitted terms are deterministic.
    def places(subset: frozenset[str]) -> list[str]:
        return [p for p in net.places if p in subset]

    types: list[dict[str, Any]] = []
    for p in net.places:
        if p in net.initial:
            types.append(_pod_type(names[("I", p)], {PLACE: pval(p)},
                                   [_has(BOTTOM)], [_eq(PLACE, pval(p))]))
    types.append(_pod_type(names[("R0",)], {READY: ""}, [_has(BOTTOM)], [_has(READY)]))
    for t in net.transitions:
        a = t.name
        av = tval(a)
        types.append(_pod_type(
            names[("S", a)], {START: av},
            [_has(READY)] + [_eq(PLACE, pval(p)) for p in places(t.pre)],
            [_has(START), _has(END)]))
        types.append(_pod_type(
            names[("E", a)], {EXECUTE: av},
            [_eq(START, av)],
            [_has(READY), _has(EXECUTE)] + [_eq(PLACE, pval(p)) for p in places(t.consumed)]))
        for p in places(t.produced):
            types.append(_pod_type(names[("P", p, a)], {PLACE: pval(p)},
                                   [_eq(EXECUTE, av)], [_eq(PLACE, pval(p))]))
        types.append(_pod_type(
            names[("F", a)], {END: av},
            [_eq(EXECUTE, av)] + [_eq(PLACE, pval(p)) for p in places(t.post)],
            [_has(END)]))
        types.append(_pod_type(
            names[("R", a)], {READY: ""},
            [_eq(END, av)],
            [_has(READY), _has(START), _has(EXECUTE)]))
    types.append(_pod_type(names[("G", goal)], {GOAL: pval(goal)},
                           [_eq(PLACE, pval(goal))], []))

    initial = [{"pod": names[("I", p)], "node": node, "count": 1}
               for p in net.places if p in net.initial]
    initial.append({"pod": names[("R0",)], "node": node, "count": 1})
    return {
        "version": 1,
        "semantics": "paper",
        "nodes": [{"name": node}],
        "podTypes": types,
        "initial": initial,
        "query": {"pod": names[("G", goal)], "node": node},
    }
