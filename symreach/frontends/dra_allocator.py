"""The structured allocator of kube-scheduler v1.35 (default feature gates) on one node.

With v1.35's defaults (DRAAdminAccess and DRAPrioritizedList on; partitionable
devices, device taints, binding conditions and consumable capacity off) the
scheduler runs the "incubating" allocator of
``k8s.io/dynamic-resource-allocation/structured``. This module follows it:

- ``gather_pools``: a node's pools. Slices that set ``perDeviceNodeSelection``
  or ``sharedCounters`` are skipped (the partitionable-devices gate is off);
  the others reach the node by ``nodeName``, ``allNodes`` or ``nodeSelector``.
  Per pool the newest generation counts; a pool with fewer slices than its
  ``resourceSliceCount`` is *incomplete* (unless a newer generation exists
  elsewhere: then it is ignored), one with duplicate device names *invalid*.
  Neither gives devices; an ``All`` request meeting one is an error.
- ``allocate``: the allocator's depth-first search (``allocateOne``), in its
  order: claims, requests, ``firstAvailable`` subrequests, then pools, slices
  and devices; a device is taken if it is not in use (an ``adminAccess``
  request may share a device others hold, not one of its own claim), its
  CEL selectors match (class, then request), it consumes no counters (gate
  off) and it keeps every ``matchAttribute`` constraint of its claim. Taints
  are not looked at (gate off); a device with binding conditions is not
  selectable. The outcome is a fit, a failure with the plugin's reason, or an
  error (a CEL runtime error, an ``All`` request over an incomplete pool, an
  unsupported constraint such as ``distinctAttribute``, more than 32 results),
  which aborts the pod's whole scheduling cycle. A CEL error whose text Go's random
  map order or a pointer picks (``CelError.pattern``) is a reason with that text
  marked and the pattern of every text Go can give (``reasons.marked_reason``).

The scheduler visits pools in Go map order (random, per node) and slices in
informer order (random, per cycle): ``allocate_in_order`` runs the search in one
order (``Allocator.walk``), ``dra_orders.allocate`` over every order that can
differ. Selectors outside ``dra_cel`` are taken as matching, with a caveat; a
search past the search budget's ``dra-allocator-steps`` guard (``symreach.search_budget``)
falls back to a matching that ignores constraints, with a caveat.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Iterator, Optional

from symreach import search_budget, reasons
from symreach.frontends import dra_cel
from symreach.frontends.dra_matching import assignable
from symreach.frontends.k8s_volumes import as_dict, as_list

MAX_RESULTS = 32   # resourceapi.AllocationResultsMaxSize
CANNOT_ALLOCATE = "cannot allocate all claims"
INVALID_POOLS = "invalid resource pools were encountered"
ERROR_PREFIX = reasons.FILTER_ERROR


@dataclass(frozen=True, eq=False)
class Device:
    """One device of a node's pools (identity is the device: built once per node)."""

    driver: str
    pool: str
    name: str
    attributes: dict
    capacity: dict = field(default_factory=dict)
    typed: dict = field(default_factory=dict)       # (domain, name) -> (type, value), for matchAttribute
    consumes_counters: bool = False
    binding_conditions: bool = False
    slice_id: int = 0

    def __post_init__(self) -> None:
        object.__setattr__(self, "_outcomes", {})   # CEL expression -> its value here (not a field: not compared)

    def evaluate(self, expression: str) -> dra_cel.Outcome:
        outcomes: dict = getattr(self, "_outcomes")
        if expression not in outcomes:
            outcomes[expression] = dra_cel.evaluate(expression, self.driver, self.attributes, self.capacity)
        return outcomes[expression]

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.driver, self.pool, self.name)


@dataclass
class Pool:
    driver: str
    name: str
    slices: list[list[Device]] = field(default_factory=list)   # each slice's devices, in informer order
    incomplete: bool = False
    invalid: bool = False

    @property
    def devices(self) -> list[Device]:
        return [d for devices in self.slices for d in devices]


