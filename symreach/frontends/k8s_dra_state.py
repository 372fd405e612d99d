"""What deployments allocate and deletions free: DRA devices as state (DynamicResources).

Scheduling a pod whose claims are unallocated allocates them on its node, written to each
claim's ``status.allocation``: the structured allocator's first assignment in the order the
scheduler takes, which is random (``GatherPools`` builds a Go map of pools per node, the slices
come in the order of one List per cycle). So a deployment on a node has one outcome per distinct
assignment some order gives (``_outcomes``: ``dra_orders.runs``' exact search telling devices
apart; an order in which the allocator errs or finds nothing places nothing, so it is no
outcome), the input order's first (pools by driver and name, slices in input order) first.
What a deletion frees:

- a claim generated from a ResourceClaimTemplate belongs to its pod (owner
  reference) and goes with it; each new pod of a workload gets a fresh one.
  So a workload's type has a *pod slot*: the devices each of its running pods
  holds, per node (a multiset);
- an existing claim (named by pods, or generated for one bare pod) stays
  allocated while some pod reserves it. The resourceclaim controller
  (``pkg/controller/resourceclaim``, ``syncClaim``) drops a deleted pod from
  ``status.reservedFor`` and, when that leaves it empty, clears
  ``status.allocation`` ("deallocates a claim as soon as the last consumer
  stops using it"); a claim allocated in the input with no reservation stays
  allocated until a consumer has come and gone. The semantics applies that rule
  (``model.BindingGroup.holders``): its *claim slot* goes back to unallocated
  when no pod of a type naming it is left.

The joint states of the slots reachable from the input's are explored (the
claim releases as extra moves, so the list may hold more than is reachable);
in each, every type using claims is evaluated again (``k8s_dra.pod_dra`` on the
claims as allocated then), with the state its deployment on each node moves to
and the states a deletion there moves to: one per distinct holding of the pods
of a pod slot's type there (the deletion names the pod by what it holds, so
pods of one type holding devices of different kinds are told apart; holdings of
one kind are one choice). The result is each type's v1
``dra.allocations`` (``loader.dra``), which ``loader.resolve`` turns into a
``model.BindingGroup`` as for claim bindings.

Each distinct outcome is a deploy choice (v1 ``nodes: {n1: [1, 2]}``, ``semantics.deploys``).
Not exact, and marked with a caveat instead: outcomes on a node past the search budget's
``dra-pool-orders`` guard (the allocator runs listing them; then the input order's alone);
outcomes on a node with a pool of several slices other nodes share where some order errs (the
slice order is the cycle's, so an outcome may come only with an order that aborts the cycle:
``dra_slice_orders``); and more joint states than the ``dra-states`` guard (or evaluations than
``dra-state-work``, states x users x nodes; ``symreach.search_budget``). States are kept up to
renaming devices within a kind (``_States.canonical``), so a trace names one device of the kind
the scheduler takes, not necessarily the one it takes.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Optional, Union

from symreach import search_budget
from symreach.frontends import dra_orders, dra_slice_orders
from symreach.frontends.dra_allocator import ERROR_PREFIX
from symreach.frontends.k8s_dra import DraIndex, PodDra, allocation_status, dra_field, first_allocation, pod_dra

PODS = "pods of "             # a pod slot's name: ``pods of <type>``
NOTHING = "no devices"        # the holding of a pod whose claims took no device
Key = tuple[str, str]         # (namespace, claim)
Entry = Union[Key, dict]      # an existing claim, or the fresh claim a template gives a new pod


@dataclass
class DraUser:
    """A pod type using claims: its spec as DynamicResources reads it, and its claims in order."""

    spec: dict
    status: Optional[dict]
    namespace: str
    pod: Optional[dict]
    entries: list[Entry] = field(default_factory=list)

    @property
    def per_pod(self) -> bool:
        return any(isinstance(e, dict) for e in self.entries)


def dra_user(index: DraIndex, spec: dict, status: Optional[dict], namespace: str, pod: Optional[dict]
             ) -> Optional[DraUser]:
    """The ``DraUser`` of a pod type whose claims all resolve, else None (PreFilter rejects it)."""
    user = DraUser(spec, status, namespace, pod)
    for e in spec.get("resourceClaims") or []:
        if not isinstance(e, dict):
            return None
        if e.get("resourceClaimName") is not None:
            user.entries.append((namespace, str(e["resourceClaimName"])))
        elif pod is None:
            template = index.templates.get((namespace, str(e.get("resourceClaimTemplateName"))))
            if template is None:
                return None
            user.entries.append({"spec": (template.get("spec") or {}).get("spec") or {}})
        else:
            name = generated_claim(status, e)
            if name is None:
                return None
            if name:
                user.entries.append((namespace, name))
    return user if user.entries else None


def generated_claim(status: Optional[dict], entry: dict) -> Optional[str]:
    """The claim a pod's status names for a template entry ("" when intentionally none, None if not yet)."""
    for s in (status or {}).get("resourceClaimStatuses") or []:
        if isinstance(s, dict) and s.get("name") == entry.get("name"):
            return str(s["resourceClaimName"]) if s.get("resourceClaimName") is not None else ""
    return None


