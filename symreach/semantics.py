"""The executable semantics: Hard(t, n, sigma), transitions, replay.

This module is the reference every engine is tested against (SPEC section 2).
It favours being obviously right over being fast: each check is written as
the SPEC states it, for both profiles, over the resolved model.

``first_failure`` returns the first failing reason in the kube-scheduler's
plugin order (NodeUnschedulable, NodeName, TaintToleration, NodeAffinity --
folded into ``Instance.static_block`` --, then NodePorts, NodeResourcesFit,
PodTopologySpread, InterPodAffinity), or None when the deployment is legal.
"""

from __future__ import annotations

from typing import Callable, Iterable, Mapping, Optional, Sequence

from symreach import reasons
from symreach.model import (
    AFTER_ALL,
    ATTACH_PREFIX,
    KUBERNETES,
    PODS_RESOURCE,
    AffinityTerm,
    BindingGroup,
    Config,
    CycleOrder,
    Disk,
    Instance,
    Nomination,
    Query,
    SpreadConstraint,
    num_feasible_nodes_to_find,
    ports_conflict,
    zone_key,
)
from symreach.records import record
from symreach.result import DELETE, DEPLOY, Step

REASON_PORTS = reasons.NODE_PORTS
REASON_TOO_MANY_PODS = reasons.TOO_MANY_PODS
REASON_SPREAD = reasons.SPREAD
REASON_SPREAD_LABEL = reasons.SPREAD_MISSING_LABEL
REASON_AFFINITY = reasons.POD_AFFINITY
REASON_ANTI_AFFINITY = reasons.POD_ANTI_AFFINITY
REASON_EXISTING_ANTI_AFFINITY = reasons.EXISTING_ANTI_AFFINITY
REASON_NOT_CREATABLE = "pod type is not creatable (it exists only in the initial configuration)"
REASON_MAX_PER_NODE = "the pod type's maxPerNode bound is reached on this node"
# what a pod holds when its ephemeral volume counts under its class's provisioner, beside pods of its
# type holding a PV of another driver (``model.BindingGroup.held_pods``)
PLAIN_VOLUME = "a volume of its class's provisioner"
insufficient = reasons.insufficient
# kube-scheduler checks these resources in this order before extended ones.
FIT_ORDER = ("cpu", "memory", "ephemeral-storage")


@record
class Failure:
    """Why a deployment is refused: the first failing plugin and all its reasons.

    NodeResourcesFit reports every insufficient resource (kube-scheduler keeps
    them all); the other plugins report one reason.
    """

    plugin: str
    reasons: tuple[str, ...]
    # Where the scheduler's own random run decides which of several refusals it reports (the
    # informer's order of PVs): the other (plugin, reasons) some run gives; every run refuses.
    others: tuple[tuple[str, tuple[str, ...]], ...] = ()

    @property
    def reason(self) -> str:
        return self.reasons[0]

    @property
    def alternatives(self) -> tuple[tuple[str, tuple[str, ...]], ...]:
        """Every (plugin, reasons) the scheduler may report: this one first, then ``others``."""
        return ((self.plugin, self.reasons),) + self.others

    def text(self) -> str:
        """The first reason, or every run's reasons (``ONE_OF``) where the run decides which."""
        if not self.others:
            return self.reason
        return ONE_OF + "; ".join(", ".join(why) for _, why in self.alternatives)


ONE_OF = "one of (the scheduler's random run decides which): "


def _failure(*why: str) -> Failure:
    return Failure(reasons.plugin_of(why[0]), why)


# ---- configuration queries ------------------------------------------------

def count(inst: Instance, sigma: Config, t: int, n: int) -> int:
    return sigma[inst.pair(t, n)]


def present_on(inst: Instance, sigma: Config, types: Iterable[int], nodes: Iterable[int]) -> bool:
    """present(S, D): some pod of a type in S runs on some node of D."""
    nodes = tuple(nodes)
    return any(sigma[inst.pair(u, m)] > 0 for u in types for m in nodes)


def present_anywhere(inst: Instance, sigma: Config, types: Iterable[int]) -> bool:
    return present_on(inst, sigma, types, range(len(inst.nodes)))


def used(inst: Instance, sigma: Config, n: int, resource: str) -> int:
    """used(sigma, n) for one resource, counting the implicit ``pods`` unit."""
    total = 0
    for t, pod_type in enumerate(inst.pod_types):
        c = sigma[inst.pair(t, n)]
        if c:
            total += c * request(inst, t, resource)
    return total


def request(inst: Instance, t: int, resource: str) -> int:
    """res(t)(r); in the kubernetes profile every pod requests one ``pods`` unit."""
    if resource == PODS_RESOURCE and inst.profile == KUBERNETES:
        return 1
    return inst.pod_types[t].requests.get(resource, 0)


# ---- the plugins, one function each ---------------------------------------

def ports_ok(inst: Instance, t: int, n: int, sigma: Config) -> bool:
    """NodePorts: no pod on n already holds one of t's host ports (protocol, port, address)."""
    mine = inst.pod_types[t].host_ports
    if not mine:
        return True
    for u, other in enumerate(inst.pod_types):
        if sigma[inst.pair(u, n)] and ports_conflict(mine, other.host_ports):
            return False
    return True


def capacity_failure(inst: Instance, t: int, n: int, sigma: Config) -> Optional[str]:
    """used(sigma, n) + res(t) <= C(n), per profile (SPEC 2.1, capacity row): the first failing resource."""
    failing = capacity_failures(inst, t, n, sigma)
    return failing[0] if failing else None


def capacity_failures(inst: Instance, t: int, n: int, sigma: Config) -> tuple[str, ...]:
    """Every insufficient resource, in NodeResourcesFit's order (pods, cpu, memory,
    ephemeral-storage, then extended resources by name) in the kubernetes profile."""
    node = inst.nodes[n]
    out: list[str] = []
    if inst.profile == KUBERNETES:
        if PODS_RESOURCE in node.capacity:
            if used(inst, sigma, n, PODS_RESOURCE) + 1 > node.capacity[PODS_RESOURCE]:
                out.append(REASON_TOO_MANY_PODS)
        requests = inst.pod_types[t].requests
        ordered = [r for r in FIT_ORDER if r in requests]
        ordered += sorted(r for r in requests if r not in FIT_ORDER and r != PODS_RESOURCE
                          and not r.startswith(ATTACH_PREFIX))
        for r in ordered:
            need = requests[r]
            if need > 0 and used(inst, sigma, n, r) + need > node.capacity.get(r, 0):
                out.append(insufficient(r))
        return tuple(out)
    resources = sorted(set(node.capacity) | set(inst.pod_types[t].requests))
    for r in resources:
        if used(inst, sigma, n, r) + request(inst, t, r) > node.capacity.get(r, 0):
            out.append(insufficient(r))
    return tuple(out)


def volume_limit_ok(inst: Instance, t: int, n: int, sigma: Config) -> bool:
    """NodeVolumeLimits (kubernetes profile), as ``CSILimits.Filter`` counts.

    Per CSI driver with a limit on n (``ATTACH_PREFIX + driver`` capacity):
    the volumes already on n are those of every pod there and the
    VolumeAttachments', each distinct volume once (a volume several pods
    share, or a pod's volume a VolumeAttachment also names, counts once),
    plus each present pod's own ephemeral volumes. The pod's *new* volumes
    are its volumes no pod on n uses (a VolumeAttachment alone does not make
    one old: kso counts it and the pod's again) plus its own; the check fails
    only when it has new ones and ``attached + new > limit``. So the charge is presence-based: it
    is not a resource, and it is not anti-monotone (a pod sharing t's volume
    can make t fit), see ``attach_shared``.
    """
    present = ((u, sigma[inst.pair(u, n)]) for u in range(len(inst.pod_types)))
    if not inst.binding_groups:
        return attach_fits(inst, t, n, present)
    return attach_fits(inst, t, n, present, lambda u: attach_view(inst, sigma, u), lambda u: held_attach(inst, sigma, u, n))