def gather_pools(slices: list[dict], node: dict, node_matches: Callable[[dict, dict], bool]) -> list[Pool]:
    """``GatherPools``: the pools of ``slices`` (ResourceSlice objects) that reach ``node``."""
    found: dict[tuple[str, str], list[tuple[int, dict]]] = {}
    for k, s in enumerate(slices):
        spec = as_dict(s.get("spec"))
        if spec.get("perDeviceNodeSelection") is not None or as_list(spec.get("sharedCounters")):
            continue
        if not node_matches(spec, node):
            continue
        key = (str(spec.get("driver")), str(as_dict(spec.get("pool")).get("name")))
        have = found.get(key)
        if have is None or _generation(spec) > _generation(have[0][1]):
            found[key] = [(k, spec)]
        elif _generation(spec) == _generation(have[0][1]):
            have.append((k, spec))
    out: list[Pool] = []
    for (driver, name), specs in sorted(found.items()):
        want = int(as_dict(specs[0][1].get("pool")).get("resourceSliceCount") or 0)
        if len(specs) != want:
            same = [spec for spec in (as_dict(s.get("spec")) for s in slices)
                    if str(spec.get("driver")) == driver and str(as_dict(spec.get("pool")).get("name")) == name]
            if any(_generation(x) > _generation(specs[0][1]) for x in same):
                continue   # obsolete: the driver is replacing this generation
            if sum(1 for x in same if _generation(x) == _generation(specs[0][1])) != want:
                out.append(Pool(driver, name, incomplete=True))
                continue
        names = [str(as_dict(d).get("name")) for _, spec in specs for d in as_list(spec.get("devices"))]
        if len(set(names)) != len(names):
            out.append(Pool(driver, name, invalid=True))
            continue
        out.append(Pool(driver, name, [[_device(driver, name, as_dict(d), k) for d in as_list(spec.get("devices"))]
                                       for k, spec in specs]))
    return out


def _generation(spec: dict) -> int:
    return int(as_dict(spec.get("pool")).get("generation") or 0)


def _device(driver: str, pool: str, raw: dict, slice_id: int) -> Device:
    attributes = as_dict(raw.get("attributes"))
    typed = {}
    for key, value in attributes.items():
        domain, _, name = str(key).partition("/") if "/" in str(key) else (driver, "", str(key))
        kinds = [k for k in ("string", "int", "bool", "version") if k in as_dict(value)]
        typed[(domain, name)] = (kinds[0], as_dict(value)[kinds[0]]) if kinds else None
    return Device(driver, pool, str(raw.get("name")), dra_cel.attribute_values(driver, attributes),
                  dra_cel.capacity_values(driver, as_dict(raw.get("capacity"))), typed,
                  bool(as_list(raw.get("consumesCounters"))), bool(as_list(raw.get("bindingConditions"))), slice_id)


# ---- the search ---------------------------------------------------------------------------

@dataclass
class Outcome:
    """A fit (``reason`` None), a failure (its reason) or an error (``error``: the cycle aborts)."""

    reason: Optional[str] = None
    error: bool = False
    caveats: list[str] = field(default_factory=list)
    results: list[list[tuple[str, Device]]] = field(default_factory=list)   # per claim: (request, device)
    met_error: bool = False   # a selector fails at run time on some free device (another order may meet it)
    outcomes: tuple[Optional[str], ...] = ()   # every outcome over the orders of pools and slices, if several


class _Error(Exception):
    """A fatal allocation error (``statusError``): the scheduler aborts the pod's cycle."""


class _TooMany(Exception):
    """``errAllocationResultMaxSizeExceeded``."""


class _Budget(Exception):
    pass


