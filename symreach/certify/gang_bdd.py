"""Gang certificates of the BDD engine: an inductive invariant of the gang question.

Format ``symreach-gang-bdd/1`` (JSON): ``profile``, ``group`` (the root of the
hierarchy asked about) and ``invariant``, a ``symreach-bdd-invariant/1`` body
over the twin instance of ``encodings/gang_shadow.py`` (each member type t
and its assumed twin ``t (assumed)``). The claim: Inv holds in sigma0, is
closed under every move of the gang question, and misses every state where
the group's policy holds.

The checker builds its own twin instance (``twin_instance``: written apart
from the encoder's ``encodings/gang_shadow.py``; both tested against
``semantics``) and re-derives everything else itself, on
``bdd_invariant.InvariantChecker`` (guards from the SPEC in a fresh BDD
manager, not the compiler's circuits):

1. the cone holds every member and twin type and is closed; every twin pair
   is a counter, and so is every member pair with more than one pod in
   sigma0 (running members are counted exactly);
2. sigma0 is in Inv;
3. the moves, built from the gang step's definition (SPEC 5.1): while no
   twin pod exists, deletions of any modelled pod and deployments of the
   background's types (``Hard``); always, a twin of t on n when ``Hard``
   holds and fewer than ``pending[t]`` twins of t exist; never a deletion
   once a twin exists, never a member type's own deployment;
4. Inv misses the policy among the states with at most ``pending[t]``
   twins of each t: every leaf met or without twins (members in sigma plus
   twins reach the leaf's need) and the root's policy holding (a
   composite: at least minGroupCount children). Every state the moves of 3
   reach has at most ``pending[t]`` twins of t (their guard), so Inv
   misses the policy in every reachable state.

Premise taken on trust beside those of ``bdd_invariant``: saturation of the
background's pairs for the gang step (``solvers/gang_explicit.py``).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from symreach import gangs
from symreach.certify.bdd_invariant import CertificateError as BddError
from symreach.certify.bdd_invariant import InvariantChecker
from symreach.certify.names import CertificateError, check_profile
from symreach.model import GANG, Instance, PodType, Query

FORMAT = "symreach-gang-bdd/1"


@dataclass(frozen=True)
class Twins:
    """The checker's twin instance: ``twin_of`` member -> twin, ``member_of`` back."""

    instance: Instance
    twin_of: dict[int, int]
    member_of: dict[int, int]
    pending: dict[int, int]


def twin_instance(inst: Instance, gang: gangs.Gang) -> Twins:
    """Member type t gets the twin ``t (assumed)``: t in every rule, seen by every selector,
    spread count and existing anti-affinity that sees t. Members and every gang's members
    are not creatable (the background deploys neither); twins are, without maxPerNode
    (a gang step checks Hard only)."""
    members = sorted(gang.pending)
    twin_of = {t: len(inst.pod_types) + k for k, t in enumerate(members)}

    def seen(types):
        return None if types is None else frozenset(types) | {twin_of[t] for t in types if t in twin_of}

    def retyped(pod: PodType, creatable: bool, **more) -> PodType:
        return replace(pod, creatable=creatable, **more,
                       affinity=tuple(replace(x, selects=seen(x.selects), existing_selects=seen(x.existing_selects))
                                      for x in pod.affinity),
                       anti_affinity=tuple(replace(x, selects=seen(x.selects),
                                                   existing_selects=seen(x.existing_selects))
                                           for x in pod.anti_affinity),
                       spread=tuple(replace(h, counts=seen(h.counts)) for h in pod.spread))

    busy = set(members) | {t for g in inst.groups if g.policy == GANG for t, _ in g.members}
    types = [retyped(p, p.creatable and t not in busy) for t, p in enumerate(inst.pod_types)]
    types += [retyped(inst.pod_types[t], True, name=inst.pod_types[t].name + " (assumed)", max_per_node=None)
              for t in members]
    rows = inst.static_block + tuple(inst.static_block[t] for t in members)
    derived = replace(inst, pod_types=tuple(types), static_block=rows, query=None)
    return Twins(derived, twin_of, {v: k for k, v in twin_of.items()}, dict(gang.pending))


def wrap(inst: Instance, root: str, body: dict[str, Any]) -> dict[str, Any]:
    """The gang certificate around a BDD invariant body."""
    return {"format": FORMAT, "profile": inst.profile, "group": root, "query": [], "invariant": body}


