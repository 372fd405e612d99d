"""The symbolic transition system every symbolic engine reads.

A ``TransitionSystem`` is built by ``symreach.encodings.compile.compile_system``
from an ``Instance`` and a ``Query`` (after the sound preprocessing of
``symreach.encodings.preprocess``). It is backend-neutral: guards and the
target are nodes of one ``Circuit``.

State
    The state variables are the ``VAR`` nodes listed in ``state_vars`` (ids in
    ``circuit``); the list order is a suggested static variable order (a
    node's / a topology domain's bits grouped together). Names say what a
    variable means:

    - ``("present", t, n)``: at least one pod of type index ``t`` runs on node
      index ``n`` (indices of the *original* ``Instance``).
    - ``("count", t, n, j)``: bit ``j`` (least significant first) of the binary
      multiplicity counter of a *counted* pair (one some spread constraint
      observes, or one a count target reads). For a counted pair ``present == (count != 0)`` holds in the
      initial state and every action preserves it, so guards read presence
      from the ``present`` variable and multiplicities from the counter.

    Pairs that preprocessing proved can never be present have no variable:
    they are the constant 0 in every guard.

Initial state
    ``initial`` maps every state variable id to a bool (a single state). For a
    saturated (uncounted) pair it is ``min(sigma0, 1)``; ``extras`` records the
    pods of sigma0 that the system does not model (extra copies of saturated
    pairs, pods of types dropped by the cone of influence);
    ``compile.realize_trace`` re-inserts their deletions where needed.

Actions
    ``actions[i]`` is ``deploy(t, n)`` or ``delete(t, n)`` of one pair. Its
    transition relation is::

        s --a--> s'  iff  guard(s)  and, for some move m in a.moves,
                          s agrees with m.pre  and  s' = s updated by m.post

    where ``m.pre`` / ``m.post`` are tuples ``(var id, bool)`` over exactly the
    variables in ``a.writes`` and every other variable keeps its value (frame).
    (Exception: ``counters.CounterSystem``'s carry-pattern moves mention a
    subset of ``a.writes``, the same one in pre and post, and leave the rest
    unchanged; only the BDD engine, whose images implement that, reads them.)
    The ``pre`` cubes of one action are pairwise disjoint, so actions are
    deterministic. The guard is a circuit over the *pre*-state and may mention
    written variables (e.g. a capacity sum including the pair itself); it
    does not repeat the conditions already in the ``pre`` cubes.

    - bit deploy:    writes (p,), one move  pre p=0  post p=1
      (saturation: a present saturated pair is never deployed again);
    - bit delete:    one move  pre p=1  post p=0;
    - counter deploy: one move per value v < bound: pre (count=v, p=(v>0)),
      post (count=v+1, p=1);
    - counter delete: one move per value v >= 1: pre (count=v, p=1),
      post (count=v-1, p=(v>1)).

Target
    ``target`` is a circuit over the state (a DNF of presence variables, and
    for count targets a PB node over counters).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping, Optional, Sequence

from symreach.encodings.circuit import Circuit
from symreach.model import Pair
from symreach.result import DELETE, DEPLOY, Step

Literal = tuple[int, bool]  # (variable id, value)


@dataclass(frozen=True)
class Move:
    """One local update of an action: the written variables before and after."""

    pre: tuple[Literal, ...]
    post: tuple[Literal, ...]


@dataclass(frozen=True)
class Action:
    """``deploy(t, n)`` or ``delete(t, n)``: guard over the pre-state, local moves."""

    op: str  # DEPLOY | DELETE
    type_index: int
    node_index: int
    guard: int
    writes: tuple[int, ...]
    moves: tuple[Move, ...]

    @property
    def pair(self) -> Pair:
        return (self.type_index, self.node_index)


@dataclass(frozen=True)
class PairVars:
    """The variables of one modelled (type, node) pair."""

    present: int
    count_bits: tuple[int, ...] = ()  # empty for a saturated pair
    bound: int = 1

    @property
    def counted(self) -> bool:
        return bool(self.count_bits)


@dataclass
class TransitionSystem:
    """See the module docstring. ``stats`` carries preprocessing counters."""

    circuit: Circuit
    state_vars: tuple[int, ...]
    pairs: dict[Pair, PairVars]
    initial: dict[int, bool]
    actions: tuple[Action, ...]
    target: int
    type_names: tuple[str, ...]
    node_names: tuple[str, ...]
    extras: dict[Pair, int] = field(default_factory=dict)
    cone: tuple[int, ...] = ()  # type indices kept by the affinity cone of influence
    stats: dict[str, Any] = field(default_factory=dict)
    # Where deletions are allowed (a circuit over the state; TRUE: always, as SPEC 2 says).
    # The gang system (``gang_system.py``) forbids them once the gang step began; the macro
    # steps of IC3 and BMC (``cnf.deletions``, ``ic3_lift``) read it.
    deletion_guard: int = Circuit.TRUE

    # ---- decoding ---------------------------------------------------------
    def var_name(self, v: int):
        return self.circuit.var_name(v)

    def step(self, action: Action) -> Step:
        """The ``Step`` (op, type name, node name) of an action."""
        return Step(action.op, self.type_names[action.type_index], self.node_names[action.node_index])

    def decode(self, state: Mapping[int, bool]) -> dict[Pair, int]:
        """Counts of the modelled pairs in a state given by variable ids."""
        out: dict[Pair, int] = {}
        for pair, pv in self.pairs.items():
            if pv.counted:
                c = sum(1 << j for j, b in enumerate(pv.count_bits) if state[b])
            else:
                c = int(bool(state[pv.present]))
            if c:
                out[pair] = c
        return out

    # ---- explicit semantics (for tests and witness checking) ---------------
    def enabled_moves(self, action: Action, state: Mapping[int, bool]) -> Optional[Move]:
        """The move ``action`` takes from ``state``, or None when it is disabled."""
        for move in action.moves:
            if all(state[v] == b for v, b in move.pre):
                if self.circuit.evaluate(action.guard, state):
                    return move
                return None
        return None

    def successor(self, action: Action, state: Mapping[int, bool]) -> Optional[dict[int, bool]]:
        move = self.enabled_moves(action, state)
        if move is None:
            return None
        out = dict(state)
        out.update(move.post)
        return out

    def holds(self, root: int, state: Mapping[int, bool]) -> bool:
        return self.circuit.evaluate(root, state)

    def deploys(self) -> Sequence[Action]:
        return [a for a in self.actions if a.op == DEPLOY]

    def deletes(self) -> Sequence[Action]:
        return [a for a in self.actions if a.op == DELETE]
