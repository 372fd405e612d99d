"""What deployments bind: WaitForFirstConsumer claims grouped and their joint bindings explored.

A pod whose unbound WaitForFirstConsumer claims pass VolumeBinding's Filter on a
node binds them all when it is scheduled there (``k8s_volume_filters.pod_outcomes``:
``FindPodVolumes``, then PreBind): each to the PV chosen or to a volume
provisioned in the node's topology. A bound PV is no longer Available to any
other claim, so claims that could take the same PV (same class, some Available
PV of it) depend on each other, and so do the claims of one pod. Each such
group's joint bindings are explored from the input's (all unbound): in every
joint binding each pod type using the group's claims is evaluated again on the
volume objects as bound then (verdicts, CSI volumes for NodeVolumeLimits), and
where its deployment moves the group. The result is each type's v1 ``binds``
(``loader.volumes``).

A generic ephemeral claim (``<pod>-<volume>``, controlled by the pod) is the pod's
alone, deleted with it, and a new pod of the type gets a new one from the
template: each deployment binds a fresh claim, so the claim itself is no state.
What outlives it is a PV it took (Released or deleted, never Available again):
where its class has Available PVs, the group has a ``taken`` entry per class
(key ``(TAKEN, class)``, outcome ``taken:<pv>,...``) listing the PVs ephemeral
claims took.

An ephemeral claim that takes a PV counted under another CSI driver than its
class's provisioner, where a node limits one of them, makes its pod count under
that driver (``getCSIDriverInfo``) while the type's other pods count under the
provisioner: the type's *pod slot* (key ``(HELD, type)``, outcome the entries
``<node>: PV <pv> (<driver>)`` joined by `` | ``) holds one entry per such pod,
and each state gives per node the attach count it moves (``heldAttach``), how
many pods hold one (``heldPods``) and what deleting one frees (``frees``: the
deletion names the PV its pod holds, ``semantics.deletions``).

Which of several equal-size PVs a claim takes is the scheduler's informer order
(random): a deployment may move the group to any of the joint bindings its runs
give (``pod_outcomes``; v1 ``nodes: {n1: [a, b]}``, interchangeable PVs one choice).

Not modelled, and marked with a caveat instead: the topology of a
volume a deployment provisions for a claim other pods can use (the CSI driver
decides it), and a group with more joint bindings than the search budget's ``volume-bindings``
guard (``symreach.search_budget``, 256 by default:
had the first free PV of a class been named, n claims that deployments bind in any
order to n interchangeable PVs would make sum_k C(n,k) k! states, 326 for n = 5;
each claim naming its own PV of the class where free (``Runs.own``), they make
2^n, the number up to renaming PVs; more claims than PVs of a class still add
renamings). A
deployment's choices are listed lazily (``pod_outcomes``), so the guard stops
before they are all listed.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

from symreach import search_budget
from symreach.frontends.k8s_volume_filters import (
    bound_index,
    candidate_volumes,
    csi_volume,
    pod_outcomes,
    pod_volumes,
    verdict_fields,
)
from symreach.frontends.k8s_volume_matching import labels_read, shape
from symreach.frontends.k8s_volumes import VolumeIndex

Key = tuple[str, str]   # (namespace, claim)
TAKEN = "(ephemeral)"   # a class's PVs that ephemeral claims took: key (TAKEN, class), outcome ``taken:<pv>,...``
HELD = "pods of"        # a type's pods holding a PV counted under another driver: key (HELD, type)
PROVISIONED_TOPOLOGY = ("may be provisioned by a deployment: the new volume's topology is modelled as the node's "
                        "labels under the class's allowedTopologies keys, else its zone (the external provisioner "
                        "and the CSI driver decide it in a cluster)")


def taken_key(cls: str) -> Key:
    return (TAKEN, cls)


@dataclass
class Binder:
    """A pod type whose deployment binds claims: its spec as the volume plugins read it."""

    spec: dict
    namespace: str
    pod_name: Optional[str]
    pod_uid: Optional[str]
    claims: list[Key] = field(default_factory=list)


def binder(index: VolumeIndex, spec: dict, namespace: str, pod_name: Optional[str], pod_uid: Optional[str],
           delayed: list) -> tuple[Optional[Binder], list[str]]:
    """The ``Binder`` of a pod with unbound WaitForFirstConsumer claims (``delayed``), or None
    when it binds nothing later pods see; and the caveats for what is not modelled."""
    caveats = []
    keys = []
    for c in delayed:
        if c.ephemeral:
            # A generic ephemeral claim is its pod's alone and goes with it (garbage collection); a
            # new pod of the type gets a new one from the template: binding it matters to later
            # steps only through a PV it takes, which no claim gets back (Released or deleted):
            # its class's ``taken`` entry records those.
            if candidate_volumes(index, c):
                keys.append(taken_key(index.claim_class(c.data or {})))
            continue
        keys.append((c.namespace, c.name))
    if not keys:
        return None, caveats
    return Binder(spec, namespace, pod_name, pod_uid, claims=keys), caveats


def groups(index: VolumeIndex, binders: dict[str, Binder]) -> list[tuple[list[Key], list[str]]]:
    """Claims that depend on each other (one pod binds them, or one PV could take either), with
    the types binding them, in input order."""
    parent: dict[Key, Key] = {}

    def find(k: Key) -> Key:
        while parent.setdefault(k, k) != k:
            k = parent[k]
        return k

    def union(a: Key, b: Key) -> None:
        parent[find(a)] = find(b)

    by_class: dict[str, list[Key]] = {}
    for b in binders.values():
        for k in b.claims:
            find(k)
            union(k, b.claims[0])
            by_class.setdefault(k[1] if k[0] == TAKEN else index.claim_class(index.claims[k]), []).append(k)
    for cls, keys in by_class.items():
        if any(_available(pv, cls) for pv in index.volumes.values()):
            for k in keys:
                union(k, keys[0])
    out: dict[Key, tuple[list[Key], list[str]]] = {}
    for k in parent:
        out.setdefault(find(k), ([], []))[0].append(k)
    for name, b in binders.items():
        out[find(b.claims[0])][1].append(name)
    return list(out.values())


def _available(pv: dict, cls: str) -> bool:
    spec = pv.get("spec") if isinstance(pv.get("spec"), dict) else {}
    status = pv.get("status") if isinstance(pv.get("status"), dict) else {}
    return (spec.get("storageClassName") or "") == cls and not spec.get("claimRef") and status.get("phase") == "Available"


def explore(index: VolumeIndex, claims: list[Key], users: dict[str, Binder], nodes: list[dict]
            ) -> tuple[Optional[dict[str, dict]], list[str]]:
    """Each user's v1 ``binds`` for the group (None when not modelled), and the caveats."""
    claims = claims + [(HELD, name) for name, b in users.items()
                       if any(k[0] == TAKEN and _apart_pvs(index, k[1], nodes) for k in b.claims)]
    start: tuple[Optional[str], ...] = (None,) * len(claims)
    states = [start]
    ids = {start: 0}
    position = {k: i for i, k in enumerate(claims)}
    entries: dict[str, list[dict]] = {name: [] for name in users}
    drift = provisioned = False
    later: list[str] = []   # the Filter's own caveats in a joint binding reached (``pod_volumes``)
    s = 0
    while s < len(states):
        if search_budget.over(search_budget.VOLUME_BINDINGS, len(states)):   # the pod slots' ``frees`` (``_held_fields``) add states too
            return None, [_guard_caveat(claims)]
        joint = states[s]
        bound = bound_index(index, {k: o for k, o in zip(claims, joint) if o is not None and k[0] != HELD})
        for name, b in users.items():
            found = pod_volumes(bound, b.spec, b.namespace, b.pod_name, nodes, b.pod_uid)
            later += [c for c in found.caveats if s and c not in later]
            entry: dict = {"bound": list(joint), **(verdict_fields(found) if s else {})}
            on = {}
            if found.prefilter is None and found.delayed:
                for node in nodes:
                    if node["name"] in found.filters:
                        continue
                    targets = []
                    for outcomes in pod_outcomes(bound, found.delayed, node["name"], node.get("labels") or {}):
                        nxt, drifts, provisions = _following(index, bound, joint, position, found.delayed, outcomes,
                                                             nodes, position.get((HELD, name)), node["name"])
                        drift |= drifts
                        provisioned |= provisions
                        if nxt not in ids:
                            if search_budget.over(search_budget.VOLUME_BINDINGS, len(states) + 1):   # before the next choice is listed
                                return None, [_guard_caveat(claims)]
                            ids[nxt] = len(states)
                            states.append(nxt)
                        if ids[nxt] not in targets:
                            targets.append(ids[nxt])
                    if targets != [s] and targets:   # one entry per choice the scheduler may make
                        on[node["name"]] = targets[0] if len(targets) == 1 else targets
            entry["nodes"] = on
            if (HELD, name) in position:
                entry.update(_held_fields(index, joint, position[(HELD, name)], ids, states))
            entries[name].append(entry)
        s += 1
    caveats = []
    if drift:
        caveats.append(_caveat(claims, "include an ephemeral claim that may take a PV counted under another CSI "
                                       "driver than its class's provisioner (modelled: counted under the provisioner)"))
    if provisioned:
        caveats.append(_caveat(claims, PROVISIONED_TOPOLOGY))
    names = [f"{HELD} {c}" if ns == HELD else f"{ns}/{c}" for ns, c in claims]
    field_: dict = {"claims": names, "states": None}
    alike = interchangeable(index)
    if alike:
        field_["interchangeable"] = alike
    return {name: dict(field_, states=entries[name]) for name in users}, caveats + later


