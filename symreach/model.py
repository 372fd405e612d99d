"""The normalized model: what every front end produces and every engine reads.

Labels and YAML stop at the loader. Here selectors are already resolved to
sets of pod-type indices and topology keys to node partitions, so engines and
the executable semantics never match labels. Everything is immutable.

Indices: pod types and nodes are referred to by their position in
``Instance.pod_types`` and ``Instance.nodes``. A configuration is a tuple of
counts indexed by ``Instance.pair(t, n) = t * len(nodes) + n``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterator, Mapping, Optional, TypeVar

K = TypeVar("K")
V = TypeVar("V")

PAPER = "paper"
KUBERNETES = "kubernetes"
PROFILES = (PAPER, KUBERNETES)

PODS_RESOURCE = "pods"

Pair = tuple[int, int]
Config = tuple[int, ...]


class FrozenDict(Mapping[K, V]):
    """A hashable, immutable mapping (frozen dataclasses need hashable fields)."""

    __slots__ = ("_items", "_hash")

    def __init__(self, items: Mapping[K, V] | None = None, **kwargs: V) -> None:
        data = dict(items or {})
        data.update(kwargs)
        self._items = data
        self._hash: int | None = None

    def __getitem__(self, key: K) -> V:
        return self._items[key]

    def __iter__(self) -> Iterator[K]:
        return iter(self._items)

    def __len__(self) -> int:
        return len(self._items)

    # Fast paths: Mapping's generic versions go through __getitem__ per key.
    def get(self, key, default=None):
        return self._items.get(key, default)

    def __contains__(self, key: object) -> bool:
        return key in self._items

    def items(self):
        return self._items.items()

    def keys(self):
        return self._items.keys()

    def values(self):
        return self._items.values()

    def __hash__(self) -> int:
        if self._hash is None:
            self._hash = hash(frozenset(self._items.items()))
        return self._hash

    def __eq__(self, other: object) -> bool:
        if isinstance(other, FrozenDict):
            return self._items == other._items
        if isinstance(other, Mapping):
            return self._items == dict(other)
        return NotImplemented

    def __repr__(self) -> str:
        return f"FrozenDict({self._items!r})"


@dataclass(frozen=True)
class Taint:
    key: str
    value: str
    effect: str  # NoSchedule | PreferNoSchedule | NoExecute


@dataclass(frozen=True)
class Node:
    """A node. ``capacity`` lists allocatable resources; an unlisted one is 0.

    Integers: cpu in millicores, memory and storage in bytes, other resources
    in their own units. Labels and taints are kept for explanations and trace
    export only; static checks are already folded into ``Instance.static_block``.
    """

    name: str
    labels: FrozenDict[str, str] = field(default_factory=FrozenDict)
    capacity: FrozenDict[str, int] = field(default_factory=FrozenDict)
    taints: tuple[Taint, ...] = ()
    unschedulable: bool = False


@dataclass(frozen=True)
class Topology:
    """A topology key resolved over the nodes.

    ``domain_of[n]`` is the domain id of node n, or None when n lacks the key.
    ``members[d]`` is the set of nodes in domain d; ``values[d]`` its label value.
    """

    key: str
    domain_of: tuple[Optional[int], ...]
    members: tuple[frozenset[int], ...]
    values: tuple[str, ...]

    def domain_nodes(self, n: int) -> frozenset[int]:
        """D_tau(n): the nodes sharing n's value, empty if n lacks the key."""
        d = self.domain_of[n]
        return frozenset() if d is None else self.members[d]


@dataclass(frozen=True)
class AffinityTerm:
    """A required (anti-)affinity term: the pod types it matches and its topology.

    ``selects`` already accounts for the term's namespaces, label selector,
    matchLabelKeys and mismatchLabelKeys (resolved against the owner type).
    """

    selects: frozenset[int]
    topology: Topology
    # The types the term matches when its owner is already running (the
    # symmetric anti-affinity check), if that differs from ``selects``: the
    # kube-scheduler matches a pending pod's namespaceSelector differently.
    existing_selects: Optional[frozenset[int]] = None

    @property
    def blocks(self) -> frozenset[int]:
        """Types this term of a *running* pod matches (existing pods' anti-affinity)."""
        return self.selects if self.existing_selects is None else self.existing_selects


