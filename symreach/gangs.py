"""The gang step and the scheduler's PodGroup cycle, as executable reference (SPEC 5.1).

A *gang step* from a configuration sigma assumes pending members one at a
time, each passing ``Hard`` in sigma plus the members assumed before it, with
nothing else happening in between. It succeeds when the hierarchy's policy
holds: a leaf group is met when its members running in sigma plus those
assumed reach its need (``minCount`` for ``gang``, 1 for ``basic``); a
composite when at least ``minGroupCount`` (``basic``: 1) of its children are
met. A leaf with some but too few assumed members is never allowed: the
scheduler reverts a group that misses its policy, so those pods would not
bind. ``gang_step`` searches every order and node exhaustively.

Pruning, each exact: members of one type are interchangeable (the search
state is the configuration, memoised, so orders that reach the same
configuration are explored once); nodes that differ only in their hostname
and carry the same pods are interchangeable (one is tried); a state from
which the remaining members cannot meet the policy even if all were placed
is cut (``room``: free capacity, and one pod per free domain of a
self-anti-affinity term, bound how many more pods of a type can fit).

``scheduler_cycle`` simulates the default PodGroup algorithm from one
snapshot: members in queue order, each assumed on some feasible node (or
skipped when none fits), the cycle succeeding once the policy holds and at
least one pod was assumed ("no pods were schedulable" otherwise). Which
feasible node the scheduler picks is decided by scoring (out of scope), so
the answer ranges over every choice: ``succeeds``, ``may-fail`` or ``fails``.
A CompositePodGroup hierarchy is simulated as ``composite_cycle`` says
(KEP-6012 and the scheduler's recursive algorithm; docs/semantics.md).
This module imports only the model and the semantics.
"""

from __future__ import annotations

import time
from collections import Counter
from dataclasses import dataclass
from typing import Iterator, Optional, Sequence, Union

from symreach import semantics
from symreach.model import BASIC, GANG, KUBERNETES, Config, Group, Instance

HOSTNAME = "kubernetes.io/hostname"
SUCCEEDS, MAY_FAIL, FAILS = "succeeds", "may-fail", "fails"

Placement = tuple[tuple[int, int], ...]     # (pod type, node) in the order assumed


@dataclass(frozen=True)
class Mark:
    """In a composite hierarchy's run: the scheduler starts group ``name`` (``met`` None) or ends
    it, its policy met or missed; a missed group's assumed pods are reverted."""

    name: str
    met: Optional[bool] = None


Entry = Union[tuple[int, Optional[int]], Mark]
Choices = tuple[Entry, ...]   # scheduler: (type, node or None = did not fit), and Marks for composites


class GangLimit(Exception):
    """The search's deadline passed."""


class GangStepError(Exception):
    """A gang step that does not replay: an engine bug, never user output."""


@dataclass(frozen=True)
class Gang:
    """One hierarchy to place: its root and every group under it, precomputed."""

    root: Group
    groups: dict[str, Group]
    children: dict[str, tuple[str, ...]]
    leaf_of: dict[int, str]           # member type -> its leaf group
    pending: dict[int, int]           # member type -> pending pods

    @property
    def leaves(self) -> tuple[Group, ...]:
        return tuple(g for g in self.groups.values() if not g.composite)

    def need(self, group: Group) -> int:
        return group.min_count if group.policy == GANG else 1

    def running(self, inst: Instance, sigma: Config) -> dict[str, int]:
        """Members of each leaf already running in sigma."""
        out = {g.name: 0 for g in self.leaves}
        nodes = range(len(inst.nodes))
        for t, leaf in self.leaf_of.items():
            out[leaf] += sum(sigma[inst.pair(t, n)] for n in nodes)
        return out

    def holds(self, met: dict[str, bool], name: Optional[str] = None) -> bool:
        """The policy of ``name`` (default: the root) given which leaves are met."""
        group = self.groups[name or self.root.name]
        if not group.composite:
            return met[group.name]
        ok = sum(self.holds(met, child) for child in self.children.get(group.name, ()))
        return ok >= (group.min_count if group.policy == GANG else 1)

    def verdict(self, running: dict[str, int], assumed: dict[str, int]) -> bool:
        """Success: the root's policy holds and no leaf is partly assumed."""
        met = {}
        for g in self.leaves:
            have = running[g.name] + assumed[g.name]
            met[g.name] = have >= self.need(g)
            if assumed[g.name] and not met[g.name]:
                return False
        return self.holds(met)

    def possible(self, running: dict[str, int], assumed: dict[str, int], left: dict[str, int]) -> bool:
        """Could the policy still hold if every remaining member were placed?"""
        met = {g.name: running[g.name] + assumed[g.name] + left[g.name] >= self.need(g) for g in self.leaves}
        return self.holds(met)


