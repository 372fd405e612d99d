"""Random cluster states with DRA objects: DeviceClasses, ResourceSlices, ResourceClaims.

Each state is a ``k8s_states.random_state`` (or a bare one) plus a device
world: per node GPU and NIC slices (``nodeName``), sometimes a pool for
labelled nodes (``nodeSelector``) or for all nodes; claims already allocated
to running pods (named, or generated from a template and owned by the pod);
and a pending pod whose ``resourceClaims`` reach every case DynamicResources
distinguishes: a named claim to allocate (ExactCount 1-3, All, a
``firstAvailable`` list, CEL selectors on driver and string, int and bool
attributes, ``&&`` and ``||``, attribute names bare or qualified), a claim
shared with running pods and pinned by its allocation, a template claim the
controller created (or not yet), a missing claim, one being deleted, a
request naming a DeviceClass that does not exist. Beyond that (``FEATURES``):
selectors with parentheses, ``!``, ``in``, ``? :``, string functions, ``has``,
capacity quantities and semver attributes, and ones reading an attribute
some devices lack (a CEL runtime error) or failing with an error whose text
Go's random map order or a pointer picks (``MESSAGE_ERRORS``); ``matchAttribute`` constraints (and
``distinctAttribute``, an error for v1.35's allocator), ``adminAccess`` and
tolerations in requests; devices with taints, counters or binding
conditions, slices with ``perDeviceNodeSelection`` or ``sharedCounters``,
pools split over two slices, incomplete, of an older generation or with a
duplicate device name.
"""

from __future__ import annotations

import random
from typing import Optional

from symreach.generators.k8s_states import State, random_state

Obj = dict
GPU, NIC = "gpu.example.com", "nic.example.com"
API = "resource.k8s.io/v1"
SELECTORS = {
    GPU: ['device.attributes["gpu.example.com"].model == "a100"', 'device.attributes["gpu.example.com"].mem >= 40',
          'device.attributes["gpu.example.com"].model != "t4" && device.attributes["gpu.example.com"].mem < 80',
          'device.attributes["gpu.example.com"].model == "h100" || device.attributes["gpu.example.com"].mem <= 16',
          'device.attributes["gpu.example.com"].ecc == true'],
    NIC: ['device.attributes["nic.example.com"].speed > 10'],
}
_G = 'device.attributes["gpu.example.com"]'
# selectors that fail on some GPUs with an error whose text Go's random map order or a pointer picks
# (``%s`` of the device, which holds a semver and a quantity; ``insert failed`` naming the device or a
# map of it: its entries' order, its maps' default map's address, a quantity's spelling; or formats:
# their validators' function pointers)
_TWICE = "[1, 2].transformMapEntry(i, v, {{{}: v}}).size() == 1)"
MESSAGE_ERRORS = [f'{_G}.mem < 80 || ("%s" + device.driver.substring(0,0)).format([device]) == ""',
                  f'{_G}.model != "h100" || cel.bind(x, device.attributes, {_TWICE.format("x")}',
                  f'{_G}.mem != 16 || cel.bind(k, device.capacity["gpu.example.com"], {_TWICE.format("k")}',
                  f'{_G}.model != "a100" || cel.bind(d, device, {_TWICE.format("d")}',
                  f'{_G}.model != "t4" || cel.bind(f, [format.dns1123Label(), format.uri()], {_TWICE.format("f")}']
FEATURES = {   # selectors outside the first subset; the two before MESSAGE_ERRORS fail on a device without numa
    GPU: [f'({_G}.model == "a100" || {_G}.model == "h100") && !({_G}.mem < 40)',
          f'{_G}.model in ["a100", "h100"]', f'!({_G}.model in ["t4"])',
          'device.capacity["gpu.example.com"].memory.compareTo(quantity("40Gi")) >= 0',
          'device.capacity["gpu.example.com"].memory.isGreaterThan(quantity("20000Mi"))',
          f'{_G}.model.startsWith("a") || {_G}.model.matches("^h[0-9]+$")',
          f'has({_G}.numa) && {_G}.numa == 0', f'{_G}.driverVersion.isGreaterThan(semver("1.5.0"))',
          f'{_G}.mem > 16 ? {_G}.ecc : true', f'{_G}.numa == 0', f'{_G}.numa != 1 || {_G}.mem >= 80']
    + MESSAGE_ERRORS,
    NIC: ['device.attributes["nic.example.com"].speed >= 25 && device.attributes["nic.example.com"].speed in [25, 100]'],
}
CLASSES = {"gpu": (GPU, None), "nic": (NIC, None), "a100": (GPU, 'device.attributes["gpu.example.com"].model == "a100"'),
           "any": (None, None), "numa0": (GPU, f'{_G}.numa == 0')}