def attach_fits(inst: Instance, t: int, n: int, present: Iterable[tuple[int, int]],
                view: Optional[Callable[[int], tuple[Mapping[str, frozenset[str]], Mapping[str, int]]]] = None,
                moved: Optional[Callable[[int], Mapping[str, int]]] = None) -> bool:
    """``volume_limit_ok`` given the (type, count) pairs present on n; ``view`` gives a type's
    CSI volumes and own ephemeral ones (under claim bindings; default its ``PodType``'s), ``moved``
    what its pods on n holding a PV of another driver change in those counts (``held_attach``)."""
    if view is None:
        view = lambda u: (inst.pod_types[u].attach, inst.pod_types[u].attach_own)  # noqa: E731
    node = inst.nodes[n]
    attach, attach_own = view(t)
    drivers = sorted(set(attach) | set(attach_own))
    if not drivers:
        return True
    here = [(view(u), c, moved(u) if moved is not None else {}) for u, c in present if c]
    for driver in drivers:
        limit = node.capacity.get(ATTACH_PREFIX + driver)
        if limit is None:
            continue
        held: set[str] = set()
        own = 0
        for (other, other_own), c, extra in here:
            held |= other.get(driver, frozenset())
            own += c * other_own.get(driver, 0) + extra.get(driver, 0)
        new = len(attach.get(driver, frozenset()) - held) + attach_own.get(driver, 0)
        if new and len(held | node.attached.get(driver, frozenset())) + own + new > limit:
            return False
    return True


def attach_shared(inst: Instance, t: int) -> frozenset[int]:
    """The other pod types sharing a named CSI volume with t: their presence can make t's volume not new, so they are like affinity witnesses
    for NodeVolumeLimits (the one check that is not anti-monotone)."""
    mine = inst.pod_types[t].attach
    if not mine:
        return frozenset()
    return frozenset(u for u, other in enumerate(inst.pod_types)
                     if u != t and any(mine[d] & other.attach.get(d, frozenset()) for d in mine))


def attach_binds(inst: Instance) -> bool:
    """Whether NodeVolumeLimits can ever fail: on some node, a limited driver's volumes
    of the VolumeAttachments and of every pod type that can be there (initially, or
    creatable and statically allowed) exceed the limit, or such a type has its own
    ephemeral volumes. When it cannot, the check is the constant true, so an
    engine that does not encode it stays exact (``registry.Checked``)."""
    if inst.profile != KUBERNETES:
        return False
    users = [u for u, pod in enumerate(inst.pod_types) if pod.attach or pod.attach_own]
    if not users:
        return False
    for n, node in enumerate(inst.nodes):
        here = [inst.pod_types[u] for u in users
                if (u, n) in inst.initial or (inst.pod_types[u].creatable and inst.static_block[u][n] is None)]
        for driver in {d for pod in here for d in (*pod.attach, *pod.attach_own)}:
            limit = node.capacity.get(ATTACH_PREFIX + driver)
            if limit is None:
                continue
            if any(pod.attach_own.get(driver, 0) for pod in here):
                return True
            volumes = set(node.attached.get(driver, ()))
            for pod in here:
                volumes |= pod.attach.get(driver, frozenset())
            if len(volumes) > limit:
                return True
    return False


def disks_free(inst: Instance, t: int, n: int, sigma: Config) -> bool:
    """VolumeRestrictions' disk conflicts: no pod on n mounts one of t's in-tree disks
    in a conflicting way (``model.Disk.conflicts``); node-local and anti-monotone, like ports."""
    mine = inst.pod_types[t].disks
    if not mine:
        return True
    return not any(sigma[inst.pair(u, n)] and disks_conflict(mine, other.disks)
                   for u, other in enumerate(inst.pod_types))


def disks_conflict(mine: Iterable[Disk], theirs: Iterable[Disk]) -> bool:
    theirs = tuple(theirs)
    return any(a.conflicts(b) for a in mine for b in theirs)


def unencoded_volume_checks(inst: Instance) -> Optional[str]:
    """What of the volume plugins only the semantics itself evaluates, where it can decide
    something: claim bindings (``Instance.bindings``), CSI attach limits that can be reached
    (``attach_binds``), in-tree disk conflicts (``disks_free``); None when none. Engines with their own encoding of
    Hard decline such instances (``registry.Checked``)."""
    if any(group.holders for group in inst.binding_groups):
        return "DRA devices that deployments allocate and deletions free (DynamicResources)"
    if inst.filter_errors:
        return "the scheduler's abort of a pod's whole cycle when DynamicResources errs on a node (cycle_abort)"
    if inst.bindings:
        return "WaitForFirstConsumer claims that a deployment binds (VolumeBinding's PreBind)"
    if attach_binds(inst):
        return "CSI attach limits that can be reached (a volume counts once per node while some pod uses it)"
    disks = [pod.disks for pod in inst.pod_types if pod.disks]
    if inst.profile == KUBERNETES and any(disks_conflict(a, b) for i, a in enumerate(disks) for b in disks[i:]):
        return "in-tree disk conflicts (VolumeRestrictions)"
    return None


def claims_free(inst: Instance, t: int, sigma: Config) -> bool:
    """VolumeRestrictions: no running pod uses one of t's ReadWriteOncePod claims
    (the terms ``loader.resolve.claim_terms`` adds, over one cluster-wide domain)."""
    return not any(present_anywhere(inst, sigma, term.selects)
                   for term in inst.pod_types[t].anti_affinity if term.plugin)


def spread_failure(inst: Instance, t: int, n: int, sigma: Config) -> Optional[str]:
    """PodTopologySpread: count + self - gmin <= maxSkew for every hard constraint.

    The kube-scheduler walks the constraints in order and asks only whether n
    has *this* constraint's key (a node lacking another constraint's key fails
    at that constraint, with "missing required label"); the paper asks n ∈ E.
    For a node that passes the static filters both give the same verdict.
    """
    kube = inst.profile == KUBERNETES
    for h in inst.pod_types[t].spread:
        if h.topology.domain_of[n] is None:
            return REASON_SPREAD_LABEL
        if not kube and n not in h.eligible:
            return REASON_SPREAD
        if domain_count(inst, sigma, h, h.topology.domain_of[n]) + int(h.self_match) - global_min(inst, sigma, h) > h.max_skew:
            return REASON_SPREAD
    return None


def domain_count(inst: Instance, sigma: Config, h: SpreadConstraint, domain: int) -> int:
    """count(S, tau, v, E): matching pods on the eligible nodes of one domain."""
    nodes = [m for m in h.topology.members[domain] if m in h.eligible]
    return sum(sigma[inst.pair(u, m)] for u in h.counts for m in nodes)


def global_min(inst: Instance, sigma: Config, h: SpreadConstraint) -> int:
    """gmin(h): minimum over eligible domains, or 0 with fewer than minDomains."""
    domains = {h.topology.domain_of[m] for m in h.eligible}
    domains.discard(None)
    if len(domains) < h.min_domains or not domains:
        return 0
    return min(domain_count(inst, sigma, h, d) for d in domains)


def affinity_ok(inst: Instance, t: int, n: int, sigma: Config) -> bool:
    terms = inst.pod_types[t].affinity
    if not terms:
        return True
    if inst.profile == KUBERNETES:
        return _affinity_ok_kubernetes(inst, t, n, sigma, terms)
    return all(_paper_term_ok(inst, t, n, sigma, term) for term in terms)


def _paper_term_ok(inst: Instance, t: int, n: int, sigma: Config, term: AffinityTerm) -> bool:
    """Definition 1: a witness in D_tau(n), or the per-term self-affinity waiver."""
    if present_on(inst, sigma, term.selects, term.topology.domain_nodes(n)):
        return True
    return t in term.selects and not present_anywhere(inst, sigma, term.selects)


