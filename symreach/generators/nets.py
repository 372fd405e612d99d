"""Parametric one-safe Petri-net families for the Appendix B reduction.

Each family documents a place that is coverable and one that can never be
marked (a ``*_violation`` place produced only by a transition that needs two
places a mutual-exclusion invariant keeps apart). ``seed`` only permutes the
declaration order of places and transitions (the net is the same up to
renaming of positions), which exercises order independence; ``seed=None``
keeps the canonical order.

- ``token_ring(n)`` (n >= 2 processes): places ``idle_i``, ``crit_i``,
  ``tok_i``. ``enter_i``: {idle_i, tok_i} -> {crit_i};
  ``leave_i``: {crit_i} -> {idle_i, tok_(i+1)};
  ``pass_i``: {idle_i, tok_i} -> {idle_i, tok_(i+1)} (idle_i is a self-loop,
  i.e. a preserved place). Initially every ``idle_i`` and ``tok_0``.
  Invariants: idle_i + crit_i = 1, Σ tok + Σ crit = 1. Coverable:
  ``crit_(n-1)``. Never marked: ``ring_violation`` (``collide``:
  {crit_0, crit_1} -> {ring_violation}).
- ``mutex(n)`` (n >= 2): places ``lock``, ``idle_i``, ``crit_i``.
  ``acquire_i``: {idle_i, lock} -> {crit_i}; ``release_i``: {crit_i} ->
  {idle_i, lock}. Coverable: ``crit_(n-1)``. Never marked:
  ``mutex_violation`` ({crit_0, crit_1} -> it).
- ``philosophers(n)`` (n >= 2 forks and philosophers): places ``think_i``,
  ``left_i`` (holds its left fork), ``eat_i``, ``fork_i``.
  ``take_left_i``: {think_i, fork_i} -> {left_i};
  ``take_right_i``: {left_i, fork_(i+1)} -> {eat_i};
  ``release_i``: {eat_i} -> {think_i, fork_i, fork_(i+1)}. Coverable:
  ``eat_(n-1)``. Never marked: ``philosophers_violation``
  ({eat_0, eat_1} -> it; neighbours share fork_1).
- ``add_dead_place(net, name)``: adds an unmarked place ``name`` that no
  transition produces, and a transition ``use_<name>``: {name} ->
  {<name>_next}; both places are never marked.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Callable, Optional

from symreach.frontends.petri_net import PetriNet, Transition


@dataclass(frozen=True)
class NetFamily:
    """A generated net with its documented coverable and never-markable places."""

    net: PetriNet
    coverable: str
    never_marked: Optional[str]


def _tr(name: str, pre: list[str], post: list[str]) -> Transition:
    return Transition(name, frozenset(pre), frozenset(post))


def _build(name: str, places: list[str], transitions: list[Transition], initial: list[str],
           seed: Optional[int]) -> PetriNet:
    if seed is not None:
        rng = random.Random(seed)
        places = list(places)
        transitions = list(transitions)
        rng.shuffle(places)
        rng.shuffle(transitions)
    return PetriNet(name, tuple(places), tuple(transitions), frozenset(initial))


def _check_n(n: int) -> None:
    if n < 2:
        raise ValueError("the family needs n >= 2")


def token_ring(n: int, seed: Optional[int] = None) -> NetFamily:
    _check_n(n)
    places, ts = [], []
    for i in range(n):
        places += [f"idle_{i}", f"crit_{i}", f"tok_{i}"]
    for i in range(n):
        j = (i + 1) % n
        ts.append(_tr(f"enter_{i}", [f"idle_{i}", f"tok_{i}"], [f"crit_{i}"]))
        ts.append(_tr(f"leave_{i}", [f"crit_{i}"], [f"idle_{i}", f"tok_{j}"]))
        ts.append(_tr(f"pass_{i}", [f"idle_{i}", f"tok_{i}"], [f"idle_{i}", f"tok_{j}"]))
    places.append("ring_violation")
    ts.append(_tr("collide", ["crit_0", "crit_1"], ["ring_violation"]))
    initial = [f"idle_{i}" for i in range(n)] + ["tok_0"]
    return NetFamily(_build(f"token-ring-{n}", places, ts, initial, seed),
                     f"crit_{n - 1}", "ring_violation")


def mutex(n: int, seed: Optional[int] = None) -> NetFamily:
    _check_n(n)
    places = ["lock"]
    ts = []
    for i in range(n):
        places += [f"idle_{i}", f"crit_{i}"]
        ts.append(_tr(f"acquire_{i}", [f"idle_{i}", "lock"], [f"crit_{i}"]))
        ts.append(_tr(f"release_{i}", [f"crit_{i}"], [f"idle_{i}", "lock"]))
    places.append("mutex_violation")
    ts.append(_tr("collide", ["crit_0", "crit_1"], ["mutex_violation"]))
    initial = ["lock"] + [f"idle_{i}" for i in range(n)]
    return NetFamily(_build(f"mutex-{n}", places, ts, initial, seed),
                     f"crit_{n - 1}", "mutex_violation")


def philosophers(n: int, seed: Optional[int] = None) -> NetFamily:
    _check_n(n)
    places, ts = [], []
    for i in range(n):
        places += [f"think_{i}", f"left_{i}", f"eat_{i}", f"fork_{i}"]
    for i in range(n):
        j = (i + 1) % n
        ts.append(_tr(f"take_left_{i}", [f"think_{i}", f"fork_{i}"], [f"left_{i}"]))
        ts.append(_tr(f"take_right_{i}", [f"left_{i}", f"fork_{j}"], [f"eat_{i}"]))
        ts.append(_tr(f"release_{i}", [f"eat_{i}"], [f"think_{i}", f"fork_{i}", f"fork_{j}"]))
    places.append("philosophers_violation")
    ts.append(_tr("clash", ["eat_0", "eat_1"], ["philosophers_violation"]))
    initial = [f"think_{i}" for i in range(n)] + [f"fork_{i}" for i in range(n)]
    return NetFamily(_build(f"philosophers-{n}", places, ts, initial, seed),
                     f"eat_{n - 1}", "philosophers_violation")


def add_dead_place(net: PetriNet, name: str = "dead") -> PetriNet:
    """``net`` plus a never-marked place ``name`` and a dead consumer of it."""
    nxt = f"{name}_next"
    return PetriNet(net.name, net.places + (name, nxt),
                    net.transitions + (_tr(f"use_{name}", [name], [nxt]),),
                    net.initial)


FAMILIES: dict[str, Callable[..., NetFamily]] = {
    "ring": token_ring,
    "mutex": mutex,
    "philosophers": philosophers,
}
