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
(``shape``) are one choice, as their futures are the same up to names; a run
takes the first free PV of a shape (input order), so the PVs taken are a prefix
of each shape's, and the claims still to match plus the PVs taken are the whole
state of a run (``Runs``): the runs are searched with that state memoized, which
makes the set of claims a run leaves unmatched (all VolumeBinding's verdict and
reasons read) exact and cheap, with no bound on the runs. Reachability is
existential over these runs (``k8s_volume_filters``).
"""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass
from typing import Callable, Iterator, Optional

from symreach.frontends.k8s_volumes import SELECTED_NODE, VolumeIndex, annotations, as_dict, as_list
from symreach.loader.labels import parse_label_selector, parse_node_selector
from symreach.loader.quantities import QuantityError, parse_quantity
from symreach.loader.shapes import FieldError


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


class Runs:
    """The runs of ``findMatchingVolumes`` on a node with these labels, for the claims without a
    selected node (smallest request first; equal requests keep the pod's order, as the insertion
    sort ``sort.Sort`` uses on short slices does), searched by (claim, PVs taken)."""

    def __init__(self, index: VolumeIndex, claims: list[Claim], labels: dict) -> None:
        self.index, self.labels = index, labels
        self.order = sorted((c for c in claims if SELECTED_NODE not in annotations(c.data or {})),
                            key=lambda c: storage_of(c.data or {}, "resources", "requests", "storage"))
        self.read = labels_read(index)
        self.shapes: dict[str, str] = {}
        self.memo: dict[tuple[int, Taken], Leftovers] = {}

    def choices(self, k: int, taken: Taken) -> list[Optional[str]]:
        """What claim k may get with ``taken`` gone: one PV per shape (the first free one) and None
        (unmatched) where some order gives none; the input order's first."""
        out: list[Optional[str]] = []
        seen: set[str] = set()
        for pv in volume_candidates(self.index, self.order[k], self.labels, taken):
            key = self.key(pv)
            if key not in seen:
                seen.add(key)
                out.append(pv)
        return out

    def key(self, pv: Optional[str]) -> str:
        if pv is None:
            return ""
        if pv not in self.shapes:
            found = shape(self.index, pv, self.read)
            self.shapes[pv] = "name:" + pv if found is None else found
        return self.shapes[pv]

    def leftovers(self, k: int = 0, taken: Taken = frozenset()) -> Leftovers:
        """Every set of claims from k on that some run from here leaves unmatched, in the order a
        depth-first search of the runs (input order's choice first) meets them."""
        if k == len(self.order):
            return (frozenset(),)
        state = (k, taken)
        if state not in self.memo:
            out: dict[frozenset[int], None] = {}
            for pv in self.choices(k, taken):
                if pv is None:
                    out.update((rest | {k}, None) for rest in self.leftovers(k + 1, taken))
                else:
                    out.update((rest, None) for rest in self.leftovers(k + 1, taken | {pv}))
            self.memo[state] = tuple(out)
        return self.memo[state]

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

        def follow(k: int, taken: Taken, chosen: tuple[tuple[Claim, str], ...],
                   left: frozenset[int]) -> Iterator[Matching]:
            if k == len(self.order):
                yield Matching(chosen, tuple(self.order[i] for i in sorted(left)))
                return
            for pv in self.choices(k, taken):
                after_taken, after_left = (taken, left | {k}) if pv is None else (taken | {pv}, left)
                if not any(accepted(after_left | rest) for rest in self.leftovers(k + 1, after_taken)):
                    continue
                yield from follow(k + 1, after_taken, chosen if pv is None else chosen + ((self.order[k], pv),),
                                  after_left)

        return follow(0, frozenset(), (), frozenset())


def volume_candidates(index: VolumeIndex, c: Claim, labels: dict, chosen: Taken) -> list[Optional[str]]:
    """What ``FindMatchingVolume`` may return for the claim on a node over the list's orders: the
    PVs pre-bound to it that fit (None too when one's node affinity fails: the first met decides),
    else every smallest Available one that fits; None alone when nothing does; input order's first."""
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
            return [None]
    best: Optional[int] = None
    ties: list[str] = []
    prebound: list[Optional[str]] = []
    for name, pv in index.volumes.items():
        pv_spec = as_dict(pv.get("spec"))
        if name in chosen or (pv_spec.get("storageClassName") or "") != cls:
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
            choice = name if affinity_ok else None
            if choice not in prebound:
                prebound.append(choice)
            continue
        if prebound or as_dict(pv.get("status")).get("phase") != "Available":
            continue
        if selector is not None and not selector.matches(as_dict(as_dict(pv.get("metadata")).get("labels"))):
            continue
        if not affinity_ok or not modes <= {m for m in as_list(pv_spec.get("accessModes")) if isinstance(m, str)}:
            continue
        if best is None or size < best:
            best, ties = size, [name]
        elif size == best:
            ties.append(name)
    return prebound or ties or [None]


def shape(index: VolumeIndex, name: str, read: Optional[frozenset[str]] = None) -> Optional[str]:
    """What tells the PV apart but its name, volume handle and metadata nothing reads (``read``:
    ``labels_read``); None when a VolumeAttachment names it (then it is unlike every other). Two PVs
    of one shape are interchangeable for the scheduler."""
    named = {as_dict(as_dict(a.get("spec")).get("source")).get("persistentVolumeName") for a in index.attachments}
    if name in named:
        return None
    read = labels_read(index) if read is None else read
    pv = copy.deepcopy(index.volumes[name])
    meta = as_dict(pv.pop("metadata", None))
    pv["labels"] = {k: v for k, v in as_dict(meta.get("labels")).items() if k in read}
    pv["deleting"] = bool(meta.get("deletionTimestamp"))   # FindMatchingVolume skips such a PV
    spec = as_dict(pv.get("spec"))
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


def storage_of(claim_or_volume: dict, *path: str) -> int:
    """A storage quantity under ``spec`` (0 when missing or malformed)."""
    value = as_dict(claim_or_volume.get("spec"))
    for key in path:
        value = as_dict(value).get(key)
    try:
        return parse_quantity(value, "storage") if value is not None else 0
    except QuantityError:
        return 0
