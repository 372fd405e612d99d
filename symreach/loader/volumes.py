"""A pod type's ``volumes`` (format v1, kubernetes profile): what the volume plugins decided.

The Kubernetes front end evaluates VolumeRestrictions, VolumeBinding and
VolumeZone on the volume objects (``frontends.k8s_volume_filters``) and writes
the outcome here, so that the model needs no notion of volumes:

    volumes:
      preFilter: {plugin: VolumeBinding, reasons: [pod has unbound immediate PersistentVolumeClaims]}
      filter: [{node: n2, plugin: VolumeZone, reasons: [node(s) had no available volume zone]}]
      # otherRuns (optional, per filter entry): the other verdicts the scheduler's runs report there,
      # where which one depends on its informer's order (the node is refused in every run)
      otherRunRefusals: [{node: n3, plugin: VolumeBinding, reasons: [...]}]   # where some run passes the
                                  # volume plugins: other runs' refusals (a later plugin's is one of a set)
      claims: [data]              # claims the pod uses, in its namespace
      readWriteOncePod: [data]    # those with access mode ReadWriteOncePod
      attach: {ebs.csi.aws.com: [ebs.csi.aws.com/vol-1]}   # CSI volumes, counted once per node
      attachOwn: {ebs.csi.aws.com: 1}                      # each pod's own (generic ephemeral) volumes
      disks: [{kind: gcePersistentDisk, name: pd-1, readOnly: true}]   # in-tree disks in the pod
      binds:                      # its unbound WaitForFirstConsumer claims, bound when it is deployed
        claims: [default/data, default/logs]   # the binding group's claims (namespace/name)
        interchangeable: [[pv-1, pv-2]]        # PVs equal but for their names: states name one free PV of a class
        states:                   # the group's reachable joint bindings; the first is the input's
          - bound: [null, null]
            nodes: {n1: 1, n2: [2, 3]}   # deploying the type there moves the group to that state (a list:
                                         # any of those, as the scheduler chooses; the input order's first)
          - bound: [PV pv-1, "provisioned:topology.kubernetes.io/zone=b"]
            filter: [{node: n2, plugin: VolumeBinding, reasons: [...]}]
            attach: {ebs.csi.aws.com: [ebs.csi.aws.com/vol-1]}
            nodes: {}
            heldPods: {n1: 1}     # its pods there whose ephemeral claim took a PV of another driver
            heldAttach: {n1: {other.csi.example.com: 1, ebs.csi.aws.com: -1}}   # the counts they move
            frees: {n1: {PV pv-o (other.csi.example.com): 0}}   # deleting such a pod (``loader.dra``)

A PreFilter rejection blocks every node (only NodeAffinity's own PreFilter
rejection comes before it); a Filter failure blocks its node, reported after
NodePorts and NodeResourcesFit (``Instance.volume_failures``). A
ReadWriteOncePod claim becomes an anti-affinity term over the whole cluster
among the types that use the claim, reported by VolumeRestrictions. ``binds``
gives, per joint binding of the claims that depend on each other (a pod binds them
together, or they could take the same PV), the verdicts (``preFilter``/``filter``) and
CSI volumes (``attach``/``attachOwn``) the type has then, and where its deployment moves
the group (``model.BindingGroup``, ``loader.resolve.claim_bindings``); the first state's
verdicts are the type's own. The CSI
volumes go to NodeVolumeLimits (``semantics.volume_limit_ok``): a node's
limit is its ``attachable-volumes-csi-<driver>`` capacity, and its
``attachedVolumes`` are the VolumeAttachments' volumes.
"""

from __future__ import annotations

from typing import Optional

from symreach.loader.shapes import FieldError, Path, boolean, integer, mapping, sequence, string, string_list
from symreach.model import Disk, FrozenDict
from symreach.records import record

VOLUME_RESTRICTIONS = "VolumeRestrictions"
VOLUME_FIELDS = ("preFilter", "filter", "otherRunRefusals", "claims", "readWriteOncePod", "attach", "attachOwn", "disks", "binds")
DISK_KINDS = ("gcePersistentDisk", "awsElasticBlockStore", "iscsi", "rbd")
PLUGINS = ("VolumeRestrictions", "NodeVolumeLimits", "VolumeBinding", "VolumeZone")
Verdict = tuple[str, tuple[str, ...]]   # (plugin, reasons)
FilterEntry = tuple[str, str, tuple[str, ...], tuple[Verdict, ...]]


