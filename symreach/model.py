"""The normalized model: what every front end produces and every engine reads.

Labels and YAML stop at the loader. Here selectors are already resolved to
sets of pod-type indices and topology keys to node partitions, so engines and
the executable semantics never match labels. Everything is immutable.

Indices: pod types and nodes are referred to by their position in
``Instance.pod_types`` and ``Instance.nodes``. A configuration is a tuple of
counts indexed by ``Instance.pair(t, n) = t * len(nodes) + n``.
"""

from __future__ import annotations

from dataclasses import field
from functools import cached_property
from typing import Iterator, Mapping, Optional, TypeVar

from symreach.reasons import FILTER_ERROR
from symreach.records import record

K = TypeVar("K")
V = TypeVar("V")

PAPER = "paper"
KUBERNETES = "kubernetes"
PROFILES = (PAPER, KUBERNETES)

PODS_RESOURCE = "pods"
# NodeVolumeLimits: a node's CSI attach limit for a driver is its capacity of
# ``ATTACH_PREFIX + driver`` (no key: no limit). The charge is not a request:
# a volume counts once per node while some pod using it (or a VolumeAttachment)
# is there (``PodType.attach``, ``Node.attached``); only a pod's own generic
# ephemeral volumes count per pod (``PodType.attach_own``). See semantics.attach_failure.
ATTACH_PREFIX = "attachable-volumes-csi-"
# ``Instance.volume_failures`` position of DynamicResources' Filter failures: after every
# other plugin (it is the last filter of the v1.35 profile); 0 is a PreFilter rejection, 1
# (True) a volume Filter failure reported after NodePorts and NodeResourcesFit.
AFTER_ALL = 2

PAPER_MOVES = "paper"
OPERATOR_MOVES = "operator"
MOVES = (PAPER_MOVES, OPERATOR_MOVES)

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


@record
class Taint:
    key: str
    value: str
    effect: str  # NoSchedule | PreferNoSchedule | NoExecute


@record
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
    # CSI volumes VolumeAttachments attach here, per driver (counted once with the pods' own).
    attached: FrozenDict[str, frozenset[str]] = field(default_factory=FrozenDict)


MIN_FEASIBLE_NODES = 100   # kube-scheduler's minFeasibleNodesToFind: up to this many candidates, all are filtered