def affinity_witness_types(inst: Instance, t: int) -> frozenset[int]:
    """The pod types whose presence t's required affinity reads: in the
    kubernetes profile a witness must match all terms (their intersection), in
    the paper's any term's (their union). Empty when t has no affinity."""
    terms = inst.pod_types[t].affinity
    if not terms:
        return frozenset()
    if inst.profile == KUBERNETES:
        return frozenset.intersection(*(term.selects for term in terms))
    return frozenset().union(*(term.selects for term in terms))


def _affinity_ok_kubernetes(inst: Instance, t: int, n: int, sigma: Config,
                            terms: Sequence[AffinityTerm]) -> bool:
    """kube-scheduler satisfyPodAffinity: every term needs, in its own domain of n,
    a pod matching *all* terms; a node lacking a key fails outright; the bootstrap
    waiver applies only when no pod matching all terms sits on a node carrying
    any of the terms' keys and t itself matches all terms."""
    if any(term.topology.domain_of[n] is None for term in terms):
        return False
    witnesses = frozenset.intersection(*(term.selects for term in terms))
    if all(present_on(inst, sigma, witnesses, term.topology.domain_nodes(n)) for term in terms):
        return True
    keyed_nodes = [m for m in range(len(inst.nodes))
                   if any(term.topology.domain_of[m] is not None for term in terms)]
    if present_on(inst, sigma, witnesses, keyed_nodes):
        return False
    return t in witnesses


def anti_affinity_ok(inst: Instance, t: int, n: int, sigma: Config) -> bool:
    """t's own anti-affinity: no matching pod in D_tau(n); a missing key is ignored."""
    return not any(present_on(inst, sigma, term.selects, term.topology.domain_nodes(n))
                   for term in inst.pod_types[t].anti_affinity if not term.plugin)


def existing_anti_affinity_ok(inst: Instance, t: int, n: int, sigma: Config) -> bool:
    """Symmetry (kubernetes only): no pod on m with an anti-affinity term matching t
    where m and n share the term's topology value. Pods on nodes without the key
    block nothing."""
    for u, other in enumerate(inst.pod_types):
        for term in other.anti_affinity:
            if term.plugin or t not in term.blocks or term.topology.domain_of[n] is None:
                continue
            for m in term.topology.domain_nodes(n):
                if sigma[inst.pair(u, m)]:
                    return False
    return True


# ---- Hard and the transition relation -----------------------------------

def node_failure(inst: Instance, t: int, n: int, sigma: Config) -> Optional[Failure]:
    """The first failing plugin of Hard(t, n, sigma) with its reasons, or None when it holds:
    n's own Filter verdict (``filter_failure``), else the scheduler's abort of t's cycle by another
    node's error (``cycle_abort``; under one slice order for the whole cycle where the front end
    recorded them, ``Instance.cycle_orders``).

    Creatability and the user's ``maxPerNode`` bound are not part of Hard;
    see ``deploy_failure``.
    """
    own = filter_failure(inst, t, n, sigma)
    if own is not None or t not in inst.filter_errors:
        return own
    return abort_failure(inst, t, sigma, n)


def abort_failure(inst: Instance, t: int, sigma: Config, n: Optional[int] = None) -> Optional[Failure]:
    """What a node where t passes every filter says when the cycle aborts: the erring node's plugin and
    error, naming that node; None when the cycle does not abort (for n: some run places t on n)."""
    erring = _erring(inst, t, sigma, n)
    if not erring:
        return None
    said = [(f.plugin, (reasons.CYCLE_ABORT.format(error=why[0], node=inst.nodes[m].name),))
            for m, f in erring for _, why in f.alternatives]   # which node errs first, and how, is the run's
    return Failure(said[0][0], said[0][1], tuple(dict.fromkeys(said[1:])))


def abort_chances(inst: Instance, t: int, sigma: Config) -> tuple[str, ...]:
    """The errors some runs of t's cycle in sigma abort with while others do not (``cycle_abort`` None),
    worded as ``abort_failure``'s: where t passes every filter before DynamicResources on a node, the
    allocator's error in some order of pools and slices (``Instance.run_refusals`` on a node that fits,
    ``Failure.others`` on one refused). The node verdicts stay existential: some run does not err."""
    if not (inst.run_refusals or inst.binding_groups or t in inst.filter_errors):
        return ()
    if cycle_abort(inst, t, sigma) is not None:
        return ()
    out = []
    for m, node in enumerate(inst.nodes):
        failure = filter_failure(inst, t, m, sigma)
        if failure is None:
            found = [why for plugin, why in run_refusals(inst, t, m, sigma) if plugin == reasons.DYNAMIC_RESOURCES_PLUGIN]
        elif failure.plugin == reasons.DYNAMIC_RESOURCES_PLUGIN:
            found = [why for _, why in failure.alternatives]
        else:
            continue
        out += [reasons.CYCLE_ABORT.format(error=why[0], node=node.name) for why in found
                if reasons.is_filter_error(why[0])]
    return tuple(dict.fromkeys(out))


def cycle_abort(inst: Instance, t: int, sigma: Config, n: Optional[int] = None) -> Optional[tuple[int, Failure]]:
    """The node whose error aborts t's whole scheduling cycle in sigma, with that error, or None when
    some run of the cycle evaluates no erring node and finds n feasible (n None: finds any node).

    kube-scheduler v1.35 ``findNodesThatPassFilters`` runs each node's Filter plugins in order up to
    the first non-success and cancels the cycle on a status of code Error: the pod goes nowhere.
    DynamicResources is the last filter, so its error is n's own verdict exactly when t passes every
    earlier filter on n. The front end records an error only where every order of pools and slices
    errs (``dra_allocator.allocate``: otherwise some run of the scheduler does not err there). Whether
    a run can stop before reaching every erring node is ``cycle_runs_past``. A PreFilterResult leaves
    out nodes that fail NodeAffinity's or VolumeBinding's filter anyway, so they never err here either.
    The first erring node by index is named (the scheduler's is a race: ``abort_failure`` names each).
    Where the order of a pool's slices, drawn once per cycle for every node, decides a fit, the front
    end records per order the nodes fitting and erring (``Instance.cycle_orders``) and the abort is
    read under one order for the whole cycle (``_order_erring``), in sigma's allocation state."""
    erring = _erring(inst, t, sigma, n)
    return erring[0] if erring else None


def _erring(inst: Instance, t: int, sigma: Config, n: Optional[int] = None) -> list[tuple[int, Failure]]:
    """``cycle_abort``'s erring nodes, by index, with their errors; [] when some run passes them all."""
    if t not in inst.filter_errors:
        return []
    orders = _cycle_orders(inst, t, sigma)
    if orders:
        return _order_erring(inst, t, sigma, n, orders)
    erring = []
    for m in sorted(inst.filter_errors[t]):
        recorded = static_view(inst, t, m, sigma)[1] if inst.binding_groups else inst.volume_failures.get((t, m))
        if recorded is None or not reasons.is_filter_error(recorded[1][0]):
            continue   # no error recorded for m in sigma's allocation state
        failure = filter_failure(inst, t, m, sigma)
        if failure is not None and failure.plugin == reasons.DYNAMIC_RESOURCES_PLUGIN \
                and reasons.is_filter_error(failure.reason):
            erring.append((m, failure))
    if not erring or cycle_runs_past(inst, t, sigma, {m for m, _ in erring}, n):
        return []
    return erring


