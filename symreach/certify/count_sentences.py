"""Count targets and counter variables in the user's terms.

A counter is stored as bits (``count[web@wk-1#0]``); a user thinks in pods:
"never 3 pods of web at once on wk-1", "never exactly 2 pods of db on wk-1".
A clause or cube over counter bits forbids, per (pod, node), a set of values;
``values_text`` says which. ``capacity_lines`` adds the arithmetic that
usually explains a count bound ("3 pods of 1500m need 4500m; wk-1 has
4000m"); every bound it states holds on an otherwise empty node, so it is
true whatever else runs.
"""

from __future__ import annotations

from typing import Iterable, Mapping, Optional, Sequence

from symreach import semantics
from symreach.certify.counter_width import MAX_BITS
from symreach.model import PODS_RESOURCE, Instance
from symreach.report.objects import HOSTNAME, amount_text, term_text

Var = tuple  # ("present", pod, node) | ("count", pod, node, bit)


def count_target_text(pairs: Sequence[Sequence[str]], at_least: int) -> str:
    """"3 pods of web at once on wk-1" / "... on wk-1, wk-2 together" / "... of web or db"."""
    pods = list(dict.fromkeys(p for p, _ in pairs))
    nodes = list(dict.fromkeys(n for _, n in pairs))
    where = nodes[0] if len(nodes) == 1 else ", ".join(nodes[:6]) + (" ..." if len(nodes) > 6 else "") + " together"
    of = " or ".join(pods[:4]) + (" ..." if len(pods) > 4 else "")
    return f"{at_least} pod{'s' * (at_least != 1)} of {of} at once on {where}"


def values_text(values: Iterable[int], width: int) -> str:
    """A set of counter values in words: "exactly 2", "2 or 3", "at least 2", "none"."""
    vs = sorted(set(values))
    top = (1 << width) - 1
    if not vs:
        return "no number of"
    if vs == [0]:
        return "no"
    if len(vs) > 1 and vs == list(range(vs[0], top + 1)):
        return f"at least {vs[0]}"
    if len(vs) == 1:
        return f"exactly {vs[0]}"
    return ", ".join(str(v) for v in vs[:-1]) + f" or {vs[-1]}"


def pair_conditions(literals: Mapping[Var, bool], widths: Mapping[tuple[str, str], int]) -> list[str]:
    """The literals (variable -> required value) as one condition per (pod, node):
    "2 or 3 pods of web on wk-1", "db on wk-1", "no cache on wk-2"."""
    by_pair: dict[tuple[str, str], dict[Var, bool]] = {}
    for nm, value in literals.items():
        by_pair.setdefault((nm[1], nm[2]), {})[nm] = value
    out = []
    for (pod, node), lits in sorted(by_pair.items()):
        width = widths.get((pod, node), 0)
        if not width or all(nm[0] == "present" for nm in lits):
            (nm, on), = list(lits.items())[:1]
            out.append(f"{pod} on {node}" if on else f"no {pod} on {node}")
            continue
        if not 0 < width <= MAX_BITS:  # a forged width: 2**width values to enumerate would stall the rendering
            out.append(f"a count of {pod} on {node} ({width} counter bits, wider than any engine writes)")
            continue
        ok = [v for v in range(1 << width) if all(_holds(nm, on, v) for nm, on in lits.items())]
        out.append(f"{values_text(ok, width)} pods of {pod} on {node}")
    return out


def _holds(nm: Var, on: bool, v: int) -> bool:
    if nm[0] == "present":
        return (v > 0) == on
    return bool(v >> nm[3] & 1) == on


def widths_of(names: Iterable[Var]) -> dict[tuple[str, str], int]:
    """The counter width of each (pod, node) among the variable names."""
    out: dict[tuple[str, str], int] = {}
    for nm in names:
        if nm[0] == "count":
            out[(nm[1], nm[2])] = max(out.get((nm[1], nm[2]), 0), nm[3] + 1)
    return out


def clause_text(clause: Sequence[tuple[Var, bool]], widths: Mapping[tuple[str, str], int]) -> Optional[str]:
    """A clause (some literal holds) as the situation it forbids: "never exactly 2 pods of db on wk-1";
    None when no count fits what it forbids (it only ties a pair's presence to its counter)."""
    forbidden = {nm: not value for nm, value in clause}
    parts = pair_conditions(forbidden, widths)
    if any(part.startswith("no number of") for part in parts):
        return None
    return "never " + (" together with ".join(parts) if parts else "anything (the invariant is empty)")


# ---- capacity arithmetic --------------------------------------------------------------

def per_node_bound(inst: Instance, t: int, n: int) -> tuple[int, str]:
    """An upper bound on the pods of type t on node n whatever else runs, and why."""
    node = inst.nodes[n]
    pod = inst.pod_types[t]
    best, why = None, ""
    for resource in sorted(set(pod.requests) | {PODS_RESOURCE}):
        need = semantics.request(inst, t, resource)
        if need <= 0 or (resource == PODS_RESOURCE and resource not in node.capacity):
            continue
        have = node.capacity.get(resource, 0)
        fit = have // need
        if best is None or fit < best:
            best = fit
            total = amount_text(resource, need * (fit + 1))
            why = (f"{fit + 1} pods of {amount_text(resource, need)} {resource} need {total}; "
                   f"{node.name} has {amount_text(resource, have)}")
    if pod.max_per_node is not None and (best is None or pod.max_per_node < best):
        best, why = pod.max_per_node, f"maxPerNode {pod.max_per_node} of {pod.name}"
    if pod.host_ports and (best is None or best > 1):
        port = min(pod.host_ports, key=lambda p: (p.port, p.protocol))
        best, why = 1, f"{pod.name} holds host port {port.port}/{port.protocol}, so one per node"
    for term in pod.anti_affinity:
        if t in term.selects and term.topology.key == HOSTNAME and (best is None or best > 1):
            best, why = 1, f"{pod.name}'s anti-affinity term {term_text(inst, t, term, anti=True)} allows one per node"
    if inst.static_block[t][n] is not None or not pod.creatable:
        initial = inst.initial.get((t, n), 0)
        reason = inst.static_block[t][n] or semantics.REASON_NOT_CREATABLE
        return initial, f"{pod.name} cannot be deployed on {node.name} ({reason}), {initial} run there initially"
    if best is None:
        return 1 << 62, ""
    initial = inst.initial.get((t, n), 0)
    if initial > best:
        return initial, f"{initial} run there initially"
    return best, why


def capacity_lines(inst: Instance, pairs: Iterable[tuple[int, int]], at_least: int) -> list[str]:
    """Why fewer than ``at_least`` pods fit on ``pairs``, when per-node bounds alone say so."""
    bounds = [(per_node_bound(inst, t, n), t, n) for t, n in sorted(pairs)]
    total = sum(b for (b, _), _, _ in bounds)
    if total >= at_least:
        return []
    if len(bounds) == 1:
        return [bounds[0][0][1]]
    shown = [f"at most {b} of {inst.pod_types[t].name} on {inst.nodes[n].name} ({why})"
             for (b, why), t, n in bounds[:4]]
    more = f"; {len(bounds) - 4} more pairs" if len(bounds) > 4 else ""
    return ["; ".join(shown) + more + f": {total} in all, fewer than {at_least}"]
