"""DynamicResources (DRA) as kube-scheduler v1.35 decides one pod: PreFilter and Filter.

``DraIndex`` holds the resource.k8s.io/v1 objects (ResourceClaims,
ResourceClaimTemplates, ResourceSlices, DeviceClasses); ``pod_dra`` returns
what the plugin says for a pod spec on each node, with its reason strings
(``pkg/scheduler/framework/plugins/dynamicresources``):

- PreFilter, in the pod's ``resourceClaims`` order: a template claim the
  pod's status does not name yet ('pod "ns/p": ResourceClaim not created
  yet'), a claim that does not exist ('could not find ResourceClaim
  "ns/c"'), one being deleted, a generated claim the pod does not own; then,
  per claim, an unallocated claim's request whose DeviceClass does not exist;
- Filter, per node: the unallocated claims must be allocatable together from
  the node's devices ("cannot allocate all claims"; the structured allocator
  searches exhaustively, so this is the existence of an assignment: every
  ``All`` request takes every matching device, which must all be free, every
  ``ExactCount`` request its count of distinct free matching devices, a
  ``firstAvailable`` request one of its subrequests); then an allocated
  claim's ``nodeSelector`` must match the node ("resourceclaim not available
  on the node").

A device is free when no claim's ``status.allocation`` holds it. A pod
template (a workload's pods not created yet) gets, for a
``resourceClaimTemplateName``, the claim the controller would generate: the
template's spec, unallocated. The allocation itself (pools, CEL selectors,
constraints, admin access, which devices v1.35's default feature gates leave
out) is ``dra_allocator``'s; an allocator error (a CEL runtime error, ...)
aborts the pod's whole scheduling cycle where the node passes every earlier
filter (``semantics.cycle_abort``; in several zones beyond ``filter_runs.exact_domain`` a caveat:
``_abort_caveats``). Where the slice order the scheduler draws once per cycle for every node decides
a fit, each order's fitting and erring nodes are recorded (v1 ``cycleOrders``, ``dra_slice_orders``). The verdicts are
existential over the scheduler's random order of pools and slices
(``dra_orders.allocate``; ``PodDra.orders`` names what each order gives). What is left out
is a caveat on the pod type, never silent: selectors ``dra_cel`` cannot
evaluate (taken as matching), and devices a witness's earlier steps would
allocate or free (the verdicts are those of the input's allocation state).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Optional

from symreach import search_budget, filter_runs
from symreach.frontends import dra_allocator, dra_orders, dra_slice_orders
from symreach.frontends.dra_allocator import Device, Pool
from symreach.frontends.k8s_volumes import as_dict, as_list
from symreach.loader.labels import parse_node_selector
from symreach.loader.resolve import prefilter_node_names
from symreach.model import MIN_FEASIBLE_NODES, num_feasible_nodes_to_find, zone_key
from symreach.loader.shapes import FieldError

DRA_KINDS = frozenset({"ResourceClaim", "ResourceClaimTemplate", "ResourceSlice", "DeviceClass"})
PLUGIN = "DynamicResources"
CANNOT_ALLOCATE = dra_allocator.CANNOT_ALLOCATE
NOT_AVAILABLE = "resourceclaim not available on the node"
MAX_RESULTS = dra_allocator.MAX_RESULTS
DYNAMIC_CAVEAT = ("DRA: devices that earlier steps of a witness allocate (or free by deleting a pod) are not "
                  "modelled; the DynamicResources verdicts are those of the input's allocation state")


@dataclass
class DraIndex:
    claims: dict[tuple[str, str], dict] = field(default_factory=dict)
    templates: dict[tuple[str, str], dict] = field(default_factory=dict)
    classes: dict[str, dict] = field(default_factory=dict)
    slices: list[dict] = field(default_factory=list)
    _devices: dict[str, list[Device]] = field(default_factory=dict)
    _pool_caveats: dict[str, list[str]] = field(default_factory=dict)
    _pools: dict[str, list[Pool]] = field(default_factory=dict)

    def add(self, kind: str, data: dict, namespace: str, name: str) -> None:
        if kind == "ResourceClaim":
            self.claims.setdefault((namespace, name), data)
        elif kind == "ResourceClaimTemplate":
            self.templates.setdefault((namespace, name), data)
        elif kind == "DeviceClass":
            self.classes.setdefault(name, data)
        else:
            self.slices.append(data)

    def __bool__(self) -> bool:
        return bool(self.claims or self.templates or self.classes or self.slices)

    def with_claims(self, claims: dict[tuple[str, str], dict]) -> "DraIndex":
        """The same devices and classes with other claims (an allocation state, ``k8s_dra_state``)."""
        return DraIndex(claims, self.templates, self.classes, self.slices, self._devices, self._pool_caveats,
                        self._pools)

    def allocated(self) -> set[tuple[str, str, str]]:
        """(driver, pool, device) every claim's allocation holds (admin access holds none)."""
        out = set()
        for claim in self.claims.values():
            results = as_list(as_dict(as_dict(as_dict(claim.get("status")).get("allocation")).get("devices")).get("results"))
            for r in results:
                if isinstance(r, dict) and not r.get("adminAccess"):
                    out.add((str(r.get("driver")), str(r.get("pool")), str(r.get("device"))))
        return out

    def slice_count(self, node: dict, driver: str, pool: str) -> int:
        """How many slices of a pool are on node: their order is the informer's, so random."""
        return sum(1 for s in self.slices if str(as_dict(s.get("spec")).get("driver")) == driver
                   and str(as_dict(as_dict(s.get("spec")).get("pool")).get("name")) == pool and _slice_on(as_dict(s.get("spec")), node))

    def devices(self, node: dict) -> tuple[list[Device], list[str]]:
        """The devices of the usable pools on a node (``GatherPools``), in the allocator's order."""
        name = node["name"]
        if name not in self._devices:
            self._devices[name] = [d for p in self.pools(node) for d in p.devices]
            self._pool_caveats[name] = []
        return self._devices[name], self._pool_caveats[name]

    def pools(self, node: dict) -> list[Pool]:
        if node["name"] not in self._pools:
            self._pools[node["name"]] = dra_allocator.gather_pools(self.slices, node, _slice_on)
        return self._pools[node["name"]]


