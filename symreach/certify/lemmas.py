"""Readable "never": a certificate as a few lemmas over the variables that matter.

An invariant that proves "never T on N" is usually large (a BDD of hundreds
of nodes, dozens of IC3 clauses, a reachable set of thousands of states), but
the reason is often one or two facts, such as "never both payments/db and
payments/cache on general-c". This module extracts them:

1. The certificate becomes a Boolean function Inv over presence variables
   (``present[T@N]``; IC3 and BDD counters keep their bits) in a fresh BDD.
2. **Projection.** Variables are existentially quantified away one by one
   for as long as the projection still excludes the target, so what remains
   is a set of variables that alone explains the verdict; the projection is
   implied by Inv, so every lemma is a true statement about every reachable
   configuration.
3. **Minimisation.** The configurations the projection forbids are written
   as a short DNF of "never" cubes: with pyeda's Espresso (the optional
   ``symreach[explain]`` extra) a minimal cover; without it, the BDD's paths
   (correct, possibly more and longer lemmas).

The fast-path certificates read better directly: a static filter or
Theorem 5 says which check fails; a may-be-present fixpoint says which
affinity witness can never be where the target needs it, following the
chain of missing witnesses a few levels.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Callable, Iterable, Optional

from symreach import semantics
from symreach.certify import (
    bdd_invariant,
    clause_invariant,
    counter_invariant,
    explicit_states,
    gang_bdd,
    gang_states,
    lazy_closure,
    may_fixpoint,
    static_filter,
    theorem5,
)
from symreach.certify.count_sentences import (
    capacity_lines,
    clause_text,
    count_target_text,
    pair_conditions,
    widths_of,
)
from symreach.certify.dispatch import Certificate, as_certificate
from symreach.model import KUBERNETES, Instance, Pair, Query
from symreach.report.details import detail
from symreach.report.gang import gang_lemmas
from symreach.report.objects import domain_text, names, term_text

MAX_LEMMAS = 6      # "a handful"; more are counted, not printed
MAX_TT_VARS = 14    # Espresso gets a truth table only up to this many variables

Var = tuple  # ("present", pod, node) | ("count", pod, node, bit)


def result_lemmas_text(inst: Instance, certificate: Any) -> str:
    """Lemmas for a result's certificate (``dispatch.as_certificate`` reads any form)."""
    return lemmas_text(inst, as_certificate(certificate))


def lemmas_text(inst: Instance, cert: Certificate) -> str:
    lines, how = lemmas(inst, cert)
    shown = lines[:MAX_LEMMAS]
    out = [f"why ({cert.kind}; {how}):"] + [f"  - {line}" for line in shown]
    if len(lines) > MAX_LEMMAS:
        out.append(f"  ... and {len(lines) - MAX_LEMMAS} more lemmas")
    return "\n".join(out)


def lemmas(inst: Instance, cert: Certificate) -> tuple[list[str], str]:
    """(lemma lines, how they were obtained), by the certificate's kind (``LEMMAS``)."""
    return LEMMAS[cert.format](inst, cert)


def failing_check_lemmas(inst: Instance, cert: Certificate) -> tuple[list[str], str]:
    """Static filter and Theorem 5: the check that fails, pair by pair, with what it is about."""
    why = ("a static filter: no sequence of steps changes it" if cert.format == static_filter.FORMAT
           else "affinity-free, so it fails in every configuration")
    return [f"never {b['pod']} on {b['node']}: {_reason_text(inst, b['pod'], b['node'], b['reason'])} ({why})"
            for b in cert.content["blocked"]], "the failing check"


def invariant_lemmas(function: Callable[[Any], "_Function"]) -> Callable[[Instance, Certificate],
                                                                         tuple[list[str], str]]:
    """Lemmas of an invariant over presence (and counter) variables, ``function``
    building it from the certificate's content: a count target's conclusion,
    else the projection and minimisation of the module docstring."""
    def of(inst: Instance, cert: Certificate) -> tuple[list[str], str]:
        counts = cert.content.counts if cert.is_text else cert.content.get("counts", [])
        if counts:
            return count_lemmas(inst, cert, counts), "count target: the pods that can ever run there at once"
        raw = cert.content.query if cert.is_text else cert.content["query"]
        target = [[("present", p, n) for p, n in alt] for alt in raw]
        return boolean_lemmas(inst, function(cert.content), target)
    return of