def owned_claims(namespace: str, spec: dict, status: Optional[dict]) -> list[Key]:
    """The claims generated for a running pod from its templates (they go with it)."""
    names = [generated_claim(status, e) for e in spec.get("resourceClaims") or []
             if isinstance(e, dict) and e.get("resourceClaimTemplateName") is not None]
    return [(namespace, n) for n in names if n]


def _devices(allocation: dict) -> list[str]:
    results = ((allocation.get("devices") or {}).get("results")) or []
    return [f"{r.get('driver')}/{r.get('pool')}/{r.get('device')}" for r in results if isinstance(r, dict)]


def _where(allocation: dict) -> str:
    terms = ((allocation.get("nodeSelector") or {}).get("nodeSelectorTerms")) or []
    if allocation.get("nodeSelector") is None:
        return "every node"
    fields = (terms[0] or {}).get("matchFields") or [] if len(terms) == 1 else []
    if len(fields) == 1 and fields[0].get("key") == "metadata.name" and len(fields[0].get("values") or []) == 1:
        return str(fields[0]["values"][0])
    return "selected nodes"


class _States:
    """The explored joint states and what each names (outcome -> ``status.allocation``)."""

    def __init__(self, index: DraIndex, keys: list[Key], slots: list[str], owned: set[Key], nodes: list[dict]) -> None:
        self.index, self.keys, self.slots, self.owned, self.nodes = index, keys, slots, owned, nodes
        self.allocation: dict[str, dict] = {}
        self.kinds: dict[str, tuple] = {}
        self.order: Optional[dict[tuple, list[str]]] = None
        self.states: list[tuple] = []
        self.ids: dict[tuple, int] = {}

    def name(self, allocation: dict, where: Optional[str] = None) -> str:
        out = f"{where or _where(allocation)}: {', '.join(_devices(allocation))}"
        self.allocation.setdefault(out, allocation)
        return out

    def kind(self, entry: str) -> tuple:
        """What selectors and pools can tell of a holding's devices (``_catalogue``)."""
        self._catalogue()
        return tuple(sorted(self.kinds.get(d, (d,)) for d in entry.partition(": ")[2].split(", ")))

    def _catalogue(self) -> None:
        """Each device's kind: its driver, pool, where its slice puts it and every other field
        but its name (attributes...). Devices of one kind are interchangeable: selectors and
        pools cannot tell them apart, so every verdict counts only the free devices of each
        kind. ``order``: per kind, its devices in the allocator's order, less those that claims
        outside the slots hold (they stay held in every state)."""
        if self.order is not None:
            return
        self.order = {}
        fixed = self._fixed()
        for node in self.nodes:
            for d in self.index.devices(node)[0]:
                key = f"{d.driver}/{d.pool}/{d.name}"
                if key in self.kinds:
                    continue
                rest = [(f.name, repr(getattr(d, f.name))) for f in fields(d) if f.name not in ("name", "attributes")]
                where = allocation_status(self.index, node, [("", d)]).get("nodeSelector")
                self.kinds[key] = (d.driver, d.pool, repr(sorted(d.attributes.items())), repr(rest), repr(where))
                if (d.driver, d.pool, d.name) not in fixed:
                    self.order.setdefault(self.kinds[key], []).append(key)

    def label(self, entry: str) -> str:
        """What a holding is named by in a deletion: each device as the first device of its kind
        (the canonical names of one kind change with the state, the kind does not)."""
        self._catalogue()
        devices = entry.partition(": ")[2]
        if not devices:
            return NOTHING
        first = [(self.order.get(self.kinds.get(d)) or [d])[0] for d in devices.split(", ")]   # type: ignore[union-attr]
        return ", ".join(sorted(first))

    def _fixed(self) -> set:
        claims = {k: c for k, c in self.index.claims.items() if k not in self.owned and k not in self.keys}
        return self.index.with_claims(claims).allocated()

    def canonical(self, state: tuple) -> tuple:
        """``state`` with the devices of each kind renamed in a canonical order: claim slots
        first, then each pod slot's holdings ordered by node and kinds; the i-th device of a
        kind met gets the kind's i-th device name. States that differ only by which devices of
        a kind are held become one (the verdicts of both are the same)."""
        self._catalogue()
        used: dict[tuple, int] = {}

        def rename(value: str) -> str:
            where, _, devices = value.partition(": ")
            out = []
            for d in devices.split(", ") if devices else []:
                kind = self.kinds.get(d)
                names = self.order.get(kind, []) if kind is not None else []
                k = used.get(kind, 0)   # type: ignore[arg-type]
                if k < len(names):
                    used[kind] = k + 1  # type: ignore[index]
                    d = names[k]
                out.append(d)
            new = f"{where}: {', '.join(out)}"
            if new not in self.allocation:
                old = self.allocation[value]
                results = [dict(r, device=n.split("/", 2)[2]) for r, n in
                           zip(((old.get("devices") or {}).get("results")) or [], out)]
                self.allocation[new] = dict(old, devices=dict(old.get("devices") or {}, results=results))
            return new

        n = len(self.keys)
        claims = tuple(None if v is None else rename(v) for v in state[:n])
        pods = tuple(tuple(sorted(rename(e) for e in sorted(held, key=lambda e: (e.partition(": ")[0], self.kind(e)))))
                     for held in state[n:])
        return claims + pods

    def add(self, state: tuple) -> int:
        state = self.canonical(state)
        if state not in self.ids:
            self.ids[state] = len(self.states)
            self.states.append(state)
        return self.ids[state]

    def view(self, state: tuple) -> DraIndex:
        """The index with the claims as allocated in ``state`` (a pod slot's devices as claims of its own)."""
        claims = {k: c for k, c in self.index.claims.items() if k not in self.owned}
        for k, value in zip(self.keys, state):
            status = dict(claims[k].get("status") or {})
            status.pop("allocation", None)
            if value is not None:
                status["allocation"] = self.allocation[value]
            claims[k] = dict(claims[k], status=status)
        for slot, value in zip(self.slots, state[len(self.keys):]):
            for j, entry in enumerate(value):
                claims[(PODS, f"{slot}#{j}")] = {"status": {"allocation": self.allocation[entry]}}
        return self.index.with_claims(claims)


