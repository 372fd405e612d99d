"""Downward-closed invariants: the lazy-deletion search's not-deployable evidence.

Format ``symreach-lazy-closure/1`` (JSON): ``profile``, ``query``,
``free`` (pod-type names whose pods the invariant does not constrain),
``pairs`` (``[pod, node]`` pairs of the other types) and ``states`` (each a
list of indices into ``pairs``: a set of pairs M). The claimed invariant is

    D = { sigma : the pairs of non-free types present in sigma form a subset of some M }.

The checker re-reads everything from the instance with the executable
semantics; it shares nothing with the engine but the model. It verifies:

1. **Premises** (SPEC 2.2 fragment): no count target; the target's types
   are not free; every creatable non-free type has no hard spread
   constraint, cannot use the self-affinity bootstrap, and none of its
   affinity terms can be witnessed by a free type (paper: each term's
   types; kubernetes: the types matching all terms); capacity never binds:
   with sigma0's pods, one pod of every listed pair and one of every
   creatable free pair present, every candidate still fits.
2. sigma0 is in D; no M covers a target alternative.
3. **Closure.** For every M and every candidate p = (t, n) (t creatable and
   not free, static filters pass, fits an empty node) absent from M: let
   ``R = M \\ {q : a single pod of q forbids p}`` (``semantics`` on the
   one-pod configuration: anti-affinity either way, host ports). If
   ``semantics.deploy_failure`` accepts p in the configuration R, then
   ``R ∪ {p}`` is a subset of some M'.

*Why this proves not-deployable.* Deletions keep D. Deploying a free pod
keeps D. Let sigma in D (non-free part within M) and p deployable in
sigma. Each anti-affinity or host-port test is "no single pod of some set
is present" (SPEC 2: present(S, D) is a disjunction over pods), so no pod of
sigma forbids p alone, and sigma's non-free pairs lie in R. Affinity is
monotone (no bootstrap) and reads only non-free types, free pods only
forbid, capacity never binds, there is no spread: so p is deployable in R,
and the pairs of sigma + p lie in R ∪ {p}, within some M'. Hence D is
inductive, contains sigma0 and misses the target. Saturation (SPEC 2.2; a
pair deployed only while absent) is the one premise taken on trust, as for
``explicit_states``.
"""

from __future__ import annotations

from typing import Iterable, Optional

from symreach import semantics
from symreach.certify.names import (
    CertificateError,
    check_profile,
    checked,
    counts_of,
    named_pairs,
    pair_of,
    query_json,
    query_of,
)
from symreach.model import KUBERNETES, Instance, Pair, Query

FORMAT = "symreach-lazy-closure/1"


def make_certificate(inst: Instance, query: Query, free: Iterable[int],
                     states: Iterable[frozenset[Pair]]) -> dict:
    states = list(states)
    pairs = sorted({p for m in states for p in m})
    index = {p: i for i, p in enumerate(pairs)}
    return _document(inst, query, free, pairs, [sorted(index[p] for p in m) for m in states])


def _document(inst: Instance, query: Query, free: Iterable[int], pairs: list[Pair],
              states: list[list[int]]) -> dict:
    return {"format": FORMAT, "profile": inst.profile, "query": query_json(inst, query),
            "free": sorted(inst.pod_types[t].name for t in set(free)),
            "pairs": [[inst.pod_types[t].name, inst.nodes[n].name] for t, n in pairs],
            "states": states}


