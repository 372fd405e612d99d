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
skipped when none fits), the cycle succeeding once the policy holds. Which
feasible node the scheduler picks is decided by scoring (out of scope), so
the answer ranges over every choice: ``succeeds``, ``may-fail`` or ``fails``.
This module imports only the model and the semantics.
"""

from __future__ import annotations

import time
from collections import Counter
from dataclasses import dataclass
from typing import Optional, Sequence

from symreach import semantics
from symreach.model import BASIC, GANG, KUBERNETES, Config, Group, Instance

HOSTNAME = "kubernetes.io/hostname"
SUCCEEDS, MAY_FAIL, FAILS = "succeeds", "may-fail", "fails"

Placement = tuple[tuple[int, int], ...]     # (pod type, node) in the order assumed
Choices = tuple[tuple[int, Optional[int]], ...]  # scheduler: (type, node or None = did not fit)


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


def scheduler_cycle(inst: Instance, gang: Gang, sigma: Config, deadline: Optional[float] = None) -> Optional[Cycle]:
    """Simulate the default algorithm for a single (non-composite) group; None for a composite."""
    group = gang.root
    if group.composite:
        return None
    queue = queue_order(group)
    need = gang.need(group) - gang.running(inst, sigma)[group.name]
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
        succ: Optional[Choices] = None
        fail: Optional[Choices] = None
        if not nodes:
            s, f = run(i + 1, config, placed)
            succ = None if s is None else ((t, None),) + s
            fail = None if f is None else ((t, None),) + f
        for n in nodes:
            s, f = run(i + 1, semantics.deploy(inst, config, t, n), placed + 1)
            if succ is None and s is not None:
                succ = ((t, n),) + s
            if fail is None and f is not None:
                fail = ((t, n),) + f
            if succ is not None and fail is not None:
                break
        memo[key] = (succ, fail)
        return succ, fail

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