def _reason_text(inst: Instance, pod: str, node: str, reason: str) -> str:
    """The reason, verbatim, and what it is about on the empty configuration
    (the configuration static and Theorem 5 certificates evaluate)."""
    try:
        t, n = inst.type_index(pod), inst.node_index(node)
    except KeyError:
        return reason
    note = detail(inst, t, n, (0,) * inst.num_pairs, reason)
    return f"{reason}: {note}" if note else reason


def count_lemmas(inst: Instance, cert: Certificate, counts: list) -> list[str]:
    """The conclusion of a count target, the capacity arithmetic that bounds it when
    there is one, then IC3's clauses as sentences over pod counts. The presence
    projection below reasons about one pod per pair, so it is not used."""
    line = "never " + " and ".join(count_target_text(ct["pairs"], ct["atLeast"]) for ct in counts)
    alts = [alt for alt in (cert.content.query if cert.is_text else cert.content["query"]) if alt]
    if alts:
        line += " with " + " or ".join(_together(sorted(("present", p, n) for p, n in alt)) for alt in alts)
    out = [line]
    for ct in counts:
        try:
            pairs = [(inst.type_index(p), inst.node_index(n)) for p, n in ct["pairs"]]
        except KeyError:
            continue
        out += capacity_lines(inst, pairs, int(ct["atLeast"]))
    if cert.is_text:
        widths = {(p["pod"], p["node"]): p["bits"] for p in cert.content.pairs}
        out += [text for text in (clause_text(cl, widths) for cl in cert.content.clauses) if text]
    return out


# ---- may-be-present fixpoint: the chain of missing witnesses ----------------------------

def may_lemmas(inst: Instance, data: dict) -> list[str]:
    listed = {(inst.type_index(p), inst.node_index(n)) for p, n in data["pairs"]}
    full = [0] * inst.num_pairs
    for t, n in listed:
        full[inst.pair(t, n)] = 1
    full_config = tuple(full)
    out: list[str] = []
    seen: set[Pair] = set()
    work: list[Pair] = []
    for alt in data["query"]:
        missing = [(inst.type_index(p), inst.node_index(n)) for p, n in alt]
        work.extend(p for p in missing if p not in listed)
    for ct in data.get("counts", ()):
        pairs = [(inst.type_index(p), inst.node_index(n)) for p, n in ct["pairs"]]
        if not any(p in listed for p in pairs):
            out.append(f"never {count_target_text(ct['pairs'], ct['atLeast'])}: no pod can ever run on "
                       + ("that pair" if len(pairs) == 1 else f"any of its {len(pairs)} pairs"))
            work.extend(pairs)
    empty = (0,) * inst.num_pairs
    kube = inst.profile == KUBERNETES
    while work and len(out) <= MAX_LEMMAS:
        t, n = work.pop(0)
        if (t, n) in seen:
            continue
        seen.add((t, n))
        reason = may_fixpoint.blocking_reason(inst, t, n, full_config)
        name = f"never {inst.pod_types[t].name} on {inst.nodes[n].name}"
        if reason is None:
            continue  # outside the certificate's cone: nothing it says about this pair
        if reason != semantics.REASON_AFFINITY:
            note = detail(inst, t, n, empty, reason)
            out.append(f"{name}: {reason}" + (f": {note}" if note else ""))
            continue
        near = may_fixpoint.beside(inst, t, n, full_config)
        terms = inst.pod_types[t].affinity
        for term in terms:
            text = term_text(inst, t, term)
            where = domain_text(term.topology, n, inst)
            if not where:
                out.append(f"{name}: {inst.nodes[n].name} has no {term.topology.key} label, which its affinity "
                           f"term {text} needs")
                break
            types = semantics.affinity_witness_types(inst, t) if kube else term.selects
            if not types:
                both = " and its other terms at once" if kube and len(terms) > 1 else ""
                out.append(f"{name}: no pod type matches its affinity term {text}{both}")
                break
            domain = term.topology.domain_nodes(n)
            if semantics.present_on(inst, near, types, domain):
                continue
            need = (f"{name}: its affinity term {text} needs a pod {where} ({names(inst, types)} "
                    f"{'matches' if len(types) == 1 else 'match'})")
            if semantics.present_on(inst, full_config, types, domain):
                out.append(f"{need}, and none can run there beside it (host port, capacity or anti-affinity)")
                continue
            out.append(f"{need}, and none can ever run there")
            work.extend((u, m) for u in sorted(types) for m in sorted(domain) if (u, m) not in listed)
    return out