def explore(index: DraIndex, users: dict[str, DraUser], running: dict[str, list[tuple[str, list[Key]]]],
            nodes: list[dict], holdings: Optional[dict[str, list[str]]] = None
            ) -> tuple[Optional[dict[str, dict]], list[str]]:
    """Each user type's v1 ``dra.allocations`` (None when not modelled) and the caveats; ``holdings``
    gets, per pod slot's type, what each of its running pods holds (as a deletion names it), in order."""
    per_pod = [name for name, u in users.items() if u.per_pod]
    owned = {k for name in per_pod for _, keys in running.get(name, []) for k in keys}
    keys = sorted({e for u in users.values() for e in u.entries if isinstance(e, tuple)} - owned)
    keys = [k for k in keys if k in index.claims]
    if not keys and not per_pod:
        return {}, []   # every claim is missing: PreFilter rejects the pods whatever is allocated
    found = _States(index, keys, per_pod, owned, nodes)
    start = []
    for k in keys:
        allocation = (index.claims[k].get("status") or {}).get("allocation")
        start.append(found.name(allocation) if isinstance(allocation, dict) else None)
    for name in per_pod:
        held = []
        for node, claims in running.get(name, []):
            merged = [r for k in claims
                      for r in (((index.claims.get(k, {}).get("status") or {}).get("allocation") or {})
                                .get("devices") or {}).get("results") or []]
            held.append(found.name({"devices": {"results": merged}}, node))
        if holdings is not None:
            holdings[name] = [found.label(e) for e in held]
        start.append(tuple(sorted(held)))
    found.add(tuple(start))
    entries: dict[str, list[dict]] = {name: [] for name in users}
    unlisted: set[str] = set()   # nodes where listing a deployment's outcomes went past dra-pool-orders
    joint: dict[str, Optional[bool]] = {}   # nodes whose outcomes hang on the cycle's slice order (``_order_free``)
    later: list[str] = []
    memo = _Memo(index, keys, nodes)
    coupled = _coupled(index, nodes)
    s = 0
    while s < len(found.states):
        many = search_budget.over(search_budget.DRA_STATES, len(found.states))
        if search_budget.over(search_budget.DRA_STATE_WORK, len(found.states) * max(1, len(users) * len(nodes))) or many:
            return None, ["DRA: listing the joint device allocations that deployments and deletions reach went "
                          + search_budget.past(search_budget.DRA_STATES, search_budget.DRA_STATE_WORK)]
        state = found.states[s]
        view = found.view(state)
        allocated = frozenset(view.allocated())
        for name, u in users.items():
            verdict = memo.verdict(view, state, allocated, name, u, nodes)
            entry: dict = {"held": [_held(v) for v in state]}
            if s:
                later += [c for c in verdict.caveats if c not in later]   # state 0's are the type's own
                entry.update({k: v for k, v in dra_field(verdict).items() if k in ("preFilter", "filter", "otherRunRefusals", "cycleOrders")})
            on: dict[str, Union[int, list[int]]] = {}
            frees = {}
            for node in nodes:
                if verdict.prefilter is None and node["name"] not in verdict.filters:
                    todo, outcomes, exact = memo.outcomes(view, state, allocated, name, u, node)
                    if not exact:
                        unlisted.add(node["name"])
                    targets = list(dict.fromkeys(found.add(nxt) for nxt in
                                                 (_deploy(found, view, state, name, u, node, todo, r) for r in outcomes)))
                    if len(targets) > 1:
                        on[node["name"]] = targets
                        if node["name"] in coupled and _errs(verdict):
                            free = _order_free(view, [c for _, c in todo], node, nodes, allocated)
                            if free is not True:
                                joint.setdefault(node["name"], free)
                    elif targets and targets[0] != s:
                        on[node["name"]] = targets[0]
                if name in per_pod:
                    choices = _frees(found, state, len(keys) + per_pod.index(name), node["name"])
                    if choices:
                        frees[node["name"]] = choices
            entry["nodes"] = on
            if frees:
                entry["frees"] = frees
            entries[name].append(entry)
        releases = {}
        for i, value in enumerate(state[:len(keys)]):   # the controller's release of a claim nobody reserves
            if value is not None:
                releases[f"{keys[i][0]}/{keys[i][1]}"] = found.add(state[:i] + (None,) + state[i + 1:])
        for name in users:
            if releases:
                entries[name][-1]["releases"] = releases
        s += 1
    caveats = list(later)
    if unlisted:
        caveats.append(f"DRA: which devices a deployment on {', '.join(sorted(unlisted))} takes depends on the "
                       "scheduler's random order of pools and slices; listing every outcome went "
                       f"{search_budget.past(search_budget.DRA_POOL_ORDERS)} (modelled there: the input order's "
                       "alone)")
    if joint:
        past = sorted(n for n, free in joint.items() if free is None)
        caveats.append(f"DRA: which devices a deployment on {', '.join(sorted(joint))} takes depends on the order "
                       "of a pool's slices, which the scheduler draws once per cycle for every node, and an order "
                       "makes another node err: in a state where that node passes its earlier filters the cycles "
                       "under that order abort, so an outcome only they give cannot come; the model lets the pod "
                       "land with every outcome"
                       + (f" (on {', '.join(past)} the orders were not told apart: their search went "
                          f"{search_budget.past(search_budget.DRA_CYCLE_ORDERS, search_budget.DRA_CYCLE_SEARCHES)})"
                          if past else ""))
    slots = [f"{ns}/{c}" for ns, c in keys] + [PODS + name for name in per_pod]
    return {name: {"slots": slots, "states": entries[name]} for name in users}, caveats