class GangChecker(InvariantChecker):
    """``InvariantChecker`` with the gang question's target and moves."""

    def __init__(self, sh: Twins, gang: gangs.Gang, body: dict) -> None:
        types = sorted(sh.twin_of) + sorted(sh.member_of)
        super().__init__(sh.instance, Query(tuple(frozenset({(t, 0)}) for t in types), "gang step"), body)
        self.sh, self.gang = sh, gang
        nodes = range(len(sh.instance.nodes))
        for (u, m), (bits, _) in self.pairs.items():
            if bits == 0 and (u in sh.member_of or sh.instance.initial.get((u, m), 0) > 1 and u in sh.twin_of):
                raise CertificateError("a twin pair, or a member pair with several pods, has no counter")
        self.stepping = self.any_present(sorted(sh.member_of), nodes)

    def _count(self, types) -> dict:
        return self.dist([(1, u, m) for u in sorted(types) for m in range(len(self.inst.nodes))])

    def target(self):
        b, gang, sh = self.bdd, self.gang, self.sh
        met: dict[str, Any] = {}
        clean = b.true
        for leaf in gang.leaves:
            members = {t for t, name in gang.leaf_of.items() if name == leaf.name}
            twins = {sh.twin_of[t] for t in members}
            met[leaf.name] = b.false
            for v, f in self._count(members | twins).items():
                if v >= gang.need(leaf):
                    met[leaf.name] |= f
            clean &= ~self.any_present(sorted(twins), range(len(self.inst.nodes))) | met[leaf.name]

        def holds(name: str):
            group = gang.groups[name]
            if not group.composite:
                return met[name]
            kids = [holds(k) for k in gang.children.get(name, ())]
            table = {0: b.true}
            for x in kids:   # table[j]: exactly j of the children seen so far hold
                new: dict[int, Any] = {}
                for j, f in table.items():
                    new[j] = new.get(j, b.false) | (f & ~x)
                    new[j + 1] = new.get(j + 1, b.false) | (f & x)
                table = new
            need = group.min_count if group.policy == GANG else 1
            out = b.false
            for j, f in table.items():
                if j >= need:
                    out |= f
            return out

        within = b.true   # at most pending twins of each type (see the module docstring)
        for t, twin in sh.twin_of.items():
            within &= self.le([(1, twin, m) for m in range(len(self.inst.nodes))], sh.pending[t])
        return clean & holds(gang.root.name) & within

    def induction(self) -> None:
        b, inst, inv, sh = self.bdd, self.inst, self.inv, self.sh
        background = inv & ~self.stepping
        room: dict[int, Any] = {}
        for t in sorted(self.cone):
            member = sh.member_of.get(t)
            for n in range(len(inst.nodes)):
                p = (t, n)
                if member is not None:
                    if t not in room:   # fewer than pending twins of t: one BDD per twin type
                        room[t] = self.le([(1, t, m) for m in range(len(inst.nodes))], sh.pending[member] - 1)
                    g = inv & self.hard(t, n) & room[t]
                elif inst.pod_types[t].creatable:
                    g = background & self.hard(t, n)
                else:
                    g = b.false
                if g != b.false and p not in self.pairs:
                    raise CertificateError(f"deploy of unmodelled pair {inst.pod_types[t].name}@"
                                           f"{inst.nodes[n].name} is possible")
                if g != b.false:
                    self.step(p, g, +1)
                if p in self.pairs and member is None:
                    self.step(p, background, -1)


def check_certificate(inst: Instance, cert: dict) -> tuple[bool, str]:
    try:
        check_profile(inst, cert)
        root = cert.get("group")
        if not isinstance(root, str):
            raise CertificateError("field 'group' must name the group")
        try:
            gang = gangs.gang_of(inst, root)
        except KeyError:
            raise CertificateError(f"the instance has no group '{root}'") from None
        if gang.root.name != root:
            raise CertificateError(f"group '{root}' is not the root of its hierarchy")
        if gangs.rejection(gang) is not None:
            raise CertificateError("the scheduler rejects the group; no invariant is needed")
        body = cert.get("invariant")
        if not isinstance(body, dict):
            raise CertificateError("field 'invariant' must be a BDD invariant")
        GangChecker(twin_instance(inst, gang), gang, body).run()
    except (CertificateError, BddError) as exc:
        return False, str(exc)
    return True, ("certificate accepted: an inductive invariant of the background and the gang step "
                  "contains sigma0 and misses every state where the group's policy holds")


def lemmas(inst: Instance, cert: dict) -> list[str]:
    """What a gang BDD certificate proves, in words (``certify --explain``, ``--why``)."""
    root = str(cert.get("group", "?"))
    body = cert.get("invariant") if isinstance(cert.get("invariant"), dict) else {}
    out = [f"group {root}: a set of configurations (a BDD of {len(body.get('nodes', []))} nodes over "
           f"{len(body.get('variables', []))} variables) holds now and after every background move "
           "(deletions; deployments of pods in no gang)"]
    try:
        gang = gangs.gang_of(inst, root)
    except KeyError:
        return out
    for leaf in gang.leaves:
        pending = sum(c for t, c in gang.pending.items() if gang.leaf_of[t] == leaf.name)
        out.append(f"{leaf.name} is met with {gang.need(leaf)} members running or assumed "
                   f"({pending} pending); a leaf with some assumed members must be met")
    out.append(f"no configuration of the set is reached by a gang step (members assumed one at a time, "
               f"each passing every Hard check) in which the policy of {root} holds")
    return out