# ---- Boolean certificates: projection and minimisation ----------------------------------

class _Function:
    """A BDD over named variables (a fresh manager: nothing shared with any engine)."""

    def __init__(self, names: Iterable[Var]) -> None:
        from dd.autoref import BDD

        self.bdd = BDD()
        self.names: dict[Var, str] = {}
        for nm in names:
            self.var_of(nm)
        self.root = self.bdd.true

    def var_of(self, nm: Var) -> str:
        key = tuple(nm)
        if key not in self.names:
            self.names[key] = f"v{len(self.names)}"
            self.bdd.declare(self.names[key])
        return self.names[key]

    def lit(self, nm: Var, value: bool = True):
        v = self.bdd.var(self.var_of(nm))
        return v if value else ~v

    def known(self, nm: Var) -> bool:
        return tuple(nm) in self.names

    def present(self, pod: str, node: str):
        """present[pod@node]; a pair the certificate does not model is always absent."""
        nm = ("present", pod, node)
        if self.known(nm):
            return self.lit(nm)
        u = self.bdd.false
        for key in self.names:
            if key[0] == "count" and key[1:3] == (pod, node):
                u = u | self.lit(key)
        return u


def _clauses_function(cert) -> _Function:
    """IC3's clauses; every listed pair is a variable (unlisted cone pairs are absent)."""
    names: list[Var] = []
    for p in cert.pairs:
        if p["bits"]:
            names.extend(("count", p["pod"], p["node"], j) for j in range(p["bits"]))
        else:
            names.append(("present", p["pod"], p["node"]))
    f = _Function(names + [nm for cl in cert.clauses for nm, _ in cl])
    for cl in cert.clauses:
        c = f.bdd.false
        for nm, value in cl:
            c = c | f.lit(nm, value)
        f.root = f.root & c
    return f


def _bdd_function(data: dict) -> _Function:
    variables = [tuple(v) for v in data["variables"]]
    f = _Function(variables)
    built = [f.bdd.false, f.bdd.true]
    for var, lo, hi in data["nodes"]:
        built.append(f.bdd.ite(f.lit(variables[var]), built[hi], built[lo]))
    f.root = built[data["root"]]
    return f


def _closure_function(data: dict) -> _Function:
    """D: the listed pairs present form a subset of some state M (unlisted pairs of
    non-free types are never present; free types are unconstrained and unmodelled)."""
    pairs = [("present", p, n) for p, n in data["pairs"]]
    f = _Function(pairs)
    f.root = f.bdd.false
    for state in data["states"]:
        inside = set(state)
        cube = f.bdd.true
        for i, nm in enumerate(pairs):
            if i not in inside:
                cube = cube & f.lit(nm, False)
        f.root = f.root | cube
    return f


def _replica_lemmas(inst: Instance, cert: Certificate) -> Optional[tuple[list[str], str]]:
    """Under ``--keep-replicas`` a listed state may cover the target but leave a controller
    short: say which, for the states where the target itself runs (None: no such state)."""
    raw = cert.content.get("moves") if not cert.is_text else None
    if not isinstance(raw, dict) or raw.get("keepReplicas") is not True:
        return None
    inst = explicit_states.with_recorded_moves(inst, cert.content)
    query = Query(tuple(frozenset((inst.type_index(p), inst.node_index(n)) for p, n in alt)
                        for alt in cert.content["query"]))
    plain = replace(inst, moves=replace(inst.moves, keep_replicas=False))
    short = sorted({semantics.replicas_failure(inst, sigma) or "" for sigma in explicit_states.read_states(inst, cert.content)
                    if semantics.query_holds(plain, query, sigma)} - {""})
    if not short:
        return None
    return (["never the target with every controller running its replicas again: in each reachable "
             "configuration where the target runs, " + ("; or ".join(short[:MAX_LEMMAS]))],
            "the target's configurations, each short of a controller's replicas")