@dataclass
class _Req:
    """One request or subrequest (``requestData``)."""

    body: dict
    name: str            # the request's own name (a subrequest's without its parent)
    parent: Optional[str]
    class_name: str
    admin: bool
    count: int = 1
    all_devices: Optional[list[Device]] = None


class _MatchAttribute:
    def __init__(self, requests: list[str], attribute: str) -> None:
        self.requests = set(requests)
        domain, _, name = attribute.partition("/")
        self.key = (domain, name)
        self.value: object = None
        self.n = 0

    def applies(self, base: str, sub: Optional[str]) -> bool:
        return not self.requests or base in self.requests or (sub is not None and f"{base}/{sub}" in self.requests)

    def add(self, base: str, sub: Optional[str], device: Device) -> bool:
        if not self.applies(base, sub):
            return True
        value = device.typed.get(self.key)
        if value is None:
            return False
        if self.n == 0:
            self.value = value
        elif value != self.value:
            return False
        self.n += 1
        return True

    def remove(self, base: str, sub: Optional[str]) -> None:
        if self.applies(base, sub):
            self.n -= 1


Sequence = Callable[[], Iterator[tuple[Pool, Optional[Device]]]]   # the pools and devices in one order


class Allocator:
    """One ``Allocate`` call: ``claims`` (ResourceClaim dicts) on the node's ``pools``."""

    def __init__(self, claims: list[dict], pools: list[Pool], classes: dict[str, dict], allocated: set,
                 errors_as_false: bool = False, sequence: Optional[Sequence] = None) -> None:
        self.claims, self.pools, self.classes, self.allocated = claims, pools, classes, allocated
        self.sequence = sequence
        self.errors_as_false = errors_as_false
        self.caveats: list[str] = []
        self.cache: dict[tuple[int, int, int, int], bool] = {}
        self.allocating: dict[Device, set[int]] = {}
        self.results: list[list[tuple[str, Device]]] = [[] for _ in claims]
        self.requests: list[list[list[_Req]]] = []
        self.constraints: list[list[_MatchAttribute]] = []
        self.steps = 0
        self.step_guard = search_budget.Watch(search_budget.DRA_ALLOCATOR_STEPS)
        self.every: list[tuple[int, _Req]] = []   # every request and subrequest, for ``signature``

    def walk(self) -> Iterator[tuple[Pool, Optional[Device]]]:
        """The order the search takes: each pool as (pool, None), then (pool, device) per device of its
        slices (``sequence``'s order where given, else ``pools`` as they stand)."""
        if self.sequence is not None:
            yield from self.sequence()
            return
        for pool in self.pools:
            yield pool, None
            for device in pool.devices:
                yield pool, device

    def signature(self, device: Device) -> tuple:
        """All the search reads of ``device`` but its name: every request's selectors on it (value and
        caveats), its typed attributes, counters, binding conditions and whether it is allocated.
        Devices with equal signatures are interchangeable (up to the results and the names errors give)."""
        if not self.every:   # kept: the probe cache knows a request by its id
            for c, claim in enumerate(self.claims):
                for request in as_list(as_dict(as_dict(claim.get("spec")).get("devices")).get("requests")):
                    request = as_dict(request)
                    for body in [as_dict(x) for x in as_list(request.get("firstAvailable"))] or [as_dict(request.get("exactly"))]:
                        self.every.append((c, _Req(body, "", None, str(body.get("deviceClassName") or ""), False)))
        probes = []
        for c, req in self.every:
            before = len(self.caveats)
            probes.append((self.probe(c, req, device), tuple(self.caveats[before:])))
        return (tuple(probes), tuple(sorted(repr(x) for x in device.typed.items())), device.consumes_counters,
                device.binding_conditions, device.key in self.allocated)

    # -- set-up (``Allocate`` before the search) --
    def prepare(self) -> None:
        for c, claim in enumerate(self.claims):
            least, per_claim = 0, []
            for request in as_list(as_dict(as_dict(claim.get("spec")).get("devices")).get("requests")):
                request = as_dict(request)
                if request.get("firstAvailable"):
                    subs = [self._req(c, as_dict(s), str(as_dict(s).get("name")), str(request.get("name")))
                            for s in as_list(request["firstAvailable"])]
                    least += min(r.count for r in subs)
                else:
                    subs = [self._req(c, as_dict(request.get("exactly")), str(request.get("name")), None)]
                    least += subs[0].count
                per_claim.append(subs)
            self.requests.append(per_claim)
            if least > MAX_RESULTS:
                raise _Error(f"claim {_ref(claim)}: number of requested devices {least} exceeds the claim limit of "
                             f"{MAX_RESULTS}")
            kept = []
            for i, constraint in enumerate(as_list(as_dict(as_dict(claim.get("spec")).get("devices")).get("constraints"))):
                constraint = as_dict(constraint)
                if constraint.get("matchAttribute") is None:
                    raise _Error(f"claim {_ref(claim)}, constraint #{i}: empty constraint (unsupported constraint type?)")
                kept.append(_MatchAttribute([str(x) for x in as_list(constraint.get("requests"))],
                                            str(constraint["matchAttribute"])))
            self.constraints.append(kept)

    def _req(self, c: int, body: dict, name: str, parent: Optional[str]) -> _Req:
        req = _Req(body, name, parent, str(body.get("deviceClassName") or ""),
                   parent is None and bool(body.get("adminAccess")))
        if not req.class_name:
            raise _Error(f"claim {_ref(self.claims[c])}, request {name}: missing device class name "
                         "(unsupported request type?)")
        mode = body.get("allocationMode") or "ExactCount"
        if mode == "ExactCount":
            req.count = int(body.get("count") or 1)
        elif mode == "All":
            req.all_devices = []
            for pool, device in self.walk():
                if device is None and (pool.incomplete or pool.invalid):
                    state = "is currently being updated" if pool.incomplete else "is currently invalid"
                    raise _Error(f"claim {_ref(self.claims[c])}, request {name}: asks for all devices, but resource "
                                 f"pool {pool.driver}/{pool.name} {state}")
                if device is not None and self.selectable(c, req, device):
                    req.all_devices.append(device)
            req.count = len(req.all_devices)
        else:
            raise _Error(f"claim {_ref(self.claims[c])}, request {name}: unsupported count mode {mode}")
        return req

    # -- device checks --
    def selectable(self, c: int, req: _Req, device: Device) -> bool:
        """``isSelectable``: class selectors, then the request's; a CEL runtime error raises."""
        found = self.probe(c, req, device)
        if isinstance(found, str):
            if not self.errors_as_false:
                raise _Error(found)
            return False
        return found

    def probe(self, c: int, req: _Req, device: Device) -> bool | str:
        """``selectable`` without raising: True, False or the error's message (cached per request and device)."""
        if device.binding_conditions:
            return False
        key = (c, id(req), id(device), 0)
        if key in self.cache:
            return self.cache[key]
        cls = self.classes.get(req.class_name)
        sources = [(f"class {req.class_name}", as_dict(as_dict(cls).get("spec")).get("selectors"))] if cls is not None else []
        sources.append((f"claim {_ref(self.claims[c])}", req.body.get("selectors")))
        value: bool | str = True
        for where, selectors in sources:
            for i, s in enumerate(as_list(selectors)):
                expr = str(as_dict(as_dict(s).get("cel")).get("expression") or "")
                got = device.evaluate(expr)
                if got == dra_cel.UNKNOWN:
                    self.caveats.append(f"DRA: CEL selector not evaluated (taken as matching): {expr}")
                    continue
                if isinstance(got, dra_cel.CelError):   # Go's map order or a pointer may pick the text: marked
                    value = reasons.marked_reason(f"{where}: selector #{i}: CEL runtime error: ", got.message,
                                                   got.pattern)
                elif not got:
                    value = False
                if value is not True:
                    break
            if value is not True:
                break
        self.cache[key] = value
        return value

    def in_use(self, device: Device, c: int, admin: bool) -> bool:
        if admin:
            return c in self.allocating.get(device, ())
        return device.key in self.allocated or bool(self.allocating.get(device))

    def take(self, c: int, req: _Req, device: Device, must: bool) -> Optional[Callable[[], None]]:
        """``allocateDevice``: the undo of taking ``device``, or None when it cannot be taken."""
        if self.in_use(device, c, req.admin) or device.consumes_counters:
            return None
        base, sub = (req.parent, req.name) if req.parent is not None else (req.name, None)
        done: list[_MatchAttribute] = []
        for constraint in self.constraints[c]:
            if not constraint.add(base, sub, device):
                if must:
                    raise _Error(f"claim {_ref(self.claims[c])}, request {req.name}: cannot add device "
                                 f"{device.driver}/{device.pool}/{device.name} because a claim constraint would "
                                 "not be satisfied")
                for x in done:
                    x.remove(base, sub)
                return None
            done.append(constraint)
        self.allocating.setdefault(device, set()).add(c)
        label = f"{req.parent}/{req.name}" if req.parent is not None else req.name
        self.results[c].append((label, device))

        def undo() -> None:
            for x in self.constraints[c]:
                x.remove(base, sub)
            self.allocating[device].discard(c)
            self.results[c].pop()
        return undo

    # -- ``allocateOne`` --
    def one(self, c: int, r: int, s: int, k: int, in_sub: bool) -> bool:
        self.steps += 1
        if self.steps > self.step_guard.at and self.step_guard.passed(self.steps):
            raise _Budget()
        if c == len(self.claims):
            return True
        if r == len(self.requests[c]):
            try:
                return self.one(c + 1, 0, 0, 0, False)
            except _TooMany:
                return False
        subs = self.requests[c][r]
        if not in_sub and subs[0].parent is not None:
            all_too_many = True
            for s2 in range(len(subs)):
                try:
                    if self.one(c, r, s2, k, True):
                        return True
                except _TooMany:
                    continue
                all_too_many = False
            if all_too_many:
                raise _TooMany()
            return False
        req = subs[s]
        if req.all_devices is not None and not req.all_devices:
            return False
        if k >= req.count:
            return self.one(c, r + 1, 0, 0, False)
        if len(self.results[c]) + req.count - k > MAX_RESULTS:
            raise _TooMany()
        if req.all_devices is not None:
            return bool(self.extend(c, r, s, k, in_sub, req, req.all_devices[k], True))
        if self.too_few(c, req, req.count - k):
            return False
        for pool, device in self.walk():
            if device is None or pool.incomplete or pool.invalid:
                continue
            if self.in_use(device, c, req.admin) or not self.selectable(c, req, device):
                continue
            if self.extend(c, r, s, k, in_sub, req, device, False):
                return True
        return False

    def too_few(self, c: int, req: _Req, wanted: int) -> bool:
        """Fewer free devices than ``wanted`` that could be selected: no solution below, where the
        search would evaluate every free device's selectors before giving up, so it meets the first
        error among them (raised here) or none: stopping is faithful. Counts no further than needed."""
        usable, first_error = 0, None
        for pool, device in self.walk():
            if device is not None and not pool.incomplete and not pool.invalid and not self.in_use(device, c, req.admin):
                found = self.probe(c, req, device)
                first_error = first_error or (found if isinstance(found, str) else None)
                usable += found is not False and not device.consumes_counters
                if usable >= wanted:
                    return False
        if first_error is not None and not self.errors_as_false:
            raise _Error(first_error)
        return True

    def extend(self, c: int, r: int, s: int, k: int, in_sub: bool, req: _Req, device: Device,
               must: bool) -> Optional[bool]:
        """Take ``device`` as the k-th of the request and search on (None: it cannot be taken)."""
        undo = self.take(c, req, device, must)
        if undo is None:
            return None
        try:
            found = self.one(c, r, s, k + 1, in_sub)
        except Exception:
            undo()
            raise
        if not found:
            undo()
        return found