def _slice_on(spec: dict, node: dict) -> bool:
    if spec.get("nodeName"):
        return spec.get("nodeName") == node["name"]
    if spec.get("allNodes"):
        return True
    if spec.get("nodeSelector") is not None:
        return _selector_matches(spec["nodeSelector"], node)
    return False


def _selector_matches(raw: object, node: dict) -> bool:
    try:
        return parse_node_selector(raw).matches(node["name"], node.get("labels") or {})
    except FieldError:
        return False


@dataclass
class PodDra:
    prefilter: Optional[str] = None
    filters: dict[str, str] = field(default_factory=dict)    # node -> reason
    caveats: list[str] = field(default_factory=list)
    allocates: bool = False     # some claim gets devices when the pod is scheduled
    claims: list[tuple[str, str]] = field(default_factory=list)   # (namespace, name) of the claims it names
    orders: dict[str, tuple] = field(default_factory=dict)   # node -> each outcome over the random orders
    runs: dict[str, list[str]] = field(default_factory=dict)  # refused node -> the other orders' reasons
    err_runs: dict[str, list[str]] = field(default_factory=dict)  # fitting node -> the errors other orders meet
    # per slice order of the cycle where it decides a fit (``dra_slice_orders``): v1 ``cycleOrders`` entries
    cycle_orders: list[dict] = field(default_factory=list)