def _cel(expression: str) -> Obj:
    return {"cel": {"expression": expression}}


def _classes(rng: random.Random) -> list[Obj]:
    out = []
    for name, (driver, extra) in CLASSES.items():
        if rng.random() < 0.1:
            continue   # a request may then name a class that does not exist
        selectors = [_cel(f'device.driver == "{driver}"')] if driver else []
        if extra:
            selectors.append(_cel(extra))
        out.append({"apiVersion": API, "kind": "DeviceClass", "metadata": {"name": name},
                    "spec": {"selectors": selectors} if selectors else {}})
    return out


def _device(rng: random.Random, driver: str, name: str) -> Obj:
    if driver == GPU:
        attributes = {"model": {"string": rng.choice(("a100", "t4", "h100"))}, "mem": {"int": rng.choice((16, 40, 80))},
                      # a qualified name is the same attribute as the driver's bare one
                      rng.choice(("ecc", "gpu.example.com/ecc")): {"bool": rng.random() < 0.5}}
        if rng.random() < 0.8:
            attributes["numa"] = {"int": rng.choice((0, 1))}
        attributes["driverVersion"] = {"version": rng.choice(("1.2.3", "2.0.0", "2.0.0-rc.1"))}
    else:
        attributes = {"speed": {"int": rng.choice((10, 25, 100))}}
    device: Obj = {"name": name, "attributes": attributes}
    if driver == GPU:
        device["capacity"] = {"memory": {"value": f"{attributes['mem']['int']}Gi"}}
    roll = rng.random()
    if roll < 0.06:   # v1.35's default gates: taints are not looked at
        device["taints"] = [{"key": "broken", "value": "yes", "effect": rng.choice(("NoSchedule", "NoExecute"))}]
    elif roll < 0.1:   # ... a device consuming counters is never allocated
        device["consumesCounters"] = [{"counterSet": "cs", "counters": {"memory": {"value": "8Gi"}}}]
    elif roll < 0.13:   # ... nor one with binding conditions
        device["bindingConditions"] = ["ready"]
        device["bindingFailureConditions"] = ["failed"]
    return device


def _slice(name: str, driver: str, pool: str, devices: list[Obj], where: Obj) -> Obj:
    return {"apiVersion": API, "kind": "ResourceSlice", "metadata": {"name": name},
            "spec": {"driver": driver, "pool": {"name": pool, "generation": 1, "resourceSliceCount": 1},
                     **where, "devices": devices}}


def _slices(rng: random.Random, nodes: list[str], node_labels: dict[str, dict]) -> tuple[list[Obj], dict]:
    """The slices, and per node the devices (driver, pool, name) it can use."""
    out: list[Obj] = []
    local: dict[str, list[tuple[str, str, str]]] = {n: [] for n in nodes}
    for n in nodes:
        for driver, p, most in ((GPU, 0.75, 3), (NIC, 0.35, 2)):
            if rng.random() < p:
                devices = [_device(rng, driver, f"d{i}") for i in range(rng.randint(0, most))]
                out.append(_slice(f"{n}-{driver.split('.')[0]}", driver, n, devices, {"nodeName": n}))
                local[n] += [(driver, n, d["name"]) for d in devices]
                if driver == GPU and rng.random() < 0.3:
                    out += _pool_variant(rng, out[-1], n)
    if rng.random() < 0.2:   # a pool for the nodes of one zone (or every node)
        zone = rng.choice(("z1", "z2", None))
        where = {"allNodes": True} if zone is None else {"nodeSelector": {"nodeSelectorTerms": [{"matchExpressions": [
            {"key": "topology.kubernetes.io/zone", "operator": "In", "values": [zone]}]}]}}
        devices = [_device(rng, GPU, f"s{i}") for i in range(rng.randint(1, 2))]
        out.append(_slice("shared-gpu", GPU, "shared", devices, where))
        for n in nodes:
            if zone is None or node_labels.get(n, {}).get("topology.kubernetes.io/zone") == zone:
                local[n] += [(GPU, "shared", d["name"]) for d in devices]
    return out, local


