"""A pod type's ``dra`` (format v1, kubernetes profile): what DynamicResources decided.

The Kubernetes front end runs the plugin's PreFilter and Filter on the
resource.k8s.io objects (``frontends.k8s_dra``) and writes the outcome here,
so the model needs no notion of devices:

    dra:
      preFilter: {plugin: DynamicResources, reasons: ['could not find ResourceClaim "default/gpu"']}
      filter: [{node: n2, plugin: DynamicResources, reasons: [cannot allocate all claims]}]
      # otherRuns (optional, per filter entry): the other refusals some order of pools and slices gives
      otherRunRefusals: [{node: n1, plugin: DynamicResources, reasons: [...]}]   # where some order fits:
                               # the errors other orders meet (they abort the pod's cycle in those runs)
      cycleOrders:             # where the slice order drawn once per cycle decides a fit: per order,
        - {fits: [n1, n3], errs: {n2: ['running "DynamicResources" filter plugin: ...']}}
                               # the nodes that fit and those that err (``semantics.abort_failure``)
      allocates: true          # scheduling the pod allocates devices to a claim
      claims: [gpu]            # the ResourceClaims it uses (named, or generated for it), in its namespace
      allocations:             # DRA devices as state (``frontends.k8s_dra_state``)
        slots: [default/gpu, pods of default/train]   # claims, and a workload's pods' own claims
        states:                # the joint allocations reachable from the input's (the first)
          - held: [null, null]
            nodes: {n1: 1, n2: [2, 3]}   # deploying the type there moves to that state (a list: any
                               # of those, as the scheduler's random order of pools and slices
                               # gives; the input order's first)
          - held: ["n1: gpu.example.com/n1/g0", null]
            filter: [{node: n1, plugin: DynamicResources, reasons: [cannot allocate all claims]}]
                               # (and otherRunRefusals, cycleOrders: the verdicts in that state)
            frees: {n1: {gpu.example.com/n1/g0: 0}}   # deleting its pod there holding that (a pod slot's type)
            releases: {default/gpu: 0}   # the claim deallocated (its last pod gone)

DynamicResources is the last Filter plugin of the v1.35 profile and its
PreFilter the last PreFilter: a PreFilter rejection blocks every node but
those an earlier PreFilter rejection (NodeAffinity's, a volume plugin's)
already blocks; a Filter failure blocks its node and is reported only when
every other plugin passes there (``Instance.volume_failures`` with
``AFTER_ALL``); a Filter reason that starts with ``running "DynamicResources"
filter plugin:`` is an error status, which aborts the pod's whole scheduling
cycle where the pod passes every earlier filter on that node
(``semantics.cycle_abort``). ``allocates`` and ``claims`` do not change the verdicts;
they say which types read device allocation (the front end's caveats).
``allocations`` makes the allocation state: per joint state, the verdicts
the type has then (the first state's are its own) and where its deployment
and deletion move the state; ``loader.resolve.device_groups`` turns it into
a ``model.BindingGroup`` whose claim slots go back to unallocated when no
pod of a type naming the claim is left (``semantics.delete``).
"""

from __future__ import annotations

from typing import Optional

from symreach.loader.shapes import FieldError, Path, boolean, integer, mapping, sequence, string, string_list
from symreach.loader.volumes import FilterEntry, parse_run_refusals, state_targets
from symreach.reasons import FILTER_ERROR as ERROR
from symreach.records import record

PLUGIN = "DynamicResources"
DRA_FIELDS = ("preFilter", "filter", "otherRunRefusals", "cycleOrders", "allocates", "claims", "allocations")
VERDICT_FIELDS = ("preFilter", "filter", "otherRunRefusals", "cycleOrders")   # also per allocation state
# one slice order of a cycle: the nodes fitting, the nodes erring with their errors (each one of a set)
CycleOrderSpec = tuple[tuple[str, ...], tuple[tuple[str, tuple[str, ...]], ...]]


@record
class DraSpec:
    prefilter: Optional[tuple[str, tuple[str, ...]]] = None
    filters: tuple[FilterEntry, ...] = ()   # (node, plugin, reasons, other runs' (plugin, reasons))
    allocates: bool = False
    claims: tuple[str, ...] = ()
    allocations: Optional["AllocSpec"] = None
    run_refusals: tuple[tuple[str, str, tuple[str, ...]], ...] = ()   # ``otherRunRefusals``: (node, plugin, reasons)
    cycle_orders: tuple[CycleOrderSpec, ...] = ()   # ``cycleOrders``


