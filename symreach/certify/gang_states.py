"""Gang certificates: the reachable set, closed, and no gang step from any of its states.

Format ``symreach-gang-states/1`` (JSON): ``profile``, ``group`` (the root of
the hierarchy asked about), ``pairs`` and ``states`` as in the explicit-states
certificate. The checker re-derives everything from the instance and the
semantics, sharing no code with the engine (``symreach.gangs`` and
``solvers/gang_explicit``):

1. sigma0 is in the set;
2. the set is closed under every deletion and every deployment the
   background allows (a creatable type that is no member of the asked
   hierarchy nor of any gang-policy group, up to saturation as in the
   explicit-states certificate: its one premise taken on trust);
3. from no state does a gang step exist. ``step_exists`` decides that by
   plain breadth-first search over the sets of assumed members (no node
   symmetry, no policy bound), level by level: it is also the oracle of
   the differential tests.
"""

from __future__ import annotations

import json
from typing import Optional

from symreach import semantics
from symreach.certify.explicit_states import read_states
from symreach.certify.names import CertificateError, check_profile, checked
from symreach.errors import LimitReached
from symreach.model import GANG, Config, Group, Instance

FORMAT = "symreach-gang-states/1"
MAX_STATES = 50_000


def make_certificate(inst: Instance, root: str, states: list[Config]) -> dict:
    used = sorted({p for sigma in states for p, c in enumerate(sigma) if c})
    return {"format": FORMAT, "profile": inst.profile, "group": root, "query": [],
            "pairs": [[inst.pod_types[t].name, inst.nodes[n].name] for t, n in map(inst.unpair, used)],
            "states": [[sigma[p] for p in used] for sigma in states]}


class GangStatesCertificate:
    """What the engine returns; serialised only when written."""

    def __init__(self, inst: Instance, root: str, states: list[Config]) -> None:
        self.inst, self.root, self.states = inst, root, states

    def to_json(self) -> dict:
        return make_certificate(self.inst, self.root, self.states)

    def dumps(self) -> str:
        return json.dumps(self.to_json())


# ---- the hierarchy, read again from the instance --------------------------------------------------

def _hierarchy(inst: Instance, root: str) -> tuple[dict[str, Group], dict[str, list[str]]]:
    by_name = {g.name: g for g in inst.groups}
    if root not in by_name:
        raise CertificateError(f"the instance has no group '{root}'")
    kids: dict[str, list[str]] = {}
    for g in inst.groups:
        if g.parent is not None:
            kids.setdefault(g.parent, []).append(g.name)
    out: dict[str, Group] = {}
    stack = [root]
    while stack:
        name = stack.pop()
        out[name] = by_name[name]
        stack += kids.get(name, [])
    return out, kids


def _met(groups: dict[str, Group], kids: dict[str, list[str]], name: str, have: dict[str, int]) -> bool:
    g = groups[name]
    wanted = g.min_count if g.policy == GANG else 1
    if not g.composite:
        return have[name] >= wanted
    return sum(_met(groups, kids, k, have) for k in kids.get(name, [])) >= wanted


