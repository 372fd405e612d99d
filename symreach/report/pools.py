"""Node pools for people: the classes of nodes equal up to their hostname
(``symmetry.node_base``: labels but hostname, taints, ``unschedulable``,
capacity), each named by the labels that tell it from the other pools.

Pools are what an operator calls them (``pool=gpu zone=eu-central-1b``);
they are the type-independent part of the symmetry classes, so the nodes of
a pool differ only where initial pods or a node name in a pod's spec tell
them apart (a pool's cell then shows how many of its nodes are deployable).
"""

from __future__ import annotations

import fnmatch
from dataclasses import dataclass
from typing import Optional, Sequence

from symreach.encodings.symmetry import HOSTNAME, base_ids
from symreach.model import Instance

# Label prefixes dropped when naming a pool (the key stays unique among the pool-naming keys).
_SHORT = ("topology.kubernetes.io/", "node.kubernetes.io/", "kubernetes.io/", "beta.kubernetes.io/")


@dataclass(frozen=True)
class Pool:
    key: str                  # short column heading: P1, P2, ...
    name: str                 # the distinguishing labels, "pool=gpu zone=eu-central-1b"
    nodes: tuple[int, ...]    # node indices, in input order


def node_pools(inst: Instance, nodes: Optional[Sequence[int]] = None) -> list[Pool]:
    """The pools of ``nodes`` (default: all), in order of their first node."""
    chosen = list(range(len(inst.nodes))) if nodes is None else list(nodes)
    ids = base_ids(inst)
    members: dict[int, list[int]] = {}
    for n in chosen:
        members.setdefault(ids[n], []).append(n)
    groups = list(members.values())
    keys = _distinguishing_keys(inst, groups)
    short = _short_names(keys)
    names = []
    for group in groups:
        labels = inst.nodes[group[0]].labels
        parts = [f"{short[k]}={labels[k]}" if labels[k] else short[k] for k in keys if k in labels]
        names.append(" ".join(parts) or ("all nodes" if len(groups) == 1 else "(no distinguishing label)"))
    seen: dict[str, int] = {}
    out = []
    for i, (group, name) in enumerate(zip(groups, names)):
        if names.count(name) > 1:  # same labels, other taints or capacity
            seen[name] = seen.get(name, 0) + 1
            name = f"{name} #{seen[name]}"
        out.append(Pool(f"P{i + 1}", name, tuple(group)))
    return out


def _distinguishing_keys(inst: Instance, groups: list[list[int]]) -> list[str]:
    """Label keys (not the hostname) whose value, or presence, differs between pools, in first-seen order."""
    keys: dict[str, None] = {}
    for group in groups:
        for k in inst.nodes[group[0]].labels:
            if k != HOSTNAME:
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