def find_group(inst: Instance, name: str) -> Group:
    for g in inst.groups:
        if g.name == name:
            return g
    raise KeyError(name)


def root_of(inst: Instance, name: str) -> Group:
    """The top of ``name``'s hierarchy (the scheduler places hierarchies whole)."""
    group = find_group(inst, name)
    seen = {group.name}
    while group.parent is not None:
        group = find_group(inst, group.parent)
        if group.name in seen:
            raise ValueError(f"group hierarchy has a cycle at {group.name}")
        seen.add(group.name)
    return group


def gang_of(inst: Instance, name: str) -> Gang:
    """The hierarchy containing group ``name``, rooted at its top."""
    root = root_of(inst, name)
    children: dict[str, list[str]] = {}
    for g in inst.groups:
        if g.parent is not None:
            children.setdefault(g.parent, []).append(g.name)
    groups: dict[str, Group] = {}
    todo = [root.name]
    while todo:
        g = find_group(inst, todo.pop())
        groups[g.name] = g
        todo.extend(children.get(g.name, ()))
    leaf_of: dict[int, str] = {}
    pending: dict[int, int] = {}
    for g in groups.values():
        for t, c in g.members:
            leaf_of[t] = g.name
            pending[t] = pending.get(t, 0) + c
    return Gang(root, groups, {k: tuple(v) for k, v in children.items()}, leaf_of, pending)


def rejection(gang: Gang) -> Optional[str]:
    """Why the scheduler refuses this hierarchy before any placement, if it does."""
    for g in gang.groups.values():
        if g.rejected:
            return f"group {g.name}: {g.rejected}"
    return None


# ---- node interchangeability ------------------------------------------------------------------

def node_kinds(inst: Instance) -> tuple[tuple, ...]:
    """Per node, everything Hard can tell it apart by except a hostname no other node shares:
    swapping two nodes of one kind that carry the same pods maps Hard to Hard (their hostname
    domains are then {n} and {m}; a shared hostname value stays part of the kind)."""
    values = [node.labels.get(HOSTNAME) for node in inst.nodes]
    counts = Counter(values)
    unique = {v for v in values if v is not None and counts[v] == 1}
    out = []
    for n, node in enumerate(inst.nodes):
        labels = tuple(sorted((k, v) for k, v in node.labels.items() if k != HOSTNAME or v not in unique))
        labels += (("hostname-label", HOSTNAME in node.labels),)
        static = tuple(inst.static_block[t][n] for t in range(len(inst.pod_types)))
        out.append((labels, tuple(sorted(node.capacity.items())), node.taints, node.unschedulable, static))
    return tuple(out)


def distinct_nodes(inst: Instance, kinds: Sequence[tuple], sigma: Config, nodes: Sequence[int]) -> list[int]:
    """One node per (kind, pods on it) among ``nodes``."""
    seen: set[tuple] = set()
    out = []
    types = range(len(inst.pod_types))
    for n in nodes:
        key = (kinds[n], tuple(sigma[inst.pair(t, n)] for t in types))
        if key not in seen:
            seen.add(key)
            out.append(n)
    return out