def step_exists(inst: Instance, root: str, sigma: Config, budget: Optional[list[int]] = None) -> bool:
    """Whether some gang step from sigma places the hierarchy ``root`` (brute force).

    ``budget``: a one-item list of configurations left to visit; ``LimitReached`` when spent
    (a limit of the checker, not a fault of the certificate: exit 3, not "INVALID").
    """
    groups, kids = _hierarchy(inst, root)
    leaves = [g for g in groups.values() if not g.composite]
    leaf_of = {t: g.name for g in leaves for t, _ in g.members}
    pending: dict[int, int] = {}
    for g in leaves:
        for t, c in g.members:
            pending[t] = pending.get(t, 0) + c
    running = {g.name: 0 for g in leaves}
    for t, leaf in leaf_of.items():
        running[leaf] += sum(sigma[inst.pair(t, n)] for n in range(len(inst.nodes)))

    def success(config: Config) -> bool:
        assumed = {g.name: 0 for g in leaves}
        for t, leaf in leaf_of.items():
            assumed[leaf] += sum(config[inst.pair(t, n)] - sigma[inst.pair(t, n)] for n in range(len(inst.nodes)))
        for g in leaves:
            wanted = g.min_count if g.policy == GANG else 1
            if assumed[g.name] and running[g.name] + assumed[g.name] < wanted:
                return False
        return _met(groups, kids, root, {g: running[g] + assumed[g] for g in running})

    level = {sigma}
    seen = {sigma}
    while level:
        nxt = set()
        for config in level:
            if success(config):
                return True
            if budget is not None:
                budget[0] -= 1
                if budget[0] < 0:
                    raise LimitReached(
                        "certify stopped at its budget: the plain gang-step search of this certificate "
                        "(no node symmetry) visited its limit of configurations; the certificate is "
                        "neither accepted nor refused. On large instances ask the bdd engine for the "
                        "certificate (symreach-gang-bdd/1), which certify re-checks quickly")
            for t, limit in pending.items():
                used = sum(config[inst.pair(t, n)] - sigma[inst.pair(t, n)] for n in range(len(inst.nodes)))
                if used >= limit:
                    continue
                for n in range(len(inst.nodes)):
                    if semantics.node_failure(inst, t, n, config) is None:
                        succ = semantics.deploy(inst, config, t, n)
                        if succ not in seen:
                            seen.add(succ)
                            nxt.add(succ)
        level = nxt
    return False


def background_types(inst: Instance, root: str) -> frozenset[int]:
    """Types the background may deploy: creatable, in no gang-policy group and not in the hierarchy."""
    groups, _ = _hierarchy(inst, root)
    reserved = {t for g in groups.values() for t, _ in g.members}
    reserved |= {t for g in inst.groups if g.policy == GANG for t, _ in g.members}
    return frozenset(t for t, p in enumerate(inst.pod_types) if p.creatable and t not in reserved)


# ---- the checker -----------------------------------------------------------------------------------

CHECK_CELLS = 5_000_000   # configurations visited x pairs: what the brute-force gang step may hold


def check_certificate(inst: Instance, cert: dict, budget: Optional[int] = None) -> tuple[bool, str]:
    """``budget``: configurations the gang-step searches may visit in all (default: 5,000,000,
    fewer on a large instance, so that their configurations fit in memory: a 64-replica gang
    on 500 nodes grew past 5 GB before this bound and ended only when killed)."""
    if budget is None:
        budget = min(5_000_000, CHECK_CELLS // max(1, inst.num_pairs))
    return checked(lambda: _check(inst, cert, budget), lambda count: (
        f"certificate accepted: {count} configurations contain sigma0, are closed under every "
        "deletion and background deployment, and no gang step places the group from any of them"))


def _check(inst: Instance, cert: dict, budget: int) -> int:
    check_profile(inst, cert)
    root = cert.get("group")
    if not isinstance(root, str):
        raise CertificateError("field 'group' must name the group")
    states = read_states(inst, cert)
    if inst.initial_config() not in states:
        raise CertificateError("the initial configuration is not in the set")
    movable = background_types(inst, root)
    left = [budget]
    for sigma in states:
        for p, c in enumerate(sigma):
            if c and any(after not in states for _, after in semantics.deletions(inst, sigma, *inst.unpair(p))):
                raise CertificateError(f"not closed under deleting {_name(inst, p)}")
        for t in movable:
            for n in range(len(inst.nodes)):
                p = inst.pair(t, n)
                if sigma[p] >= inst.multiplicity_bound.get((t, n), 1):
                    continue
                if semantics.deploy_failure(inst, t, n, sigma) is None and \
                        semantics.deploy(inst, sigma, t, n) not in states:
                    raise CertificateError(f"not closed under deploying {_name(inst, p)}")
        if step_exists(inst, root, sigma, left):
            raise CertificateError("a gang step places the group from a listed configuration")
    return len(states)


def _name(inst: Instance, p: int) -> str:
    t, n = inst.unpair(p)
    return f"{inst.pod_types[t].name} on {inst.nodes[n].name}"