@record
class AllocState:
    """One joint allocation: each slot's value (None: unallocated, or no pod holding devices),
    the type's verdicts then, and the states its deployment / deletion on a node moves to."""

    held: tuple[Optional[str], ...]
    prefilter: Optional[tuple[str, tuple[str, ...]]]
    filters: tuple[FilterEntry, ...]
    on: tuple[tuple[str, int], ...]                     # ``nodes``: (node, next state; the first of several)
    frees: tuple[tuple[str, tuple[tuple[str, int], ...]], ...]   # node -> (holding freed, state) per choice
    releases: tuple[tuple[str, int], ...]               # claim slot -> the state once it is deallocated
    run_refusals: tuple[tuple[str, str, tuple[str, ...]], ...] = ()   # ``otherRunRefusals``
    cycle_orders: tuple[CycleOrderSpec, ...] = ()   # ``cycleOrders``
    choices: tuple[tuple[str, tuple[int, ...]], ...] = ()   # nodes where it may move to any of several


@record
class AllocSpec:
    slots: tuple[str, ...]
    states: tuple[AllocState, ...]


def parse_dra(raw: object, path: Path, node_names: set[str]) -> DraSpec:
    if raw is None:
        return DraSpec()
    body = mapping(raw, path, DRA_FIELDS)
    prefilter = None
    if body.get("preFilter") is not None:
        where = path + ("preFilter",)
        prefilter = _verdict(mapping(body["preFilter"], where, ("plugin", "reasons"), required=("plugin", "reasons")),
                             where)
    filters = tuple(_entry(item, path + ("filter", i), node_names)
                    for i, item in enumerate(sequence(body.get("filter"), path + ("filter",))))
    nodes = [entry[0] for entry in filters]
    if len(set(nodes)) != len(nodes):
        raise FieldError(path + ("filter",), "a node is listed twice")
    for key in ("filter", "cycleOrders"):
        if prefilter is not None and body.get(key):
            raise FieldError(path + (key,), "a PreFilter rejection leaves no Filter verdicts")
    allocations = None if body.get("allocations") is None else \
        _allocations(body["allocations"], path + ("allocations",), node_names)
    return DraSpec(prefilter, filters, boolean(body.get("allocates"), path + ("allocates",), False),
                   tuple(string_list(body.get("claims"), path + ("claims",))), allocations,
                   parse_run_refusals(body, path, node_names, _verdict),
                   _cycle_orders(body.get("cycleOrders"), path + ("cycleOrders",), node_names, set(nodes)))


def _cycle_orders(raw: object, path: Path, node_names: set[str], refused: set[str]) -> tuple[CycleOrderSpec, ...]:
    """``cycleOrders``: per slice order of the cycle, the nodes that fit and those that err (with
    errors); every node without a ``filter`` entry fits under some order, none both fits and errs."""
    out = []
    for i, item in enumerate(sequence(raw, path)):
        where = path + (i,)
        entry = mapping(item, where, ("fits", "errs"))
        fits = tuple(string_list(entry.get("fits"), where + ("fits",)))
        errs = tuple((node, tuple(string_list(why, where + ("errs", node)))) for node, why in _named(
            entry.get("errs"), where + ("errs",), node_names))
        for k, node in enumerate(fits):
            if node not in node_names:
                raise FieldError(where + ("fits", k), f"unknown node '{node}'")
        if any(not why or not all(w.startswith(ERROR) for w in why) for _, why in errs):
            raise FieldError(where + ("errs",), f"expected errors (reasons starting '{ERROR}')")
        if set(fits) & {node for node, _ in errs}:
            raise FieldError(where, "a node both fits and errs")
        out.append((fits, errs))
    left = node_names - refused - {node for fits, _ in out for node in fits}
    if out and left:
        raise FieldError(path, f"{sorted(left)[0]} has no filter entry but fits under no order")
    return tuple(out)