def room(inst: Instance, t: int, config: Config, cap: int) -> int:
    """An upper bound (at most ``cap``) on how many more pods of t fit in config whatever else is
    added: adding pods never frees capacity nor removes a pod that blocks. Two bounds: per node,
    the free capacity over t's requests; and, for a term of t's own anti-affinity that t itself
    matches, one pod per topology domain still free of the pods the term selects."""
    nodes = [n for n in range(len(inst.nodes)) if inst.static_block[t][n] is None]
    total = 0
    for n in nodes:
        node = inst.nodes[n]
        resources = set(node.capacity) | set(inst.pod_types[t].requests)
        fits = cap
        for r in resources:
            need = semantics.request(inst, t, r)
            if need > 0 or inst.profile != KUBERNETES:   # the paper checks zero requests too
                free = node.capacity.get(r, 0) - semantics.used(inst, config, n, r)
                fits = min(fits, max(0, free // need) if need > 0 else (0 if free < 0 else fits))
        total += fits
        if total >= cap:
            break
    bound = min(total, cap)
    for term in inst.pod_types[t].anti_affinity:
        if t not in term.selects or any(term.topology.domain_of[n] is None for n in nodes):
            continue
        free_domains = {term.topology.domain_of[n] for n in nodes}
        free_domains = {d for d in free_domains
                        if not semantics.present_on(inst, config, term.selects, term.topology.members[d])}
        bound = min(bound, len(free_domains))
    return bound


def plain(inst: Instance, t: int) -> bool:
    """No rule of t reads other pods but capacity: no (anti-)affinity, spread or host ports, and
    (kubernetes) no pod type's anti-affinity selects t. Then placing one pod of t on a node takes
    exactly one of that node's ``room`` slots, whichever node it is."""
    pod = inst.pod_types[t]
    if pod.affinity or pod.anti_affinity or pod.spread or pod.host_ports:
        return False
    return inst.profile != KUBERNETES or not any(t in term.blocks for u in inst.pod_types for term in u.anti_affinity)


def feasible(inst: Instance, kinds: Sequence[tuple], t: int, sigma: Config) -> list[int]:
    """One feasible node per (kind, pods on it): Hard is asked of one node of each class only."""
    return [n for n in distinct_nodes(inst, kinds, sigma, range(len(inst.nodes)))
            if semantics.node_failure(inst, t, n, sigma) is None]


# ---- the gang step ------------------------------------------------------------------------------

def gang_step(inst: Instance, gang: Gang, sigma: Config, deadline: Optional[float] = None,
              stats: Optional[dict] = None) -> Optional[Placement]:
    """A placement of members that meets the hierarchy's policy from sigma, or None if none exists.

    Raises ``GangLimit`` when ``deadline`` (``time.monotonic``) passes.
    """
    running = gang.running(inst, sigma)
    types = sorted(gang.pending)
    kinds = node_kinds(inst)
    seen: set[Config] = set()
    path: list[tuple[int, int]] = []
    counter = stats if stats is not None else {}
    counter.setdefault("gang_states", 0)

    def dfs(config: Config, left: dict[int, int], assumed: dict[str, int]) -> bool:
        if gang.verdict(running, assumed):
            return True
        by_leaf = {g.name: 0 for g in gang.leaves}
        for t, c in left.items():
            by_leaf[gang.leaf_of[t]] += room(inst, t, config, c) if c else 0
        if not gang.possible(running, assumed, by_leaf) or config in seen:
            return False
        seen.add(config)
        counter["gang_states"] += 1
        if deadline is not None and counter["gang_states"] % 64 == 0 and time.monotonic() > deadline:
            raise GangLimit()
        for t in types:
            if not left[t]:
                continue
            for n in feasible(inst, kinds, t, config):
                path.append((t, n))
                left[t] -= 1
                leaf = gang.leaf_of[t]
                assumed[leaf] += 1
                found = dfs(semantics.deploy(inst, config, t, n), left, assumed)
                assumed[leaf] -= 1
                left[t] += 1
                if found:
                    return True
                path.pop()
        return False

    found = dfs(sigma, dict(gang.pending), {g.name: 0 for g in gang.leaves})
    return tuple(path) if found else None


def check_step(inst: Instance, gang: Gang, sigma: Config, placement: Placement) -> Config:
    """Replay a gang step: each member passes Hard in sigma plus the members before it,
    no type is used beyond its pending pods, and the policy holds at the end."""
    left = dict(gang.pending)
    assumed = {g.name: 0 for g in gang.leaves}
    config = sigma
    for i, (t, n) in enumerate(placement):
        if left.get(t, 0) <= 0:
            raise GangStepError(f"member {i}: no pending pod of {inst.pod_types[t].name} is left")
        why = semantics.first_failure(inst, t, n, config)
        if why is not None:
            raise GangStepError(f"member {i}: {inst.pod_types[t].name} on {inst.nodes[n].name}: {why}")
        left[t] -= 1
        assumed[gang.leaf_of[t]] += 1
        config = semantics.deploy(inst, config, t, n)
    if not gang.verdict(gang.running(inst, sigma), assumed):
        raise GangStepError("the assumed members do not meet the group's policy")
    return config


# ---- the scheduler's own cycle -------------------------------------------------------------------

@dataclass(frozen=True)
class Cycle:
    """The default PodGroup cycle from one snapshot, over every choice of feasible node."""

    outcome: str                      # succeeds | may-fail | fails
    failing: Optional[Choices]        # one sequence of choices that fails
    succeeding: Optional[Choices]     # one that succeeds
    queue: tuple[int, ...]            # member types in the order the scheduler takes them


def queue_order(group: Group) -> tuple[int, ...]:
    """The scheduler sorts a group's pending pods by priority, then by when it first
    observed them; the front ends list members in that order (runs of one type)."""
    return tuple(t for t, c in group.members for _ in range(c))


def _either(inst: Instance, t: int, config: Config, placed: int, nodes: Sequence[int],
            follow) -> tuple[Optional[Choices], Optional[Choices]]:
    """Member t on each feasible node (skipped when there is none), each followed by
    ``follow(config, placed)``: one succeeding and one failing run, each with its choice first."""
    succ: Optional[Choices] = None
    fail: Optional[Choices] = None
    options = [(n, semantics.deploy(inst, config, t, n), placed + 1) for n in nodes] or [(None, config, placed)]
    for n, config2, placed2 in options:
        s, f = follow(config2, placed2)
        if succ is None and s is not None:
            succ = ((t, n),) + s
        if fail is None and f is not None:
            fail = ((t, n),) + f
        if succ is not None and fail is not None:
            break
    return succ, fail


def scheduler_cycle(inst: Instance, gang: Gang, sigma: Config, deadline: Optional[float] = None) -> Cycle:
    """Simulate the scheduler's cycle for the hierarchy from sigma over every node choice.

    A single group: its members in queue order; the cycle succeeds once running plus assumed
    members meet the policy with at least one member assumed (the scheduler turns a success
    with no pod assumed into "no pods were schedulable"). A composite: ``composite_cycle``.
    """
    group = gang.root
    if group.composite:
        return composite_cycle(inst, gang, sigma, deadline)
    queue = queue_order(group)
    need = max(1, gang.need(group) - gang.running(inst, sigma)[group.name])
    kinds = node_kinds(inst)
    memo: dict[tuple[int, Config], tuple[Optional[Choices], Optional[Choices]]] = {}
    calls = [0]
    tail_plain = [False] * (len(queue) + 1)
    for i in range(len(queue) - 1, -1, -1):
        same = i == len(queue) - 1 or (queue[i + 1] == queue[i] and tail_plain[i + 1])
        tail_plain[i] = same and plain(inst, queue[i])

    def run(i: int, config: Config, placed: int) -> tuple[Optional[Choices], Optional[Choices]]:
        """(a succeeding, a failing) continuation from member i, each None when there is none."""
        if placed >= need:
            return (), None
        if i == len(queue):
            return None, ()
        key = (i, config)
        if key in memo:
            return memo[key]
        calls[0] += 1
        if deadline is not None and calls[0] % 64 == 0 and time.monotonic() > deadline:
            raise GangLimit()
        t = queue[i]
        rest = Counter(queue[i:])
        if placed + sum(room(inst, u, config, c) for u, c in rest.items()) < need:
            memo[key] = (None, greedy(i, config))   # every continuation fails
            return memo[key]
        if tail_plain[i]:   # identical members, no inter-pod rule: every choice places the same number
            path = greedy(i, config)
            memo[key] = (path, None) if placed + room(inst, t, config, len(queue) - i) >= need else (None, path)
            return memo[key]
        nodes = feasible(inst, kinds, t, config)
        memo[key] = _either(inst, t, config, placed, nodes, lambda c, p: run(i + 1, c, p))
        return memo[key]

    def greedy(i: int, config: Config) -> Choices:
        """The first feasible node for each remaining member: one continuation."""
        out = []
        for t in queue[i:]:
            nodes = feasible(inst, kinds, t, config)
            out.append((t, nodes[0] if nodes else None))
            if nodes:
                config = semantics.deploy(inst, config, t, nodes[0])
        return tuple(out)

    succ, fail = run(0, sigma, 0)
    outcome = SUCCEEDS if fail is None else FAILS if succ is None else MAY_FAIL
    return Cycle(outcome, fail, succ, queue)


# ---- the scheduler's cycle for a CompositePodGroup hierarchy ---------------------------------------

_Frame = tuple   # ("C", name, child index, children met, any pod assumed, start config) or
                 # ("L", name, member index, members assumed, start config, members running at start)


def composite_cycle(inst: Instance, gang: Gang, sigma: Config, deadline: Optional[float] = None) -> Cycle:
    """The scheduler's recursive cycle for a CompositePodGroup hierarchy, over every node choice.

    The rule (KEP-6012 "Recursive Scheduling Cycle Execution", "Scheduling sequence for
    PodGroups", "Resource stealing under greedy evaluation"; kube-scheduler's
    ``compositePodGroupSchedulingDefaultAlgorithm`` and the GangScheduling plugin's
    ``PlacementFeasible``), from one snapshot with no backtracking:

    - a composite takes its children in their sorted order (the ``groups:`` order; the
      Kubernetes front end sorts them by creationTimestamp); it is refused at once when it has
      fewer children than it needs (``minGroupCount``, basic: 1); after each child, with S
      children met and R left, S + R below the need ends it missed, else it goes on (a met
      composite goes on too, greedily); at the end it is met when S reaches the need;
    - a leaf takes its pending members in queue order, each on some feasible node or skipped;
      with the members running at its start counted, the same S + R test runs before the first
      member and after each; it is met when the count reaches minCount (basic: 1) -- and it
      keeps placing its remaining members after that, taking capacity its siblings may need;
    - a missed group's assumed pods are reverted; a met one's stay for the groups after it;
    - the cycle succeeds when the root is met and some pod was assumed in a met subtree.

    Placement generation (topology-aware scheduling) is not modelled: one placement, every
    node. Memoised on (configuration, open groups with their start configurations); a node is
    tried once per class that agrees on every configuration in that state (swapping two such
    nodes maps the whole state to itself, so their futures are the same). When every member
    still to come is of ``interchangeable`` types, every choice leaves the same number of slots
    at every step (reverts included), so the outcome is the same for all: the first choices
    stand for all of them (``greedy``).
    """
    kinds = node_kinds(inst)
    queues = {g.name: queue_order(g) for g in gang.leaves}
    order = _leaf_order(gang, gang.root.name)
    uniform = {leaf: interchangeable(inst, {t for later in order[k:] for t in queues[later]})
               for k, leaf in enumerate(order)}
    memo: dict[tuple, tuple[Optional[Choices], Optional[Choices]]] = {}
    calls = [0]
    Pair_ = tuple[Optional[Choices], Optional[Choices]]

    def prefix(entries: Choices, res: Pair_) -> Pair_:
        return (None if res[0] is None else entries + res[0], None if res[1] is None else entries + res[1])

    def leave(name: str, met: bool, any_: bool, config: Config, start: Config, frames: tuple,
              greedy: bool) -> Pair_:
        config = config if met else start
        if not frames:
            res: Pair_ = ((), None) if met and any_ else (None, ())
        else:
            _, pname, k, scheduled, pany, pstart = frames[-1]
            kids = gang.children.get(pname, ())
            need = gang.need(gang.groups[pname])
            scheduled, pany = scheduled + met, pany or (met and any_)
            left = len(kids) - k - 1
            if scheduled + left < need or left == 0:
                res = leave(pname, scheduled >= need, pany, config, pstart, frames[:-1], greedy)
            else:
                res = enter(kids[k + 1], config, frames[:-1] + (("C", pname, k + 1, scheduled, pany, pstart),),
                            greedy)
        return prefix((Mark(name, met),), res)

    def enter(name: str, config: Config, frames: tuple, greedy: bool) -> Pair_:
        group = gang.groups[name]
        need = gang.need(group)
        if group.composite:
            kids = gang.children.get(name, ())
            res = leave(name, False, False, config, config, frames, greedy) if len(kids) < need else \
                enter(kids[0], config, frames + (("C", name, 0, 0, False, config),), greedy)
        else:
            running = _leaf_running(inst, gang, name, config)
            queue = queues[name]
            if running + len(queue) < need or not queue:
                res = leave(name, running >= need, False, config, config, frames, greedy)
            else:
                res = member(config, frames + (("L", name, 0, 0, config, running),), greedy or uniform[name])
        return prefix((Mark(name),), res)

    def after(name: str, i: int, placed: int, config: Config, frames: tuple, greedy: bool) -> Pair_:
        """The S + R test after member i of leaf ``name``, then the next member or the leaf's end."""
        _, _, _, _, start, running = frames[-1]
        need = gang.need(gang.groups[name])
        left = len(queues[name]) - i - 1
        if running + placed + left < need or left == 0:
            return leave(name, running + placed >= need, placed > 0, config, start, frames[:-1], greedy)
        return member(config, frames[:-1] + (("L", name, i + 1, placed, start, running),), greedy)

    def member(config: Config, frames: tuple, greedy: bool) -> Pair_:
        key = (config, frames, greedy)
        if key in memo:
            return memo[key]
        calls[0] += 1
        if deadline is not None and calls[0] % 64 == 0 and time.monotonic() > deadline:
            raise GangLimit()
        _, name, i, placed, start, running = frames[-1]
        queue = queues[name]
        rest = Counter(queue[i:])
        if not greedy and running + placed + sum(room(inst, u, config, c) for u, c in rest.items()) < \
                gang.need(gang.groups[name]):
            # the leaf misses whatever is chosen and is reverted: one run stands for all
            entries, config2, placed2, last = _first_choices(inst, kinds, gang, queue, i, placed, running, config)
            memo[key] = prefix(entries, after(name, last, placed2, config2, frames, greedy))
            return memo[key]
        t = queue[i]
        starts = tuple(dict.fromkeys(f[5] if f[0] == "C" else f[4] for f in frames))
        if greedy:   # the first feasible node stands for all
            nodes = next(([n] for n in range(len(inst.nodes)) if semantics.node_failure(inst, t, n, config) is None), [])
        else:
            nodes = _feasible_among(inst, kinds, t, config, starts)
        memo[key] = _either(inst, t, config, placed, nodes, lambda c, p: after(name, i, p, c, frames, greedy))
        return memo[key]

    succ, fail = enter(gang.root.name, sigma, (), False)
    outcome = SUCCEEDS if fail is None else FAILS if succ is None else MAY_FAIL
    return Cycle(outcome, fail, succ, tuple(t for leaf in order for t in queues[leaf]))


def invisible(inst: Instance, t: int) -> bool:
    """Hard reads t's pods by capacity only: t has no inter-pod rule, host port or volume check,
    and no term or spread constraint of any type selects or counts t."""
    pod = inst.pod_types[t]
    if pod.affinity or pod.anti_affinity or pod.spread or pod.host_ports:
        return False
    if any(key[0] == t for key in inst.volume_failures):
        return False
    return not any(t in term.selects or t in term.blocks for u in inst.pod_types
                   for term in u.affinity + u.anti_affinity) and \
        not any(t in c.counts for u in inst.pod_types for c in u.spread)


def interchangeable(inst: Instance, types: set[int]) -> bool:
    """Invisible types with one request vector and one static row: a pod of any of them on any
    feasible node takes exactly one of the slots all of them share, so the number of them that
    fit at each point does not depend on which feasible nodes were chosen."""
    if not types or not all(invisible(inst, t) for t in types):
        return False
    first = inst.pod_types[min(types)]
    return all(inst.pod_types[t].requests == first.requests and inst.static_block[t] == inst.static_block[min(types)]
               for t in types)


def _leaf_running(inst: Instance, gang: Gang, leaf: str, config: Config) -> int:
    nodes = range(len(inst.nodes))
    return sum(config[inst.pair(t, n)] for t, g in gang.leaf_of.items() if g == leaf for n in nodes)


def _leaf_order(gang: Gang, name: str) -> list[str]:
    if not gang.groups[name].composite:
        return [name]
    return [leaf for kid in gang.children.get(name, ()) for leaf in _leaf_order(gang, kid)]


def _feasible_among(inst: Instance, kinds: Sequence[tuple], t: int, config: Config,
                    starts: Sequence[Config]) -> list[int]:
    """The feasible nodes for t, one per class of nodes of one kind carrying the same pods in
    ``config`` and in every start configuration a revert may restore."""
    seen: set[tuple] = set()
    out = []
    types = range(len(inst.pod_types))
    for n in range(len(inst.nodes)):
        key = (kinds[n],) + tuple(tuple(c[inst.pair(u, n)] for u in types) for c in (config, *starts))
        if key in seen:
            continue
        seen.add(key)
        if semantics.node_failure(inst, t, n, config) is None:
            out.append(n)
    return out


def _first_choices(inst: Instance, kinds: Sequence[tuple], gang: Gang, queue: tuple[int, ...], i: int,
                   placed: int, running: int, config: Config) -> tuple[Choices, Config, int, int]:
    """Members i.. of a leaf, each on its first feasible node, until the S + R test stops the
    leaf: (the choices, the configuration and count after them, the index of the last)."""
    need = gang.need(gang.groups[gang.leaf_of[queue[i]]])
    entries: list[Entry] = []
    while True:
        t = queue[i]
        nodes = feasible(inst, kinds, t, config)
        if nodes:
            config, placed = semantics.deploy(inst, config, t, nodes[0]), placed + 1
        entries.append((t, nodes[0] if nodes else None))
        left = len(queue) - i - 1
        if running + placed + left < need or left == 0:
            return tuple(entries), config, placed, i
        i += 1


def run_states(inst: Instance, sigma: Config, run: Choices) -> Iterator[tuple[Config, Entry]]:
    """Each entry of a scheduler run with the configuration before it: assumed pods are added,
    a group that ends missed has its assumed pods reverted (Marks nest as groups do)."""
    config, starts = sigma, []
    for entry in run:
        yield config, entry
        if isinstance(entry, Mark):
            if entry.met is None:
                starts.append(config)
            else:
                start = starts.pop()
                config = config if entry.met else start
        elif entry[1] is not None:
            config = semantics.deploy(inst, config, entry[0], entry[1])


def check_run(inst: Instance, sigma: Config, run: Choices) -> None:
    """Replay a scheduler run: every assumed member passes Hard in the state before it, every
    skipped one fits no node there (``GangStepError`` otherwise)."""
    for config, entry in run_states(inst, sigma, run):
        if isinstance(entry, Mark):
            continue
        t, n = entry
        if n is not None and semantics.first_failure(inst, t, n, config) is not None:
            raise GangStepError(f"{inst.pod_types[t].name} on {inst.nodes[n].name}: "
                                f"{semantics.first_failure(inst, t, n, config)}")
        if n is None and any(semantics.node_failure(inst, t, m, config) is None for m in range(len(inst.nodes))):
            raise GangStepError(f"{inst.pod_types[t].name} is skipped though a node fits")


def member_policy_text(gang: Gang) -> str:
    """``minCount 4 of 5 pending`` (or the composite's) for messages."""
    group = gang.root
    if group.composite:
        need = group.min_count if group.policy == GANG else 1
        return f"{need} of {len(gang.children.get(group.name, ()))} child groups"
    pending = sum(gang.pending.values())
    if group.policy == BASIC:
        return f"basic policy, {pending} pending"
    return f"minCount {group.min_count}, {pending} pending"