def interchangeable(index: VolumeIndex) -> list[list[str]]:
    """The Available PVs that only names and volume handles tell apart (``k8s_volume_matching.shape``),
    two or more a class, in input order: the joint bindings name one free PV of a class (the
    claim's own: ``k8s_volume_matching.Runs.own``), and a witness may name any other free one instead (``semantics.step_choice``)."""
    classes: dict[str, list[str]] = {}
    read = labels_read(index)
    for name, pv in index.volumes.items():
        if _available(pv, (pv.get("spec") or {}).get("storageClassName") or ""):
            key = shape(index, name, read)
            if key is not None:
                classes.setdefault(key, []).append(name)
    return [names for names in classes.values() if len(names) > 1]


def _following(index: VolumeIndex, bound: VolumeIndex, joint: tuple[Optional[str], ...], position: dict[Key, int],
               delayed: list, outcomes: dict[Key, str], nodes: list[dict], held: Optional[int] = None,
               node: str = "") -> tuple[tuple[Optional[str], ...], bool, bool]:
    """The group's joint binding once a deployment on ``node`` binds ``outcomes``; whether an ephemeral
    claim took a PV counted under another driver (``_counted_apart``) with no pod slot (``held``: its
    type's, which then gets the entry), and whether a volume other pods can use was provisioned on a
    cluster of several nodes."""
    following = list(joint)
    drift = provisioned = False
    for c in delayed:
        outcome = outcomes[(c.namespace, c.name)]
        key = taken_key(index.claim_class(c.data or {})) if c.ephemeral else (c.namespace, c.name)
        if key not in position:
            continue
        provisioned |= not c.ephemeral and outcome.startswith("provisioned:") and len(nodes) > 1
        if c.ephemeral:
            if not outcome.startswith("PV "):
                continue
            if _counted_apart(bound, c, outcome[3:], nodes):
                if held is None:
                    drift = True
                else:
                    entry = f"{node}: PV {outcome[3:]} ({_driver(bound, c, outcome[3:])})"
                    following[held] = _joined(_entries(following[held]) + [entry])
            outcome = taken_outcome(following[position[key]], outcome[3:])
        following[position[key]] = outcome
    return tuple(following), drift, provisioned