def _pool_variant(rng: random.Random, first: Obj, node: str) -> list[Obj]:
    """Another slice of ``first``'s pool, or ``first`` changed: how the allocator gathers pools."""
    spec = first["spec"]
    devices = spec["devices"]
    kind = rng.choice(("split", "incomplete", "older", "obsolete", "duplicate", "per-device", "counters"))
    extra = {"apiVersion": API, "kind": "ResourceSlice", "metadata": {"name": f"{first['metadata']['name']}-{kind}"},
             "spec": {"driver": spec["driver"], "pool": dict(spec["pool"]), "nodeName": node, "devices": []}}
    if kind == "per-device":   # skipped while the partitionable-devices gate is off
        del spec["nodeName"]
        spec["perDeviceNodeSelection"] = True
        for d in devices:
            d["nodeName"] = node
        return []
    spec["pool"]["resourceSliceCount"] = 2
    extra["spec"]["pool"]["resourceSliceCount"] = 2
    if kind == "incomplete":
        return []
    if kind == "split":
        half = len(devices) // 2
        extra["spec"]["devices"], spec["devices"] = devices[half:], devices[:half]
    elif kind == "older":   # generation 0 of the pool: outdated, its devices are not used
        spec["pool"]["resourceSliceCount"] = 1
        extra["spec"]["pool"]["generation"] = 0
        extra["spec"]["devices"] = [_device(rng, GPU, "old0")]
    elif kind == "obsolete":   # a newer generation elsewhere: this node's slice is ignored
        extra["spec"]["pool"].update(generation=2, resourceSliceCount=1)
        extra["spec"]["nodeName"] = "elsewhere"
    elif kind == "duplicate":   # an invalid pool
        extra["spec"]["devices"] = [_device(rng, GPU, devices[0]["name"] if devices else "d0")]
    else:   # a slice of shared counters: skipped, yet it completes the pool
        del extra["spec"]["devices"]
        extra["spec"]["sharedCounters"] = [{"name": "cs", "counters": {"memory": {"value": "80Gi"}}}]
    return [extra]


def _request(rng: random.Random, name: str = "r") -> Obj:
    cls = rng.choice(("gpu", "gpu", "a100", "nic", "any", "missing", "gpu", "numa0"))
    if rng.random() < 0.15:   # a prioritized list
        out = {"name": name, "firstAvailable": [
            {"name": "big", "deviceClassName": "gpu", "count": 2},
            {"name": "one", "deviceClassName": rng.choice(("gpu", "nic")), "count": 1}]}
        if rng.random() < 0.3:
            out["firstAvailable"][0]["selectors"] = [_cel(rng.choice(FEATURES[GPU]))]
        return out
    body: Obj = {"deviceClassName": cls}
    if rng.random() < 0.2:
        body["allocationMode"] = "All"
    else:
        body["count"] = rng.choice((1, 1, 1, 2, 3))
    driver = CLASSES.get(cls, (None, None))[0]
    if driver and rng.random() < 0.45:
        body["selectors"] = [_cel(rng.choice(rng.choice((SELECTORS, FEATURES))[driver]))]
    elif driver == GPU and rng.random() < 0.25:   # some states exercise a message Go's map order picks
        body["selectors"] = [_cel(rng.choice(MESSAGE_ERRORS))]
    if rng.random() < 0.1:   # may share devices other claims hold
        body["adminAccess"] = True
    if rng.random() < 0.1:   # not looked at while the device-taints gate is off
        body["tolerations"] = [{"key": "broken", "operator": "Exists", "effect": "NoSchedule"}]
    return {"name": name, "exactly": body}


