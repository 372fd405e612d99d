"""VolumeBinding's ``findMatchingVolumes`` on one node, over every order the informer can list PVs in.

The scheduler (v1.35, ``volumeBinder.findMatchingVolumes``) sorts a pod's unbound
claims by requested size and gives each, in turn, what
``volume.FindMatchingVolume`` returns from ``PVAssumeCache.ListPVs(class)``,
excluding the PVs earlier claims took: a PV pre-bound to the claim (the first
such in the list: none if its node affinity fails), else the smallest Available
one that fits, ties going to the first in the list
(``smallestVolumeQty.Cmp(volumeQty) > 0``, strictly). ``ListPVs`` reads the
informer's index, a Go map, so its order is random: among the smallest fitting
PVs any may be taken. Every sequence of such choices is some order's (order the
PVs by when they are taken), so a run is one choice per claim.

PVs that only names, volume handles and labels nothing reads tell apart
(``shape``) are one choice, as their futures are the same up to names. Which
claims a run leaves unmatched (all VolumeBinding's verdict and reasons read)
depends on less: PVs every claim of the pod sees alike on the node are one
class, and the next claim plus how many PVs of each class are taken is the
whole state of a run (``Runs``), searched memoized: exact, with no bound on the
runs, and polynomial in the claims for a given number of classes
(the search budget's ``volume-search`` guard, ``symreach.search_budget``, stops pathological inputs only).
Reachability is existential
over these runs (``k8s_volume_filters``).
"""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass
from typing import Callable, Iterable, Iterator, Optional

from symreach import search_budget
from symreach.frontends.go_sort import go_sort
from symreach.frontends.k8s_volumes import SELECTED_NODE, VolumeIndex, annotations, as_dict, as_list
from symreach.loader.labels import parse_label_selector, parse_node_selector
from symreach.loader.quantities import QuantityError, parse_quantity
from symreach.loader.shapes import FieldError

class SearchBound(Exception):
    """The search states (claim, PVs taken per class) ``Runs`` memoizes on a node passed the
    ``volume-search`` guard (``symreach.search_budget``): the input order's run then stands for all, with a caveat."""


def search_caveat(claims: list["Claim"], nodes: list[str]) -> str:
    names = ", ".join(f"{c.namespace}/{c.name}" for c in claims)
    return (f"claim(s) {names}: the verdict on {', '.join(nodes)} and what a deployment there may bind are the input "
            f"order's run's only: VolumeBinding's runs there went {search_budget.past(search_budget.VOLUME_SEARCH)}")


@dataclass(frozen=True)
class Claim:
    """A claim of a pod's volume as the volume plugins read it (``data`` None: it does not exist)."""

    name: str
    data: Optional[dict]
    ephemeral: bool
    namespace: str = "default"
    owned: bool = True          # an ephemeral claim controlled by the pod (``VolumeIsForPod``)


@dataclass(frozen=True)
class Matching:
    """One run of ``findMatchingVolumes``: the PV each matched claim takes, in the order the claims
    were matched, and the claims left over (to provision), in that order too."""

    chosen: tuple[tuple[Claim, str], ...]
    unmatched: tuple[Claim, ...]


Taken = frozenset[str]      # the PVs earlier claims of a run took
Leftovers = tuple[frozenset[int], ...]   # sets of claim positions left unmatched, first run's first


@dataclass(frozen=True)
class Seen:
    """How ``FindMatchingVolume`` sees a PV it might return for a claim on a node (``eligibility``)."""

    prebound: bool     # its claimRef names the claim (else: Available, fits, matches)
    node_ok: bool      # its node affinity holds on the node (always, for one not pre-bound)
    size: int