class ClosureCertificate:
    """The certificate as an engine returns it; serialised only when written.

    ``indexed`` builds it as the file lists it (sorted pairs, each M a sorted list of
    indices into them): the lazy search writes its tens of thousands of states that
    way without a set of pairs per state, which cost it more than its search on the
    philosophers' violations (benchmarks/results/auto_targets/lazy_bmc.md)."""

    def __init__(self, inst: Instance, query: Query, free: frozenset[int],
                 states: list[frozenset[Pair]]) -> None:
        self.inst, self.query, self.free = inst, query, free
        self._states: Optional[list[frozenset[Pair]]] = states
        self._indexed: Optional[tuple[list[Pair], list[list[int]]]] = None

    @classmethod
    def indexed(cls, inst: Instance, query: Query, free: frozenset[int], pairs: list[Pair],
                states: list[list[int]]) -> "ClosureCertificate":
        """``pairs`` sorted, without repeats, every one in some state; each state a
        sorted list of indices into ``pairs``."""
        cert = cls(inst, query, free, [])
        cert._states, cert._indexed = None, (pairs, states)
        return cert

    @property
    def states(self) -> list[frozenset[Pair]]:
        if self._states is None:
            pairs, states = self._indexed
            self._states = [frozenset(pairs[i] for i in m) for m in states]
        return self._states

    def to_json(self) -> dict:
        if self._indexed is not None:
            return _document(self.inst, self.query, self.free, *self._indexed)
        return make_certificate(self.inst, self.query, self.free, self._states)

    def dumps(self) -> str:
        import json

        return json.dumps(self.to_json())


def check_certificate(inst: Instance, cert: dict) -> tuple[bool, str]:
    return checked(lambda: _check(inst, cert), lambda count: (
        f"certificate accepted: the downward closure of {count} sets of pairs contains sigma0, "
        "is closed under every deployment and deletion, and none covers the target"))


def _check(inst: Instance, cert: dict) -> int:
    check_profile(inst, cert)
    alts = query_of(inst, cert)
    if counts_of(inst, cert):
        raise CertificateError("count targets are outside this certificate's fragment")
    free = _free(inst, cert)
    pairs = _pairs(inst, cert, free)
    bit = {p: 1 << i for i, p in enumerate(pairs)}
    states = _states(cert, len(pairs))
    if any(t in free for alt in alts for t, _ in alt):
        raise CertificateError("a target type is listed as free")
    candidates = _candidates(inst, free)
    _premises(inst, free, candidates, pairs)
    sigma0 = inst.initial_config()
    init = 0
    for p, c in enumerate(sigma0):
        t, n = inst.unpair(p)
        if c and t not in free:
            if (t, n) not in bit:
                raise CertificateError(f"the initial pod {_name(inst, (t, n))} is in no state")
            init |= bit[(t, n)]
    if not any(init & ~m == 0 for m in states):
        raise CertificateError("the initial configuration is not in the invariant")
    goal_masks = []
    for alt in alts:
        if all(p in bit for p in alt):
            goal_masks.append(sum(bit[p] for p in alt))
    for m in states:
        if any(m & g == g for g in goal_masks):
            raise CertificateError("a listed set covers the target")
    _closed(inst, pairs, bit, states, candidates)
    return len(states)


def _free(inst: Instance, cert: dict) -> set[int]:
    raw = cert.get("free", [])
    if not isinstance(raw, list):
        raise CertificateError("field 'free' must be a list of pod-type names")
    try:
        return {inst.type_index(str(name)) for name in raw}
    except KeyError as exc:
        raise CertificateError(f"unknown pod type {exc}") from None


def _pairs(inst: Instance, cert: dict, free: set[int]) -> list[Pair]:
    raw = cert.get("pairs")
    named_pairs(inst, raw, "pairs")  # validates names and shape
    pairs = [pair_of(inst, pod, node) for pod, node in raw]
    if len(set(pairs)) != len(pairs):
        raise CertificateError("a pair is listed twice")
    if any(t in free for t, _ in pairs):
        raise CertificateError("a listed pair is of a free type")
    return pairs


def _states(cert: dict, size: int) -> list[int]:
    raw = cert.get("states")
    if not isinstance(raw, list):
        raise CertificateError("field 'states' must be a list")
    out = []
    for row in raw:
        if not isinstance(row, list) or not all(
                isinstance(i, int) and not isinstance(i, bool) and 0 <= i < size for i in row):
            raise CertificateError(f"a state must list indices into 'pairs' (0..{size - 1})")
        out.append(sum(1 << i for i in set(row)))
    return out


def _candidates(inst: Instance, free: set[int]) -> list[Pair]:
    """Deployable pairs of non-free types as far as static checks and an empty node go."""
    empty = (0,) * inst.num_pairs
    out = []
    for t, pod in enumerate(inst.pod_types):
        if not pod.creatable or t in free:
            continue
        for n in range(len(inst.nodes)):
            if inst.static_block[t][n] is None and (pod.max_per_node is None or pod.max_per_node >= 1) \
                    and semantics.capacity_failure(inst, t, n, empty) is None:
                out.append((t, n))
    return out


