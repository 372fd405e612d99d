"""Node pools for people: the classes of nodes equal up to their hostname and
zone (labels but those two, taints, ``unschedulable``, capacity), each named
by the labels that tell it from the other pools, with the zones it spans.

Pools are what an operator calls them (``pool=gpu``, zones a, b and c): a
node class spread over three zones is one pool, not three. Cells stay
exact: a pool's cell shows how many of its nodes are deployable (``k/n``)
when they differ, and ``zone_split`` says, zone by zone, where they differ
(a zone matters to spread and zone (anti-)affinity, and initial pods or a
node name in a pod's spec can tell nodes of one zone apart too).
"""

from __future__ import annotations

import fnmatch
from dataclasses import dataclass
from typing import Optional, Sequence

from symreach.encodings.symmetry import HOSTNAME
from symreach.model import Instance

# Labels that place a node in a zone: a pool spans zones (shown beside its name, never splitting it).
ZONE_KEYS = ("topology.kubernetes.io/zone", "failure-domain.beta.kubernetes.io/zone")

# Label prefixes dropped when naming a pool (the key stays unique among the pool-naming keys).
_SHORT = ("topology.kubernetes.io/", "node.kubernetes.io/", "kubernetes.io/", "beta.kubernetes.io/")


@dataclass(frozen=True)
class Pool:
    key: str                  # short column heading: P1, P2, ...
    name: str                 # the distinguishing labels, "pool=gpu"
    nodes: tuple[int, ...]    # node indices, in input order
    zones: tuple[str, ...] = ()   # the zones its nodes are in, in first-seen order


def node_zone(inst: Instance, n: int) -> Optional[str]:
    """The node's zone label, or None."""
    labels = inst.nodes[n].labels
    return next((labels[k] for k in ZONE_KEYS if k in labels), None)


def pool_base(inst: Instance, n: int) -> tuple:
    """What puts a node in a pool: its labels but hostname and zone, taints, capacity."""
    node = inst.nodes[n]
    labels = tuple(sorted((k, v) for k, v in node.labels.items() if k != HOSTNAME and k not in ZONE_KEYS))
    return (labels, node.taints, node.unschedulable, tuple(sorted(node.capacity.items())))


def node_pools(inst: Instance, nodes: Optional[Sequence[int]] = None) -> list[Pool]:
    """The pools of ``nodes`` (default: all), in order of their first node."""
    chosen = list(range(len(inst.nodes))) if nodes is None else list(nodes)
    bases = [pool_base(inst, n) for n in range(len(inst.nodes))]
    every: dict[tuple, list[int]] = {}
    for n, base in enumerate(bases):
        every.setdefault(base, []).append(n)
    members: dict[tuple, list[int]] = {}
    for n in chosen:
        members.setdefault(bases[n], []).append(n)
    groups = list(members.values())
    # named against every pool of the cluster, so a filter (--nodes pool=gpu) keeps the names
    keys = _distinguishing_keys(inst, list(every.values()))
    short = _short_names(keys)
    names = []
    for group in groups:
        labels = inst.nodes[group[0]].labels
        parts = [f"{short[k]}={labels[k]}" if labels[k] else short[k] for k in keys if k in labels]
        names.append(" ".join(parts) or ("all nodes" if len(every) == 1 else "(no distinguishing label)"))
    seen: dict[str, int] = {}
    out = []
    for i, (group, name) in enumerate(zip(groups, names)):
        if names.count(name) > 1:  # same labels, other taints or capacity
            seen[name] = seen.get(name, 0) + 1
            name = f"{name} #{seen[name]}"
        zones = tuple(dict.fromkeys(z for z in (node_zone(inst, n) for n in group) if z is not None))
        out.append(Pool(f"P{i + 1}", name, tuple(group), zones))
    return out


def zones_text(pool: Pool) -> str:
    """``zones zone-a,zone-b`` (or ``zone zone-a``); empty when the nodes carry no zone label."""
    if not pool.zones:
        return ""
    return ("zone " if len(pool.zones) == 1 else "zones ") + ",".join(pool.zones)


def zone_split(inst: Instance, pool: Pool, verdict_of) -> Optional[list[tuple[str, list[Optional[str]]]]]:
    """Per zone of ``pool`` (first-seen order), the verdicts ``verdict_of(node)`` gives its nodes,
    when they differ between zones; None when every zone answers alike (or there is one zone)."""
    if len(pool.zones) < 2:
        return None
    per_zone: dict[str, list[Optional[str]]] = {}
    for n in pool.nodes:
        per_zone.setdefault(node_zone(inst, n) or "(no zone)", []).append(verdict_of(n))
    kinds = {tuple(sorted({v for v in vs if v is not None})) for vs in per_zone.values()}
    return None if len(kinds) <= 1 else list(per_zone.items())


def _distinguishing_keys(inst: Instance, groups: list[list[int]]) -> list[str]:
    """Label keys (not the hostname) whose value, or presence, differs between pools, in first-seen order."""
    keys: dict[str, None] = {}
    for group in groups:
        for k in inst.nodes[group[0]].labels:
            if k != HOSTNAME and k not in ZONE_KEYS:   # the zones are shown beside the name
                keys.setdefault(k, None)
    seen_values: dict[str, set] = {}
    for k in keys:
        seen_values[k] = {inst.nodes[g[0]].labels.get(k) for g in groups}
    out: list[str] = []
    for k in (k for k in keys if len(seen_values[k]) > 1):
        # a key that names the same split as one already kept (instance-type with pool) adds nothing
        if not any(_decides(inst, groups, j, k) and _decides(inst, groups, k, j) for j in out):
            out.append(k)
    return out


def _decides(inst: Instance, groups: list[list[int]], key: str, other: str) -> bool:
    """Whether ``key``'s value (or absence) decides ``other``'s across the pools."""
    seen: dict[object, object] = {}
    for group in groups:
        labels = inst.nodes[group[0]].labels
        if seen.setdefault(labels.get(key), labels.get(other)) != labels.get(other):
            return False
    return True


def _short_names(keys: list[str]) -> dict[str, str]:
    out = {}
    for k in keys:
        short = next((k[len(p):] for p in _SHORT if k.startswith(p)), k)
        out[k] = short
    counts = {v: list(out.values()).count(v) for v in out.values()}
    return {k: (v if counts[v] == 1 else k) for k, v in out.items()}


# ---- selectors -------------------------------------------------------------------------------

def matches(selector: Optional[str], name: str, labels: dict) -> bool:
    """``--pods``/``--nodes SELECTOR``: a kubectl label selector (``k=v,k!=v,k,!k``)
    or a name pattern (``payments/*``, ``gpu-*``; no ``=``)."""
    if selector is None:
        return True
    if "=" not in selector and not selector.startswith("!"):
        return any(fnmatch.fnmatchcase(name, pat.strip()) or fnmatchcase_tail(name, pat.strip())
                   for pat in selector.split(",") if pat.strip())
    for part in (p.strip() for p in selector.split(",") if p.strip()):
        if "!=" in part:
            k, v = part.split("!=", 1)
            if labels.get(k.strip()) == v.strip():
                return False
        elif "=" in part:
            k, v = part.split("=", 1)
            if labels.get(k.strip().rstrip("=")) != v.strip():
                return False
        elif part.startswith("!"):
            if part[1:] in labels:
                return False
        elif part not in labels:
            return False
    return True


def fnmatchcase_tail(name: str, pattern: str) -> bool:
    """``web`` also matches ``shop/web`` (the name after the namespace)."""
    return "/" not in pattern and fnmatch.fnmatchcase(name.split("/", 1)[-1], pattern)