def _constrain(rng: random.Random, claim: Obj) -> Obj:
    """Sometimes a constraint across the claim's requests (``distinctAttribute``: an allocator error)."""
    requests = claim["spec"]["devices"]["requests"]
    if rng.random() < 0.3:
        attribute = rng.choice(("gpu.example.com/model", "gpu.example.com/numa", "gpu.example.com/mem",
                                "gpu.example.com/driverVersion", "nic.example.com/speed"))
        constraint: Obj = {"distinctAttribute" if rng.random() < 0.08 else "matchAttribute": attribute}
        if len(requests) > 1 and rng.random() < 0.5:
            constraint["requests"] = [requests[0]["name"]] + (
                [f"{requests[1]['name']}/big"] if requests[1].get("firstAvailable") else [requests[1]["name"]])
        claim["spec"]["devices"]["constraints"] = [constraint]
    return claim


def _claim(name: str, ns: str, requests: list[Obj], *, allocation: Optional[tuple[str, list]] = None,
           owner: Optional[Obj] = None) -> Obj:
    meta: Obj = {"name": name, "namespace": ns, "uid": f"uid-claim-{ns}-{name}"}
    if owner is not None:
        meta["ownerReferences"] = [{"apiVersion": "v1", "kind": "Pod", "name": owner["metadata"]["name"],
                                    "uid": owner["metadata"]["uid"], "controller": True}]
    claim: Obj = {"apiVersion": API, "kind": "ResourceClaim", "metadata": meta, "spec": {"devices": {"requests": requests}}}
    if allocation is not None:
        node, devices = allocation
        claim["status"] = {"allocation": {
            "devices": {"results": [{"request": "r", "driver": d, "pool": p, "device": x} for d, p, x in devices]},
            "nodeSelector": {"nodeSelectorTerms": [{"matchFields": [
                {"key": "metadata.name", "operator": "In", "values": [node]}]}]}}}
    return claim