@record
class VolumeSpec:
    prefilter: Optional[tuple[str, tuple[str, ...]]] = None
    filters: tuple[FilterEntry, ...] = ()   # (node, plugin, reasons, other runs' (plugin, reasons))
    run_refusals: tuple[tuple[str, str, tuple[str, ...]], ...] = ()   # ``otherRunRefusals``: (node, plugin, reasons)
    claims: tuple[str, ...] = ()
    read_write_once_pod: tuple[str, ...] = ()
    attach: FrozenDict[str, frozenset[str]] = FrozenDict()
    attach_own: FrozenDict[str, int] = FrozenDict()
    disks: tuple[Disk, ...] = ()
    binds: Optional["BindSpec"] = None


@record
class BindState:
    """One joint binding of a group: each claim's outcome (None unbound), the type's verdicts
    and CSI volumes then, and the state its deployment on a node moves the group to."""

    bound: tuple[Optional[str], ...]
    prefilter: Optional[tuple[str, tuple[str, ...]]]
    filters: tuple[FilterEntry, ...]
    attach: FrozenDict[str, frozenset[str]]
    attach_own: FrozenDict[str, int]
    on: tuple[tuple[str, int], ...]                     # ``nodes``: (node, next state)
    choices: tuple[tuple[str, tuple[int, ...]], ...] = ()   # nodes where it may move to any of several
    held_pods: FrozenDict[str, int] = FrozenDict()      # node -> pods holding a PV of another driver
    held_attach: FrozenDict[str, FrozenDict[str, int]] = FrozenDict()   # node -> driver -> count moved
    frees: tuple[tuple[str, tuple[tuple[str, int], ...]], ...] = ()     # node -> (PV held, state) per choice
    run_refusals: tuple[tuple[str, str, tuple[str, ...]], ...] = ()     # ``otherRunRefusals``


@record
class BindSpec:
    """The binding group a pod type's deployment binds in (v1 ``binds``)."""

    claims: tuple[str, ...]                             # namespace/name
    states: tuple[BindState, ...]
    interchangeable: tuple[frozenset[str], ...] = ()    # PVs the states name one of (``BindingGroup``)


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
    binds = None if body.get("binds") is None else _binds(body["binds"], path + ("binds",), node_names)
    return VolumeSpec(prefilter, tuple(filters), parse_run_refusals(body, path, node_names), claims, rwop, attach,
                      FrozenDict(own), disks, binds)


def parse_run_refusals(body: dict, path: Path, node_names: set[str], verdict=None
                       ) -> tuple[tuple[str, str, tuple[str, ...]], ...]:
    """``otherRunRefusals``: (node, plugin, reasons) per entry, distinct (``verdict``: the plugin's
    check, the volume plugins' by default)."""
    verdict = verdict or _verdict
    out = []
    for i, item in enumerate(sequence(body.get("otherRunRefusals"), path + ("otherRunRefusals",))):
        where = path + ("otherRunRefusals", i)
        entry = mapping(item, where, ("node", "plugin", "reasons"), required=("node", "plugin", "reasons"))
        node = string(entry["node"], where + ("node",))
        if node not in node_names:
            raise FieldError(where + ("node",), f"unknown node '{node}'")
        found = (node, *verdict({k: entry[k] for k in ("plugin", "reasons")}, where))
        if found in out:
            raise FieldError(where, "listed twice")
        out.append(found)
    return tuple(out)


def _verdicts(body: dict, path: Path, node_names: set[str]):
    """``preFilter`` and ``filter`` of a mapping: (verdict or None, ((node, plugin, reasons), ...))."""
    prefilter = None
    if body.get("preFilter") is not None:
        prefilter = _verdict(body["preFilter"], path + ("preFilter",))
    filters = []
    for i, item in enumerate(sequence(body.get("filter"), path + ("filter",))):
        where = path + ("filter", i)
        entry = mapping(item, where, ("node", "plugin", "reasons", "otherRuns"), required=("node", "plugin", "reasons"))
        node = string(entry["node"], where + ("node",))
        if node not in node_names:
            raise FieldError(where + ("node",), f"unknown node '{node}'")
        plugin, reasons = _verdict({k: entry[k] for k in ("plugin", "reasons")}, where)
        others = tuple(_verdict(other, where + ("otherRuns", k))
                       for k, other in enumerate(sequence(entry.get("otherRuns"), where + ("otherRuns",))))
        if (plugin, reasons) in others or len(set(others)) != len(others):
            raise FieldError(where + ("otherRuns",), "expected verdicts distinct from each other and from the entry's")
        filters.append((node, plugin, reasons, others))
    return prefilter, tuple(filters)


