"""A pod type's ``volumes`` (format v1, kubernetes profile): what the volume plugins decided.

The Kubernetes front end evaluates VolumeRestrictions, VolumeBinding and
VolumeZone on the volume objects (``frontends.k8s_volume_filters``) and writes
the outcome here, so that the model needs no notion of volumes:

    volumes:
      preFilter: {plugin: VolumeBinding, reasons: [pod has unbound immediate PersistentVolumeClaims]}
      filter: [{node: n2, plugin: VolumeZone, reasons: [node(s) had no available volume zone]}]
      claims: [data]              # claims the pod uses, in its namespace
      readWriteOncePod: [data]    # those with access mode ReadWriteOncePod
      attach: {ebs.csi.aws.com: [ebs.csi.aws.com/vol-1]}   # CSI volumes, counted once per node
      attachOwn: {ebs.csi.aws.com: 1}                      # each pod's own (generic ephemeral) volumes
      disks: [{kind: gcePersistentDisk, name: pd-1, readOnly: true}]   # in-tree disks in the pod

A PreFilter rejection blocks every node (only NodeAffinity's own PreFilter
rejection comes before it); a Filter failure blocks its node, reported after
NodePorts and NodeResourcesFit (``Instance.volume_failures``). A
ReadWriteOncePod claim becomes an anti-affinity term over the whole cluster
among the types that use the claim, reported by VolumeRestrictions. The CSI
volumes go to NodeVolumeLimits (``semantics.volume_limit_ok``): a node's
limit is its ``attachable-volumes-csi-<driver>`` capacity, and its
``attachedVolumes`` are the VolumeAttachments' volumes.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from symreach.loader.shapes import FieldError, Path, boolean, integer, mapping, sequence, string, string_list
from symreach.model import Disk, FrozenDict

VOLUME_RESTRICTIONS = "VolumeRestrictions"
VOLUME_FIELDS = ("preFilter", "filter", "claims", "readWriteOncePod", "attach", "attachOwn", "disks")
DISK_KINDS = ("gcePersistentDisk", "awsElasticBlockStore", "iscsi", "rbd")
PLUGINS = ("VolumeRestrictions", "NodeVolumeLimits", "VolumeBinding", "VolumeZone")


@dataclass(frozen=True)
class VolumeSpec:
    prefilter: Optional[tuple[str, tuple[str, ...]]] = None
    filters: tuple[tuple[str, str, tuple[str, ...]], ...] = ()   # (node, plugin, reasons)
    claims: tuple[str, ...] = ()
    read_write_once_pod: tuple[str, ...] = ()
    attach: FrozenDict[str, frozenset[str]] = FrozenDict()
    attach_own: FrozenDict[str, int] = FrozenDict()
    disks: tuple[Disk, ...] = ()


def parse_volumes(raw: object, path: Path, node_names: set[str]) -> VolumeSpec:
    if raw is None:
        return VolumeSpec()
    body = mapping(raw, path, VOLUME_FIELDS)
    prefilter = None
    if body.get("preFilter") is not None:
        prefilter = _verdict(body["preFilter"], path + ("preFilter",))
    filters = []
    for i, item in enumerate(sequence(body.get("filter"), path + ("filter",))):
        where = path + ("filter", i)
        entry = mapping(item, where, ("node", "plugin", "reasons"), required=("node", "plugin", "reasons"))
        node = string(entry["node"], where + ("node",))
        if node not in node_names:
            raise FieldError(where + ("node",), f"unknown node '{node}'")
        filters.append((node, *_verdict({k: entry[k] for k in ("plugin", "reasons")}, where)))
    claims = tuple(string_list(body.get("claims"), path + ("claims",)))
    rwop = tuple(string_list(body.get("readWriteOncePod"), path + ("readWriteOncePod",)))
    for i, claim in enumerate(rwop):
        if claim not in claims:
            raise FieldError(path + ("readWriteOncePod", i), f"claim '{claim}' is not in claims")
    attach = parse_attached(body.get("attach"), path + ("attach",))
    own = {driver: integer(count, path + ("attachOwn", driver), minimum=0)
           for driver, count in _by_driver(body.get("attachOwn"), path + ("attachOwn",)).items()}
    disks = tuple(_disk(item, path + ("disks", i)) for i, item in enumerate(sequence(body.get("disks"), path + ("disks",))))
    return VolumeSpec(prefilter, tuple(filters), claims, rwop, attach, FrozenDict(own), disks)


def _disk(raw: object, path: Path) -> Disk:
    body = mapping(raw, path, ("kind", "name", "readOnly", "monitors"), required=("kind", "name"))
    kind = string(body["kind"], path + ("kind",))
    if kind not in DISK_KINDS:
        raise FieldError(path + ("kind",), f"expected one of {', '.join(DISK_KINDS)}, got '{kind}'")
    read_only = boolean(body.get("readOnly"), path + ("readOnly",), False)
    monitors = frozenset(string_list(body.get("monitors"), path + ("monitors",)))
    return Disk(kind, string(body["name"], path + ("name",)), read_only, monitors)


def parse_attached(raw: object, path: Path) -> FrozenDict[str, frozenset[str]]:
    """``{driver: [volume, ...]}``: CSI volumes by driver (a pod's, or a node's attachedVolumes)."""
    return FrozenDict({driver: frozenset(string_list(names, path + (driver,)))
                       for driver, names in _by_driver(raw, path).items()})


def _by_driver(raw: object, path: Path) -> dict:
    if raw is None:
        return {}
    if not isinstance(raw, dict):
        raise FieldError(path, "expected a mapping from CSI driver names")
    for key in raw:
        string(key, path)
    return raw


def _verdict(raw: object, path: Path) -> tuple[str, tuple[str, ...]]:
    body = mapping(raw, path, ("plugin", "reasons"), required=("plugin", "reasons"))
    plugin = string(body["plugin"], path + ("plugin",))
    if plugin not in PLUGINS:
        raise FieldError(path + ("plugin",), f"expected one of {', '.join(PLUGINS)}, got '{plugin}'")
    reasons = tuple(string_list(body["reasons"], path + ("reasons",)))
    if not reasons:
        raise FieldError(path + ("reasons",), "at least one reason is needed")
    return plugin, reasons
