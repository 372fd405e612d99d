"""A configuration with the sums the semantics' guards read, kept up to date per step.

``symreach.semantics`` is the readable reference: every guard is recomputed
from the configuration as the SPEC states it. On thousands of nodes that is
O(nodes) per step: the topology-spread minimum ``gmin`` scans every domain of
the constraint (every node, for ``kubernetes.io/hostname``), and a
configuration is a tuple of ``types x nodes`` counts copied per step.

``ReplayState`` answers the same ``deploy_failure`` (same reason, same
plugin order) from sums it updates in O(1) per pod moved:

- the counts as a sparse map, and per node the types on it and the
  resources they use;
- per spread constraint (made when a guard first reads it): the matching pod
  count of each eligible domain, how many domains have each count, and the
  minimum, which moves by at most the size of the step;
- per topology (made when first read): the pods of each type in each domain,
  for affinity, anti-affinity and existing pods' anti-affinity.

Where witnesses are replayed at scale (``realize_trace``, the matrix), this
replaces ``semantics.replay``; ``tests/test_replay_state.py`` checks it
against the plain semantics, reason for reason, on random instances and runs.
"""

from __future__ import annotations

from typing import Mapping, Optional, Sequence

from symreach import reasons, semantics
from symreach.model import AFTER_ALL, ATTACH_PREFIX, KUBERNETES, PODS_RESOURCE, Instance, Pair, Query, SpreadConstraint, Topology, ports_conflict
from symreach.result import DELETE, DEPLOY, Step

_CACHE_LIMIT = 64


class _PerInstance:
    """What only the instance fixes (shared by every state on it): the eligible
    domains of each spread constraint, existing pods' anti-affinity by target."""

    def __init__(self, inst: Instance) -> None:
        self.inst = inst
        self.domains: dict[int, tuple[SpreadConstraint, int]] = {}
        blockers: dict[int, list[tuple[int, Topology]]] = {}
        for u, other in enumerate(inst.pod_types):
            for term in other.anti_affinity:
                if term.plugin:
                    continue
                for t in term.blocks:
                    blockers.setdefault(t, []).append((u, term.topology))
        self.blockers = blockers

    def eligible_domains(self, h: SpreadConstraint) -> int:
        hit = self.domains.get(id(h))
        if hit is None or hit[0] is not h:
            doms = {h.topology.domain_of[m] for m in h.eligible}
            doms.discard(None)
            hit = (h, len(doms))
            self.domains[id(h)] = hit
        return hit[1]


_INSTANCES: dict[int, _PerInstance] = {}


def _per_instance(inst: Instance) -> _PerInstance:
    hit = _INSTANCES.get(id(inst))
    if hit is None or hit.inst is not inst:
        if len(_INSTANCES) >= _CACHE_LIMIT:
            _INSTANCES.pop(next(iter(_INSTANCES)))
        hit = _INSTANCES[id(inst)] = _PerInstance(inst)
    return hit


class _Spread:
    """Matching pods per eligible domain of one constraint, and their minimum."""

    def __init__(self, h: SpreadConstraint, ndomains: int, counts: Mapping[Pair, int]) -> None:
        self.h = h
        self.ndomains = ndomains
        self.count: dict[int, int] = {}
        for (u, m), c in counts.items():
            if u in h.counts and m in h.eligible:
                d = h.topology.domain_of[m]
                if d is not None:
                    self.count[d] = self.count.get(d, 0) + c
        # how many eligible domains hold each count (zeros implied)
        self.freq: dict[int, int] = {}
        for c in self.count.values():
            self.freq[c] = self.freq.get(c, 0) + 1
        self.freq[0] = ndomains - sum(self.freq.values()) + self.freq.get(0, 0)
        self.low = min((c for c, k in self.freq.items() if k > 0), default=0)

    def add(self, d: int, k: int) -> None:
        c = self.count.get(d, 0)
        new = c + k
        self.count[d] = new
        self.freq[c] -= 1
        self.freq[new] = self.freq.get(new, 0) + 1
        if new < self.low:
            self.low = new
        elif c == self.low and self.freq[c] == 0:
            self.low = min(v for v, n in self.freq.items() if n > 0)

    def gmin(self) -> int:
        if self.ndomains < self.h.min_domains or not self.ndomains:
            return 0
        return self.low