class Runs:
    """The runs of ``findMatchingVolumes`` on a node with these labels, for the claims without a
    selected node, in the order ``sort.Sort(byPVCSize)`` leaves the pod's (``go_sort``: not stable
    past 12 claims, so equal requests may change places).

    Which claims a run leaves unmatched depends only on how each claim sees each PV (``eligibility``),
    so PVs every claim sees alike form a class and a run's state there is (next claim, PVs taken per
    class): ``leftovers`` is memoized on it, polynomial in the claims for a fixed number of classes.
    The runs themselves (``runs``, which PV each claim takes) tell shapes apart."""

    def __init__(self, index: VolumeIndex, claims: list[Claim], labels: dict) -> None:
        self.index = index
        sized = [(requested(c), c) for c in claims if SELECTED_NODE not in annotations(c.data or {})]
        self.order = [c for _, c in go_sort(sized, lambda x, y: x[0] < y[0])]
        self.seen = [eligibility(index, c, labels) for c in self.order]
        classes: dict[tuple, list[str]] = {}
        for pv in index.volumes:
            row = tuple(seen.get(pv) for seen in self.seen)
            if any(row):
                classes.setdefault(row, []).append(pv)
        self.classes = list(classes.values())
        self.class_of = {pv: k for k, members in enumerate(self.classes) for pv in members}
        self.position = {pv: k for k, pv in enumerate(index.volumes)}
        self.read = labels_read(index)
        self.shapes: dict[str, str] = {}
        self.bases: dict[str, list[int]] = {}
        self.unbound: dict[str, Optional[str]] = {}   # each PV's shape as it was before a claim took it
        self.ranks: dict[tuple[str, str], int] = {}
        per_class: dict[str, int] = {}
        for key, data in index.claims.items():
            cls = index.claim_class(data)
            self.ranks[key] = per_class.get(cls, 0)
            per_class[cls] = self.ranks[key] + 1
        self.memo: dict[tuple[int, tuple[int, ...]], Leftovers] = {}
        self.guard = search_budget.Watch(search_budget.VOLUME_SEARCH)

    def choices(self, k: int, taken: Taken) -> list[Optional[str]]:
        """What claim k may get with ``taken`` gone: one PV per shape and None (unmatched) where
        some order gives none; the input order's first. A shape's PV is the first free one from
        the claim's own (``own``) on, cyclically in input order."""
        out: list[Optional[str]] = []
        keys: set[str] = set()
        free = [pv_seen for pv_seen in self.seen[k].items() if pv_seen[0] not in taken]
        for pv in possible(free):
            key = self.key(pv)
            if key not in keys:
                keys.add(key)
                out.append(None if pv is None else self.own(k, pv, [o for o, _ in free if self.key(o) == key]))
        return out

    def own(self, k: int, pv: str, alike: list[str]) -> str:
        """Claim k's PV among ``alike`` (free, of pv's shape): the first from its own place on, the
        place being as far into the PVs like pv but for a binding (``shape`` unbound) as the claim
        is into the input's claims of its class. Claims that deployments bind in any order then name
        the same PVs (the scheduler may take any free PV of a shape), so fewer joint bindings differ
        only by renaming interchangeable PVs (``k8s_volume_bindings``)."""
        c = self.order[k]
        rank = self.ranks.get((c.namespace, c.name))
        if rank is None or len(alike) == 1:
            return alike[0]
        if not self.unbound:
            self.unbound = {other: shape(self.index, other, self.read, unbound=True) for other in self.index.volumes}
        base = self.unbound[pv]
        if base is None:
            return alike[0]
        if base not in self.bases:
            self.bases[base] = [self.position[other] for other, alike_base in self.unbound.items() if alike_base == base]
        places = self.bases[base]
        start = places[rank % len(places)]
        return min(alike, key=lambda other: (self.position[other] - start) % len(self.position))

    def key(self, pv: Optional[str]) -> str:
        if pv is None:
            return ""
        if pv not in self.shapes:
            found = shape(self.index, pv, self.read)
            self.shapes[pv] = "name:" + pv if found is None else found
        return self.shapes[pv]

    def counted(self, counts: tuple[int, ...], pv: Optional[str]) -> tuple[int, ...]:
        """The PVs taken per class once ``pv`` is taken too."""
        if pv is None:
            return counts
        k = self.class_of[pv]
        return counts[:k] + (counts[k] + 1,) + counts[k + 1:]

    def leftovers(self, k: int = 0, counts: Optional[tuple[int, ...]] = None) -> Leftovers:
        """Every set of claims from k on that some run from here (``counts``: PVs taken per class,
        each class's first ones) leaves unmatched, in the order a depth-first search of the runs
        (input order's choice first) meets them."""
        counts = (0,) * len(self.classes) if counts is None else counts
        if k == len(self.order):
            return (frozenset(),)
        state = (k, counts)
        if state not in self.memo:
            if len(self.memo) + 1 > self.guard.at and self.guard.passed(len(self.memo) + 1):
                raise SearchBound(len(self.memo))
            free = [(members[n], self.seen[k][members[n]]) for members, n in zip(self.classes, counts)
                    if n < len(members) and members[n] in self.seen[k]]
            out: dict[frozenset[int], None] = {}
            for pv in possible(sorted(free, key=lambda pv_seen: self.position[pv_seen[0]])):
                if pv is None:
                    out.update((rest | {k}, None) for rest in self.leftovers(k + 1, counts))
                else:
                    out.update((rest, None) for rest in self.leftovers(k + 1, self.counted(counts, pv)))
            self.memo[state] = tuple(out)
        return self.memo[state]

    def first(self) -> Matching:
        """The input order's run up to interchangeable PVs (each claim takes the first of its choices)."""
        taken: Taken = frozenset()
        chosen: list[tuple[Claim, str]] = []
        left: list[Claim] = []
        for k, c in enumerate(self.order):
            pv = self.choices(k, taken)[0]
            if pv is None:
                left.append(c)
            else:
                taken |= {pv}
                chosen.append((c, pv))
        return Matching(tuple(chosen), tuple(left))

    def unmatched(self) -> list[tuple[Claim, ...]]:
        """Every distinct set of claims a run leaves unmatched (in matching order), the input order's first."""
        return [tuple(self.order[i] for i in sorted(left)) for left in self.leftovers()]

    def runs(self, keep: Optional[Callable[[tuple[Claim, ...]], bool]] = None) -> Iterator[Matching]:
        """Every distinct run whose unmatched claims ``keep`` accepts (all when None), the input
        order's first; a branch no such run completes is not entered."""
        kept: dict[frozenset[int], bool] = {}

        def accepted(left: frozenset[int]) -> bool:
            if left not in kept:
                kept[left] = keep is None or keep(tuple(self.order[i] for i in sorted(left)))
            return kept[left]

        def follow(k: int, taken: Taken, counts: tuple[int, ...], chosen: tuple[tuple[Claim, str], ...],
                   left: frozenset[int]) -> Iterator[Matching]:
            if k == len(self.order):
                yield Matching(chosen, tuple(self.order[i] for i in sorted(left)))
                return
            for pv in self.choices(k, taken):
                after_left = left | {k} if pv is None else left
                after = self.counted(counts, pv)
                if not any(accepted(after_left | rest) for rest in self.leftovers(k + 1, after)):
                    continue
                yield from follow(k + 1, taken if pv is None else taken | {pv}, after,
                                  chosen if pv is None else chosen + ((self.order[k], pv),), after_left)

        return follow(0, frozenset(), (0,) * len(self.classes), (), frozenset())