def _order_erring(inst: Instance, t: int, sigma: Config, n: Optional[int], orders: tuple[CycleOrder, ...]
                  ) -> list[tuple[int, Failure]]:
    """``_erring`` with one slice order for the whole cycle (``Instance.cycle_orders``): [] when under
    some order n fits (n None: any order) and its erring nodes that pass their earlier filters in sigma
    are none or missed by some run (``cycle_runs_past``); else the erring nodes of every order n fits
    in (n None: every order), their errors under them. A node passes its earlier filters where its
    own verdict is None or DynamicResources' (the last filter); under one order it may err where the
    per-node verdict fits or refuses."""
    passing: dict[int, bool] = {}
    found: dict[int, list[str]] = {}
    for order in orders:
        if n is not None and n not in order.fits:
            continue
        erring = []
        for m, errors in order.errs:
            if m not in passing:
                own = filter_failure(inst, t, m, sigma)
                passing[m] = own is None or own.plugin == reasons.DYNAMIC_RESOURCES_PLUGIN
            if passing[m]:
                erring.append((m, errors))
        if not erring:
            return []
        if cycle_runs_past(inst, t, sigma, {m for m, _ in erring}, n, order.fits):
            return []
        for m, errors in erring:
            found.setdefault(m, []).extend(e for e in errors if e not in found.get(m, ()))
    return [(m, Failure(reasons.DYNAMIC_RESOURCES_PLUGIN, (why[0],),
                        tuple((reasons.DYNAMIC_RESOURCES_PLUGIN, (e,)) for e in why[1:]))) for m, why in sorted(found.items())]


def _cycle_orders(inst: Instance, t: int, sigma: Config) -> tuple[CycleOrder, ...]:
    """t's slice orders of the cycle in sigma's allocation state (``Instance.cycle_orders``; () where
    the per-node verdicts are exact)."""
    g = inst.binding_of.get(t) if inst.binding_groups else None
    s = group_state(inst, sigma, g) if g is not None else 0
    if s:
        group = inst.binding_groups[g]  # type: ignore[index]
        return group.cycle_orders[s].get(t, ()) if group.cycle_orders else ()
    return inst.cycle_orders.get(t, ())


def cycle_runs_past(inst: Instance, t: int, sigma: Config, erring: set[int], n: Optional[int] = None,
                    fitting: Optional[frozenset[int]] = None) -> bool:
    """Whether some run of t's Filter phase in sigma evaluates none of the erring nodes and finds n
    feasible (n None: any node), existentially over the scheduler's nondeterminism. ``fitting``: under
    one slice order of the cycle (``_order_erring``), the nodes where DynamicResources fits under it;
    a node fitting only under another order is not feasible in this cycle.

    ``findNodesThatPassFilters`` filters the snapshot's node list from ``nextStartNodeIndex`` (any
    index over the scheduler's history), wrapping around, in parallel chunks, and cancels the rest once
    the ``numFeasibleNodesToFind`` + 1st feasible node is counted (``length > numNodesToFind``; that
    node is dropped). An Error from a node filtered before the cancel is reported and aborts the
    cycle (one in flight after it answers Unschedulable: DynamicResources checks ``ctx.Err()`` before
    its error). So a run that misses every erring node must count k + 1 feasible nodes first: with no
    more feasible nodes than k (always with at most 101 nodes) every node is filtered and it aborts.

    The node order is not in the input: the snapshot lists the node tree zone by zone, round robin
    (``nodeTree.list``, ``model.zone_key``), zones and the nodes of a zone in the order the informer
    added them, which any creation history can make any order. Two constructed runs are tried first
    (``zone_runs_past``: sound, not complete, cheap); ``filter_runs.runs_past`` then decides it exactly
    on the zones' counts, whatever the number of chunks of the parallel ``Until``, within its search
    bound (``filter_runs.exact_domain``: the search budget's ``filter-runs`` guard, the value the load
    used, ``Instance.filter_runs_work``); beyond, the constructed runs and ``runs_past``'s cheap exact
    stages (``filter_runs.segments_cover``'s and ``windows_cover``'s False, the narrowed search's runs) answer and the front end
    marks such types (``k8s_dra._abort_caveats``). NodeAffinity's
    PreFilterResult (``matchFields metadata.name In``: the nodes not named carry
    ``PREFILTER_NODE_AFFINITY``) makes the list the named nodes in Go map order, any order of them,
    with k from their count: one zone over the candidates, exact, also where it names every node
    (``PodType.prefilter_named``)."""
    if len(inst.nodes) - len(erring) <= num_feasible_nodes_to_find(len(inst.nodes)):
        return False   # never k + 1 feasible nodes (nor among fewer candidates: n - k(n) never shrinks)
    map_order = inst.pod_types[t].prefilter_named
    last = _LAST_ZONES[0]   # every node of one state asks in turn: count its zones once
    if fitting is None and last is not None and last[0] is inst and last[1] == t and last[2] == sigma:
        zones, count = last[3], last[4]
    else:
        named = [m for m in range(len(inst.nodes)) if inst.static_block[t][m] != reasons.PREFILTER_NODE_AFFINITY]
        count = len(named)
        zones = {}   # zone -> [feasible, others, erring]; the candidates of a PreFilterResult: one zone
        for m in named:
            kind = 2 if m in erring else 0 if (fitting is None or m in fitting) \
                and filter_failure(inst, t, m, sigma) is None else 1
            key = "" if map_order else zone_key(inst.nodes[m].labels)
            zones.setdefault(key, [0, 0, 0])[kind] += 1
        _LAST_ZONES[0] = (inst, t, sigma, zones, count) if fitting is None else None   # per order: not kept
    k = num_feasible_nodes_to_find(count)
    if sum(f for f, _, _ in zones.values()) <= k:
        return False   # never k + 1 feasible nodes: every candidate is evaluated, an erring one too
    own = None if n is None else "" if map_order else zone_key(inst.nodes[n].labels)
    names = list(zones)
    if own is not None and own not in zones:
        return False
    if zone_runs_past(zones, own, k):
        return True
    from symreach import filter_runs   # past k feasible nodes only: rare, and kept out of a small check's start-up

    bound = filter_runs.MAX_WORK if inst.filter_runs_work is None else inst.filter_runs_work   # the load's
    return bool(filter_runs.runs_past(tuple(tuple(zones[z]) for z in names), None if own is None else names.index(own),
                                      k, filter_runs.chunk_size(count), filter_runs.PARALLELISM, bound))   # None: beyond it


_LAST_ZONES: list = [None]   # (inst, t, sigma, zone counts, candidates) of the last state cycle_runs_past counted


def zone_runs_past(zones: Mapping[str, Sequence[int]], own: Optional[str], k: int) -> bool:
    """``cycle_runs_past`` on counts: zone -> (feasible, others, erring) nodes; ``own``: n's zone (None:
    any). True when one of its two runs counts k + 1 feasible nodes, n among the first k, before an
    erring node. The run takes the round where an erring node first (last) comes, with the zones
    holding one there last (first) in the zone order, unless that could put more than k feasible nodes
    before n (then it stops (starts) at the round's edge)."""
    late = len(zones) - 1 >= k   # n's zone placed behind the others in a round: k may precede n
    head = min(f + o for f, o, r in zones.values() if r)   # erring last: the round where one can come
    tight = {z for z, (f, o, r) in zones.items() if r and f + o == head}
    part = not (own in tight and late)
    if (head or part) and sum(min(f, head + (part and z not in tight)) for z, (f, _, _) in zones.items()) > k:
        return True
    past = max(r for _, _, r in zones.values())   # erring first: start in round past - 1, after them
    ends = {z for z, (_, _, r) in zones.items() if r == past}
    part = not (own in ends and late)
    cover = {z: max(0, sum(c) - past + (part and z not in ends)) for z, c in zones.items()}
    return (own is None or cover[own] > 0) and sum(min(c[0], cover[z]) for z, c in zones.items()) > k


def abort_cap(inst: Instance, t: int, n: int) -> int:
    """The count worth keeping of pair (t, n) for the abort guard (0: none). On a node where some
    type's DynamicResources errs, more pods of t can make that type fail NodeResourcesFit there first,
    which lifts the abort (the one way a pod's presence *enables* a deployment elsewhere): the pair is
    counted up to what n's capacity holds of t (``explicit`` saturation, ``certify.explicit_states``)."""
    if not any(n in nodes for nodes in inst.filter_errors.values()):
        return 0
    capacity = inst.nodes[n].capacity
    fits = [capacity.get(r, 0) // q for r in set(inst.pod_types[t].requests) | {PODS_RESOURCE}
            if (q := request(inst, t, r)) > 0 and (r != PODS_RESOURCE or r in capacity)]
    return max(1, min(fits)) if fits else 0   # no bound: its pods consume nothing there, one is enough