def pod_dra(index: DraIndex, spec: dict, status: Optional[dict], namespace: str, pod: Optional[dict],
            nodes: list[dict]) -> PodDra:
    """The plugin's verdicts for one pod spec; ``pod`` is the Pod's metadata (None for a template)."""
    out = PodDra()
    entries = [e for e in as_list(spec.get("resourceClaims")) if isinstance(e, dict)]
    if not entries:
        return out
    claims: list[dict] = []
    pod_name = str((pod or {}).get("name") or "")
    if not index:
        out.caveats.append("DRA: the input has no resource.k8s.io objects (a dump of nodes and pods only?): "
                           "the pod's resource claims are taken as missing, as the scheduler would")
    for entry in entries:
        found = _claim_of(index, entry, status, namespace, pod, pod_name, out)
        if isinstance(found, str):
            out.prefilter = found
            return out
        if found is not None:
            claims.append(found)
    if not claims:
        return out
    to_allocate: list[dict] = []
    selectors: list[object] = []
    for claim in claims:
        allocation = as_dict(claim.get("status")).get("allocation")
        if allocation is not None:
            if as_dict(allocation).get("nodeSelector") is not None:
                selectors.append(as_dict(allocation)["nodeSelector"])
            continue
        requests = as_list(as_dict(as_dict(claim.get("spec")).get("devices")).get("requests"))
        for r in requests:
            why = _class_problem(index, as_dict(r), claim, namespace)
            if why:
                out.prefilter = why
                return out
        to_allocate.append(claim)
    out.allocates = bool(to_allocate)
    allocated = index.allocated()
    errors = False
    for node in nodes:
        if to_allocate:
            found = dra_orders.allocate(to_allocate, index.pools(node), index.classes, allocated,
                                           f" on {node['name']}")
            out.caveats += found.caveats
            if found.outcomes:
                out.orders[node["name"]] = found.outcomes
            errors |= found.error or any(r is not None and r.startswith(dra_allocator.ERROR_PREFIX)
                                         for r in found.outcomes)
            if found.reason is None and len(found.outcomes) > 1:   # fits in some order, errs in others
                out.err_runs[node["name"]] = [r for r in found.outcomes if r is not None]
            if found.reason is not None:
                out.filters[node["name"]] = found.reason
                if len(found.outcomes) > 1:   # refused in every order, which reason depends on it
                    out.runs[node["name"]] = [r for r in found.outcomes if r is not None and r != found.reason]
                continue
        if any(not _selector_matches(s, node) for s in selectors):
            out.filters[node["name"]] = NOT_AVAILABLE
    out.caveats += _abort_caveats(index, out, nodes, spec, to_allocate, allocated) if errors else []
    out.caveats = list(dict.fromkeys(out.caveats))
    return out