def _states_function(data: dict) -> _Function:
    pairs = [("present", p, n) for p, n in data["pairs"]]
    f = _Function(pairs)
    f.root = f.bdd.false
    seen = set()
    for row in data["states"]:
        key = tuple(c > 0 for c in row)
        if key in seen:
            continue
        seen.add(key)
        cube = f.bdd.true
        for nm, on in zip(pairs, key):
            cube = cube & f.lit(nm, on)
        f.root = f.root | cube
    return f


def project(f: _Function, inv, goal, keep: Iterable[Var] = ()) -> tuple[Any, list[Var]]:
    """Quantify away, one at a time, every variable not needed for ``inv & goal == false``."""
    bdd = f.bdd
    keep = {tuple(k) for k in keep}
    by_name = {v: k for k, v in f.names.items()}
    support = [by_name[v] for v in bdd.support(inv)] if inv not in (bdd.true, bdd.false) else []
    for nm in sorted((k for k in support if k not in keep), key=_distance_key(keep)):
        weaker = bdd.exist({f.names[nm]}, inv)
        if (weaker & goal) == bdd.false:
            inv = weaker
    remaining = [by_name[v] for v in bdd.support(inv)] if inv not in (bdd.true, bdd.false) else []
    return inv, sorted(remaining)


def _witness_pairs(inst: Instance, t: int, n: int) -> list[Var]:
    """("present", pod, node) of every pair that could witness one of t's affinity terms on n."""
    out: list[Var] = []
    kube = inst.profile == KUBERNETES
    witnesses = semantics.affinity_witness_types(inst, t)
    for term in inst.pod_types[t].affinity:
        for u in sorted(witnesses if kube else term.selects):
            for m in sorted(term.topology.domain_nodes(n)):
                nm = ("present", inst.pod_types[u].name, inst.nodes[m].name)
                if nm not in out:
                    out.append(nm)
    return out


def _example(inst: Instance, f: _Function, allowed, t: int, n: int) -> Optional[str]:
    """"with W on M running (as its affinity needs): <first failing check>", from the fewest
    pods the invariant allows together with the affinity's need, evaluated by the semantics."""
    by_name = {v: k for k, v in f.names.items()}
    best = None
    for i, assignment in enumerate(f.bdd.pick_iter(allowed)):
        on = sorted(by_name[v] for v, val in assignment.items() if val and by_name[v][0] == "present")
        if best is None or len(on) < len(best):
            best = on
        if i >= 64:
            break
    if best is None:
        return None
    sigma = [0] * inst.num_pairs
    for nm in best:
        sigma[inst.pair(inst.type_index(nm[1]), inst.node_index(nm[2]))] = 1
    failure = semantics.node_failure(inst, t, n, tuple(sigma))
    if failure is None:
        return None
    reason = failure.text()
    note = detail(inst, t, n, tuple(sigma), failure.reason)
    pods = ", ".join(_var_text(nm) for nm in best) or "no other pod"
    return f"{inst.pod_types[t].name} on {inst.nodes[n].name}: with {pods} running, {reason}" \
        + (f": {note}" if note else "")


def _distance_key(keep: set[Var]):
    """Try quantifying far variables first: other pods, other nodes, then counters."""
    pods = {nm[1] for nm in keep}
    nodes = {nm[2] for nm in keep}

    def key(nm: Var) -> tuple:
        return (nm[1] in pods, nm[2] in nodes, nm[0] == "present", nm)
    return key


def enabling(inst: Instance, f: _Function, t: int, n: int):
    """The presence condition t's required affinity needs on n (true without affinity).

    Written from the semantics' definition (SPEC 2.1) over the certificate's
    variables: a witness in each term's domain, or the bootstrap waiver.
    """
    bdd = f.bdd
    terms = inst.pod_types[t].affinity
    if not terms:
        return bdd.true

    def any_of(types, nodes):
        u = bdd.false
        for a in sorted(types):
            for m in sorted(nodes):
                u = u | f.present(inst.pod_types[a].name, inst.nodes[m].name)
        return u
    if inst.profile == KUBERNETES:
        if any(term.topology.domain_of[n] is None for term in terms):
            return bdd.false
        witnesses = frozenset.intersection(*(term.selects for term in terms))
        positive = bdd.true
        for term in terms:
            positive = positive & any_of(witnesses, term.topology.domain_nodes(n))
        if t not in witnesses:
            return positive
        keyed = [m for m in range(len(inst.nodes)) if any(term.topology.domain_of[m] is not None for term in terms)]
        return positive | ~any_of(witnesses, keyed)
    out = bdd.true
    for term in terms:
        ok = any_of(term.selects, term.topology.domain_nodes(n))
        if t in term.selects:
            ok = ok | ~any_of(term.selects, range(len(inst.nodes)))
        out = out & ok
    return out