def _allocations(raw: object, path: Path, node_names: set[str]) -> AllocSpec:
    body = mapping(raw, path, ("slots", "states"), required=("slots", "states"))
    slots = tuple(string_list(body["slots"], path + ("slots",)))
    if not slots or len(set(slots)) != len(slots):
        raise FieldError(path + ("slots",), "expected distinct slot names")
    raw_states = sequence(body["states"], path + ("states",))
    states = []
    for i, item in enumerate(raw_states):
        where = path + ("states", i)
        entry = mapping(item, where, ("held",) + VERDICT_FIELDS + ("nodes", "frees", "releases"), required=("held",))
        held = sequence(entry["held"], where + ("held",))
        if len(held) != len(slots):
            raise FieldError(where + ("held",), f"expected {len(slots)} entries (one per slot)")
        for k, value in enumerate(held):
            if value is not None:
                string(value, where + ("held", k))
        sub = parse_dra({k: entry[k] for k in VERDICT_FIELDS if k in entry}, where, node_names)
        deploys = [(node, state_targets(nxt, where + ("nodes", node), len(raw_states)))
                   for node, nxt in _named(entry.get("nodes"), where + ("nodes",), node_names)]
        releases = _moves(entry.get("releases"), where + ("releases",), set(slots), len(raw_states))
        frees = _frees(entry.get("frees"), where + ("frees",), node_names, len(raw_states))
        states.append(AllocState(tuple(held), sub.prefilter, sub.filters, tuple((n, ks[0]) for n, ks in deploys),
                                 frees, releases, sub.run_refusals, sub.cycle_orders,
                                 tuple((n, ks) for n, ks in deploys if len(ks) > 1)))
    if not states:
        raise FieldError(path + ("states",), "at least the input's state is needed")
    if len({s.held for s in states}) != len(states):
        raise FieldError(path + ("states",), "a joint allocation is listed twice")
    return AllocSpec(slots, tuple(states))


def _moves(raw: object, path: Path, names: set[str], count: int) -> tuple[tuple[str, int], ...]:
    """``{node or slot: state}``: where a move on each node (a release of each slot) leads."""
    return tuple((name, _state(value, path + (name,), count)) for name, value in _named(raw, path, names))


def _frees(raw: object, path: Path, node_names: set[str], count: int
           ) -> tuple[tuple[str, tuple[tuple[str, int], ...]], ...]:
    """``{node: state}`` (a deletion there frees one thing) or ``{node: {holding: state}}`` (the
    pods there hold different things; a deletion names the one its pod holds)."""
    out = []
    for node, choices in _named(raw, path, node_names):
        if isinstance(choices, dict):
            if not choices:
                raise FieldError(path + (node,), "expected at least one holding")
            out.append((node, _moves(choices, path + (node,), set(map(str, choices)), count)))
        else:
            out.append((node, (("", _state(choices, path + (node,), count)),)))
    return tuple(out)


def _named(raw: object, path: Path, names: set[str]) -> list[tuple[str, object]]:
    """A mapping's (key, value) items, each key one of ``names``."""
    if raw is None:
        return []
    if not isinstance(raw, dict):
        raise FieldError(path, "expected a mapping from names to states")
    for name in raw:
        if string(name, path) not in names:
            raise FieldError(path + (name,), f"unknown name '{name}'")
    return list(raw.items())


def _state(raw: object, path: Path, count: int) -> int:
    return integer(raw, path, minimum=0, maximum=count - 1)


def _entry(raw: object, where: Path, node_names: set[str]) -> FilterEntry:
    """One ``filter`` item: (node, plugin, reasons, ``otherRuns``: the other verdicts the scheduler's
    order of pools and slices gives there, every one a refusal)."""
    entry = mapping(raw, where, ("node", "plugin", "reasons", "otherRuns"), required=("node", "plugin", "reasons"))
    if string(entry["node"], where + ("node",)) not in node_names:
        raise FieldError(where + ("node",), f"unknown node '{entry['node']}'")
    plugin, reasons = _verdict(entry, where)
    others = tuple(_verdict(mapping(o, where + ("otherRuns", k), ("plugin", "reasons"), required=("plugin", "reasons")),
                            where + ("otherRuns", k))
                   for k, o in enumerate(sequence(entry.get("otherRuns"), where + ("otherRuns",))))
    if (plugin, reasons) in others or len(set(others)) != len(others):
        raise FieldError(where + ("otherRuns",), "expected verdicts distinct from each other and from the entry's")
    return entry["node"], plugin, reasons, others


def _verdict(raw: dict, path: Path) -> tuple[str, tuple[str, ...]]:
    plugin = string(raw.get("plugin"), path + ("plugin",))
    if plugin != PLUGIN:
        raise FieldError(path + ("plugin",), f"expected {PLUGIN}, got '{plugin}'")
    reasons = tuple(string_list(raw.get("reasons"), path + ("reasons",)))
    if not reasons:
        raise FieldError(path + ("reasons",), "at least one reason is needed")
    return plugin, reasons