def _abort_caveats(index: DraIndex, found: PodDra, nodes: list[dict], spec: dict, claims: list[dict],
                   allocated: set) -> list[str]:
    """What of the scheduler's abort on an allocator error (``semantics.cycle_abort``) is not exact.

    ``findNodesThatPassFilters`` stops once it has more than ``numFeasibleNodesToFind`` feasible
    nodes; ``semantics.cycle_runs_past`` decides whether a run can stop before every erring node,
    exactly when the candidates share one zone, cannot hold k + 1 feasible nodes besides an erring one
    (every one is evaluated; always up to 101), or lie in ``filter_runs.exact_domain`` (its search's
    bound, from the zones' node counts: the search budget's ``filter-runs`` guard, whose value the
    solve's search reads from the instance where it departs from the default), or are named by
    NodeAffinity's PreFilterResult (map order: one zone, k from their count, ``PodType.prefilter_named``;
    also where it names every node). Marked otherwise. The order of a
    pool's slices is drawn once per cycle for every node (``dra_orders.allocate`` takes it per
    node): where that decides a fit
    (``dra_slice_orders.inexact_fits``) ``found.cycle_orders`` gets each cycle order's fitting and
    erring nodes (``semantics.abort_failure`` reads them), a caveat past the search's guards."""
    out = []
    named = _prefilter_names(spec)
    candidates = [node for node in nodes if named is None or node["name"] in named]
    zones = Counter(zone_key(node.get("labels") or {}) for node in candidates)
    k = num_feasible_nodes_to_find(len(candidates))
    if len(candidates) - 1 > k and len(zones) > 1 and named is None:
        work = filter_runs.work(len(candidates), len(zones), k, sizes=list(zones.values()))
        if search_budget.over_later(search_budget.FILTER_RUNS, work):   # the solve's search reads the same value
            out.append(f"DRA: with more than {MIN_FEASIBLE_NODES} candidate nodes in several zones the scheduler "
                       "stops filtering after numFeasibleNodesToFind feasible nodes in an order the input does not "
                       "give, so a run may not evaluate a node where the allocator errs; the model lets the pod land "
                       "only by the runs it constructs (a not-deployable answer may be too strict): the exact search "
                       f"of the runs of {len(candidates)} nodes in {len(zones)} zones went "
                       + search_budget.past(search_budget.FILTER_RUNS, needed=work))
    fitting = [n["name"] for n in nodes if n["name"] not in found.filters]
    if not claims or not fitting:
        return out
    table = dra_slice_orders.cycle_table(claims, {n["name"]: index.pools(n) for n in nodes}, index.classes, allocated)
    shared = dra_slice_orders.table_inexact(table, fitting)
    if not shared:
        return out
    if table is None:
        return out + [f"DRA: the fit on {', '.join(shared)} depends on the order of a pool's slices, which the "
                      "scheduler draws once per cycle for every node, and every order that fits there makes another "
                      "node err; the model draws the order per node (the fit may be too lenient): telling the "
                      "orders apart went " + search_budget.past(search_budget.DRA_CYCLE_ORDERS, search_budget.DRA_CYCLE_SEARCHES)]
    found.cycle_orders = [{"fits": sorted(fits), "errs": {node: list(why) for node, why in sorted(errs.items())}}
                          for fits, errs in table]
    return out


def _prefilter_names(spec: dict) -> Optional[frozenset[str]]:
    """The node names of NodeAffinity's v1.35 PreFilterResult (``resolve.prefilter_node_names``, as the
    v1 loader reads it); None without one, or for an affinity the v1 loader refuses (the load then fails)."""
    affinity = as_dict(spec.get("affinity")).get("nodeAffinity")
    required = as_dict(affinity).get("requiredDuringSchedulingIgnoredDuringExecution")
    if required is None:
        return None
    try:
        return prefilter_node_names(parse_node_selector(required))
    except FieldError:
        return None


def _claim_of(index: DraIndex, entry: dict, status: Optional[dict], namespace: str, pod: Optional[dict],
              pod_name: str, out: PodDra):
    """The claim a ``resourceClaims`` entry names (dict), None when intentionally absent, or a PreFilter reason."""
    if entry.get("resourceClaimName") is not None:
        name = str(entry["resourceClaimName"])
        out.claims.append((namespace, name))
        return _existing(index, namespace, name, None, pod_name)
    if entry.get("resourceClaimTemplateName") is None:
        return (f'pod "{namespace}/{pod_name}", spec.resourceClaim "{entry.get("name")}": '
                "none of the supported fields are set")
    if pod is None:   # a template: the controller creates the claim from the template first
        template = index.templates.get((namespace, str(entry["resourceClaimTemplateName"])))
        if template is None:
            out.caveats.append(f"DRA: ResourceClaimTemplate {namespace}/{entry['resourceClaimTemplateName']} is not "
                               "in the input (its pods' claims would not be created)")
            return None
        return {"spec": as_dict(as_dict(template.get("spec")).get("spec"))}
    for s in as_list(as_dict(status).get("resourceClaimStatuses")):
        if isinstance(s, dict) and s.get("name") == entry.get("name"):
            if s.get("resourceClaimName") is None:
                return None
            out.claims.append((namespace, str(s["resourceClaimName"])))
            return _existing(index, namespace, str(s["resourceClaimName"]), pod, pod_name)
    return f'pod "{namespace}/{pod_name}": ResourceClaim not created yet'


