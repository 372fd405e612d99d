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
template's spec, unallocated. What is left out is a caveat on the pod type,
never silent: selectors ``dra_cel`` cannot evaluate (taken as matching), CEL
runtime errors, admin access, per-device node selection, incomplete pools,
constraints, and devices a witness's earlier steps would allocate or free
(the verdicts are those of the input's allocation state).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

from symreach.frontends import dra_cel
from symreach.loader.labels import parse_node_selector
from symreach.loader.shapes import FieldError

DRA_KINDS = frozenset({"ResourceClaim", "ResourceClaimTemplate", "ResourceSlice", "DeviceClass"})
PLUGIN = "DynamicResources"
CANNOT_ALLOCATE = "cannot allocate all claims"
NOT_AVAILABLE = "resourceclaim not available on the node"
MAX_RESULTS = 32   # resourceapi.AllocationResultsMaxSize
DYNAMIC_CAVEAT = ("DRA: devices that earlier steps of a witness allocate (or free by deleting a pod) are not "
                  "modelled; the DynamicResources verdicts are those of the input's allocation state")


def _d(value: object) -> dict:
    return value if isinstance(value, dict) else {}


def _l(value: object) -> list:
    return value if isinstance(value, list) else []


@dataclass(frozen=True, eq=False)
class Device:
    """One device of a node's pools (identity is the device: the index builds each once per node)."""

    driver: str
    pool: str
    name: str
    attributes: dict


@dataclass
class DraIndex:
    claims: dict[tuple[str, str], dict] = field(default_factory=dict)
    templates: dict[tuple[str, str], dict] = field(default_factory=dict)
    classes: dict[str, dict] = field(default_factory=dict)
    slices: list[dict] = field(default_factory=list)
    _devices: dict[str, list[Device]] = field(default_factory=dict)
    _pool_caveats: dict[str, list[str]] = field(default_factory=dict)

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
        return DraIndex(claims, self.templates, self.classes, self.slices, self._devices, self._pool_caveats)

    def allocated(self) -> set[tuple[str, str, str]]:
        """(driver, pool, device) every claim's allocation holds (admin access holds none)."""
        out = set()
        for claim in self.claims.values():
            results = _l(_d(_d(_d(claim.get("status")).get("allocation")).get("devices")).get("results"))
            for r in results:
                if isinstance(r, dict) and not r.get("adminAccess"):
                    out.add((str(r.get("driver")), str(r.get("pool")), str(r.get("device"))))
        return out

    def devices(self, node: dict) -> tuple[list[Device], list[str]]:
        """The devices of the pools on a node (``GatherPools``), and caveats about them."""
        name = node["name"]
        if name not in self._devices:
            self._devices[name], self._pool_caveats[name] = self._gather(node)
        return self._devices[name], self._pool_caveats[name]

    def _gather(self, node: dict) -> tuple[list[Device], list[str]]:
        pools: dict[tuple[str, str], list[dict]] = {}
        caveats: list[str] = []
        for s in self.slices:
            spec = _d(s.get("spec"))
            if spec.get("perDeviceNodeSelection"):
                caveats.append("DRA: a ResourceSlice with perDeviceNodeSelection is not modelled")
                continue
            if not _slice_on(spec, node):
                continue
            pool = _d(spec.get("pool"))
            pools.setdefault((str(spec.get("driver")), str(pool.get("name"))), []).append(spec)
        out: list[Device] = []
        for (driver, pool), specs in sorted(pools.items()):
            top = max(int(_d(s.get("pool")).get("generation") or 0) for s in specs)
            current = [s for s in specs if int(_d(s.get("pool")).get("generation") or 0) == top]
            want = int(_d(current[0].get("pool")).get("resourceSliceCount") or 0)
            if len(current) != want:
                caveats.append(f"DRA: pool {driver}/{pool} is incomplete (its devices are taken as usable)")
            names = [str(_d(d).get("name")) for s in current for d in _l(s.get("devices"))]
            if len(set(names)) != len(names):
                caveats.append(f"DRA: pool {driver}/{pool} has duplicate device names (an invalid pool)")
            for s in current:
                for d in _l(s.get("devices")):
                    d = _d(d)
                    if d.get("consumesCounters") or d.get("bindingConditions") or d.get("taints"):
                        caveats.append(f"DRA: device {driver}/{pool}/{d.get('name')} uses fields not modelled")
                    out.append(Device(driver, pool, str(d.get("name")),
                                      dra_cel.attribute_values(driver, _d(d.get("attributes")))))
        return out, caveats


def _slice_on(spec: dict, node: dict) -> bool:
    if spec.get("nodeName") is not None:
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


@dataclass
class _Request:
    name: str
    alternatives: list[dict]     # the ``exactly`` body, or each ``firstAvailable`` subrequest


def pod_dra(index: DraIndex, spec: dict, status: Optional[dict], namespace: str, pod: Optional[dict],
            nodes: list[dict]) -> PodDra:
    """The plugin's verdicts for one pod spec; ``pod`` is the Pod's metadata (None for a template)."""
    out = PodDra()
    entries = [e for e in _l(spec.get("resourceClaims")) if isinstance(e, dict)]
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
        allocation = _d(claim.get("status")).get("allocation")
        if allocation is not None:
            if _d(allocation).get("nodeSelector") is not None:
                selectors.append(_d(allocation)["nodeSelector"])
            continue
        requests = _l(_d(_d(claim.get("spec")).get("devices")).get("requests"))
        for r in requests:
            why = _class_problem(index, _d(r), claim, namespace)
            if why:
                out.prefilter = why
                return out
        if _d(_d(claim.get("spec")).get("devices")).get("constraints"):
            out.caveats.append("DRA: claim constraints (matchAttribute) are not modelled")
        to_allocate.append(claim)
    out.allocates = bool(to_allocate)
    allocated = index.allocated()
    for node in nodes:
        if to_allocate and not _allocatable(index, to_allocate, node, allocated, out.caveats):
            out.filters[node["name"]] = CANNOT_ALLOCATE
        elif any(not _selector_matches(s, node) for s in selectors):
            out.filters[node["name"]] = NOT_AVAILABLE
    out.caveats = list(dict.fromkeys(out.caveats))
    return out


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
        return {"spec": _d(_d(template.get("spec")).get("spec"))}
    for s in _l(_d(status).get("resourceClaimStatuses")):
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
    meta = _d(claim.get("metadata"))
    if meta.get("deletionTimestamp"):
        return f'resourceclaim "{name}" is being deleted'
    if owner is not None and not _controlled_by(meta, owner):
        return f"ResourceClaim {namespace}/{name} was not created for pod {namespace}/{pod_name} (pod is not owner)"
    return claim


def _controlled_by(meta: dict, pod: dict) -> bool:
    uid = pod.get("uid")
    for ref in _l(meta.get("ownerReferences")):
        if isinstance(ref, dict) and ref.get("controller") and (
                ref.get("uid") == uid if uid else ref.get("kind") == "Pod" and ref.get("name") == pod.get("name")):
            return True
    return False


def _requests(claim: dict) -> list[_Request]:
    out = []
    for r in _l(_d(_d(claim.get("spec")).get("devices")).get("requests")):
        r = _d(r)
        alternatives = [_d(r["exactly"])] if r.get("exactly") is not None else [_d(s) for s in _l(r.get("firstAvailable"))]
        out.append(_Request(str(r.get("name")), alternatives))
    return out


def _class_problem(index: DraIndex, request: dict, claim: dict, namespace: str) -> str:
    name = request.get("name")
    if request.get("exactly") is not None:
        pairs = [(str(name), _d(request["exactly"]).get("deviceClassName"))]
    elif request.get("firstAvailable"):
        pairs = [(f"{name}/{_d(s).get('name')}", _d(s).get("deviceClassName")) for s in _l(request["firstAvailable"])]
    else:
        meta = _d(claim.get("metadata"))
        return f"resource claim {namespace}/{meta.get('name')}, request {name}: unknown request type"
    for label, cls in pairs:
        if cls and cls not in index.classes:
            return f"request {label}: device class {cls} does not exist"
    return ""


def _allocatable(index: DraIndex, claims: list[dict], node: dict, allocated: set, caveats: list[str]) -> bool:
    """Whether the structured allocator finds devices on node for all claims at once."""
    devices, pool_caveats = index.devices(node)
    caveats.extend(pool_caveats)
    free = [d for d in devices if (d.driver, d.pool, d.name) not in allocated]
    requests = [r for claim in claims for r in _requests(claim)]
    per_claim = [sum(_least(r, devices, index, caveats) for r in _requests(claim)) for claim in claims]
    if any(n > MAX_RESULTS for n in per_claim):
        caveats.append(f"DRA: a claim asks for more than {MAX_RESULTS} devices (the allocator refuses it)")
    return _search(requests, 0, [], devices, free, index, caveats)


def _least(request: _Request, devices: list[Device], index: DraIndex, caveats: list[str]) -> int:
    counts = []
    for alt in request.alternatives:
        if alt.get("allocationMode") == "All":
            counts.append(sum(1 for d in devices if _selectable(alt, d, index, caveats)))
        else:
            counts.append(int(alt.get("count") or 1))
    return min(counts) if counts else 0


def _search(requests: list[_Request], i: int, chosen: list[dict], devices: list[Device], free: list[Device],
            index: DraIndex, caveats: list[str]) -> bool:
    """Try every choice of subrequests, then check the assignment (``_assign``)."""
    if i == len(requests):
        return _assign(chosen, devices, free, index, caveats)
    return any(_search(requests, i + 1, chosen + [alt], devices, free, index, caveats)
               for alt in requests[i].alternatives)


def _assign(chosen: list[dict], devices: list[Device], free: list[Device], index: DraIndex,
            caveats: list[str]) -> bool:
    """``All`` requests take every matching device (all free, none shared); ``ExactCount``
    requests need distinct free devices: a bipartite matching with capacities."""
    taken: set[Device] = set()
    counted: list[tuple[int, list[Device]]] = []
    for alt in chosen:
        if alt.get("adminAccess"):
            caveats.append("DRA: adminAccess requests are not modelled")
        matching = [d for d in devices if _selectable(alt, d, index, caveats)]
        if alt.get("allocationMode") == "All":
            if not matching or any(d not in free or d in taken for d in matching):
                return False
            taken.update(matching)
        else:
            counted.append((int(alt.get("count") or 1), matching))
    left = [d for d in free if d not in taken]
    return _matching(counted, left)


def _matching(counted: list[tuple[int, list[Device]]], left: list[Device]) -> bool:
    slots = [k for k, (count, _) in enumerate(counted) for _ in range(count)]
    owner: dict[Device, int] = {}
    usable = set(left)

    def place(slot: int, seen: set[Device]) -> bool:
        for d in counted[slots[slot]][1]:
            if d not in usable or d in seen:
                continue
            seen.add(d)
            if d not in owner or place(owner[d], seen):
                owner[d] = slot
                return True
        return False

    return all(place(s, set()) for s in range(len(slots)))


def _selectable(alt: dict, device: Device, index: DraIndex, caveats: list[str]) -> bool:
    cls = index.classes.get(str(alt.get("deviceClassName")))
    exprs = [_d(_d(s).get("cel")).get("expression") for s in _l(_d(_d(cls).get("spec")).get("selectors"))]
    exprs += [_d(_d(s).get("cel")).get("expression") for s in _l(alt.get("selectors"))]
    for expr in exprs:
        value = dra_cel.evaluate(str(expr or ""), device.driver, device.attributes)
        if value == dra_cel.UNKNOWN:
            caveats.append(f"DRA: CEL selector not evaluated (taken as matching): {expr}")
            continue
        if value == dra_cel.ERROR:
            caveats.append(f"DRA: CEL selector fails at run time on device {device.driver}/{device.pool}/"
                           f"{device.name} (the scheduler aborts the pod's cycle): {expr}")
            return False
        if not value:
            return False
    return True


_REQ = (("name",), str), (("exactly",), dict), (("exactly", "deviceClassName"), str), \
    (("exactly", "allocationMode"), str), (("exactly", "count"), int), (("exactly", "selectors"), list), \
    (("exactly", "selectors", "*"), dict), (("exactly", "selectors", "*", "cel"), dict), \
    (("exactly", "selectors", "*", "cel", "expression"), str), (("firstAvailable",), list), \
    (("firstAvailable", "*"), dict), (("firstAvailable", "*", "deviceClassName"), str), \
    (("firstAvailable", "*", "allocationMode"), str), (("firstAvailable", "*", "count"), int)
_CLAIM_SPEC = ((("devices",), dict), (("devices", "requests"), list), (("devices", "requests", "*"), dict)) + \
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
                      (("spec", "devices", "*", "attributes"), dict)),
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