def num_feasible_nodes_to_find(nodes: int) -> int:
    """v1.35 ``numFeasibleNodesToFind`` with the default (adaptive) ``percentageOfNodesToScore``:
    every node below 100, else 50 - nodes/125 percent of them (at least 5 %), at least 100. The
    scheduler's configuration is not in the input; a profile setting the percentage changes k."""
    if nodes < MIN_FEASIBLE_NODES:
        return nodes
    return max(nodes * max(50 - nodes // 125, 5) // 100, MIN_FEASIBLE_NODES)


def zone_key(labels: Mapping[str, str]) -> str:
    """The scheduler's node-tree zone of a node (v1.35 ``utilnode.GetZoneKey``): region and zone from
    the GA labels, else the beta ones; "" when both are empty. Its snapshot lists nodes zone by zone,
    round robin (``nodeTree.list``), which ``semantics.cycle_runs_past`` reads."""
    zone = labels.get("topology.kubernetes.io/zone", labels.get("failure-domain.beta.kubernetes.io/zone", ""))
    region = labels.get("topology.kubernetes.io/region", labels.get("failure-domain.beta.kubernetes.io/region", ""))
    return "" if not region and not zone else f"{region}:\x00:{zone}"


@record
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


@record
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
    # The plugin that reports this term when it is not InterPodAffinity's: a
    # ReadWriteOncePod claim is an anti-affinity over every node among the
    # types using the claim, reported by VolumeRestrictions.
    plugin: str = ""

    @property
    def blocks(self) -> frozenset[int]:
        """Types this term of a *running* pod matches (existing pods' anti-affinity)."""
        return self.selects if self.existing_selects is None else self.existing_selects


@record
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


@record
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


EBS_DISK = "awsElasticBlockStore"
RBD_DISK = "rbd"


@record
class Disk:
    """An in-tree disk written into the pod (gcePersistentDisk ``pdName``,
    awsElasticBlockStore ``volumeID``, iscsi ``iqn``, rbd ``pool/image`` with its
    ``monitors``), which VolumeRestrictions checks against the pods on the node."""

    kind: str
    name: str
    read_only: bool = False
    monitors: frozenset[str] = frozenset()

    def conflicts(self, other: "Disk") -> bool:
        """``isVolumeConflict``: the same disk, unless every mount is read-only (an EBS
        volume always; an rbd image only when the monitor lists overlap)."""
        if self.kind != other.kind or self.name != other.name:
            return False
        if self.kind == RBD_DISK and not self.monitors & other.monitors:
            return False
        return self.kind == EBS_DISK or not (self.read_only and other.read_only)


@record
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
    # A static (mirror) pod's type: the kubelet owns it (protected under operator moves).
    static_pod: bool = False
    # NodeVolumeLimits: CSI volumes per driver, named (driver/handle) and shared with every
    # pod using the same volume; and the number of volumes each pod has alone (its generic
    # ephemeral claims), per driver.
    attach: FrozenDict[str, frozenset[str]] = field(default_factory=FrozenDict)
    attach_own: FrozenDict[str, int] = field(default_factory=FrozenDict)
    disks: tuple[Disk, ...] = ()
    # NodeAffinity's PreFilterResult names the candidates (kubernetes: ``matchFields metadata.name In``
    # in every required term): the scheduler filters those nodes in Go map order, not the node tree's
    # zone by zone order (``semantics.cycle_runs_past``), even where they are every node.
    prefilter_named: bool = False


@record
class CountTarget:
    """At least ``at_least`` pods on ``pairs`` at the same time (the sum of their
    counts): "K pods of T on N", on a node-selector pool, or in a topology domain."""

    pairs: frozenset[Pair]
    at_least: int


@record
class Query:
    """Coverability target: a DNF of presence, conjoined with count targets.

    The target holds in sigma when, for some alternative, every (type, node)
    pair of that alternative has at least one pod, and every count target
    holds. A pure count query has the single empty alternative.
    """

    alternatives: tuple[frozenset[Pair], ...]
    description: str = ""
    counts: tuple[CountTarget, ...] = ()
    moves: Optional[str] = None  # ``moves:`` of a v1 query (paper | operator); None: not given

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


GANG = "gang"
BASIC = "basic"


@record
class Group:
    """A pod group (PodGroup, a Workload's pod group or one podGroupReplicaKey
    slice of it, or a CompositePodGroup), SPEC 5.1.

    ``members``: (pod type, pending pods) runs in the scheduler's queue order;
    a type may appear in several runs. Member types belong to this group only.
    ``min_count``: gang pods for a leaf, child groups (minGroupCount) for a
    composite. ``rejected``: why the scheduler refuses the group outright.
    """

    name: str
    members: tuple[tuple[int, int], ...] = ()
    policy: str = GANG
    min_count: int = 1
    parent: Optional[str] = None
    composite: bool = False
    rejected: str = ""

    def member_types(self) -> frozenset[int]:
        return frozenset(t for t, _ in self.members)


@record
class DisruptionBudget:
    """A PodDisruptionBudget resolved to pod types (SPEC 5.2).

    ``counts``: the types whose pods it selects (its namespace and selector).
    ``desired_healthy``: the disruption controller's desiredHealthy, fixed
    at load time (``moves.desired_healthy``); every modelled pod is healthy,
    so an eviction is allowed while ``allowed(present) >= 1``.
    """

    name: str  # namespace/name
    counts: frozenset[int]
    desired_healthy: int
    unhealthy_policy: str = "IfHealthyBudget"

    def allowed(self, present: int) -> int:
        """status.disruptionsAllowed with ``present`` matching (healthy) pods."""
        return max(0, present - self.desired_healthy)


@record
class ReplicaTarget:
    """A controller's replica floor for ``--keep-replicas`` (SPEC 5.2).

    ``name``: ``Kind ns/name``. ``types``: the pod types whose pods it owns
    (its template's and older revisions'). ``replicas``: how many must run at
    the end of a witness (``min(spec.replicas, pods running in sigma0)``: the
    witness keeps what runs, it is not asked to place pending replicas).
    ``members`` (StatefulSets): one entry per kept replica, its pod name and
    the nodes its claims allow (a claim bound to a node- or zone-pinned PV);
    at the end every member must run on one of its nodes, each on its own pod.
    """

    name: str
    types: frozenset[int]
    replicas: int
    members: tuple[tuple[str, frozenset[int]], ...] = ()


@record
class MoveRules:
    """Which deletions a witness may make: the paper's (any) or an operator's;
    ``keep_replicas`` adds the final condition of ``Instance.replica_targets``."""

    name: str = PAPER_MOVES
    respect_pdb: bool = False
    protected: frozenset[int] = frozenset()  # pod types never deleted
    keep_replicas: bool = False

    @property
    def restricted(self) -> bool:
        return self.respect_pdb or bool(self.protected) or self.keep_replicas


@record
class ClaimBinding:
    """A WaitForFirstConsumer claim that a deployment binds (VolumeBinding's PreBind): the
    claim stays bound from then on, deletions included. ``outcomes`` names what it can bind
    to (``PV <name>`` or ``provisioned:<key=value,...>``); a configuration's entry for it is 0
    while unbound, k + 1 once bound to outcome k (``BindingGroup`` says when)."""

    claim: str                                   # namespace/name
    outcomes: tuple[str, ...]
    initial: Optional[str] = None                # DRA slots: what entry 0 holds (the input's allocation)


@record
class Nomination:
    """A pending pod the scheduler holds nominated to node ``n`` (``status.nominatedNodeName``):
    while it holds, ``semantics.nominated_failure`` adds one pod of type ``t`` on ``n`` when it
    filters a pod of priority <= ``priority``; it ends when the pod is scheduled (anywhere)."""

    pod: str                  # "ns/name" of the pending pod
    t: int                    # its pod type
    n: int                    # the node it is nominated to
    priority: Optional[int]   # None: unknown (its PriorityClass is not in the input)


@record
class CycleOrder:
    """One order of the ResourceSlices that DynamicResources' PreFilter lists for a whole scheduling
    cycle (``frontends.dra_slice_orders``): the nodes where some order of pools fits, and the nodes
    where every one errs, each with its errors (node index, errors)."""

    fits: frozenset[int]
    errs: tuple[tuple[int, tuple[str, ...]], ...]


@record
class BindingGroup:
    """Claims whose bindings depend on each other (one pod binds them together, or they could
    take the same PV), with every joint binding reachable from the input's.

    ``states[s]`` gives the entry of each of ``claims`` (indices into ``Instance.bindings``);
    state 0 is the input's (all unbound). In state s a user type t reads ``rows[s][t]``,
    ``failures[s]`` (as ``Instance.static_block`` / ``volume_failures`` give them in state 0)
    and ``attach[s][t]`` (its CSI volumes and own ephemeral ones); deploying it on node n
    moves the group to state ``next[s][t][n]`` (-1: it binds nothing there).

    DRA devices (``loader.dra`` ``allocations``) are such a group too, whose slots a deletion
    changes: deleting a pod of t on n moves it to a state of ``frees[s][t][n]``, pairs (what the
    deleted pod holds, state) with one pair per distinct holding (empty: nothing freed), then
    every slot k some type of ``holders[k]`` reserves is deallocated when no pod of those
    types is left: state s moves to ``releases[s][k]`` (``semantics.delete``). State 0 is the
    input's allocation. Empty for claim bindings, which a deletion never changes.
    """

    claims: tuple[int, ...]
    users: frozenset[int]
    states: tuple[tuple[int, ...], ...]
    rows: tuple[FrozenDict[int, tuple[Optional[str], ...]], ...]
    failures: tuple[FrozenDict[Pair, tuple[str, tuple[str, ...], bool]], ...]
    attach: tuple[FrozenDict[int, tuple[FrozenDict[str, frozenset[str]], FrozenDict[str, int]]], ...]
    next: tuple[FrozenDict[int, tuple[int, ...]], ...]
    frees: tuple[FrozenDict[int, tuple[tuple[tuple[str, int], ...], ...]], ...] = ()
    holders: tuple[frozenset[int], ...] = ()
    releases: tuple[tuple[int, ...], ...] = ()
    # Claim bindings whose pods may hold a PV counted under another CSI driver than the one
    # the type's other pods count under (``frontends.k8s_volume_bindings`` pod slot): per state,
    # (t, n) -> how many of t's pods on n hold one, and the attach counts they move per driver.
    # ``frees`` then lists deleting such a pod; a pod holding none is the other choice.
    held_pods: tuple[FrozenDict[Pair, int], ...] = ()
    held_attach: tuple[FrozenDict[Pair, FrozenDict[str, int]], ...] = ()
    # Where the scheduler may bind in several ways (which of several PVs a claim takes depends on its
    # informer's order: ``k8s_volume_matching``; which DRA devices, on its random order of pools and
    # slices: ``k8s_dra_state``): ``choices[s][t][n]`` lists every state deploying t on n may move the
    # group to, ``next[s][t][n]`` first; () where there is one (``semantics.binding_choices``).
    choices: tuple[FrozenDict[int, tuple[tuple[int, ...], ...]], ...] = ()
    # PVs equal but for their names (one choice for the scheduler): the states name one free PV of
    # a class (``k8s_volume_matching.Runs.own``), a witness's step may name any free one (``semantics.step_choice``).
    interchangeable: tuple[frozenset[str], ...] = ()
    # per state, as ``Instance.run_refusals`` (empty: none in any state)
    run_refusals: tuple[FrozenDict[Pair, tuple[tuple[str, tuple[str, ...]], ...]], ...] = ()
    # per state, as ``Instance.cycle_orders`` (empty: none in any state)
    cycle_orders: tuple[FrozenDict[int, tuple[CycleOrder, ...]], ...] = ()

    @cached_property
    def state_ids(self) -> dict[tuple[int, ...], int]:
        return {state: s for s, state in enumerate(self.states)}


@record
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
    groups: tuple[Group, ...] = ()        # pod groups (SPEC 5.1)
    group_target: Optional[str] = None   # the file's ``query: {group: ...}``
    query: Optional[Query] = None
    namespaces: FrozenDict[str, FrozenDict[str, str]] = field(default_factory=FrozenDict)
    source: str = "<memory>"
    # (t, n) -> (plugin, reasons, after_fit) for pairs ``static_block`` blocks by a
    # volume plugin: a PreFilter rejection, or (after_fit) a Filter failure that
    # the kube-scheduler reports only after NodePorts, NodeResourcesFit and the
    # dynamic volume checks pass; ``AFTER_ALL``: DynamicResources' Filter failure, reported
    # only when every other plugin passes (``loader.dra``). A fourth item, where present: the other
    # (plugin, reasons) the scheduler's runs report there (v1 ``otherRuns``; ``semantics.Failure.others``).
    volume_failures: FrozenDict[Pair, tuple] = field(default_factory=FrozenDict)
    # (t, n) -> the volume plugins' refusals in the scheduler's runs where others pass them (v1
    # ``otherRunRefusals``): a later plugin's refusal there is one of a set with them (``Failure.others``).
    run_refusals: FrozenDict[Pair, tuple[tuple[str, tuple[str, ...]], ...]] = field(default_factory=FrozenDict)
    budgets: tuple[DisruptionBudget, ...] = ()
    moves: MoveRules = field(default_factory=MoveRules)
    # Claims a deployment binds: a configuration then carries one more entry per claim after
    # its pair counts (0 unbound, k + 1 bound to outcome k); none for every other instance.
    bindings: tuple[ClaimBinding, ...] = ()
    binding_groups: tuple[BindingGroup, ...] = ()
    replica_targets: tuple[ReplicaTarget, ...] = ()  # Deployments, ReplicaSets, StatefulSets (SPEC 5.2)
    # t -> its cycle orders where the slice order drawn once per cycle decides a fit (v1 ``dra.cycleOrders``):
    # t lands on n by one of them (``semantics.abort_failure``; in another allocation state, its group's
    # ``BindingGroup.cycle_orders``); empty otherwise.
    cycle_orders: FrozenDict[int, tuple[CycleOrder, ...]] = field(default_factory=FrozenDict)
    # The front end's search budget (``symreach.search_budget.Budget.text``) where it gave another instance
    # than the default budget would (a search past a default guard, or a guard below its default
    # passed); None otherwise. In the certificate digest when set.
    search_budget: Optional[str] = None
    # The search budget's ``filter-runs`` value where it departed from the default's (a pod type's
    # candidates past the default or this value, ``k8s_dra._abort_caveats``): the bound the solve's
    # ``semantics.cycle_runs_past`` gives ``filter_runs.runs_past``; None: the default. In the digest when set.
    filter_runs_work: Optional[int] = None

    # ---- indexing helpers -------------------------------------------------
    @property
    def num_pairs(self) -> int:
        return len(self.pod_types) * len(self.nodes)

    def pair(self, t: int, n: int) -> int:
        return t * len(self.nodes) + n

    def unpair(self, p: int) -> Pair:
        return divmod(p, len(self.nodes))

    def type_index(self, name: str) -> int:
        return self.type_ids[name]

    def node_index(self, name: str) -> int:
        return self.node_ids[name]

    # Names to indices, built on first use (a linear scan per trace step cost
    # O(nodes) on every replay). cached_property writes the instance's own
    # __dict__, so the frozen dataclass stays immutable in every field; on a
    # duplicate name the first index wins, as the scan did.
    @cached_property
    def type_ids(self) -> dict[str, int]:
        return _first_index(t.name for t in self.pod_types)

    @cached_property
    def node_ids(self) -> dict[str, int]:
        return _first_index(n.name for n in self.nodes)

    @cached_property
    def binding_of(self) -> dict[int, int]:
        """Pod type -> the index in ``binding_groups`` of the group its deployment binds in."""
        return {t: g for g, group in enumerate(self.binding_groups) for t in group.users}

    @cached_property
    def filter_errors(self) -> dict[int, frozenset[int]]:
        """Pod type -> the nodes where its DynamicResources Filter errs in some allocation state: the
        scheduler may abort its whole scheduling cycle there (``semantics.cycle_abort``), every order of
        the cycle's slices or some (``cycle_orders``)."""
        maps = (self.volume_failures,) + tuple(f for group in self.binding_groups for f in group.failures)
        out: dict[int, set[int]] = {}
        for tables in (self.cycle_orders,) + tuple(c for group in self.binding_groups for c in group.cycle_orders):
            for t, orders in tables.items():
                out.setdefault(t, set()).update(m for order in orders for m, _ in order.errs)
        for failures in maps:
            for (t, n), why in failures.items():
                if why[2] == AFTER_ALL and why[1] and why[1][0].startswith(FILTER_ERROR):
                    out.setdefault(t, set()).add(n)
        return {t: frozenset(nodes) for t, nodes in out.items() if nodes}

    def initial_config(self) -> Config:
        sigma = [0] * self.num_pairs
        for (t, n), c in self.initial.items():
            sigma[self.pair(t, n)] = c
        return tuple(sigma) + (0,) * len(self.bindings)

    def counted_pairs(self) -> frozenset[Pair]:
        """Pairs whose multiplicity some spread constraint observes (SPEC 2.2)."""
        return frozenset(self.multiplicity_bound)

    def with_query(self, query: Optional[Query]) -> "Instance":
        from dataclasses import replace

        return replace(self, query=query)


def _first_index(names: Iterator[str]) -> dict[str, int]:
    out: dict[str, int] = {}
    for i, name in enumerate(names):
        out.setdefault(name, i)
    return out


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