def _existing(index: DraIndex, namespace: str, name: str, owner: Optional[dict], pod_name: str):
    claim = index.claims.get((namespace, name))
    if claim is None:
        return f'could not find ResourceClaim "{namespace}/{name}"'
    meta = as_dict(claim.get("metadata"))
    if meta.get("deletionTimestamp"):
        return f'resourceclaim "{name}" is being deleted'
    if owner is not None and not _controlled_by(meta, owner):
        return f"ResourceClaim {namespace}/{name} was not created for pod {namespace}/{pod_name} (pod is not owner)"
    return claim


def _controlled_by(meta: dict, pod: dict) -> bool:
    uid = pod.get("uid")
    for ref in as_list(meta.get("ownerReferences")):
        if isinstance(ref, dict) and ref.get("controller") and (
                ref.get("uid") == uid if uid else ref.get("kind") == "Pod" and ref.get("name") == pod.get("name")):
            return True
    return False


def _class_problem(index: DraIndex, request: dict, claim: dict, namespace: str) -> str:
    name = request.get("name")
    if request.get("exactly") is not None:
        pairs = [(str(name), as_dict(request["exactly"]).get("deviceClassName"))]
    elif request.get("firstAvailable"):
        pairs = [(f"{name}/{as_dict(s).get('name')}", as_dict(s).get("deviceClassName")) for s in as_list(request["firstAvailable"])]
    else:
        meta = as_dict(claim.get("metadata"))
        return f"resource claim {namespace}/{meta.get('name')}, request {name}: unknown request type"
    for label, cls in pairs:
        if cls and cls not in index.classes:
            return f"request {label}: device class {cls} does not exist"
    return ""


_REQ = (("name",), str), (("exactly",), dict), (("exactly", "deviceClassName"), str), \
    (("exactly", "allocationMode"), str), (("exactly", "count"), int), (("exactly", "selectors"), list), \
    (("exactly", "selectors", "*"), dict), (("exactly", "selectors", "*", "cel"), dict), \
    (("exactly", "selectors", "*", "cel", "expression"), str), (("firstAvailable",), list), \
    (("firstAvailable", "*"), dict), (("firstAvailable", "*", "deviceClassName"), str), \
    (("firstAvailable", "*", "allocationMode"), str), (("firstAvailable", "*", "count"), int), \
    (("exactly", "adminAccess"), bool), (("firstAvailable", "*", "name"), str), \
    (("firstAvailable", "*", "selectors"), list), (("firstAvailable", "*", "selectors", "*"), dict), \
    (("firstAvailable", "*", "selectors", "*", "cel"), dict), \
    (("firstAvailable", "*", "selectors", "*", "cel", "expression"), str)
_CLAIM_SPEC = ((("devices",), dict), (("devices", "requests"), list), (("devices", "requests", "*"), dict),
               (("devices", "constraints"), list), (("devices", "constraints", "*"), dict),
               (("devices", "constraints", "*", "requests"), list), (("devices", "constraints", "*", "requests", "*"), str),
               (("devices", "constraints", "*", "matchAttribute"), str)) + \
    tuple((("devices", "requests", "*") + p, t) for p, t in _REQ)
_SEL = ((("selectors",), list), (("selectors", "*"), dict), (("selectors", "*", "cel"), dict),
        (("selectors", "*", "cel", "expression"), str))