def _held(value) -> Optional[str]:
    if isinstance(value, tuple):
        return " | ".join(value) or None
    return value


class _Memo:
    """Allocator evaluations shared between joint states. The allocator reads of the allocation
    only whether each device of the pools it is given is taken (``dra_allocator``: ``device.key in
    allocated``), so a deployment's assignments on a node (every order's) are a function of (type,
    node, which of its claims are unallocated, the taken devices of the node's pools), and a type's verdicts
    one of (type, its claims' allocations, every taken device): states that differ elsewhere (on
    other nodes, in which pod holds what) share them."""

    def __init__(self, index: DraIndex, keys: list[Key], nodes: list[dict]) -> None:
        self.keys = {k: i for i, k in enumerate(keys)}
        self.pools = {node["name"]: frozenset((p.driver, p.name) for p in index.pools(node)) for node in nodes}
        self._outcomes: dict[tuple, tuple] = {}
        self._verdicts: dict[tuple, PodDra] = {}

    def _claims(self, state: tuple, u: DraUser) -> tuple:
        return tuple(state[self.keys[e]] for e in u.entries if isinstance(e, tuple) and e in self.keys)

    def verdict(self, view: DraIndex, state: tuple, allocated: frozenset, name: str, u: DraUser,
                nodes: list[dict]) -> PodDra:
        key = (name, self._claims(state, u), allocated)
        if key not in self._verdicts:
            self._verdicts[key] = pod_dra(view, u.spec, u.status, u.namespace, u.pod, nodes)
        return self._verdicts[key]

    def outcomes(self, view: DraIndex, state: tuple, allocated: frozenset, name: str, u: DraUser, node: dict
                 ) -> tuple[list[tuple[Entry, dict]], list[list], bool]:
        """``u``'s claims to allocate, every distinct assignment on node over the scheduler's orders
        (the input order's first; none: no fit) and whether that list is complete (``_outcomes``)."""
        todo = [(e, view.claims[e] if isinstance(e, tuple) else e) for e in u.entries]
        todo = [(e, c) for e, c in todo if isinstance(e, dict) or (c.get("status") or {}).get("allocation") is None]
        pools = self.pools[node["name"]]
        key = (name, node["name"], tuple(e for e, _ in todo if isinstance(e, tuple)),
               frozenset(d for d in allocated if d[:2] in pools))
        if key not in self._outcomes:
            self._outcomes[key] = _outcomes(view, [c for _, c in todo], node, set(allocated)) if todo else ([], True)
        return (todo, *self._outcomes[key])