def boolean_lemmas(inst: Instance, f: _Function, target: list[list[Var]]) -> tuple[list[str], str]:
    """The conclusion ("never the target"), then why: what the invariant says about the
    affinity witnesses the target needs, projected and minimised, a few levels deep."""
    bdd = f.bdd
    goal = bdd.false
    for alt in target:
        cube = bdd.true
        for nm in alt:
            cube = cube & f.present(nm[1], nm[2])
        goal = goal | cube
    if (f.root & goal) != bdd.false:
        raise ValueError("the invariant does not exclude the target")
    lines = ["never " + " or ".join(_together(sorted(alt)) for alt in target)]
    minimised = True
    inv = f.root
    todo = [tuple(nm) for alt in target if len(alt) == 1 for nm in alt]
    done: set[Var] = set()
    while todo and len(lines) <= MAX_LEMMAS:
        nm = todo.pop(0)
        if nm in done:
            continue
        done.add(nm)
        t, n = inst.type_index(nm[1]), inst.node_index(nm[2])
        need = enabling(inst, f, t, n)
        rest = bdd.exist({f.names[nm]}, inv) if f.known(nm) else inv
        if need == bdd.false:
            # every witness it could use is a pair the certificate proves always empty
            pairs = _witness_pairs(inst, t, n)
            terms = "; ".join(term_text(inst, t, term) for term in inst.pod_types[t].affinity)
            lines.append(f"never {nm[1]} on {nm[2]}: its affinity ({terms}) needs "
                         + (" or ".join(_var_text(w) for w in pairs[:4]) or _no_witness(inst, t, n))
                         + (f" (+{len(pairs) - 4})" if len(pairs) > 4 else "") + ", and none of them ever runs")
            todo.extend(pairs)
            continue
        if need == bdd.true or (rest & need) != bdd.false:
            # not (only) affinity: show the check that fails once the affinity is met
            example = _example(inst, f, rest & need, t, n)
            if example:
                lines.append(example)
            continue
        projected, variables = project(f, rest, need)
        cubes = _espresso_cubes(f, ~projected, variables)
        if cubes is None:
            minimised = False
            cubes = _bdd_paths(f, ~projected)
        cubes.sort(key=lambda c: (len(c), sorted(c)))
        widths = widths_of(f.names)
        for cube in cubes:
            text = cube_text(cube, widths) + f" (so {nm[1]} on {nm[2]} never has what its affinity needs)"
            if text not in lines:
                lines.append(text)
            if len(cube) == 1:
                (single, on), = cube.items()
                if on and single[0] == "present":
                    todo.append(single)
    how = "projected onto the variables that matter; " + (
        "minimised by Espresso" if minimised else "unminimised (install symreach[explain] for Espresso)")
    return lines, how


def _espresso_cubes(f: _Function, forbidden, variables: list[Var]) -> Optional[list[dict[Var, bool]]]:
    try:
        from pyeda.inter import And, Or, espresso_exprs, exprvar
    except ImportError:
        return None
    if len(variables) > MAX_TT_VARS:
        return None
    xs = {nm: exprvar(f"x{i}") for i, nm in enumerate(variables)}
    back = {str(x): nm for nm, x in xs.items()}
    terms = []
    for cube in _bdd_paths(f, forbidden):
        terms.append(And(*[xs[nm] if on else ~xs[nm] for nm, on in cube.items()]))
    if not terms:
        return []
    dnf = Or(*terms).to_dnf()
    if dnf.is_one():
        return [{}]
    (minimal,) = espresso_exprs(dnf)
    out = []
    for term in (minimal.xs if minimal.ASTOP == "or" else (minimal,)):
        lits = term.xs if term.ASTOP == "and" else (term,)
        cube = {}
        for lit in lits:
            negated = lit.ASTOP == "not" if hasattr(lit, "ASTOP") else False
            name = str(lit.x if negated else lit)
            cube[back[name]] = not negated
        out.append(cube)
    return out