# (path, type) of the fields ``pod_dra`` reads, "*" for every item of a list; node selectors apart.
DRA_FIELD_TYPES: dict[str, tuple[tuple[tuple, type], ...]] = {
    "ResourceClaim": ((("spec",), dict),) + tuple((("spec",) + p, t) for p, t in _CLAIM_SPEC) + (
        (("status",), dict), (("status", "allocation"), dict), (("status", "allocation", "devices"), dict),
        (("status", "allocation", "devices", "results"), list), (("status", "allocation", "devices", "results", "*"), dict),
        (("status", "allocation", "nodeSelector"), dict)),
    "ResourceClaimTemplate": ((("spec",), dict), (("spec", "spec"), dict)) +
    tuple((("spec", "spec") + p, t) for p, t in _CLAIM_SPEC),
    "DeviceClass": ((("spec",), dict),) + tuple((("spec",) + p, t) for p, t in _SEL),
    "ResourceSlice": ((("spec",), dict), (("spec", "driver"), str), (("spec", "pool"), dict),
                      (("spec", "pool", "name"), str), (("spec", "pool", "generation"), int),
                      (("spec", "pool", "resourceSliceCount"), int), (("spec", "nodeName"), str),
                      (("spec", "allNodes"), bool), (("spec", "nodeSelector"), dict), (("spec", "devices"), list),
                      (("spec", "devices", "*"), dict), (("spec", "devices", "*", "name"), str),
                      (("spec", "devices", "*", "attributes"), dict), (("spec", "devices", "*", "capacity"), dict),
                      (("spec", "devices", "*", "consumesCounters"), list),
                      (("spec", "devices", "*", "bindingConditions"), list),
                      (("spec", "perDeviceNodeSelection"), bool), (("spec", "sharedCounters"), list)),
}
NODE_SELECTORS = {"ResourceClaim": ("status", "allocation", "nodeSelector"), "ResourceSlice": ("spec", "nodeSelector")}
POD_FIELDS = ((("spec", "resourceClaims"), list), (("spec", "resourceClaims", "*"), dict),
              (("spec", "resourceClaims", "*", "name"), str), (("spec", "resourceClaims", "*", "resourceClaimName"), str),
              (("spec", "resourceClaims", "*", "resourceClaimTemplateName"), str),
              (("status", "resourceClaimStatuses"), list), (("status", "resourceClaimStatuses", "*"), dict))


def concrete_paths(data: object, path: tuple) -> list[tuple]:
    """``path`` with each "*" replaced by every index of the list found there."""
    out: list[tuple] = [()]
    for key in path:
        if key != "*":
            out = [p + (key,) for p in out]
            continue
        grown = []
        for p in out:
            value = data
            for k in p:
                value = value.get(k) if isinstance(value, dict) else (
                    value[k] if isinstance(value, list) and isinstance(k, int) and k < len(value) else None)
            grown += [p + (i,) for i in range(len(value))] if isinstance(value, list) else []
        out = grown
    return out


def node_selector_problem(raw: object) -> Optional[FieldError]:
    try:
        parse_node_selector(raw)
    except FieldError as err:
        return err
    return None


def _filter_entry(node: str, why: str, others: list[str]) -> dict:
    """A v1 ``filter`` entry; ``otherRuns``: the refusals other orders of pools and slices give."""
    entry: dict = {"node": node, "plugin": PLUGIN, "reasons": [why]}
    if others:
        entry["otherRuns"] = [{"plugin": PLUGIN, "reasons": [r]} for r in others]
    return entry


def dra_field(found: PodDra) -> dict:
    """The v1 pod type's ``dra`` field (``loader.dra``): the verdicts, and what the pod holds."""
    out: dict = {}
    if found.prefilter is not None:
        out["preFilter"] = {"plugin": PLUGIN, "reasons": [found.prefilter]}
    elif found.filters:
        out["filter"] = [_filter_entry(node, why, found.runs.get(node, [])) for node, why in found.filters.items()]
    if found.err_runs and found.prefilter is None:
        out["otherRunRefusals"] = [{"node": node, "plugin": PLUGIN, "reasons": [why]}
                                   for node, errors in found.err_runs.items() for why in errors]
    if found.cycle_orders and found.prefilter is None:
        out["cycleOrders"] = found.cycle_orders
    if found.allocates:
        out["allocates"] = True
    if found.claims:
        out["claims"] = sorted({name for _, name in found.claims})
    return out