def filter_failure(inst: Instance, t: int, n: int, sigma: Config,
                   restrictions_skipped: bool = False) -> Optional[Failure]:
    """n's own Filter verdict: the first failing plugin of the profile's order with its reasons.
    ``restrictions_skipped``: VolumeRestrictions' PreFilter said Skip in the configuration the cycle
    started from (``restrictions_skip``), so sigma's extra pods (nominated ones) are not checked by it."""
    if inst.binding_groups:
        static, volume = static_view(inst, t, n, sigma)
    else:
        static = inst.static_block[t][n]
        volume = inst.volume_failures.get((t, n)) if static is not None else None
    if static is not None and (volume is None or not volume[2]):
        return _failure(static) if volume is None else _recorded(volume)
    kube = inst.profile == KUBERNETES
    if kube and not ports_ok(inst, t, n, sigma):
        return _failure(REASON_PORTS)
    failing = capacity_failures(inst, t, n, sigma)
    if failing:
        return _failure(*failing)
    if kube and not disks_free(inst, t, n, sigma):
        return _failure(reasons.DISK_CONFLICT)
    if kube and not restrictions_skipped and not claims_free(inst, t, sigma):
        return _failure(reasons.READ_WRITE_ONCE_POD_CONFLICT)
    if kube and not volume_limit_ok(inst, t, n, sigma):
        return _failure(reasons.MAX_VOLUME_COUNT)
    if volume is not None and volume[2] != AFTER_ALL:
        return _recorded(volume)
    # past the volume plugins: their refusals in other runs make a later refusal one of a set
    reason = spread_failure(inst, t, n, sigma)
    if reason:
        return _with_runs(inst, t, n, sigma, _failure(reason))
    if not affinity_ok(inst, t, n, sigma):
        return _with_runs(inst, t, n, sigma, _failure(REASON_AFFINITY))
    if not anti_affinity_ok(inst, t, n, sigma):
        return _with_runs(inst, t, n, sigma, _failure(REASON_ANTI_AFFINITY))
    if kube and not existing_anti_affinity_ok(inst, t, n, sigma):
        return _with_runs(inst, t, n, sigma, _failure(REASON_EXISTING_ANTI_AFFINITY))
    if volume is not None:   # DynamicResources, the last filter
        return _with_runs(inst, t, n, sigma, _recorded(volume))
    return None


def _with_runs(inst: Instance, t: int, n: int, sigma: Config, failure: Failure) -> Failure:
    """A refusal after the volume plugins, with their refusals in the runs where they do not pass."""
    others = tuple(r for r in run_refusals(inst, t, n, sigma) if r[0] != reasons.DYNAMIC_RESOURCES_PLUGIN) \
        if inst.run_refusals or inst.binding_groups else ()   # DynamicResources' own come last: never before these
    return Failure(failure.plugin, failure.reasons, failure.others + others) if others else failure


def run_refusals(inst: Instance, t: int, n: int, sigma: Config) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """The volume plugins' refusals on n in the scheduler's runs where others pass them, under sigma's
    claim bindings (``Instance.run_refusals``): a later plugin's refusal is one of a set with them."""
    g = inst.binding_of.get(t) if inst.binding_groups else None
    s = group_state(inst, sigma, g) if g is not None else 0
    if s:
        group = inst.binding_groups[g]  # type: ignore[index]
        return group.run_refusals[s].get((t, n), ()) if group.run_refusals else ()
    return inst.run_refusals.get((t, n), ())


def _recorded(volume: tuple) -> Failure:
    """A front end's recorded verdict (``Instance.volume_failures``) as a Failure, other runs' included."""
    return Failure(volume[0], volume[1], tuple(volume[3]) if len(volume) > 3 else ())


def static_view(inst: Instance, t: int, n: int, sigma: Config
                ) -> tuple[Optional[str], Optional[tuple[str, tuple[str, ...], bool]]]:
    """The static reason of (t, n) and its volume verdict, under sigma's claim bindings:
    a user type reads the rows of its binding group's current state."""
    g = inst.binding_of.get(t) if inst.binding_groups else None
    s = group_state(inst, sigma, g) if g is not None else 0
    if s:
        group = inst.binding_groups[g]  # type: ignore[index]
        static = group.rows[s][t][n]
        return static, (group.failures[s].get((t, n)) if static is not None else None)
    static = inst.static_block[t][n]
    return static, (inst.volume_failures.get((t, n)) if static is not None else None)


def group_state(inst: Instance, sigma: Config, g: int) -> int:
    """Group g's state in sigma (0: as in the input); a configuration of pair counts only binds
    nothing. A joint binding the group cannot reach raises ValueError."""
    group = inst.binding_groups[g]
    entries = tuple(sigma[q] if q < len(sigma) else 0 for q in (inst.num_pairs + b for b in group.claims))
    s = group.state_ids.get(entries)
    if s is None:
        raise ValueError(f"claims {[inst.bindings[b].claim for b in group.claims]} cannot be bound as {entries}")
    return s


def attach_view(inst: Instance, sigma: Config, u: int) -> tuple[Mapping[str, frozenset[str]], Mapping[str, int]]:
    """Type u's CSI volumes and own ephemeral ones under sigma's claim bindings."""
    pod = inst.pod_types[u]
    g = inst.binding_of.get(u) if inst.binding_groups else None
    s = group_state(inst, sigma, g) if g is not None else 0
    return inst.binding_groups[g].attach[s][u] if s else (pod.attach, pod.attach_own)  # type: ignore[index]


def held_attach(inst: Instance, sigma: Config, u: int, n: int) -> Mapping[str, int]:
    """What type u's pods on n holding a PV of another driver move in its attach counts, per driver."""
    g = inst.binding_of.get(u)
    group = inst.binding_groups[g] if g is not None else None
    if group is None or not group.held_attach:
        return {}
    return group.held_attach[group_state(inst, sigma, g)].get((u, n), {})


def ever_static_ok(inst: Instance, t: int, n: int) -> bool:
    """Whether (t, n) passes the static filters unbound or in some state of its binding group."""
    if inst.static_block[t][n] is None:
        return True
    g = inst.binding_of.get(t) if inst.binding_groups else None
    return g is not None and any(t in rows and rows[t][n] is None for rows in inst.binding_groups[g].rows)


def binding_made(inst: Instance, sigma: Config, t: int, n: int) -> Optional[tuple[int, int]]:
    """(group index, next state) that deploying t on n moves its binding group to, or None."""
    g = inst.binding_of.get(t) if inst.binding_groups else None
    if g is None:
        return None
    s = group_state(inst, sigma, g)
    following = inst.binding_groups[g].next[s].get(t)
    k = following[n] if following is not None else -1
    return None if k < 0 or k == s else (g, k)


def binding_choices(inst: Instance, sigma: Config, t: int, n: int) -> tuple[int, ...]:
    """Every state deploying t on n in sigma may move t's binding group to, as the scheduler
    chooses (``BindingGroup.choices``; the first is ``binding_made``'s, a state may be the current
    one); () when the deployment binds nothing in any choice."""
    g = inst.binding_of.get(t) if inst.binding_groups else None
    if g is None:
        return ()
    group = inst.binding_groups[g]
    s = group_state(inst, sigma, g)
    several = group.choices[s].get(t) if group.choices else None
    if several is not None and several[n]:
        return several[n]
    made = binding_made(inst, sigma, t, n)
    return () if made is None else (made[1],)