def _premises(inst: Instance, free: set[int], candidates: list[Pair], pairs: list[Pair]) -> None:
    kube = inst.profile == KUBERNETES
    for t in sorted({t for t, _ in candidates}):
        pod = inst.pod_types[t]
        if pod.spread:
            raise CertificateError(f"{pod.name} has a hard topology-spread constraint")
        if not pod.affinity:
            continue
        if kube:
            witnesses = frozenset.intersection(*(term.selects for term in pod.affinity))
            if t in witnesses:
                raise CertificateError(f"{pod.name} can use the self-affinity bootstrap")
            if witnesses & free:
                raise CertificateError(f"a free type can witness the affinity of {pod.name}")
        for term in pod.affinity:
            if not kube and t in term.selects:
                raise CertificateError(f"{pod.name} can use the self-affinity bootstrap")
            if not kube and term.selects & free:
                raise CertificateError(f"a free type can witness the affinity of {pod.name}")
    most = list(inst.initial_config())
    free_pairs = [(t, n) for t in free if inst.pod_types[t].creatable for n in range(len(inst.nodes))
                  if inst.static_block[t][n] is None]
    for t, n in list(pairs) + free_pairs:
        p = inst.pair(t, n)
        most[p] = max(most[p], 1)
    for t, n in candidates:
        p = inst.pair(t, n)
        sigma = tuple(most[:p] + [0] + most[p + 1:])
        if semantics.capacity_failure(inst, t, n, sigma) is not None:
            raise CertificateError(f"capacity can bind: {_name(inst, (t, n))}")


def _closed(inst: Instance, pairs: list[Pair], bit: dict[Pair, int], states: list[int],
            candidates: list[Pair]) -> None:
    """Step 3. Within R (no pod forbids p, capacity never binds, no spread) the
    semantics' verdict on p reads only the pods of the types p's affinity terms
    select, so it is computed once per distinct ``R ∩ reads(p)``."""
    zero = [0] * inst.num_pairs
    containing: dict[int, list[int]] = {b: [m for m in states if m & b] for b in bit.values()}
    for t, n in candidates:
        forbids = 0
        for q in pairs:
            one = list(zero)
            one[inst.pair(*q)] = 1
            if _forbids(inst, t, n, tuple(one)):
                forbids |= bit[q]
        reads = _reads(inst, t, bit)
        mine = bit.get((t, n), 0)
        verdicts: dict[int, bool] = {}
        for m in states:
            if m & mine:
                continue
            r = m & ~forbids
            key = r & reads
            ok = verdicts.get(key)
            if ok is None:
                sigma = list(zero)
                for i, q in enumerate(pairs):
                    if key >> i & 1:
                        sigma[inst.pair(*q)] = 1
                ok = verdicts[key] = semantics.deploy_failure(inst, t, n, tuple(sigma)) is None
            if not ok:
                continue
            need = r | mine
            if not mine or not any(need & ~other == 0 for other in containing[mine]):
                raise CertificateError(f"not closed under deploying {_name(inst, (t, n))}")


def _reads(inst: Instance, t: int, bit: dict[Pair, int]) -> int:
    """The listed pairs whose pods t's affinity terms can read (any term's types)."""
    selected: set[int] = set()
    for term in inst.pod_types[t].affinity:
        selected |= term.selects
    out = 0
    for (u, _), b in bit.items():
        if u in selected:
            out |= b
    return out


def _forbids(inst: Instance, t: int, n: int, one) -> bool:
    """Whether the single pod of ``one`` forbids t on n by anti-affinity or a host port."""
    if not semantics.anti_affinity_ok(inst, t, n, one):
        return True
    if inst.profile == KUBERNETES:
        return not (semantics.existing_anti_affinity_ok(inst, t, n, one)
                    and semantics.ports_ok(inst, t, n, one))
    return False


def _name(inst: Instance, p: Pair) -> str:
    t, n = p
    return f"{inst.pod_types[t].name} on {inst.nodes[n].name}"