def _ref(claim: dict) -> str:
    """``klog.KObj``: ns/name (a template's claim, not created yet, has no name: said so)."""
    meta = as_dict(claim.get("metadata"))
    if meta.get("name") is None:
        return "(not created yet, from a ResourceClaimTemplate)"
    return f"{meta.get('namespace')}/{meta.get('name')}" if meta.get("namespace") else str(meta.get("name"))


def allocate_in_order(claims: list[dict], pools: list[Pool], classes: dict[str, dict], allocated: set,
                       note_errors: bool = False, sequence: Optional[Sequence] = None) -> Outcome:
    """The search in this order (``sequence``'s, else ``pools`` as they stand); ``note_errors``: on a fit,
    say whether a selector fails on a free device."""
    run = Allocator(claims, pools, classes, allocated, sequence=sequence)
    try:
        run.prepare()
        found = run.one(0, 0, 0, 0, False)
    except _TooMany:
        return Outcome(ERROR_PREFIX + "allocation max size exceeded", True, run.caveats)
    except _Error as err:
        return Outcome(ERROR_PREFIX + str(err), True, run.caveats)
    except _Budget:
        fits = _relaxed(run)
        out = Outcome(None if fits else INVALID_POOLS if any(p.invalid for p in pools) else CANNOT_ALLOCATE, False,
                      run.caveats)
        if not _relaxation_exact(run, constraints=not fits):   # constraints only remove fits
            out.caveats.append("DRA: the allocator's search on this node went "
                               f"{search_budget.past(search_budget.DRA_ALLOCATOR_STEPS)}; the verdict is whether distinct "
                               "matching devices exist (constraints and errors not checked)")
        return out
    out = Outcome(None if found else INVALID_POOLS if any(p.invalid for p in pools) else CANNOT_ALLOCATE,
                  False, run.caveats, [list(r) for r in run.results] if found else [])
    out.met_error = note_errors and _some_pair_fails(run)
    return out