def taken_outcome(before: Optional[str], pv: str) -> str:
    """A class's ``taken`` outcome once an ephemeral claim has taken ``pv`` too."""
    names = set(before.partition(":")[2].split(",")) - {""} if before else set()
    return "taken:" + ",".join(sorted(names | {pv}))


def _counted_apart(index: VolumeIndex, c, pv: str, nodes: list[dict]) -> bool:
    """Whether NodeVolumeLimits would count the claim bound to ``pv`` under another driver than
    unbound, one some node limits."""
    before = csi_volume(index, c.namespace, c.name, c.data or {})[0]
    after = csi_volume(index, c.namespace, c.name,
                       dict(c.data or {}, spec=dict((c.data or {}).get("spec") or {}, volumeName=pv)))[0]
    limited = {driver for node in nodes for driver in index.attach_limits(node["name"])}
    return before != after and bool({before, after} & limited)


def _apart_pvs(index: VolumeIndex, cls: str, nodes: list[dict]) -> bool:
    """Whether an ephemeral claim of class ``cls`` may take an Available PV counted under another
    driver than the class's provisioner, one some node limits (``_counted_apart``)."""
    claim = {"spec": {"storageClassName": cls}}
    return any(_available(pv, cls) and _counted_apart(index, _ClaimRef("", "", claim), name, nodes)
               for name, pv in index.volumes.items())