def binding_note(inst: Instance, sigma: Config, t: int, n: int, choice: Optional[int] = None) -> Optional[str]:
    """What deploying t on n in sigma binds (the scheduler's ``choice``, ``binding_choices``; None:
    the first), in the trace's words, or None."""
    made = binding_made(inst, sigma, t, n) if choice is None else _chosen(inst, sigma, t, n, choice)
    if made is None:
        return None
    group = inst.binding_groups[made[0]]
    before, after = group.states[group_state(inst, sigma, made[0])], group.states[made[1]]
    notes = []
    for b, old, new in zip(group.claims, before, after):
        if old == new:
            continue
        claim = inst.bindings[b]
        outcome = claim.outcomes[new - 1]
        if group.holders:   # DRA devices (``loader.dra``): a claim's allocation, or a pod slot's holdings
            notes.append(_allocation_note(claim, old, outcome))
        elif claim.claim.startswith("pods of "):   # its pod holds a PV of another driver (``held_pods``)
            notes.append(f"its pod holds {_added(claim, old, outcome).partition(': ')[2]}, counted under that driver")
        elif outcome.startswith("taken:"):   # a class's PVs generic ephemeral claims took
            added = set(outcome[6:].split(",")) - (set(claim.outcomes[old - 1][6:].split(",")) if old else set())
            notes.append(f"its ephemeral claim takes PV {', '.join(sorted(added))} (class {claim.claim.partition('/')[2]})")
        elif outcome.startswith("PV "):
            notes.append(f"binds claim {claim.claim} to PV {outcome[3:]}")
        else:
            where = outcome.partition(":")[2]
            notes.append(f"binds claim {claim.claim} to a volume it provisions in {where or 'the cluster (no topology)'}")
    return "; ".join(notes) or None


def _allocation_note(claim, old: int, outcome: str) -> str:
    if not claim.claim.startswith("pods of "):
        return f"allocates claim {claim.claim}: {outcome}"
    return f"its claims get {_added(claim, old, outcome)}"


def _added(claim, old: int, outcome: str) -> str:
    """The entry a pod slot's outcome adds to its value in state entry ``old``."""
    before = set(claim.outcomes[old - 1].split(" | ")) if old else set()
    return ([e for e in outcome.split(" | ") if e not in before] or [outcome])[0]


def first_failure(inst: Instance, t: int, n: int, sigma: Config) -> Optional[str]:
    """The first failing reason of Hard(t, n, sigma), or None when it holds."""
    failure = node_failure(inst, t, n, sigma)
    return None if failure is None else failure.reason


def hard(inst: Instance, t: int, n: int, sigma: Config) -> bool:
    return first_failure(inst, t, n, sigma) is None


def deploy_failure(inst: Instance, t: int, n: int, sigma: Config) -> Optional[str]:
    """Why the Deploy transition (t, n) is disabled in sigma, or None."""
    pod_type = inst.pod_types[t]
    if not pod_type.creatable:
        return REASON_NOT_CREATABLE
    if pod_type.max_per_node is not None and sigma[inst.pair(t, n)] >= pod_type.max_per_node:
        return REASON_MAX_PER_NODE
    return first_failure(inst, t, n, sigma)


def _chosen(inst: Instance, sigma: Config, t: int, n: int, choice: int) -> Optional[tuple[int, int]]:
    """(group, state) of the scheduler's ``choice`` for deploying t on n, None when it binds nothing;
    ValueError for a choice the scheduler cannot make there."""
    if choice not in binding_choices(inst, sigma, t, n):
        raise ValueError(f"deploying {inst.pod_types[t].name} on {inst.nodes[n].name} cannot bind as state {choice}")
    g = inst.binding_of[t]
    return None if choice == group_state(inst, sigma, g) else (g, choice)


def deploy(inst: Instance, sigma: Config, t: int, n: int, choice: Optional[int] = None) -> Config:
    """One more pod of t on n; an unbound claim it uses becomes bound as VolumeBinding chose
    (``choice``: one of ``binding_choices``; None: the first)."""
    p = inst.pair(t, n)
    out = sigma[:p] + (sigma[p] + 1,) + sigma[p + 1:]
    if choice is not None:
        made = _chosen(inst, sigma, t, n, choice)
    else:
        made = binding_made(inst, sigma, t, n) if inst.binding_groups else None
    if made is not None:
        group = inst.binding_groups[made[0]]
        entries = list(out) + [0] * (inst.num_pairs + len(inst.bindings) - len(out))
        for b, k in zip(group.claims, group.states[made[1]]):
            entries[inst.num_pairs + b] = k
        out = tuple(entries)
    return out


def deploy_step(inst: Instance, sigma: Config, step: Step) -> Config:
    """Deploy as a trace's step says: its pod type on its node, binding as its ``binds`` names."""
    t, n = inst.type_index(step.pod), inst.node_index(step.node)
    return deploy(inst, sigma, t, n, step_choice(inst, sigma, t, n, step.binds))


def deploys(inst: Instance, sigma: Config, t: int, n: int) -> list[tuple[Optional[int], Config]]:
    """Every (choice, configuration) deploying t on n in sigma may lead to (``binding_choices``);
    one entry, choice None, when the scheduler has no choice to make there."""
    choices = binding_choices(inst, sigma, t, n)
    if len(choices) < 2:
        return [(None, deploy(inst, sigma, t, n))]
    return [(k, deploy(inst, sigma, t, n, k)) for k in choices]


def delete(inst: Instance, sigma: Config, t: int, n: int, holding: Optional[str] = None) -> Config:
    """One pod of t on n less, the one holding ``holding`` (``deletions``); ValueError when no
    pod there holds it, or when ``holding`` is None and pods there hold different things."""
    choices = deletions(inst, sigma, t, n)
    why = _holding_failure(inst, t, n, choices, holding)
    if why is not None:
        raise ValueError(why)
    return choices[0][1] if not holding else dict(choices)[holding]


def deletions(inst: Instance, sigma: Config, t: int, n: int) -> tuple[tuple[Optional[str], Config], ...]:
    """Each distinct outcome of deleting one pod of t on n: (what that pod holds, the configuration
    after). One outcome (None, ...) unless pods of t on n hold DRA devices: then one per distinct
    holding, those of one kind being one (``model.BindingGroup.frees``, ``holders``: a claim no pod
    reserves any more is deallocated by the resourceclaim controller). Empty when no pod is there."""
    p = inst.pair(t, n)
    if sigma[p] <= 0:
        return ()
    out = sigma[:p] + (sigma[p] - 1,) + sigma[p + 1:]
    g = inst.binding_of.get(t) if inst.binding_groups else None
    group = inst.binding_groups[g] if g is not None else None
    if group is None or not group.frees:
        return ((None, out),)
    s = group_state(inst, sigma, g)
    following = group.frees[s].get(t)
    choices = following[n] if following is not None else ()
    if group.held_pods and sigma[p] > group.held_pods[s].get((t, n), 0):
        choices += ((PLAIN_VOLUME if choices else None, s),)   # a pod whose volume its class's provisioner counts
    return tuple((label, _freed(inst, group, t, out, k)) for label, k in choices or ((None, s),))


def _freed(inst: Instance, group: BindingGroup, t: int, out: Config, s: int) -> Config:
    """``out`` (one pod of t less) with its DRA group in state s, then every claim slot of t's
    that no pod reserves any more released."""
    for i, holders in enumerate(group.holders):
        if t in holders and group.releases[s][i] >= 0 and not any(
                out[inst.pair(u, m)] for u in holders for m in range(len(inst.nodes))):
            s = group.releases[s][i]
    padded = list(out) + [0] * (inst.num_pairs + len(inst.bindings) - len(out))
    for b, e in zip(group.claims, group.states[s]):
        padded[inst.num_pairs + b] = e
    return tuple(padded)


