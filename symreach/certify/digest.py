"""The canonical digest of an instance: what a certificate is bound to.

A certificate proves something about one instance; ``certify`` must refuse
it for any other. The digest is a SHA-256 over everything the checkers read
(profile, nodes, pod types with their resolved constraints and pod specs,
static filter verdicts, the initial configuration, multiplicity bounds,
namespaces, and PodDisruptionBudgets and controllers' replicas when there are any; the
front end's search budget where it changed the instance, ``symreach.search_budget``), written with *names* instead of indices and sorted, so that it
survives a reordering of the input file, as the certificates do. The query
is not part of it (a certificate names its target separately), nor are the
file name and where a type came from.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any, Optional

from symreach.model import AffinityTerm, Instance, SpreadConstraint, Topology

DIGEST_PREFIX = "sha256:"


def instance_digest(inst: Instance) -> str:
    """``sha256:<hex>`` of the instance's canonical form (module docstring)."""
    text = json.dumps(_canonical(inst), sort_keys=True, separators=(",", ":"), default=str)
    return DIGEST_PREFIX + hashlib.sha256(text.encode()).hexdigest()


def _canonical(inst: Instance) -> dict[str, Any]:
    types = [t.name for t in inst.pod_types]
    nodes = [n.name for n in inst.nodes]

    def type_set(ts: Optional[frozenset[int]]) -> Optional[list[str]]:
        return None if ts is None else sorted(types[t] for t in ts)

    seen: dict[int, list] = {}  # topologies are shared by many terms

    def topology(top: Topology) -> list:
        if id(top) not in seen:
            domains = sorted((nodes[n], top.values[d]) for n, d in enumerate(top.domain_of) if d is not None)
            seen[id(top)] = [top.key, domains]
        return seen[id(top)]

    def term(a: AffinityTerm) -> list:
        return [type_set(a.selects), topology(a.topology), type_set(a.existing_selects)]

    def spread(s: SpreadConstraint) -> list:
        return [type_set(s.counts), s.self_match, s.max_skew, s.min_domains,
                sorted(nodes[n] for n in s.eligible), topology(s.topology)]

    def pairs(mapping) -> list:
        return sorted([types[t], nodes[n], v] for (t, n), v in mapping.items())

    out = {
        "profile": inst.profile,
        "nodes": sorted([n.name, sorted(n.labels.items()), sorted(n.capacity.items()),
                         sorted([x.key, x.value, x.effect] for x in n.taints), n.unschedulable]
                        for n in inst.nodes),
        "podTypes": sorted([p.name, p.namespace, sorted(p.labels.items()), sorted(p.requests.items()),
                            p.creatable, sorted([h.port, h.protocol, h.host_ip] for h in p.host_ports),
                            sorted(term(a) for a in p.affinity), sorted(term(a) for a in p.anti_affinity),
                            sorted(spread(s) for s in p.spread), p.max_per_node,
                            json.dumps(_plain(p.manifest), sort_keys=True, default=str)]
                           for p in inst.pod_types),
        "static": sorted([types[t], nodes[n], why] for t, row in enumerate(inst.static_block)
                         for n, why in enumerate(row) if why is not None),
        "initial": pairs(inst.initial),
        "bounds": pairs(inst.multiplicity_bound),
        "namespaces": sorted([ns, sorted(labels.items())] for ns, labels in inst.namespaces.items()),
    }
    attach = sorted([p.name, sorted((d, sorted(v)) for d, v in p.attach.items()), sorted(p.attach_own.items()),
                     sorted([x.kind, x.name, x.read_only, sorted(x.monitors)] for x in p.disks)]
                    for p in inst.pod_types if p.attach or p.attach_own or p.disks)
    attached = sorted([n.name, sorted((d, sorted(v)) for d, v in n.attached.items())]
                      for n in inst.nodes if n.attached)
    if attach or attached:   # only then, so that the digests of other instances stay as they were
        out["attach"] = [attach, attached]
    if inst.search_budget is not None:   # the load's search budget changed the instance: only then, as above
        out["searchBudget"] = inst.search_budget
    if inst.filter_runs_work is not None:   # the bound of the DRA abort's search of runs (solve time): as above
        out["filterRunsWork"] = inst.filter_runs_work
    named = sorted([p.namespace, p.name] for p in inst.pod_types if p.prefilter_named)
    if named:   # the Filter phase's node order (the cycle's abort reads it); only then, as above
        out["prefilterNamed"] = named
    # the operator rules' data (SPEC 5.2), only when present: digests of other instances stay as they were
    if inst.budgets:
        out["budgets"] = sorted([b.name, type_set(b.counts), b.desired_healthy] for b in inst.budgets)
    if inst.replica_targets:
        out["controllers"] = sorted([r.name, type_set(r.types), r.replicas,
                                     sorted([m, sorted(nodes[n] for n in ns)] for m, ns in r.members)]
                                    for r in inst.replica_targets)
    return out


def _plain(value: Any) -> Any:
    """A pod spec (FrozenDicts and tuples) as plain JSON values."""
    if hasattr(value, "items"):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, (set, frozenset)):  # no hash order in the digest
        return sorted((_plain(v) for v in value), key=repr)
    return value