@dataclass
class _ClaimRef:
    namespace: str
    name: str
    data: dict


def _driver(index: VolumeIndex, c, pv: str) -> str:
    """The driver NodeVolumeLimits counts claim ``c`` under once bound to ``pv``."""
    return csi_volume(index, c.namespace, c.name, dict(c.data or {}, spec=dict((c.data or {}).get("spec") or {},
                                                                              volumeName=pv)))[0]


def _entries(value: Optional[str]) -> list[str]:
    return value.split(" | ") if value else []


def _joined(entries: list[str]) -> Optional[str]:
    return " | ".join(sorted(entries)) or None


def _held_fields(index: VolumeIndex, joint: tuple, k: int, ids: dict, states: list) -> dict:
    """A state's ``heldPods``, ``heldAttach`` and ``frees`` for a type whose pods may hold PVs of
    another driver (slot k): per node, how many of its pods do, the attach counts they move (+1 under
    the PV's driver, -1 under the provisioner every other pod of the type counts under) and, per PV
    held, the state once its pod is deleted (the PV stays taken: Released, never Available again)."""
    pods: dict[str, int] = {}
    moved: dict[str, dict[str, int]] = {}
    frees: dict[str, dict[str, int]] = {}
    for entry in _entries(joint[k]):
        node, _, what = entry.partition(": ")
        pv, _, driver = what[len("PV "):].partition(" (")
        cls = ((index.volumes.get(pv) or {}).get("spec") or {}).get("storageClassName") or ""
        base = csi_volume(index, "", "", {"spec": {"storageClassName": cls}})[0]   # its class's provisioner
        pods[node] = pods.get(node, 0) + 1
        delta = moved.setdefault(node, {})
        driver = driver.rstrip(")")
        if driver:   # a PV no CSI driver attaches (local, hostPath, NFS, ...) counts under none
            delta[driver] = delta.get(driver, 0) + 1
        if base:
            delta[base] = delta.get(base, 0) - 1
        rest = _entries(joint[k])
        rest.remove(entry)
        nxt = joint[:k] + (_joined(rest),) + joint[k + 1:]
        if nxt not in ids:
            ids[nxt] = len(states)
            states.append(nxt)
        frees.setdefault(node, {})[what] = ids[nxt]
    out: dict = {}
    if pods:
        out["heldPods"] = pods
        out["heldAttach"] = {n: {d: v for d, v in sorted(delta.items()) if v} for n, delta in sorted(moved.items())
                             if any(delta.values())}
        out["frees"] = frees
    return out


def _caveat(claims: list[Key], what: str) -> str:
    return "claim(s) " + ", ".join(f"{ns}/{c}" for ns, c in claims) + " " + what


def _guard_caveat(claims: list[Key]) -> str:
    return (_caveat(claims, "")[:-1] + ": what deployments bind is not followed (the verdicts are those of the "
            f"input's bindings): listing the joint bindings they reach went {search_budget.past(search_budget.VOLUME_BINDINGS)}")


def bind_all(index: VolumeIndex, binders: dict[str, Binder], nodes: list[dict]
             ) -> tuple[dict[str, dict], dict[str, list[str]]]:
    """Every type's v1 ``binds`` and the caveats per type (``explore`` per group)."""
    binds: dict[str, dict] = {}
    caveats: dict[str, list[str]] = {}
    for claims, names in groups(index, binders):
        users = {name: binders[name] for name in names}
        found, notes = explore(index, claims, users, nodes)
        for name in names:
            if found is not None:
                binds[name] = found[name]
            if notes:
                caveats.setdefault(name, []).extend(notes)
    return binds, caveats
