"""VolumeBinding's ``findMatchingVolumes`` on one node, over every order the informer can list PVs in.

The scheduler (v1.35, ``volumeBinder.findMatchingVolumes``) sorts a pod's unbound
claims by requested size and gives each, in turn, what
``volume.FindMatchingVolume`` returns from ``PVAssumeCache.ListPVs(class)``,
excluding the PVs earlier claims took: the PV pre-bound to the claim (whatever
the order), else the smallest Available one that fits, ties going to the first
in the list (``smallestVolumeQty.Cmp(volumeQty) > 0``, strictly). ``ListPVs``
reads the informer's index, a Go map, so its order is random per call: among
the smallest fitting PVs any may be taken. ``matchings`` follows every such
choice (one run of the scheduler each); PVs that only names, volume handles and
labels nothing reads tell apart (``shape``) are one choice, as their futures are
the same up to names.
Reachability is existential over these runs (``k8s_volume_filters``).
"""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass
from typing import Optional

from symreach.frontends.k8s_volumes import SELECTED_NODE, VolumeIndex, annotations, as_dict, as_list
from symreach.loader.labels import parse_label_selector, parse_node_selector
from symreach.loader.quantities import QuantityError, parse_quantity
from symreach.loader.shapes import FieldError

MAX_RUNS = 256   # distinct runs ``matchings`` follows on a node before it gives up (and says so)


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


def matchings(index: VolumeIndex, claims: list[Claim], labels: dict) -> tuple[list[Matching], bool]:
    """Every distinct run of ``findMatchingVolumes`` on a node with these labels, for the claims
    without a selected node (smallest request first; equal requests keep the pod's order, as the
    insertion sort ``sort.Sort`` uses on short slices does), the first run being the one that takes
    the first PV of the input among equal sizes; and False when there were more than ``MAX_RUNS``."""
    matching = sorted((c for c in claims if SELECTED_NODE not in annotations(c.data or {})),
                      key=lambda c: storage_of(c.data or {}, "resources", "requests", "storage"))
    runs: list[Matching] = []
    shapes: dict[str, Optional[str]] = {}
    read = labels_read(index)

    def follow(k: int, chosen: tuple[tuple[Claim, str], ...], unmatched: tuple[Claim, ...]) -> None:
        if len(runs) > MAX_RUNS:
            return
        if k == len(matching):
            runs.append(Matching(chosen, unmatched))
            return
        taken = {pv for _, pv in chosen}
        candidates = volume_candidates(index, matching[k], labels, taken)
        if not candidates:
            follow(k + 1, chosen, unmatched + (matching[k],))
        seen: set[str] = set()
        for pv in candidates:
            key = shapes[pv] if pv in shapes else shapes.setdefault(pv, shape(index, pv, read))
            if key is not None and key in seen:
                continue   # interchangeable with one already followed
            if key is not None:
                seen.add(key)
            follow(k + 1, chosen + ((matching[k], pv),), unmatched)

    follow(0, (), ())
    return runs[:MAX_RUNS], len(runs) <= MAX_RUNS


def volume_candidates(index: VolumeIndex, c: Claim, labels: dict, chosen: set[str]) -> list[str]:
    """The PVs ``FindMatchingVolume`` may return for the claim on a node: the one pre-bound to it,
    else every smallest Available one that fits (input order first)."""
    claim = c.data or {}
    spec = as_dict(claim.get("spec"))
    want = storage_of(claim, "resources", "requests", "storage")
    cls = index.claim_class(claim)
    modes = {m for m in as_list(spec.get("accessModes")) if isinstance(m, str)}
    selector = None
    if isinstance(spec.get("selector"), dict):
        try:
            selector = parse_label_selector(spec["selector"])
        except FieldError:
            return []
    best: Optional[tuple[int, str]] = None
    ties: list[str] = []
    for name, pv in index.volumes.items():
        pv_spec = as_dict(pv.get("spec"))
        if name in chosen or (pv_spec.get("storageClassName") or "") != cls:
            continue
        ref = as_dict(pv_spec.get("claimRef"))
        prebound = ref.get("name") == c.name and (ref.get("namespace") or "default") == c.namespace
        if ref and not prebound:
            continue
        size = storage_of(pv, "capacity", "storage")
        if size < want or (pv_spec.get("volumeMode") or "Filesystem") != (spec.get("volumeMode") or "Filesystem"):
            continue
        if as_dict(pv.get("metadata")).get("deletionTimestamp"):
            continue
        affinity_ok = node_affinity_ok(pv, labels)
        if prebound:
            return [name] if affinity_ok else []
        if as_dict(pv.get("status")).get("phase") != "Available":
            continue
        if selector is not None and not selector.matches(as_dict(as_dict(pv.get("metadata")).get("labels"))):
            continue
        if not affinity_ok or not modes <= {m for m in as_list(pv_spec.get("accessModes")) if isinstance(m, str)}:
            continue
        if best is None or size < best[0]:
            best, ties = (size, name), []
        elif size == best[0]:
            ties.append(name)
    return [] if best is None else [best[1]] + ties


def shape(index: VolumeIndex, name: str, read: Optional[frozenset[str]] = None) -> Optional[str]:
    """What tells the PV apart but its name, volume handle and labels nothing reads (``read``:
    ``labels_read``); None when a VolumeAttachment names it (then it is unlike every other). Two PVs
    of one shape are interchangeable for the scheduler."""
    named = {as_dict(as_dict(a.get("spec")).get("source")).get("persistentVolumeName") for a in index.attachments}
    if name in named:
        return None
    read = labels_read(index) if read is None else read
    pv = copy.deepcopy(index.volumes[name])
    pv.pop("metadata", None)
    labels = as_dict(as_dict(index.volumes[name].get("metadata")).get("labels"))
    pv["labels"] = {k: v for k, v in labels.items() if k in read}
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