def holding_failure(inst: Instance, sigma: Config, t: int, n: int, holding: Optional[str]) -> Optional[str]:
    """Why a deletion of a pod of t on n holding ``holding`` names no pod there, or None."""
    return _holding_failure(inst, t, n, deletions(inst, sigma, t, n), holding)


def _holding_failure(inst: Instance, t: int, n: int, choices: tuple[tuple[Optional[str], Config], ...],
                     holding: Optional[str]) -> Optional[str]:
    where = f"{inst.pod_types[t].name} on {inst.nodes[n].name}"
    if not choices:
        return "no such pod"
    labels = [label or "nothing of its own" for label, _ in choices]
    if holding and holding not in labels:
        return f"no pod of {where} holds {holding} (they hold: {'; '.join(labels)})"
    if not holding and len(choices) > 1:
        return f"pods of {where} hold different devices; the deletion must name one of: {'; '.join(labels)}"
    return None


def budget_present(inst: Instance, sigma: Config, types: Iterable[int]) -> int:
    """Pods of ``types`` running in sigma (the healthy pods a PodDisruptionBudget counts)."""
    return sum(sigma[inst.pair(u, m)] for u in types for m in range(len(inst.nodes)))


def delete_failure(inst: Instance, sigma: Config, t: int, n: int) -> Optional[str]:
    """Why deleting a pod of t on n is not a move under ``inst.moves`` (SPEC 5.2), or None.

    Paper moves: any present pod. Operator moves: never a protected type's
    pod; with ``respect_pdb`` the deletion is an eviction, which the API
    server refuses for a pod matching more than one budget, and otherwise
    allows only while the matching budget's disruptionsAllowed >= 1 (every
    modelled pod is healthy, so unhealthyPodEvictionPolicy changes nothing).
    """
    if sigma[inst.pair(t, n)] <= 0:
        return "no such pod"
    rules = inst.moves
    if t in rules.protected:
        return f"pod type {inst.pod_types[t].name} is protected"
    if not rules.respect_pdb:
        return None
    matching = [b for b in inst.budgets if t in b.counts]
    if len(matching) > 1:
        names = ", ".join(b.name for b in matching)
        return f"the pod matches more than one PodDisruptionBudget ({names}); the Eviction API refuses it"
    for b in matching:
        present = budget_present(inst, sigma, b.counts)
        if b.allowed(present) < 1:
            return (f"PodDisruptionBudget {b.name} allows no disruption ({present} matching pods, "
                    f"{b.desired_healthy} must stay healthy)")
    return None


def may_delete(inst: Instance, sigma: Config, t: int, n: int) -> bool:
    return delete_failure(inst, sigma, t, n) is None


def budget_cap(inst: Instance, t: int) -> int:
    """The count worth keeping per pair of t for the PDB guards (0: none).

    A budget's guard reads ``present >= desired_healthy + 1``; with every
    pair cut at that K the guard keeps its value (one pair alone reaches K,
    or none was cut), the analogue of ``Query.count_cap``. Saturation and the
    explicit certificate's closure use max(this, the other caps).
    """
    if not inst.moves.respect_pdb:
        return 0
    return max((b.desired_healthy + 1 for b in inst.budgets if t in b.counts), default=0)


def replicas_failure(inst: Instance, sigma: Config) -> Optional[str]:
    """Why sigma is no end of a witness under ``--keep-replicas`` (SPEC 5.2), or None.

    Every controller of ``inst.replica_targets`` must run at least its
    ``replicas`` pods again, so a deletion of its pod becomes a move; a
    StatefulSet's members keep their identity: each kept replica needs a pod
    of its own on a node its claims allow (a matching, ``_members_placed``).
    Without the rule every configuration passes.
    """
    if not inst.moves.keep_replicas:
        return None
    for target in inst.replica_targets:
        running = budget_present(inst, sigma, target.types)
        if running < target.replicas:
            return f"{target.name} runs {running} of its {target.replicas} replicas"
        if target.members and not _members_placed(inst, sigma, target):
            return f"{target.name}: its replicas cannot all run where their volume claims allow"
    return None


def _members_placed(inst: Instance, sigma: Config, target) -> bool:
    """A pod per member on one of its nodes, no pod shared (augmenting paths)."""
    free = {n: sum(sigma[inst.pair(t, n)] for t in target.types) for n in range(len(inst.nodes))}
    holder: dict[int, list[int]] = {n: [] for n in free}  # node -> members placed there

    def place(m: int, seen: set[int]) -> bool:
        for n in target.members[m][1]:
            if n in seen or not free.get(n):
                continue
            seen.add(n)
            if len(holder[n]) < free[n]:
                holder[n].append(m)
                return True
            for i, other in enumerate(holder[n]):
                holder[n][i] = m
                if place(other, seen):
                    return True
                holder[n][i] = other
        return False

    return all(place(m, set()) for m in range(len(target.members)))


def replica_cap(inst: Instance, t: int) -> int:
    """The count worth keeping per pair of t for ``--keep-replicas`` (0: none).

    The final condition reads sums over a controller's pairs against its
    ``replicas`` K (and a matching of at most K members): with every pair cut
    at K it keeps its value, as ``Query.count_cap`` argues for count targets.
    """
    if not inst.moves.keep_replicas:
        return 0
    return max((r.replicas for r in inst.replica_targets if t in r.types), default=0)


def query_holds(inst: Instance, query: Query, sigma: Config) -> bool:
    """Some alternative fully present, and every count target reached (and, under
    ``--keep-replicas``, every controller's replicas running: ``replicas_failure``)."""
    if not all(sum(sigma[inst.pair(t, n)] for t, n in ct.pairs) >= ct.at_least for ct in query.counts):
        return False
    if not any(all(sigma[inst.pair(t, n)] > 0 for t, n in alt) for alt in query.alternatives):
        return False
    return not inst.moves.keep_replicas or replicas_failure(inst, sigma) is None


class ReplayError(Exception):
    """A trace that does not replay: always an engine bug, never user output."""


def replay(inst: Instance, trace: Sequence[Step], query: Optional[Query] = None) -> Config:
    """Replay a trace from sigma0 against the semantics; check it covers the query."""
    sigma = inst.initial_config()
    taken: set[str] = set()   # PVs the steps took (``step_choice``)
    for i, step in enumerate(trace):
        try:
            t, n = inst.type_index(step.pod), inst.node_index(step.node)
        except KeyError as exc:
            raise ReplayError(f"step {i}: unknown name {exc}") from None
        if step.op == DEPLOY:
            why = deploy_failure(inst, t, n, sigma)
            if why is not None:
                raise ReplayError(f"step {i}: deploy {step.pod} on {step.node} is illegal: {why}")
            try:
                sigma = deploy(inst, sigma, t, n, step_choice(inst, sigma, t, n, step.binds, taken))
            except ValueError as exc:
                raise ReplayError(f"step {i}: deploy {step.pod} on {step.node}: {exc}") from None
        elif step.op == DELETE:
            why = delete_failure(inst, sigma, t, n) or holding_failure(inst, sigma, t, n, step.holding)
            if why is not None:
                raise ReplayError(f"step {i}: delete {step.pod} on {step.node}: {why}")
            sigma = delete(inst, sigma, t, n, step.holding)
        else:
            raise ReplayError(f"step {i}: unknown op {step.op!r}")
    if query is not None and not query_holds(inst, query, sigma):
        raise ReplayError("the trace ends in a configuration that does not cover the target")
    return sigma


def nominations_added(nominations: Iterable[Nomination], n: int, priority: Optional[int],
                      own: Optional[str] = None) -> tuple[Nomination, ...]:
    """The nominations ``RunFilterPluginsWithNominatedPods`` adds to node n for a pod of ``priority``:
    those to n of priority >= it, other than the pod's own (``own``: the pending pod's "ns/name";
    None for a new pod). ValueError where a priority it compares is unknown (the verdict is not decided)."""
    out = []
    for nom in nominations:
        if nom.n != n or nom.pod == own:
            continue
        if nom.priority is None or priority is None:
            raise ValueError(f"priority of {nom.pod if nom.priority is None else own or 'the pod'} unknown")
        if nom.priority >= priority:
            out.append(nom)
    return tuple(out)