@dataclass(frozen=True)
class SpreadConstraint:
    """A hard (DoNotSchedule) topology-spread constraint of one pod type.

    ``counts``: pod types whose pods are counted (owner's namespace, selector).
    ``self_match``: whether the owner's own pod adds 1 (delta(t, s) in the paper).
    ``eligible``: the node set E after key presence and inclusion policies.
    """

    counts: frozenset[int]
    self_match: bool
    max_skew: int
    min_domains: int
    eligible: frozenset[int]
    topology: Topology


ANY_HOST_IP = "0.0.0.0"


@dataclass(frozen=True)
class HostPort:
    """A host port; ``host_ip`` 0.0.0.0 (the default) binds every address."""

    port: int
    protocol: str = "TCP"
    host_ip: str = ANY_HOST_IP

    def conflicts(self, other: "HostPort") -> bool:
        """NodePorts' ``HostPortInfo.CheckConflict``: same protocol and port, and the
        same address or either one on 0.0.0.0."""
        return (self.port == other.port and self.protocol == other.protocol
                and (self.host_ip == other.host_ip or ANY_HOST_IP in (self.host_ip, other.host_ip)))


def ports_conflict(mine: frozenset[HostPort], theirs: frozenset[HostPort]) -> bool:
    """Whether two pods' host ports clash on one node."""
    return any(a.conflicts(b) for a in mine for b in theirs)


@dataclass(frozen=True)
class PodType:
    """A pod type. ``requests`` excludes the implicit ``pods`` unit (semantics adds it)."""

    name: str
    namespace: str = "default"
    labels: FrozenDict[str, str] = field(default_factory=FrozenDict)
    requests: FrozenDict[str, int] = field(default_factory=FrozenDict)
    creatable: bool = True
    host_ports: frozenset[HostPort] = frozenset()
    affinity: tuple[AffinityTerm, ...] = ()
    anti_affinity: tuple[AffinityTerm, ...] = ()
    spread: tuple[SpreadConstraint, ...] = ()
    max_per_node: Optional[int] = None
    # Where the type came from (workload kind/name, file), for reports only.
    origin: str = ""
    # The pod spec fields as read, for trace export to manifests; engines ignore it.
    manifest: Optional[FrozenDict[str, object]] = None


@dataclass(frozen=True)
class CountTarget:
    """At least ``at_least`` pods on ``pairs`` at the same time (the sum of their
    counts): "K pods of T on N", on a node-selector pool, or in a topology domain."""

    pairs: frozenset[Pair]
    at_least: int


@dataclass(frozen=True)
class Query:
    """Coverability target: a DNF of presence, conjoined with count targets.

    The target holds in sigma when, for some alternative, every (type, node)
    pair of that alternative has at least one pod, and every count target
    holds. A pure count query has the single empty alternative.
    """

    alternatives: tuple[frozenset[Pair], ...]
    description: str = ""
    counts: tuple[CountTarget, ...] = ()

    def pairs(self) -> frozenset[Pair]:
        """Every pair the target reads (presence and counts)."""
        out: set[Pair] = set()
        for alt in self.alternatives:
            out |= alt
        for ct in self.counts:
            out |= ct.pairs
        return frozenset(out)

    def count_cap(self, p: Pair) -> int:
        """The largest threshold of a count target that reads ``p`` (0: none).

        A pair that no spread constraint counts needs a counter only up to this
        value: with ``sigma'(p) = min(sigma(p), K)`` every presence guard keeps
        its value, capacity and ``maxPerNode`` are no harder, and a sum over
        several pairs reaches K in sigma' iff it does in sigma (one term alone
        reaches K, or none was cut). So capping such a pair at K loses no run
        that covers the target (the count analogue of saturation, SPEC 2.2).
        """
        return max((ct.at_least for ct in self.counts if p in ct.pairs), default=0)