def dra_state(rng: random.Random, index: int = 0, plain: bool = False) -> State:
    """One random state with DRA objects; the pending pod uses resource claims. ``plain``: no
    allocator error can arise and no admin access is used (``plain_objects``), for walks that ask
    kso several pods at once and write allocations back without the admin-access flag."""
    base = random_state(rng, index) if rng.random() < 0.5 else None
    if base is not None and (_pending(base) is None or _pending(base)["metadata"].get("ownerReferences")):
        base = None   # a controller's pod takes its claims from the template: the bare state instead
    if base is None:
        nodes = [f"n{i}" for i in range(rng.choice((1, 2, 3, 3, 4)))]
        objects: list[Obj] = []
        for n in nodes:
            labels = {"topology.kubernetes.io/zone": rng.choice(("z1", "z2"))}
            objects.append({"apiVersion": "v1", "kind": "Node", "metadata": {"name": n, "labels": labels},
                            "status": {"allocatable": {"cpu": "8", "memory": "16Gi", "pods": "20"}}})
        incoming = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "incoming", "namespace": "default"},
                    "spec": {"containers": [{"name": "c", "image": "x"}]}}
        objects.append(incoming)
        state = State(objects, "default/incoming", nodes)
    else:
        state = base
    ns = state.pending.split("/", 1)[0]
    pending = _pending(state)
    node_labels = {o["metadata"]["name"]: o["metadata"].get("labels") or {} for o in state.objects if o["kind"] == "Node"}
    extra = _classes(rng)
    slices, local = _slices(rng, state.nodes, node_labels)
    extra += slices
    taken: set[tuple[str, str, str]] = set()
    shared: list[str] = []
    for i in range(rng.choice((0, 1, 2, 3))):   # running pods holding allocated claims
        node = rng.choice(state.nodes)
        free = [d for d in local[node] if d not in taken]
        if not free:
            continue
        devices = rng.sample(free, rng.randint(1, min(2, len(free))))
        taken.update(devices)
        pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": f"dra{i}", "namespace": ns, "uid": f"uid-dra{i}"},
               "spec": {"nodeName": node, "containers": [{"name": "c", "image": "x"}]}}
        request = {"name": "r", "exactly": {"deviceClassName": "any", "count": len(devices)}}
        admin = rng.random() < 0.1   # an admin-access allocation holds no device
        if admin:
            request["exactly"]["adminAccess"] = True
        if rng.random() < 0.5:
            claim = _claim(f"held{i}", ns, [request], allocation=(node, devices))
            pod["spec"]["resourceClaims"] = [{"name": "g", "resourceClaimName": f"held{i}"}]
            shared.append(f"held{i}")
        else:
            claim = _claim(f"dra{i}-g", ns, [request], allocation=(node, devices), owner=pod)
            pod["spec"]["resourceClaims"] = [{"name": "g", "resourceClaimTemplateName": "tmpl"}]
            pod["status"] = {"resourceClaimStatuses": [{"name": "g", "resourceClaimName": f"dra{i}-g"}]}
        if admin:
            for result in claim["status"]["allocation"]["devices"]["results"]:
                result["adminAccess"] = True
        claim["status"]["reservedFor"] = [{"resource": "pods", "name": pod["metadata"]["name"],
                                           "uid": pod["metadata"]["uid"]}]
        extra += [pod, claim]
    pending["metadata"]["uid"] = "uid-incoming"
    entries = []
    for k in range(rng.choice((1, 1, 1, 2))):
        kind = rng.random()
        name = f"c{k}"
        if kind < 0.5:
            extra.append(_constrain(rng, _claim(name, ns, [_request(rng, f"r{j}") for j in range(rng.choice((1, 1, 2)))])))
            entries.append({"name": f"g{k}", "resourceClaimName": name})
        elif kind < 0.65 and shared:
            entries.append({"name": f"g{k}", "resourceClaimName": rng.choice(shared)})
        elif kind < 0.8:
            extra.append(_constrain(rng, _claim(f"incoming-g{k}", ns, [_request(rng)], owner=pending)))
            entries.append({"name": f"g{k}", "resourceClaimTemplateName": "tmpl"})
            pending.setdefault("status", {}).setdefault("resourceClaimStatuses", []).append(
                {"name": f"g{k}", "resourceClaimName": f"incoming-g{k}"})
        elif kind < 0.87:
            entries.append({"name": f"g{k}", "resourceClaimTemplateName": "tmpl"})   # not created yet
        elif kind < 0.93:
            entries.append({"name": f"g{k}", "resourceClaimName": "absent"})
        else:
            claim = _claim(name, ns, [_request(rng)])
            claim["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z"
            claim["metadata"]["finalizers"] = ["resource.kubernetes.io/delete-protection"]
            extra.append(claim)
            entries.append({"name": f"g{k}", "resourceClaimName": name})
    pending["spec"]["resourceClaims"] = entries
    objects = state.objects + extra
    return State(plain_objects(objects) if plain else objects, state.pending, state.nodes)


def plain_objects(objects: list[Obj]) -> list[Obj]:
    """The objects with nothing that makes the allocator fail with an error (every GPU has the
    attributes selectors read, no selector of ``MESSAGE_ERRORS``, no claim has constraints, every pool
    is complete and valid) and without admin access."""
    pools: dict[tuple, list[Obj]] = {}
    for o in objects:
        if o["kind"] == "ResourceClaim":
            o["spec"]["devices"].pop("constraints", None)
            for r in o["spec"]["devices"]["requests"]:
                r.get("exactly", {}).pop("adminAccess", None)
                for body in [r.get("exactly") or {}] + list(r.get("firstAvailable") or []):
                    if any(s.get("cel", {}).get("expression") in MESSAGE_ERRORS for s in body.get("selectors") or []):
                        del body["selectors"]
            for r in (((o.get("status") or {}).get("allocation") or {}).get("devices") or {}).get("results", []):
                r.pop("adminAccess", None)
        if o["kind"] == "ResourceSlice":
            spec = o["spec"]
            pools.setdefault((spec["driver"], spec["pool"]["name"], spec["pool"].get("generation", 0)), []).append(spec)
            for d in spec.get("devices", []):
                if spec["driver"] == GPU:
                    d["attributes"].setdefault("numa", {"int": 0})
    for specs in pools.values():
        seen: set[str] = set()
        for spec in specs:
            spec["pool"]["resourceSliceCount"] = len(specs)
            for d in spec.get("devices", []):
                d["name"] = d["name"] + "-b" if d["name"] in seen else d["name"]
                seen.add(d["name"])
    return objects


def _pending(state: State) -> Optional[Obj]:
    ns, name = state.pending.split("/", 1)
    return next((o for o in state.objects if o["kind"] == "Pod" and o["metadata"]["name"] == name
                 and (o["metadata"].get("namespace") or "default") == ns and not o["spec"].get("nodeName")), None)


def random_dra_states(count: int, seed: int) -> list[State]:
    rng = random.Random(seed)
    return [dra_state(rng, i) for i in range(count)]