def _outcomes(view: DraIndex, claims: list[dict], node: dict, allocated: set) -> tuple[list[list], bool]:
    """Every distinct assignment of ``claims`` on node that some order of its pools and slices gives
    (``dra_orders.runs`` telling devices apart; an order that errs or finds nothing places nothing,
    so it is no outcome), the input order's first (``first_allocation``); and False when listing
    them went past the ``dra-pool-orders`` guard (then the first alone)."""
    first = first_allocation(view, claims, node, allocated)
    if first is None:
        return [], True
    if dra_orders.order_count(view.pools(node)) == 1:
        return [_ordered(first)], True
    found = dra_orders.runs(claims, view.pools(node), view.classes, allocated,
                            allowance=search_budget.Allowance(search_budget.DRA_POOL_ORDERS), distinct=True)
    first = _ordered(first)
    out = {_results_key(first): first}
    for o in found or []:
        if o.reason is None:
            results = _ordered(o.results)
            out.setdefault(_results_key(results), results)
    return list(out.values()), found is not None


def _results_key(results: list) -> tuple:
    return tuple(tuple((label, d.key) for label, d in per_claim) for per_claim in results)


def _ordered(results: list) -> list:
    """Each claim's results by request (in its order) and device: the order a search met devices
    of one request in changes nothing the scheduler reads, so it makes no other state."""
    out = []
    for per_claim in results:
        first = {label: k for k, (label, _) in reversed(list(enumerate(per_claim)))}
        out.append(sorted(per_claim, key=lambda r: (first[r[0]], r[1].key)))
    return out


