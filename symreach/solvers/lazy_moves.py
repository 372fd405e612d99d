"""The lazy-deletion moves of ``lazy_search``, compiled to bitmasks over (type, node) pairs.

A state is a Python int: bit ``Instance.pair(t, n)`` is set when some pod of
t runs on n (saturation, SPEC 2.2: within the fragment below only presence
matters). For every deploy candidate p = (t, n) this module computes

- ``blockers``: the pairs whose presence alone forbids deploying p -- pods
  matching one of t's anti-affinity terms in the term's domain of n, and in
  the kubernetes profile also pods whose own anti-affinity term matches t
  with n in their domain (symmetry) and pods on n holding a conflicting host
  port. Both directions of anti-affinity are blockers: leaving either out
  makes the search unsound (``tests/test_lazy_search.py`` checks that).
- ``needs``: one mask per required affinity term, the pairs that witness it
  on n (paper: pods matching the term; kubernetes: pods matching all terms,
  each in its own term's domain).

so that "p can be deployed in s" is ``s & bit == 0`` and every ``needs``
mask meets ``s``, given ``s & blockers == 0``.

``fragment_problem`` says why an instance is outside the fragment in which
these masks are the whole guard (the engine then declines with that
reason): count targets; a hard spread constraint on a candidate type; a
self-affinity bootstrap a candidate could use (the waiver is a negative
test: a present pod can disable it); capacity that can bind (two pods that
could be present together exceed a node's capacity). Everything the
blockers and needs leave out is either static (node filters, a key the node
lacks, ``maxPerNode`` 0, a pod that does not fit an empty node: the pair is
no candidate) or excluded that way.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Optional

import numpy as np

from symreach import semantics
from symreach.encodings.preprocess import self_bootstrap
from symreach.model import KUBERNETES, Config, Instance, Pair, ports_conflict


@dataclass(frozen=True)
class Move:
    """Deploy ``pair`` (bit ``bit``) after deleting whatever of ``blockers`` is present.

    ``rep`` is the bit of the pair's class (``classes``): the search state
    records classes, the expansion to real actions uses ``pair``."""

    pair: Pair
    bit: int
    blockers: int
    needs: tuple[int, ...]
    rep: int = 0

    @property
    def witnesses(self) -> int:
        """Every pair that witnesses one of the needs."""
        out = 0
        for need in self.needs:
            out |= need
        return out


MaskMemo = dict[tuple[frozenset, tuple[int, ...]], int]


def mask(inst: Instance, types: Iterable[int], nodes: Iterable[int],
         memo: Optional[MaskMemo] = None) -> int:
    """The bits of every pair (u, m) with u in ``types`` and m in ``nodes``.

    ``memo`` caches masks of frozenset ``types`` (a term's ``selects``): on the
    Appendix-B nets most terms select the same pods (BART: 9,727 terms, 2,166
    distinct), and building each again cost seconds of the lazy search's time alone in ``auto``."""
    nodes = tuple(nodes)
    key = (types, nodes) if memo is not None and isinstance(types, frozenset) else None
    if key is not None and key in memo:
        return memo[key]
    out = from_bits([inst.pair(u, m) for u in types for m in nodes])
    if key is not None:
        memo[key] = out
    return out


_NUMPY_MIN_BITS = 64  # below this a Python loop is cheaper than numpy's set-up


def from_bits(indices: list[int]) -> int:
    """The int with exactly the bits ``indices`` set."""
    if len(indices) < _NUMPY_MIN_BITS:
        out = 0
        for p in indices:
            out |= 1 << p
        return out
    flags = np.zeros(max(indices) + 1, dtype=bool)
    flags[indices] = True
    return int.from_bytes(np.packbits(flags, bitorder="little").tobytes(), "little")


def set_bits(x: int) -> list[int]:
    """``list(bit_indices(x))``, through numpy for long ints, where clearing one
    bit at a time costs time linear in the int's length per bit."""
    if x.bit_length() < 4 * _NUMPY_MIN_BITS:
        return list(bit_indices(x))
    raw = np.frombuffer(x.to_bytes((x.bit_length() + 7) // 8, "little"), dtype=np.uint8)
    return np.flatnonzero(np.unpackbits(raw, bitorder="little")).tolist()


def bits_of(inst: Instance, sigma: Config) -> int:
    """The presence state of a configuration."""
    out = 0
    for p, c in enumerate(sigma):
        if c:
            out |= 1 << p
    return out


def blockers(inst: Instance, t: int, n: int, memo: Optional[MaskMemo] = None) -> int:
    """Pairs whose presence forbids deploying t on n, whatever else runs."""
    pod = inst.pod_types[t]
    out = 0
    for term in pod.anti_affinity:  # t's own terms; a node without the key: ignored
        out |= mask(inst, term.selects, term.topology.domain_nodes(n), memo)
    if inst.profile != KUBERNETES:
        return out
    for u, other in enumerate(inst.pod_types):
        for term in other.anti_affinity:  # existing pods' terms matching t (symmetry)
            if t in term.blocks and term.topology.domain_of[n] is not None:
                out |= mask(inst, (u,), term.topology.domain_nodes(n))
        if pod.host_ports and ports_conflict(pod.host_ports, other.host_ports):
            out |= 1 << inst.pair(u, n)
    return out


def needs(inst: Instance, t: int, n: int, memo: Optional[MaskMemo] = None) -> Optional[tuple[int, ...]]:
    """One witness mask per affinity term of t on n; None when a term can never
    hold there (kubernetes: n lacks the key; any profile: no witness pair)."""
    terms = inst.pod_types[t].affinity
    if not terms:
        return ()
    if inst.profile == KUBERNETES:
        if any(term.topology.domain_of[n] is None for term in terms):
            return None
        witnesses = semantics.affinity_witness_types(inst, t)
        out = tuple(mask(inst, witnesses, term.topology.domain_nodes(n)) for term in terms)
    else:
        out = tuple(mask(inst, term.selects, term.topology.domain_nodes(n), memo) for term in terms)
    return None if any(m == 0 for m in out) else out


def fits_empty(inst: Instance, t: int, n: int) -> bool:
    """Capacity and ``maxPerNode`` of t alone on an empty n (static for the search)."""
    pod = inst.pod_types[t]
    if pod.max_per_node is not None and pod.max_per_node < 1:
        return False
    return semantics.capacity_failure(inst, t, n, (0,) * inst.num_pairs) is None


def capacity_binds(inst: Instance, candidates: Iterable[Pair]) -> Optional[str]:
    """A reason when capacity can refuse a candidate: with every pair that can
    ever be present there at once (sigma0's pods and one pod per candidate),
    deploying the candidate overflows its node. None: capacity never binds."""
    candidates = list(candidates)
    most = list(inst.initial_config())
    for t, n in candidates:
        p = inst.pair(t, n)
        most[p] = max(most[p], 1)
    for t, n in candidates:
        p = inst.pair(t, n)
        sigma = tuple(most[:p] + [0] + most[p + 1:])
        why = semantics.capacity_failure(inst, t, n, sigma)
        if why is not None:
            return (f"capacity can bind ({inst.pod_types[t].name} on {inst.nodes[n].name}: {why} "
                    "beside every other pod that can run there)")
    return None


def fragment_problem(inst: Instance, types: Iterable[int], has_counts: bool) -> Optional[str]:
    """Why lazy deletion is not complete here (see the module docstring), or None.

    ``types`` are the candidate types; capacity is checked separately, on the
    candidate pairs (``capacity_binds``)."""
    if has_counts:
        return "count targets need multiplicities"
    for t in sorted(set(types)):
        pod = inst.pod_types[t]
        if pod.spread:
            return f"pod type {pod.name} has a hard topology-spread constraint (non-monotone)"
        if self_bootstrap(inst, t):
            return f"pod type {pod.name} can use the self-affinity bootstrap (non-monotone)"
    return None


def compile_moves(inst: Instance, candidates: Iterable[Pair]) -> list[Move]:
    """The moves of the statically possible candidates (see ``needs``, ``fits_empty``)."""
    moves = []
    memo: MaskMemo = {}
    for t, n in sorted(candidates):
        if not inst.pod_types[t].creatable or inst.static_block[t][n] is not None \
                or not fits_empty(inst, t, n):
            continue
        wanted = needs(inst, t, n, memo)
        if wanted is None:
            continue
        p = inst.pair(t, n)
        moves.append(Move((t, n), 1 << p, blockers(inst, t, n, memo), wanted))
    return moves


def classes(moves: list[Move], goals: list[int]) -> dict[int, int]:
    """Pair index -> the pair index representing its class, for every pair that
    some mask mentions.

    Two pairs are in one class when every blocker mask, every need mask and
    every goal contains both or neither (their *signature*). The guards read a
    state only through these masks, so a state's future depends only on which
    classes are present; pairs no mask mentions matter to nothing and are
    dropped from the state. In the Appendix-B encoding all pods marking one
    place (``I_p`` and every ``P_{p,a}``) form one class, so a marking is one
    state whichever transitions produced its tokens.

    The partition depends only on the *set* of distinct masks (two pairs are
    apart iff some mask holds one and not the other), so each distinct mask
    is read once (BART: 2,166 distinct of about 11,700).
    """
    distinct: dict[int, int] = {}
    for move in moves:
        for m in (move.blockers, *move.needs):
            if m:
                distinct.setdefault(m, len(distinct))
    signature: dict[int, list] = {}
    for m, i in distinct.items():
        for q in set_bits(m):
            signature.setdefault(q, []).append(i)
    for k, goal in enumerate(goals):
        for q in set_bits(goal):  # a goal needs *all* its pairs: each its own class
            signature.setdefault(q, []).append(("g", k, q))
    first: dict[tuple, int] = {}
    return {q: first.setdefault(tuple(sig), q) for q, sig in sorted(signature.items())}


def bit_indices(x: int):
    """The indices of the set bits of x, lowest first."""
    while x:
        low = x & -x
        yield low.bit_length() - 1
        x ^= low


def project(state: int, rep: dict[int, int]) -> int:
    """The class state of a presence state (pairs outside every mask dropped)."""
    out = 0
    for q in bit_indices(state):
        r = rep.get(q)
        if r is not None:
            out |= 1 << r
    return out