def eligibility(index: VolumeIndex, c: Claim, labels: dict) -> dict[str, Seen]:
    """How ``FindMatchingVolume`` sees each PV it might return for the claim on a node, input order:
    pre-bound to it (and whether its node affinity holds there), or Available and fitting (its size)."""
    claim = c.data or {}
    spec = as_dict(claim.get("spec"))
    want = storage_of(claim, "resources", "requests", "storage")
    cls = index.claim_class(claim)
    modes = {m for m in as_list(spec.get("accessModes")) if isinstance(m, str)}
    attributes = spec.get("volumeAttributesClassName") or ""
    selector = None
    if isinstance(spec.get("selector"), dict):
        try:
            selector = parse_label_selector(spec["selector"])
        except FieldError:
            return {}
    out: dict[str, Seen] = {}
    for name, pv in index.volumes.items():
        pv_spec = as_dict(pv.get("spec"))
        if (pv_spec.get("storageClassName") or "") != cls:
            continue
        ref = as_dict(pv_spec.get("claimRef"))
        bound_here = ref.get("name") == c.name and (ref.get("namespace") or "default") == c.namespace
        if ref and not bound_here:
            continue
        size = storage_of(pv, "capacity", "storage")
        if size < want or (pv_spec.get("volumeMode") or "Filesystem") != (spec.get("volumeMode") or "Filesystem"):
            continue
        if (pv_spec.get("volumeAttributesClassName") or "") != attributes:
            continue
        if as_dict(pv.get("metadata")).get("deletionTimestamp"):
            continue
        affinity_ok = node_affinity_ok(pv, labels)
        if bound_here:
            out[name] = Seen(True, affinity_ok, size)
            continue
        if as_dict(pv.get("status")).get("phase") != "Available":
            continue
        if selector is not None and not selector.matches(as_dict(as_dict(pv.get("metadata")).get("labels"))):
            continue
        if affinity_ok and modes <= {m for m in as_list(pv_spec.get("accessModes")) if isinstance(m, str)}:
            out[name] = Seen(False, True, size)
    return out