def _coupled(index: DraIndex, nodes: list[dict]) -> set[str]:
    """The nodes with a pool of several slices that other nodes share: the order of its slices is
    drawn once per cycle for all of them (``dra_slice_orders``), so which devices a pod takes on
    one may come with an order under which another errs."""
    shared = dra_slice_orders.shared_pools({n["name"]: index.pools(n) for n in nodes})
    return {n["name"] for n in nodes if any((p.driver, p.name) in shared for p in index.pools(n))}


def _order_free(view: DraIndex, claims: list[dict], node: dict, nodes: list[dict], allocated: frozenset
                ) -> Optional[bool]:
    """Whether in every state where the pod can land on node every outcome can come, whichever cycle
    order of the shared pools' slices lets it land (``dra_slice_orders.every_outcome_lands``); None:
    not told, the search past its guards."""
    per_order = dra_slice_orders.order_outcomes(claims, {n["name"]: view.pools(n) for n in nodes}, node["name"],
                                                view.classes, set(allocated), lambda r: _results_key(_ordered(r)))
    return None if per_order is None else dra_slice_orders.every_outcome_lands(per_order)


def _errs(verdict: PodDra) -> bool:
    """Whether some order of pools and slices errs on some node for the type (an abort)."""
    reasons = list(verdict.filters.values()) + [r for rs in verdict.orders.values() for r in rs if r]
    return any(r.startswith(ERROR_PREFIX) for r in reasons)


def _deploy(found: _States, view: DraIndex, state: tuple, name: str, u: DraUser, node: dict,
            todo: list[tuple[Entry, dict]], results_of: list) -> tuple:
    """The state after a pod of ``u`` is scheduled on node and its claims to allocate (``todo``)
    get ``results_of`` (one of ``_Memo.outcomes``)."""
    out = list(state)
    fresh = []
    for (e, _), results in zip(todo, results_of):
        if isinstance(e, tuple):
            out[found.keys.index(e)] = found.name(allocation_status(view, node, results))
        else:
            fresh += results
    if fresh:
        slot = len(found.keys) + found.slots.index(name)
        entry = found.name(allocation_status(view, node, fresh), node["name"])
        out[slot] = tuple(sorted(out[slot] + (entry,)))
    return tuple(out)


def _frees(found: _States, state: tuple, slot: int, node: str) -> dict[str, int]:
    """What deleting a pod of a pod slot's type on node can free: per distinct outcome, the
    holding it frees (its devices, each named as its kind's first: ``_States.label``; ``NOTHING``
    for a pod holding none) -> the state after.
    Holdings of one kind lead to one state (``_States.canonical``): one choice, named by the
    first; holdings that differ are one choice each, and the deletion names which it frees."""
    choices: dict[int, str] = {}
    for entry in sorted({e for e in state[slot] if e.partition(": ")[0] == node}):
        held = list(state[slot])
        held.remove(entry)
        k = found.add(state[:slot] + (tuple(held),) + state[slot + 1:])
        choices.setdefault(k, found.label(entry))
    return {label: k for k, label in choices.items()}