def _binds(raw: object, path: Path, node_names: set[str]) -> BindSpec:
    body = mapping(raw, path, ("claims", "states", "interchangeable"), required=("claims", "states"))
    claims = tuple(string_list(body["claims"], path + ("claims",)))
    if not claims or len(set(claims)) != len(claims) or any("/" not in c for c in claims):
        raise FieldError(path + ("claims",), "expected distinct claim names namespace/name")
    raw_states = sequence(body["states"], path + ("states",))
    states = []
    for i, item in enumerate(raw_states):
        where = path + ("states", i)
        entry = mapping(item, where, ("bound", "nodes", "preFilter", "filter", "otherRunRefusals", "attach", "attachOwn",
                                      "heldPods", "heldAttach", "frees"), required=("bound",))
        bound = sequence(entry["bound"], where + ("bound",))
        if len(bound) != len(claims):
            raise FieldError(where + ("bound",), f"expected {len(claims)} entries (one per claim)")
        for k, outcome in enumerate(bound):
            if outcome is not None:
                string(outcome, where + ("bound", k))
        if i == 0 and any(o is not None for o in bound):
            raise FieldError(where + ("bound",), "the first state is the input's: every claim unbound")
        prefilter, filters = _verdicts(entry, where, node_names)
        own = {driver: integer(count, where + ("attachOwn", driver), minimum=0)
               for driver, count in _by_driver(entry.get("attachOwn"), where + ("attachOwn",)).items()}
        on, choices = [], []
        for node, nxt in _by_driver(entry.get("nodes"), where + ("nodes",), "node names").items():
            if node not in node_names:
                raise FieldError(where + ("nodes", node), f"unknown node '{node}'")
            targets = state_targets(nxt, where + ("nodes", node), len(raw_states))
            on.append((node, targets[0]))
            if len(targets) > 1:
                choices.append((node, targets))
        states.append(BindState(tuple(bound), prefilter, filters, parse_attached(entry.get("attach"), where + ("attach",)),
                                FrozenDict(own), tuple(on), tuple(choices),
                                *_held(entry, where, node_names, len(raw_states)),
                                run_refusals=parse_run_refusals(entry, where, node_names)))
    if not states:
        raise FieldError(path + ("states",), "at least the input's state is needed")
    if len({s.bound for s in states}) != len(states):
        raise FieldError(path + ("states",), "a joint binding is listed twice")
    alike = []
    for i, item in enumerate(sequence(body.get("interchangeable"), path + ("interchangeable",))):
        names = string_list(item, path + ("interchangeable", i))
        if len(names) < 2 or len(set(names)) != len(names):
            raise FieldError(path + ("interchangeable", i), "expected two or more distinct PV names")
        alike.append(frozenset(names))
    return BindSpec(claims, tuple(states), tuple(alike))


def state_targets(raw: object, path: Path, count: int) -> tuple[int, ...]:
    """A ``nodes`` entry: the state deploying there moves the group to, or the list of those the
    scheduler may choose between (distinct; the first is the input order's)."""
    if not isinstance(raw, list):
        return (integer(raw, path, minimum=0, maximum=count - 1),)
    targets = tuple(integer(k, path + (i,), minimum=0, maximum=count - 1) for i, k in enumerate(raw))
    if len(targets) < 2 or len(set(targets)) != len(targets):
        raise FieldError(path, "expected a state, or a list of two or more distinct states")
    return targets


def _held(entry: dict, where: Path, node_names: set[str], count: int):
    """A state's ``heldPods``, ``heldAttach`` and ``frees`` (``k8s_volume_bindings._held_fields``)."""
    def nodes(key: str) -> dict:
        found = _by_driver(entry.get(key), where + (key,), "node names")
        for node in found:
            if node not in node_names:
                raise FieldError(where + (key, node), f"unknown node '{node}'")
        return found
    pods = {n: integer(c, where + ("heldPods", n), minimum=1) for n, c in nodes("heldPods").items()}
    moved = {n: FrozenDict({d: integer(v, where + ("heldAttach", n, d)) for d, v in
                            _by_driver(raw, where + ("heldAttach", n)).items()}) for n, raw in nodes("heldAttach").items()}
    frees = []
    for n, raw in nodes("frees").items():
        choices = _by_driver(raw, where + ("frees", n), "held volumes")
        if not choices or n not in pods:
            raise FieldError(where + ("frees", n), "expected a held volume per choice, on a node of heldPods")
        frees.append((n, tuple((what, integer(k, where + ("frees", n, what), minimum=0, maximum=count - 1))
                               for what, k in choices.items())))
    return FrozenDict(pods), FrozenDict(moved), tuple(frees)


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


def _by_driver(raw: object, path: Path, keys: str = "CSI driver names") -> dict:
    if raw is None:
        return {}
    if not isinstance(raw, dict):
        raise FieldError(path, f"expected a mapping from {keys}")
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