def possible(free: Iterable[tuple[str, Seen]]) -> list[Optional[str]]:
    """What ``FindMatchingVolume`` may return, over the list's orders, from these PVs (not excluded,
    seen as ``eligibility`` says, in list order): a pre-bound one whose node affinity holds, None
    when one's fails (the first met decides), else every smallest fitting one; None alone when
    none fits. The first is the one it returns on this order."""
    prebound: list[Optional[str]] = []
    best: Optional[int] = None
    ties: list[str] = []
    for name, seen in free:
        if seen.prebound:
            choice = name if seen.node_ok else None
            if choice not in prebound:
                prebound.append(choice)
        elif best is None or seen.size < best:
            best, ties = seen.size, [name]
        elif seen.size == best:
            ties.append(name)
    return prebound or ties or [None]


def volume_candidates(index: VolumeIndex, c: Claim, labels: dict, chosen: Taken) -> list[Optional[str]]:
    """What ``FindMatchingVolume`` may return for the claim on a node, the PVs ``chosen`` excluded
    (``possible``), input order's first."""
    return possible((pv, status) for pv, status in eligibility(index, c, labels).items() if pv not in chosen)


def shape(index: VolumeIndex, name: str, read: Optional[frozenset[str]] = None, unbound: bool = False) -> Optional[str]:
    """What tells the PV apart but its name, volume handle and metadata nothing reads (``read``:
    ``labels_read``); None when a VolumeAttachment names it (then it is unlike every other). Two PVs
    of one shape are interchangeable for the scheduler. ``unbound``: without its claimRef and status."""
    named = {as_dict(as_dict(a.get("spec")).get("source")).get("persistentVolumeName") for a in index.attachments}
    if name in named:
        return None
    read = labels_read(index) if read is None else read
    pv = copy.deepcopy(index.volumes[name])
    meta = as_dict(pv.pop("metadata", None))
    pv["labels"] = {k: v for k, v in as_dict(meta.get("labels")).items() if k in read}
    pv["deleting"] = bool(meta.get("deletionTimestamp"))   # FindMatchingVolume skips such a PV
    spec = as_dict(pv.get("spec"))
    if unbound:   # as it was before a claim took it
        spec.pop("claimRef", None)
        pv.pop("status", None)
    for source, key in (("csi", "volumeHandle"), ("awsElasticBlockStore", "volumeID"), ("local", "path")):
        as_dict(spec.get(source)).pop(key, None)
    return json.dumps(pv, sort_keys=True, default=str)


ZONE_LABELS = ("failure-domain.beta.kubernetes.io/zone", "failure-domain.beta.kubernetes.io/region",
               "topology.kubernetes.io/zone", "topology.kubernetes.io/region")


def labels_read(index: VolumeIndex) -> frozenset[str]:
    """The PV label keys the scheduler reads: VolumeZone's zone and region keys, and every key a
    claim's selector names (a PV's other labels tell it apart for nobody)."""
    keys = set(ZONE_LABELS)
    for claim in index.claims.values():
        selector = as_dict(as_dict(claim.get("spec")).get("selector"))
        keys.update(k for k in as_dict(selector.get("matchLabels")) if isinstance(k, str))
        keys.update(as_dict(e).get("key") for e in as_list(selector.get("matchExpressions"))
                    if isinstance(as_dict(e).get("key"), str))
    return frozenset(keys)


def node_affinity_ok(volume: dict, labels: dict) -> bool:
    """``CheckNodeAffinity``: the PV's required node affinity against the node's labels (no name)."""
    required = as_dict(as_dict(as_dict(volume.get("spec")).get("nodeAffinity")).get("required"))
    if not required:
        return True
    try:
        return parse_node_selector(required).matches("", labels)
    except FieldError:
        return False


def requested(claim: Claim) -> int:
    """The claim's storage request, as ``byPVCSize`` compares it (a missing one is zero; in whole
    bytes rounded up, as the matching reads it, so requests differing below a byte compare equal)."""
    return storage_of(claim.data or {}, "resources", "requests", "storage")


def storage_of(claim_or_volume: dict, *path: str) -> int:
    """A storage quantity under ``spec`` (0 when missing or malformed)."""
    value = as_dict(claim_or_volume.get("spec"))
    for key in path:
        value = as_dict(value).get(key)
    try:
        return parse_quantity(value, "storage") if value is not None else 0
    except QuantityError:
        return 0