def affinity_skipped(inst: Instance, t: int, sigma: Config) -> bool:
    """InterPodAffinity's PreFilter Skip in ``sigma``: t has no required (anti-)affinity term of its own
    and no running pod has an anti-affinity term matching t on a node carrying the term's key (then
    the nominated pods' anti-affinity is not looked at: PreFilter ran without them)."""
    own = inst.pod_types[t]
    if own.affinity or any(not term.plugin for term in own.anti_affinity):
        return False
    for u, other in enumerate(inst.pod_types):
        for term in other.anti_affinity:
            if term.plugin or t not in term.blocks:
                continue
            if any(sigma[inst.pair(u, m)] for m, domain in enumerate(term.topology.domain_of) if domain is not None):
                return False
    return True


def restrictions_skip(inst: Instance, t: int, sigma: Config) -> bool:
    """VolumeRestrictions' PreFilter Skip in ``sigma``: t mounts no in-tree disk (``needsRestrictionsCheck``)
    and no pod of sigma uses one of t's ReadWriteOncePod claims. The plugin is then skipped for the
    whole cycle, its AddPod extension too: a nominated pod using such a claim conflicts with nothing."""
    return not inst.pod_types[t].disks and claims_free(inst, t, sigma)


def nominated_run(inst: Instance, t: int, n: int, sigma: Config, nominations: Sequence[Nomination],
                  priority: Optional[int], own: Optional[str] = None
                  ) -> tuple[Optional[Failure], Config, tuple[Nomination, ...]]:
    """Hard(t, n, sigma) with ``nominations`` in force, as ``RunFilterPluginsWithNominatedPods``: with one
    pod of each added nomination's type on n (``nominations_added``), then, when that passes or only
    a skipped InterPodAffinity refused, without; the first failing run's failure, the configuration
    that run saw and what it added. Nominated pods hold no devices and bind no claims, so only pod
    counts change; a VolumeRestrictions skipped by PreFilter (``restrictions_skip``) does not see their
    ReadWriteOncePod claims. ValueError where it is not decided: an unknown priority, or a cycle another node's
    DynamicResources error may abort (a nomination can make that node fail earlier)."""
    if nominations and t in inst.filter_errors:
        raise ValueError("a DynamicResources error that aborts the cycle, with nominated pods")
    added = nominations_added(nominations, n, priority, own)
    if added:
        seen = list(sigma)
        for nom in added:
            seen[inst.pair(nom.t, n)] += 1
        failure = filter_failure(inst, t, n, tuple(seen), restrictions_skip(inst, t, sigma))
        if failure is not None and not (failure.plugin == reasons.INTER_POD_AFFINITY_PLUGIN
                                        and affinity_skipped(inst, t, sigma)):
            return failure, tuple(seen), added
    return node_failure(inst, t, n, sigma), sigma, ()


def nominated_failure(inst: Instance, t: int, n: int, sigma: Config, nominations: Sequence[Nomination],
                      priority: Optional[int], own: Optional[str] = None) -> Optional[Failure]:
    """The Filter verdict of ``nominated_run`` (None: the pod fits)."""
    return nominated_run(inst, t, n, sigma, nominations, priority, own)[0]


def binding_notes(inst: Instance, trace: Sequence[Step]) -> list[Optional[str]]:
    """Per step of a (replayable) trace, the claim its deployment binds (``binding_note``) or None."""
    sigma = inst.initial_config()
    out: list[Optional[str]] = []
    for step in trace:
        t, n = inst.type_index(step.pod), inst.node_index(step.node)
        if step.op == DEPLOY:
            choice = step_choice(inst, sigma, t, n, step.binds)
            out.append(step.binds if step.binds not in (None, NO_BINDING) else binding_note(inst, sigma, t, n, choice))
            sigma = deploy(inst, sigma, t, n, choice)
        else:
            after = delete(inst, sigma, t, n, step.holding)
            out.append(freed_note(inst, sigma, after))
            sigma = after
    return out


def freed_note(inst: Instance, before: Config, after: Config) -> Optional[str]:
    """What a deletion from ``before`` to ``after`` frees of DRA devices, in the trace's words."""
    notes = []
    for b, claim in enumerate(inst.bindings):
        q = inst.num_pairs + b
        old, new = (before[q] if q < len(before) else 0), (after[q] if q < len(after) else 0)
        if old == new:
            continue
        value = claim.outcomes[new - 1] if new else claim.initial
        if not claim.claim.startswith("pods of "):
            notes.append(f"claim {claim.claim} is deallocated (no pod reserves it)")
            continue
        was = (claim.outcomes[old - 1] if old else claim.initial) or ""
        gone = [e for e in was.split(" | ") if e not in (value or "").split(" | ")]
        notes.append(f"frees {gone[0]}" if gone else "frees its pod's devices")
    return "; ".join(notes) or None


def step_of(inst: Instance, op: str, t: int, n: int, binds: Optional[str] = None,
            holding: Optional[str] = None) -> Step:
    return Step(op, inst.pod_types[t].name, inst.nodes[n].name, binds=binds, holding=holding)


NO_BINDING = "nothing later steps see"   # a choice that leaves the binding group as it was


def choice_text(inst: Instance, sigma: Config, t: int, n: int, choice: int) -> str:
    """The scheduler's ``choice`` for deploying t on n in sigma, in a step's words (``Step.binds``)."""
    return binding_note(inst, sigma, t, n, choice) or NO_BINDING


def step_choice(inst: Instance, sigma: Config, t: int, n: int, binds: Optional[str],
                taken: Optional[set[str]] = None) -> Optional[int]:
    """The choice (``binding_choices``) a step's ``binds`` names, None for none named; ValueError
    when the scheduler cannot bind that way there. The states name one free PV of a class of
    interchangeable ones (``BindingGroup.interchangeable``); a step may name any other of the class
    that no earlier step took (``taken``: the PVs the trace's steps named so far, updated)."""
    choices = binding_choices(inst, sigma, t, n)
    if binds is None:
        if taken is not None and choices:
            taken.update(_pv_names(choice_text(inst, sigma, t, n, choices[0])))
        return None
    named = _pv_names(binds)
    if taken is not None and named & taken:
        raise ValueError(f"the scheduler cannot bind so there: an earlier step took {', '.join(sorted(named & taken))}")
    classes = inst.binding_groups[inst.binding_of[t]].interchangeable if choices else ()
    for k in choices:
        text = choice_text(inst, sigma, t, n, k)
        if text == binds or (classes and _canonical(text, classes) == _canonical(binds, classes)):
            if taken is not None:
                taken.update(named)
            return k
    raise ValueError(f"the scheduler cannot bind so there ({binds})")


_TAKES = "its ephemeral claim takes PV "


def _pv_parts(text: str) -> list[tuple[str, list[str]]]:
    """A binding note's parts (``binding_note``): (the part without its PV names, the names)."""
    out = []
    for part in text.split("; "):
        if " to PV " in part:
            head, _, name = part.rpartition(" to PV ")
            out.append((head + " to PV", [name]))
        elif part.startswith(_TAKES):
            names, _, cls = part[len(_TAKES):].rpartition(" (class ")
            out.append((_TAKES + "(class " + cls, names.split(", ")))
        else:
            out.append((part, []))
    return out


def _pv_names(text: str) -> set[str]:
    return {name for _, names in _pv_parts(text) for name in names}


def _canonical(text: str, classes: tuple[frozenset[str], ...]) -> list[tuple[str, list[str]]]:
    """The note with each PV named by its class of interchangeable PVs (its own name if none)."""
    def cls(name: str) -> str:
        return next((min(c) for c in classes if name in c), name)

    return [(head, sorted(map(cls, names))) for head, names in _pv_parts(text)]