def _bdd_paths(f: _Function, u) -> list[dict[Var, bool]]:
    """The disjoint cubes of the BDD's paths to true."""
    bdd = f.bdd
    by_name = {v: k for k, v in f.names.items()}
    out: list[dict[Var, bool]] = []

    def walk(node, cube: dict[Var, bool]) -> None:
        if node == bdd.false:
            return
        if node == bdd.true:
            out.append(dict(cube))
            return
        level, low, high = bdd.succ(node)
        nm = by_name[bdd.var_at_level(level)]
        walk(low, {**cube, nm: False})
        walk(high, {**cube, nm: True})
    walk(u, {})
    return out


def _no_witness(inst: Instance, t: int, n: int) -> str:
    """What t's affinity needs on n when no pair can witness it: the terms, named."""
    terms = inst.pod_types[t].affinity
    parts = []
    for term in terms:
        where = domain_text(term.topology, n, inst)
        parts.append(f"a pod matching {term_text(inst, t, term)} " + (where or f"(the node has no {term.topology.key} label)"))
    both = " (one pod matching every term)" if inst.profile == KUBERNETES and len(terms) > 1 else ""
    return " and ".join(parts) + both + ", and no pod type can be one"


def cube_text(cube: dict[Var, bool], widths: Optional[dict] = None) -> str:
    """"never both A and B on N" / "never A without B" / "never exactly 2 pods of A on N"."""
    if not cube:
        return "never anything: the certificate's invariant is empty"
    if any(nm[0] == "count" for nm in cube):
        return "never " + " together with ".join(pair_conditions(cube, widths or widths_of(cube)))
    pos = sorted(nm for nm, on in cube.items() if on)
    neg = sorted(nm for nm, on in cube.items() if not on)
    text = "never " + (_together(pos) if pos else "")
    if neg:
        text += (" unless " if pos else "none of ") + " or ".join(_var_text(nm) for nm in neg) \
            + ("" if pos else " (one of them is always present)")
    return text


def _together(names: list[Var]) -> str:
    if len(names) == 1:
        return _var_text(names[0])
    nodes = {nm[2] for nm in names}
    if len(nodes) == 1 and all(nm[0] == "present" for nm in names):
        return "both " * (len(names) == 2) + " and ".join(nm[1] for nm in names) + f" on {names[0][2]}"
    return "both " * (len(names) == 2) + " and ".join(_var_text(nm) for nm in names)


def _var_text(nm: Var) -> str:
    if nm[0] == "present":
        return f"{nm[1]} on {nm[2]}"
    return f"an odd number of {nm[1]} pods on {nm[2]}" if nm[3] == 0 else \
        f"{nm[1]} pods on {nm[2]} counting {1 << nm[3]} in binary"


LEMMAS: dict[str, Callable[[Instance, Certificate], tuple[list[str], str]]] = {
    static_filter.FORMAT: failing_check_lemmas,
    theorem5.FORMAT: failing_check_lemmas,
    may_fixpoint.FORMAT: lambda inst, cert: (may_lemmas(inst, cert.content), "missing affinity witnesses"),
    counter_invariant.FORMAT: lambda inst, cert: (counter_invariant.lemmas(cert.content),
                                                  "the local states the target's nodes ever hold"),
    clause_invariant.FORMAT: invariant_lemmas(_clauses_function),
    bdd_invariant.FORMAT: invariant_lemmas(_bdd_function),
    explicit_states.FORMAT: lambda inst, cert: (_replica_lemmas(inst, cert) or
                                                invariant_lemmas(_states_function)(inst, cert)),
    lazy_closure.FORMAT: invariant_lemmas(_closure_function),
    gang_states.FORMAT: lambda inst, cert: (gang_lemmas(inst, cert.content),
                                            "the scheduler's cycle in the reachable configurations"),
    gang_bdd.FORMAT: lambda inst, cert: (gang_bdd.lemmas(inst, cert.content), "what the BDD invariant proves"),
}