class ReplayState:
    """A configuration of ``inst`` (from ``initial``) that answers ``deploy_failure`` fast."""

    def __init__(self, inst: Instance, initial: Optional[Mapping[Pair, int]] = None) -> None:
        self.inst = inst
        self.kube = inst.profile == KUBERNETES
        self.shared = _per_instance(inst)
        self.counts: dict[Pair, int] = {}
        self.on_node: dict[int, dict[int, int]] = {}
        self.used: dict[int, dict[str, int]] = {}
        self.total: dict[int, int] = {}
        self.by_type: dict[int, dict[int, int]] = {}
        self.spreads: dict[int, _Spread] = {}
        self.counted_by: dict[int, list[_Spread]] = {}
        self.topos: dict[int, tuple[Topology, dict[int, dict[int, int]]]] = {}
        for (t, n), c in (inst.initial if initial is None else initial).items():
            if c > 0:
                self.change(t, n, c)

    # ---- moving pods -----------------------------------------------------
    def change(self, t: int, n: int, k: int) -> None:
        """Add ``k`` pods of ``t`` on ``n`` (remove when negative)."""
        p = (t, n)
        c = self.counts.get(p, 0) + k
        if c < 0:
            raise ValueError("delete of an absent pod")
        if c:
            self.counts[p] = c
        else:
            self.counts.pop(p, None)
        node, where = self.on_node.setdefault(n, {}), self.by_type.setdefault(t, {})
        if c:
            node[t] = where[n] = c
        else:
            node.pop(t, None)
            where.pop(n, None)
        used = self.used.setdefault(n, {})
        pod = self.inst.pod_types[t]
        for r, need in pod.requests.items():
            if not (self.kube and r == PODS_RESOURCE):
                used[r] = used.get(r, 0) + k * need
        if self.kube:
            used[PODS_RESOURCE] = used.get(PODS_RESOURCE, 0) + k
        self.total[t] = self.total.get(t, 0) + k
        for s in self.counted_by.get(t, ()):
            if n in s.h.eligible:
                d = s.h.topology.domain_of[n]
                if d is not None:
                    s.add(d, k)
        for topo, per_domain in self.topos.values():
            d = topo.domain_of[n]
            if d is not None:
                row = per_domain.setdefault(d, {})
                v = row.get(t, 0) + k
                if v:
                    row[t] = v
                else:
                    row.pop(t, None)

    def deploy(self, t: int, n: int) -> None:
        self.change(t, n, 1)

    def delete(self, t: int, n: int) -> None:
        self.change(t, n, -1)

    # ---- sums, made on first use -----------------------------------------
    def _spread(self, h: SpreadConstraint) -> _Spread:
        s = self.spreads.get(id(h))
        if s is None or s.h is not h:
            s = _Spread(h, self.shared.eligible_domains(h), self.counts)
            self.spreads[id(h)] = s
            for u in h.counts:
                self.counted_by.setdefault(u, []).append(s)
        return s

    def _domains(self, topo: Topology) -> dict[int, dict[int, int]]:
        hit = self.topos.get(id(topo))
        if hit is None or hit[0] is not topo:
            per_domain: dict[int, dict[int, int]] = {}
            for (u, m), c in self.counts.items():
                d = topo.domain_of[m]
                if d is not None:
                    row = per_domain.setdefault(d, {})
                    row[u] = row.get(u, 0) + c
            hit = (topo, per_domain)
            self.topos[id(topo)] = hit
        return hit[1]

    def present_in_domain(self, types: frozenset[int], topo: Topology, n: int) -> bool:
        """present(types, D_tau(n)); False when n lacks the key."""
        d = topo.domain_of[n]
        if d is None:
            return False
        row = self._domains(topo).get(d)
        if not row:
            return False
        if len(row) < len(types):
            return any(u in types for u in row)
        return any(u in row for u in types)

    def type_in_domain(self, u: int, topo: Topology, n: int) -> bool:
        d = topo.domain_of[n]
        return d is not None and self._domains(topo).get(d, {}).get(u, 0) > 0

    def present_anywhere(self, types: frozenset[int]) -> bool:
        return any(self.total.get(u, 0) > 0 for u in types)

    # ---- the guards (semantics.deploy_failure, same reasons) -------------
    def deploy_failure(self, t: int, n: int) -> Optional[str]:
        inst = self.inst
        pod = inst.pod_types[t]
        if not pod.creatable:
            return semantics.REASON_NOT_CREATABLE
        if pod.max_per_node is not None and self.counts.get((t, n), 0) >= pod.max_per_node:
            return semantics.REASON_MAX_PER_NODE
        static = inst.static_block[t][n]
        volume = inst.volume_failures.get((t, n)) if static is not None else None
        if static is not None and (volume is None or not volume[2]):
            return static if volume is None else volume[1][0]
        if self.kube and pod.host_ports:
            for u in self.on_node.get(n, {}):
                if ports_conflict(pod.host_ports, inst.pod_types[u].host_ports):
                    return semantics.REASON_PORTS
        failing = self._capacity_failures(t, n)
        if failing:
            return failing[0]
        if self.kube and pod.disks and any(semantics.disks_conflict(pod.disks, inst.pod_types[u].disks)
                                           for u, c in self.on_node.get(n, {}).items() if c):
            return reasons.DISK_CONFLICT
        if self.kube and any(self.present_anywhere(term.selects) for term in pod.anti_affinity if term.plugin):
            return reasons.READ_WRITE_ONCE_POD_CONFLICT
        if self.kube and (pod.attach or pod.attach_own) and not semantics.attach_fits(
                inst, t, n, self.on_node.get(n, {}).items()):
            return reasons.MAX_VOLUME_COUNT
        if volume is not None and volume[2] != AFTER_ALL:
            return volume[1][0]
        for h in pod.spread:
            d = h.topology.domain_of[n]
            if d is None:
                return semantics.REASON_SPREAD_LABEL
            if not self.kube and n not in h.eligible:
                return semantics.REASON_SPREAD
            s = self._spread(h)
            if s.count.get(d, 0) + int(h.self_match) - s.gmin() > h.max_skew:
                return semantics.REASON_SPREAD
        if pod.affinity and not self._affinity_ok(t, n):
            return semantics.REASON_AFFINITY
        for term in pod.anti_affinity:
            if not term.plugin and self.present_in_domain(term.selects, term.topology, n):
                return semantics.REASON_ANTI_AFFINITY
        if self.kube:
            for u, topo in self.shared.blockers.get(t, ()):
                if self.type_in_domain(u, topo, n):
                    return semantics.REASON_EXISTING_ANTI_AFFINITY
        if volume is not None:   # DynamicResources, the last filter
            return volume[1][0]
        return None

    def _capacity_failures(self, t: int, n: int) -> list[str]:
        node = self.inst.nodes[n]
        used = self.used.get(n, {})
        requests = self.inst.pod_types[t].requests
        out: list[str] = []
        if self.kube:
            if PODS_RESOURCE in node.capacity and used.get(PODS_RESOURCE, 0) + 1 > node.capacity[PODS_RESOURCE]:
                out.append(semantics.REASON_TOO_MANY_PODS)
            ordered = [r for r in semantics.FIT_ORDER if r in requests]
            ordered += sorted(r for r in requests if r not in semantics.FIT_ORDER and r != PODS_RESOURCE
                              and not r.startswith(ATTACH_PREFIX))
            for r in ordered:
                need = requests[r]
                if need > 0 and used.get(r, 0) + need > node.capacity.get(r, 0):
                    out.append(semantics.insufficient(r))
            return out
        for r in sorted(set(node.capacity) | set(requests)):
            if used.get(r, 0) + requests.get(r, 0) > node.capacity.get(r, 0):
                out.append(semantics.insufficient(r))
        return out

    def _affinity_ok(self, t: int, n: int) -> bool:
        terms = self.inst.pod_types[t].affinity
        if not self.kube:
            return all(self.present_in_domain(term.selects, term.topology, n)
                       or (t in term.selects and not self.present_anywhere(term.selects))
                       for term in terms)
        if any(term.topology.domain_of[n] is None for term in terms):
            return False
        witnesses = semantics.affinity_witness_types(self.inst, t)
        if all(self.present_in_domain(witnesses, term.topology, n) for term in terms):
            return True
        # a witness on a node carrying any of the terms' keys disables the waiver
        for u in witnesses:
            for m in self.by_type.get(u, ()):
                if any(term.topology.domain_of[m] is not None for term in terms):
                    return False
        return t in witnesses

    def covers(self, query: Query) -> bool:
        """``semantics.query_holds`` on this configuration."""
        if not all(sum(self.counts.get(p, 0) for p in ct.pairs) >= ct.at_least for ct in query.counts):
            return False
        return any(all(self.counts.get(p, 0) > 0 for p in alt) for alt in query.alternatives)


def replay(inst: Instance, trace: Sequence[Step], query: Optional[Query] = None) -> ReplayState:
    """``semantics.replay`` on a ``ReplayState``: the same errors, O(1) sums per step."""
    state = ReplayState(inst)
    for i, step in enumerate(trace):
        try:
            t, n = inst.type_index(step.pod), inst.node_index(step.node)
        except KeyError as exc:
            raise semantics.ReplayError(f"step {i}: unknown name {exc}") from None
        if step.op == DEPLOY:
            why = state.deploy_failure(t, n)
            if why is not None:
                raise semantics.ReplayError(f"step {i}: deploy {step.pod} on {step.node} is illegal: {why}")
            state.deploy(t, n)
        elif step.op == DELETE:
            if state.counts.get((t, n), 0) <= 0:
                raise semantics.ReplayError(f"step {i}: delete {step.pod} on {step.node}: no such pod")
            state.delete(t, n)
        else:
            raise semantics.ReplayError(f"step {i}: unknown op {step.op!r}")
    if query is not None and not state.covers(query):
        raise semantics.ReplayError("the trace ends in a configuration that does not cover the target")
    return state