@dataclass(frozen=True)
class Instance:
    """One cluster, its pod types, the initial configuration and an optional query.

    ``static_block[t][n]`` is the first failing static reason (kube-scheduler
    plugin order: NodeUnschedulable, NodeName, TaintToleration, NodeAffinity)
    or None when t passes every static filter on n. Static checks never depend
    on the configuration.

    ``initial`` maps (t, n) to a positive count. ``multiplicity_bound`` gives,
    for every pair that some spread constraint counts, the largest count the
    pair can reach (from capacity, an explicit ``maxPerNode``, or the initial
    count if that is larger).
    """

    profile: str
    nodes: tuple[Node, ...]
    pod_types: tuple[PodType, ...]
    static_block: tuple[tuple[Optional[str], ...], ...]
    initial: FrozenDict[Pair, int] = field(default_factory=FrozenDict)
    multiplicity_bound: FrozenDict[Pair, int] = field(default_factory=FrozenDict)
    query: Optional[Query] = None
    namespaces: FrozenDict[str, FrozenDict[str, str]] = field(default_factory=FrozenDict)
    source: str = "<memory>"

    # ---- indexing helpers -------------------------------------------------
    @property
    def num_pairs(self) -> int:
        return len(self.pod_types) * len(self.nodes)

    def pair(self, t: int, n: int) -> int:
        return t * len(self.nodes) + n

    def unpair(self, p: int) -> Pair:
        return divmod(p, len(self.nodes))

    def type_index(self, name: str) -> int:
        for i, t in enumerate(self.pod_types):
            if t.name == name:
                return i
        raise KeyError(name)

    def node_index(self, name: str) -> int:
        for i, n in enumerate(self.nodes):
            if n.name == name:
                return i
        raise KeyError(name)

    def initial_config(self) -> Config:
        sigma = [0] * self.num_pairs
        for (t, n), c in self.initial.items():
            sigma[self.pair(t, n)] = c
        return tuple(sigma)

    def counted_pairs(self) -> frozenset[Pair]:
        """Pairs whose multiplicity some spread constraint observes (SPEC 2.2)."""
        return frozenset(self.multiplicity_bound)

    def with_query(self, query: Optional[Query]) -> "Instance":
        from dataclasses import replace

        return replace(self, query=query)


def daemonset_groups(inst: Instance) -> dict[str, dict[int, int]]:
    """DaemonSet-like workloads: name -> {node index: pod type index}.

    The Kubernetes front end gives a DaemonSet one pod type per node, named
    ``ns/name@node`` and pinned to that node. A type counts as such a member
    when its name is ``W@N`` for a node N of the instance and every other
    node rejects it statically, so the grouping holds for dumps and for the
    v1 files converted from them alike, and never groups a type that could
    run elsewhere.
    """
    nodes = {n.name: i for i, n in enumerate(inst.nodes)}
    groups: dict[str, dict[int, int]] = {}
    for t in range(len(inst.pod_types)):
        member = daemonset_member(inst, t, nodes)
        if member is not None:
            groups.setdefault(member[0], {})[member[1]] = t
    return groups


def daemonset_member(inst: Instance, t: int, nodes: Optional[Mapping[str, int]] = None) -> Optional[tuple[str, int]]:
    """(workload, node index) when pod type ``t`` is one node's pod of a DaemonSet-like
    workload (``daemonset_groups``), else None. ``nodes`` maps node names to indexes."""
    workload, at, node = inst.pod_types[t].name.rpartition("@")
    if not at or not workload:
        return None
    n = (nodes.get(node) if nodes is not None
         else next((i for i, m in enumerate(inst.nodes) if m.name == node), None))
    if n is None:
        return None
    row = inst.static_block[t]
    if all(row[m] is not None for m in range(len(inst.nodes)) if m != n):
        return workload, n
    return None
