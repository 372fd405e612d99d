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
      binds:                      # its one unbound WaitForFirstConsumer claim, bound when it is deployed
        claim: data
        nodes: {n1: PV pv-1, n2: "provisioned:topology.kubernetes.io/zone=b"}   # node -> what it binds to there
        then: [{to: PV pv-1, filter: [{node: n2, plugin: VolumeBinding, reasons: [...]}]}, ...]

A PreFilter rejection blocks every node (only NodeAffinity's own PreFilter
rejection comes before it); a Filter failure blocks its node, reported after
NodePorts and NodeResourcesFit (``Instance.volume_failures``). A
ReadWriteOncePod claim becomes an anti-affinity term over the whole cluster
among the types that use the claim, reported by VolumeRestrictions. ``binds``
gives, per outcome of the binding, the verdicts (``preFilter``/``filter``) once the
claim is bound so (``model.ClaimBinding``, ``loader.resolve.claim_bindings``). The CSI
volumes go to NodeVolumeLimits (``semantics.volume_limit_ok``): a node's
limit is its ``attachable-volumes-csi-<driver>`` capacity, and its
``attachedVolumes`` are the VolumeAttachments' volumes.
"""

from __future__ import annotations

from typing import Optional

from symreach.loader.shapes import FieldError, Path, boolean, integer, mapping, sequence, string, string_list, string_map
from symreach.model import Disk, FrozenDict
from symreach.records import record

VOLUME_RESTRICTIONS = "VolumeRestrictions"
VOLUME_FIELDS = ("preFilter", "filter", "claims", "readWriteOncePod", "attach", "attachOwn", "disks", "binds")
DISK_KINDS = ("gcePersistentDisk", "awsElasticBlockStore", "iscsi", "rbd")
PLUGINS = ("VolumeRestrictions", "NodeVolumeLimits", "VolumeBinding", "VolumeZone")


@record
class VolumeSpec:
    prefilter: Optional[tuple[str, tuple[str, ...]]] = None
    filters: tuple[tuple[str, str, tuple[str, ...]], ...] = ()   # (node, plugin, reasons)
    claims: tuple[str, ...] = ()
    read_write_once_pod: tuple[str, ...] = ()
    attach: FrozenDict[str, frozenset[str]] = FrozenDict()
    attach_own: FrozenDict[str, int] = FrozenDict()
    disks: tuple[Disk, ...] = ()
    binds: Optional["BindSpec"] = None


@record
class BindSpec:
    """The claim a pod type's deployment binds: the outcome per node, the verdicts per outcome."""

    claim: str
    on: tuple[tuple[str, str], ...]                     # ``nodes``: (node, outcome)
    then: tuple[tuple[str, Optional[tuple[str, tuple[str, ...]]],
                      tuple[tuple[str, str, tuple[str, ...]], ...]], ...]   # (outcome, preFilter, filters)


def parse_volumes(raw: object, path: Path, node_names: set[str]) -> VolumeSpec:
    if raw is None:
        return VolumeSpec()
    body = mapping(raw, path, VOLUME_FIELDS)
    prefilter, filters = _verdicts(body, path, node_names)
    claims = tuple(string_list(body.get("claims"), path + ("claims",)))
    rwop = tuple(string_list(body.get("readWriteOncePod"), path + ("readWriteOncePod",)))
    for i, claim in enumerate(rwop):
        if claim not in claims:
            raise FieldError(path + ("readWriteOncePod", i), f"claim '{claim}' is not in claims")
    attach = parse_attached(body.get("attach"), path + ("attach",))
    own = {driver: integer(count, path + ("attachOwn", driver), minimum=0)
           for driver, count in _by_driver(body.get("attachOwn"), path + ("attachOwn",)).items()}
    disks = tuple(_disk(item, path + ("disks", i)) for i, item in enumerate(sequence(body.get("disks"), path + ("disks",))))
    binds = None if body.get("binds") is None else _binds(body["binds"], path + ("binds",), node_names, claims)
    return VolumeSpec(prefilter, tuple(filters), claims, rwop, attach, FrozenDict(own), disks, binds)


def _verdicts(body: dict, path: Path, node_names: set[str]):
    """``preFilter`` and ``filter`` of a mapping: (verdict or None, ((node, plugin, reasons), ...))."""
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
    return prefilter, tuple(filters)


def _binds(raw: object, path: Path, node_names: set[str], claims: tuple[str, ...]) -> BindSpec:
    body = mapping(raw, path, ("claim", "nodes", "then"), required=("claim", "nodes", "then"))
    claim = string(body["claim"], path + ("claim",))
    if claim not in claims:
        raise FieldError(path + ("claim",), f"claim '{claim}' is not in claims")
    on = []
    for node, outcome in string_map(body["nodes"], path + ("nodes",), empty_values=False).items():
        if node not in node_names:
            raise FieldError(path + ("nodes", node), f"unknown node '{node}'")
        on.append((node, outcome))
    then = []
    for i, item in enumerate(sequence(body["then"], path + ("then",))):
        where = path + ("then", i)
        entry = mapping(item, where, ("to", "preFilter", "filter"), required=("to",))
        then.append((string(entry["to"], where + ("to",)), *_verdicts(entry, where, node_names)))
    known = {outcome for outcome, _, _ in then}
    for node, outcome in on:
        if outcome not in known:
            raise FieldError(path + ("nodes", node), f"outcome '{outcome}' has no entry in then")
    if len(known) != len(then):
        raise FieldError(path + ("then",), "an outcome is listed twice")
    return BindSpec(claim, tuple(on), tuple(then))


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