def dra_field(found: PodDra) -> dict:
    """The v1 pod type's ``dra`` field (``loader.dra``): the verdicts, and what the pod holds."""
    out: dict = {}
    if found.prefilter is not None:
        out["preFilter"] = {"plugin": PLUGIN, "reasons": [found.prefilter]}
    elif found.filters:
        out["filter"] = [{"node": node, "plugin": PLUGIN, "reasons": [why]} for node, why in found.filters.items()]
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
    """The structured allocator's first assignment on node (``allocateOne``): claims, requests and
    ``firstAvailable`` subrequests in order, devices in pool, slice and device order, the first
    free selectable ones, backtracking; per claim its (request name, device) results, or None.
    ``pool_order`` (driver, pool) replaces the sorted pool order (the scheduler's is a Go map's)."""
    devices, _ = index.devices(node)
    if pool_order is not None:
        rank = {p: i for i, p in enumerate(pool_order)}
        devices = sorted(devices, key=lambda d: rank.get((d.driver, d.pool), len(rank)))
    caveats: list[str] = []
    used = set(d for d in devices if (d.driver, d.pool, d.name) in allocated)
    plan = [(c, r) for c, claim in enumerate(claims) for r in _requests(claim)]
    out: list[list[tuple[str, Device]]] = [[] for _ in claims]

    def request(i: int) -> bool:
        if i == len(plan):
            return True
        c, r = plan[i]
        for alt in r.alternatives:
            label = r.name if alt.get("name") is None else f"{r.name}/{alt['name']}"
            matching = [d for d in devices if _selectable(alt, d, index, caveats)]
            if alt.get("allocationMode") == "All":
                if matching and not any(d in used for d in matching) and len(out[c]) + len(matching) <= MAX_RESULTS:
                    if take(i, c, label, matching, request):
                        return True
                continue
            if pick(i, c, label, matching, int(alt.get("count") or 1)):
                return True
        return False

    def take(i: int, c: int, label: str, chosen: list[Device], then) -> bool:
        used.update(chosen)
        out[c].extend((label, d) for d in chosen)
        if then(i + 1):
            return True
        used.difference_update(chosen)
        del out[c][len(out[c]) - len(chosen):]
        return False

    def pick(i: int, c: int, label: str, matching: list[Device], left: int) -> bool:
        if left == 0:
            return request(i + 1)
        if len(out[c]) + left > MAX_RESULTS:
            return False
        for d in matching:
            if d not in used and take(i, c, label, [d], lambda _: pick(i, c, label, matching, left - 1)):
                return True
        return False

    return out if request(0) else None


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
        terms = _l(_d(spec.get("nodeSelector")).get("nodeSelectorTerms"))
        if len(terms) == 1:
            fields += [r for r in _l(_d(terms[0]).get("matchFields")) if r not in fields]
            expressions += [r for r in _l(_d(terms[0]).get("matchExpressions")) if r not in expressions]
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
        spec = _d(s.get("spec"))
        if str(spec.get("driver")) == device.driver and str(_d(spec.get("pool")).get("name")) == device.pool \
                and _slice_on(spec, node) and any(str(_d(x).get("name")) == device.name for x in _l(spec.get("devices"))):
            return spec
    return {}
