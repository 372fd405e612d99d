"""Explicit-state certificates: the whole reachable set, checked closed by the semantics.

When breadth-first search exhausts the reachable configurations, the set it
explored *is* the evidence. Format ``symreach-explicit-states/1`` (JSON):
``profile``, ``query``, ``pairs`` (the ``[pod, node]`` pairs that are non-zero in
some state) and ``states`` (one list of counts over ``pairs`` per
configuration; every other pair is 0).

The checker does not search: it checks that the set contains sigma0, that
no state covers the target, and that the set is closed under every
transition the executable semantics allows -- every deletion, and every
deployment of a creatable type that ``semantics.deploy_failure`` accepts,
up to saturation (SPEC 2.2: a pair that no spread constraint counts is
deployed only while absent; a counted pair up to its multiplicity bound).
Saturation is the one premise taken on trust, as for the symbolic
certificates (with its count analogue: a pair a count target of K reads is
deployed up to K pods, ``model.Query.count_cap``); the optional ``counts``
field holds the count targets. Under operator moves (SPEC 5.2) the optional
``moves`` field records the rules (``respectPdb``, the ``protected`` type
names): the checker applies them to the instance it loaded, re-derives the
PodDisruptionBudgets from that input, and requires closure only under the
deletions ``semantics.delete_failure`` allows; a pair a budget counts is
deployed up to desiredHealthy + 1 (``semantics.budget_cap``, the count analogue
again). ``keepReplicas`` adds the final condition: a state covers the target
only if every controller the checker re-derives from the input also keeps its
replicas (``semantics.replicas_failure``), and a controller's pair is deployed
up to its floor (``semantics.replica_cap``). Where a deployment binds a
WaitForFirstConsumer claim (``Instance.bindings``), ``claims`` names those
claims and ``bound`` gives each state's binding per claim (an outcome name,
null while unbound); the checker reads them from the input it loaded, refuses a
joint binding the input's claims cannot reach (``Instance.binding_groups``; PVs equal but
for their names may be named otherwise than the states do: ``_rename``), and a
saturated pair is deployed again when that binds a claim, as the engine does;
where the scheduler may bind in several ways (which of several PVs a claim
takes), the set must hold every choice's successor (``semantics.deploys``).
A pair on a node where some type's DynamicResources errs is deployed up to its
capacity there (``semantics.abort_cap``: filling that node lifts the cycle's abort).
Certificates grow with the state space, so engines write one only up to
``MAX_STATES`` states.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Iterable

from symreach import semantics
from symreach.certify.names import (
    CertificateError,
    check_profile,
    checked,
    counts_of,
    named_pairs,
    query_json,
    query_of,
    target_holds,
    with_counts,
)
from symreach.model import Config, Instance, MoveRules, Query

FORMAT = "symreach-explicit-states/1"
MAX_STATES = 200_000


def make_certificate(inst: Instance, query: Query, states: Iterable[Config]) -> dict:
    states = list(states)
    width = inst.num_pairs
    used = sorted({p for sigma in states for p, c in enumerate(sigma[:width]) if c})
    out = with_counts(inst, query, {
        "format": FORMAT, "profile": inst.profile, "query": query_json(inst, query),
        "pairs": [[inst.pod_types[t].name, inst.nodes[n].name] for t, n in map(inst.unpair, used)],
        "states": [[sigma[p] for p in used] for sigma in states]})
    if inst.bindings:
        out["claims"] = [claim.claim for claim in inst.bindings]
        out["bound"] = [[claim.outcomes[k - 1] if k else None for claim, k in zip(inst.bindings, sigma[width:])]
                        for sigma in states]
    if inst.moves.restricted:
        out["moves"] = {"name": inst.moves.name, "respectPdb": inst.moves.respect_pdb,
                        "protected": sorted(inst.pod_types[t].name for t in inst.moves.protected)}
        if inst.moves.keep_replicas:
            out["moves"]["keepReplicas"] = True
    return out


def with_recorded_moves(inst: Instance, cert: dict) -> Instance:
    """The instance under the move rules the certificate records (none: the paper's)."""
    raw = cert.get("moves")
    if raw is None:
        return replace(inst, moves=MoveRules())
    if not isinstance(raw, dict) or not isinstance(raw.get("respectPdb"), bool) \
            or not isinstance(raw.get("protected"), list):
        raise CertificateError("field 'moves' must give respectPdb (a boolean) and protected (a list)")
    try:
        protected = frozenset(inst.type_index(str(name)) for name in raw["protected"])
    except KeyError as exc:
        raise CertificateError(f"moves: unknown pod type {exc}") from None
    keep = raw.get("keepReplicas", False)
    if not isinstance(keep, bool):
        raise CertificateError("moves: keepReplicas must be a boolean")
    return replace(inst, moves=MoveRules(str(raw.get("name", "operator")), raw["respectPdb"], protected, keep))


class StatesCertificate:
    """The reachable set as an engine returns it; serialised only when written."""

    def __init__(self, inst: Instance, query: Query, states: tuple[Config, ...]) -> None:
        self.inst, self.query, self.states = inst, query, states

    def to_json(self) -> dict:
        return make_certificate(self.inst, self.query, self.states)

    def dumps(self) -> str:
        import json

        return json.dumps(self.to_json())


def check_certificate(inst: Instance, cert: dict) -> tuple[bool, str]:
    deletions = "deletion" if cert.get("moves") is None else "deletion the recorded operator moves allow"
    return checked(lambda: _check(inst, cert), lambda count: (
        f"certificate accepted: {count} configurations contain sigma0, are closed under "
        f"every deployment and {deletions}, and none covers the target{_rules(cert)}"))


def _rules(cert: dict) -> str:
    raw = cert.get("moves")
    if not isinstance(raw, dict):
        return ""
    protected = ", ".join(map(str, raw.get("protected") or ())) or "none"
    kept = "; controllers keep their replicas" if raw.get("keepReplicas") is True else ""
    return (f" (moves: PodDisruptionBudgets {'respected' if raw.get('respectPdb') else 'ignored'}; "
            f"protected pod types: {protected}{kept})")


def read_states(inst: Instance, cert: dict) -> set[Config]:
    """The configurations a states certificate lists (``pairs`` and ``states``), validated."""
    raw_pairs = cert.get("pairs")
    pairs = [inst.pair(t, n) for t, n in _ordered(inst, raw_pairs)]
    if len(set(pairs)) != len(pairs):
        raise CertificateError("a pair is listed twice")
    raw = cert.get("states")
    if not isinstance(raw, list):
        raise CertificateError("field 'states' must be a list")
    bound = _bound_rows(inst, cert, len(raw))
    out: set[Config] = set()
    for row, binding in zip(raw, bound):
        if not isinstance(row, list) or len(row) != len(pairs) or \
                not all(isinstance(c, int) and not isinstance(c, bool) and c >= 0 for c in row):
            raise CertificateError(f"a state must list {len(pairs)} non-negative counts")
        sigma = [0] * inst.num_pairs
        for p, c in zip(pairs, row):
            sigma[p] = c
        out.add(tuple(sigma) + binding)
    return out


def _bound_rows(inst: Instance, cert: dict, count: int) -> list[tuple[int, ...]]:
    """Per state, each claim's binding (``claims``/``bound``: an outcome name or null) as
    configuration entries; the claims must be the instance's (``Instance.bindings``)."""
    if not inst.bindings:
        if cert.get("claims") or cert.get("bound"):
            raise CertificateError("the certificate binds claims the input has no binding for")
        return [()] * count
    names = [claim.claim for claim in inst.bindings]
    if cert.get("claims") != names:
        raise CertificateError(f"field 'claims' must list the input's bindable claims {names}")
    raw = cert.get("bound")
    if not isinstance(raw, list) or len(raw) != count:
        raise CertificateError("field 'bound' must give one row per state")
    out = []
    for row in raw:
        if not isinstance(row, list) or len(row) != len(names):
            raise CertificateError(f"a 'bound' row must list {len(names)} outcomes (null: unbound)")
        row = list(row)
        for group in inst.binding_groups:
            _rename(inst, group, row)
        try:
            entries = tuple(0 if o is None else claim.outcomes.index(o) + 1 for claim, o in zip(inst.bindings, row))
        except ValueError:
            raise CertificateError(f"unknown binding outcome in {row}") from None
        for group in inst.binding_groups:
            if tuple(entries[b] for b in group.claims) not in group.state_ids:
                raise CertificateError(f"claims {[names[b] for b in group.claims]} cannot be bound together "
                                       f"as {[row[b] for b in group.claims]}")
        out.append(entries)
    return out


MAX_RENAMINGS = 5040


def _rename(inst: Instance, group, row: list) -> None:
    """A row naming interchangeable PVs (``BindingGroup.interchangeable``) otherwise than the group's
    states do, renamed in place to one of those states (renaming PVs within a class is a symmetry of
    the semantics: the scheduler cannot tell them apart); left as it is when none matches."""
    if not group.interchangeable:
        return
    from itertools import permutations, product

    claims = [inst.bindings[b] for b in group.claims]
    try:
        if tuple(0 if row[b] is None else c.outcomes.index(row[b]) + 1
                 for b, c in zip(group.claims, claims)) in group.state_ids:
            return
    except ValueError:
        pass
    classes = [sorted(c) for c in group.interchangeable]
    tried = 0
    for images in product(*(permutations(c) for c in classes)):
        tried += 1
        if tried > MAX_RENAMINGS:
            return
        to = {a: b for c, image in zip(classes, images) for a, b in zip(c, image)}
        renamed = [_renamed(row[b], to) for b in group.claims]
        try:
            entries = tuple(0 if o is None else c.outcomes.index(o) + 1 for o, c in zip(renamed, claims))
        except ValueError:
            continue
        if entries in group.state_ids:
            for b, o in zip(group.claims, renamed):
                row[b] = o
            return


def _renamed(outcome, to: dict[str, str]):
    """An outcome (``PV <name>``, ``taken:<pv>,...``, ``provisioned:...``) with its PVs renamed."""
    if not isinstance(outcome, str):
        return outcome
    if outcome.startswith("PV "):
        return "PV " + to.get(outcome[3:], outcome[3:])
    if outcome.startswith("taken:"):
        return "taken:" + ",".join(sorted(to.get(pv, pv) for pv in outcome[6:].split(",")))
    return outcome


def _ordered(inst: Instance, raw) -> list[tuple[int, int]]:
    named_pairs(inst, raw, "pairs")  # validates names and shape
    return [(inst.type_index(str(p)), inst.node_index(str(m))) for p, m in raw]


def _check(inst: Instance, cert: dict) -> int:
    check_profile(inst, cert)
    inst = with_recorded_moves(inst, cert)
    alts = query_of(inst, cert)
    counts = counts_of(inst, cert)
    states = read_states(inst, cert)
    sigma0 = inst.initial_config()
    if sigma0 not in states:
        raise CertificateError("the initial configuration is not in the set")
    caps = {}
    for t, pod in enumerate(inst.pod_types):
        for n in range(len(inst.nodes)):
            # a pair a count target reads is counted up to K (model.Query.count_cap)
            k = max([c for ps, c in counts if (t, n) in ps] + [0])
            caps[(t, n)] = max(inst.multiplicity_bound.get((t, n), 1), k, semantics.budget_cap(inst, t),
                               semantics.replica_cap(inst, t), semantics.abort_cap(inst, t, n))
    for sigma in states:
        if target_holds(sigma, inst, alts, counts) and semantics.replicas_failure(inst, sigma) is None:
            raise CertificateError("a listed configuration covers the target")
        for p, c in enumerate(sigma[:inst.num_pairs]):
            if not c or semantics.delete_failure(inst, sigma, *inst.unpair(p)) is not None:
                continue
            for holding, after in semantics.deletions(inst, sigma, *inst.unpair(p)):
                if after not in states:
                    held = f" holding {holding}" if holding else ""
                    raise CertificateError(f"not closed under deleting {_name(inst, p)}{held}")
        for (t, n), cap in caps.items():
            saturated = sigma[inst.pair(t, n)] >= cap and not semantics.binding_choices(inst, sigma, t, n)
            if saturated or semantics.deploy_failure(inst, t, n, sigma) is not None:
                continue
            for choice, succ in semantics.deploys(inst, sigma, t, n):
                if succ not in states:
                    how = "" if choice is None else f" ({semantics.choice_text(inst, sigma, t, n, choice)})"
                    raise CertificateError(f"not closed under deploying {_name(inst, inst.pair(t, n))}{how}")
    return len(states)


def _name(inst: Instance, p: int) -> str:
    t, n = inst.unpair(p)
    return f"{inst.pod_types[t].name} on {inst.nodes[n].name}"