def dra_caveats(types: dict[str, dict], initial: dict) -> list[tuple[str, str]]:
    """(type, caveat) for the types whose verdicts read device allocation that a witness can change.

    Writers change it: a type whose scheduling allocates devices, and a running type holding
    claims (deleting its pods frees them). Readers depend on it: a type using claims that
    DynamicResources' PreFilter does not reject. A reader is marked when some other writer
    exists, or its own pods run."""
    def dra(name: str) -> dict:
        body = types[name].get("dra")
        return body if isinstance(body, dict) else {}
    users = [name for name in types if dra(name).get("allocates") or dra(name).get("claims")]
    running = {name for name, _ in initial}
    writers = {name for name in users if dra(name).get("allocates") or name in running}
    readers = [name for name in users if not dra(name).get("preFilter")]
    return [(name, DYNAMIC_CAVEAT) for name in readers if writers - {name} or name in running]


def first_allocation(index: DraIndex, claims: list[dict], node: dict, allocated: set,
                     pool_order: Optional[list[tuple[str, str]]] = None) -> Optional[list[list[tuple[str, Device]]]]:
    """The structured allocator's first assignment on node (``dra_allocator``'s search in the scheduler's
    order: claims, requests, subrequests, then pools, slices, devices); per claim its (request name,
    device) results, or None (no fit, or an error). Without ``pool_order``: the first order that fits
    (``dra_orders.allocate``, the run the verdict's fit stands for); ``pool_order`` (driver, pool)
    tries that order of pools alone (the scheduler's is a Go map's)."""
    pools = index.pools(node)
    if pool_order is None:
        found = dra_orders.allocate(claims, pools, index.classes, allocated)
        return found.results if found.reason is None else None
    rank = {p: i for i, p in enumerate(pool_order)}
    pools = sorted(pools, key=lambda p: rank.get((p.driver, p.name), len(rank)))
    found = dra_allocator.allocate_in_order(claims, pools, index.classes, allocated)
    return found.results if found.reason is None else None


def allocation_status(index: DraIndex, node: dict, results: list[tuple[str, Device]]) -> dict:
    """A claim's ``status.allocation`` as the allocator writes it (``createNodeSelector``): a device
    of a node-local slice pins the node; otherwise the slices' one-term selectors are merged, and
    devices available everywhere give no selector."""
    fields: list[dict] = []
    expressions: list[dict] = []
    pinned = False
    for _, d in results:
        spec = _slice_of(index, node, d)
        if spec.get("nodeName") is not None:
            pinned = True
            break
        terms = as_list(as_dict(spec.get("nodeSelector")).get("nodeSelectorTerms"))
        if len(terms) == 1:
            fields += [r for r in as_list(as_dict(terms[0]).get("matchFields")) if r not in fields]
            expressions += [r for r in as_list(as_dict(terms[0]).get("matchExpressions")) if r not in expressions]
    out: dict = {"devices": {"results": [{"request": label, "driver": d.driver, "pool": d.pool, "device": d.name}
                                         for label, d in results]}}
    if pinned:
        out["nodeSelector"] = {"nodeSelectorTerms": [{"matchFields": [
            {"key": "metadata.name", "operator": "In", "values": [node["name"]]}]}]}
    elif fields or expressions:
        term = {k: v for k, v in (("matchFields", fields), ("matchExpressions", expressions)) if v}
        out["nodeSelector"] = {"nodeSelectorTerms": [term]}
    return out


def _slice_of(index: DraIndex, node: dict, device: Device) -> dict:
    for s in index.slices:
        spec = as_dict(s.get("spec"))
        if str(spec.get("driver")) == device.driver and str(as_dict(spec.get("pool")).get("name")) == device.pool \
                and _slice_on(spec, node) and any(str(as_dict(x).get("name")) == device.name for x in as_list(spec.get("devices"))):
            return spec
    return {}