def _relaxed(run: Allocator) -> bool:
    """Whether distinct free devices exist for every request (``dra_matching``), errors as no match."""
    saved, run.errors_as_false = run.errors_as_false, True
    free = [d for p in run.pools if not p.incomplete and not p.invalid for d in p.devices
            if d.key not in run.allocated and not d.consumes_counters]
    requests = [[(req.all_devices, req.count, [d for d in free if run.selectable(c, req, d)]) for req in subs]
                for c, per_claim in enumerate(run.requests) for subs in per_claim]
    run.errors_as_false = saved
    return assignable(requests)


def _relaxation_exact(run: Allocator, constraints: bool = False) -> bool:
    """No constraint (unless ``constraints``: then only a failure is exact), admin access, claim that may
    pass 32 devices, or selector failing on a free device: the search's fit is then exactly ``_relaxed``
    (and a failure meets no error)."""
    every = [req for per_claim in run.requests for subs in per_claim for req in subs]
    if any(run.constraints) and (not constraints or any(req.all_devices is not None for req in every)):
        return False   # an All request may break a constraint: an error
    if any(req.admin for req in every) or any(sum(max(r.count for r in subs) for subs in per_claim) > MAX_RESULTS for per_claim in run.requests):
        return False
    return not _some_pair_fails(run)


def _some_pair_fails(run: Allocator) -> bool:
    """Whether a selector of these requests fails at run time on a free device of the node."""
    return any(isinstance(run.probe(c, req, device), str)
               for c, per_claim in enumerate(run.requests) for subs in per_claim for req in subs
               for pool in run.pools for device in pool.devices if device.key not in run.allocated)

