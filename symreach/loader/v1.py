"""Instance format v1 (SPEC 3.1): plain data -> label-level specs.

This module checks the top-level structure, nodes, namespaces, pod types and
the initial configuration. Label matching and index sets are ``resolve``'s
job; queries are ``query``'s. Every problem is a ``FieldError`` with a path.
"""

from __future__ import annotations

from typing import Optional

from symreach.loader.budgets import SECTIONS as BUDGET_SECTIONS, BudgetSpec, parse_budgets
from symreach.loader.controllers import SECTION as CONTROLLERS, ControllerSpec, parse_controllers
from symreach.loader.labels import Placement, parse_taint
from symreach.loader.kube_objects import AffinitySpec, SpreadSpec, parse_affinity, parse_spread_constraints, parse_tolerations
from symreach.model import ANY_HOST_IP, KUBERNETES, PAPER, PODS_RESOURCE, PROFILES, FrozenDict, HostPort, Node, Pair
from symreach.loader.quantities import QuantityError, parse_count, parse_quantity
from symreach.loader.dra import DraSpec, parse_dra
from symreach.loader.volumes import VolumeSpec, parse_attached, parse_volumes
from symreach.loader.shapes import FieldError, Path, boolean, choice, integer, mapping, sequence, string, string_map, type_name
from symreach.records import record

VERSION = 1
HOSTNAME_LABEL = "kubernetes.io/hostname"
NAMESPACE_NAME_LABEL = "kubernetes.io/metadata.name"
DEFAULT_NAMESPACE = "default"
PROTOCOLS = ("TCP", "UDP", "SCTP")

TOP_FIELDS = ("version", "semantics", "namespaces", "nodes", "podTypes", "initial", "query", "groups", CONTROLLERS) + BUDGET_SECTIONS
NODE_FIELDS = ("name", "labels", "capacity", "taints", "unschedulable", "attachedVolumes")
POD_FIELDS = (
    "name", "namespace", "labels", "requests", "creatable", "nodeSelector", "nodeName", "tolerations",
    "affinity", "topologySpreadConstraints", "hostPorts", "maxPerNode", "terminating", "volumes", "staticPod",
    "dra",
)


@record
class PodTypeSpec:
    """A pod type before label resolution; ``path`` locates it for errors."""

    name: str
    namespace: str
    labels: FrozenDict[str, str]
    requests: FrozenDict[str, int]
    creatable: bool
    placement: Placement
    affinity: AffinitySpec
    spread: tuple[SpreadSpec, ...]
    host_ports: frozenset[HostPort]
    max_per_node: Optional[int]
    manifest: FrozenDict[str, object]
    path: Path
    # Pods being deleted (``metadata.deletionTimestamp``): PodTopologySpread does not count them.
    terminating: bool = False
    volumes: VolumeSpec = VolumeSpec()
    static_pod: bool = False
    dra: DraSpec = DraSpec()


@record
class Document:
    """A checked v1 document; ``query`` is left raw (it needs the resolved instance)."""

    profile: str
    namespaces: FrozenDict[str, FrozenDict[str, str]]
    nodes: tuple[Node, ...]
    pod_types: tuple[PodTypeSpec, ...]
    initial: FrozenDict[Pair, int]
    query: object
    groups: object = None   # raw; ``loader.groups`` checks it against the resolved instance
    budgets: tuple[BudgetSpec, ...] = ()
    controllers: tuple[ControllerSpec, ...] = ()


def parse_document(raw: object, *, default_hostname: bool = True) -> Document:
    """``default_hostname``: give nodes without ``kubernetes.io/hostname`` one (hand-written
    v1 nodes, SPEC 3.1); Kubernetes Node objects have only the labels they carry."""
    body = mapping(raw, (), TOP_FIELDS, required=("version",))
    version = body["version"]
    if isinstance(version, bool) or version != VERSION:
        raise FieldError(("version",), f"unsupported version {version!r} (this symreach reads version {VERSION})")
    profile = choice(body.get("semantics"), ("semantics",), PROFILES, default=KUBERNETES)
    declared = _namespaces(body.get("namespaces"))
    nodes = _nodes(body.get("nodes"), default_hostname)
    pods = _pod_types(body.get("podTypes"), profile, {n.name for n in nodes})
    namespaces = dict(declared)
    for pod in pods:
        namespaces.setdefault(pod.namespace, FrozenDict({NAMESPACE_NAME_LABEL: pod.namespace}))
    initial = _initial(body.get("initial"), pods, nodes)
    return Document(profile, FrozenDict(namespaces), nodes, pods, initial, body.get("query"), body.get("groups"),
                    parse_budgets(body), parse_controllers(body))


def _namespaces(raw: object) -> dict[str, FrozenDict[str, str]]:
    out: dict[str, FrozenDict[str, str]] = {}
    for i, item in enumerate(sequence(raw, ("namespaces",))):
        path = ("namespaces", i)
        body = mapping(item, path, ("name", "labels"), required=("name",))
        name = string(body["name"], path + ("name",))
        if name in out:
            raise FieldError(path + ("name",), f"duplicate namespace '{name}'")
        labels = dict(string_map(body.get("labels"), path + ("labels",)))
        labels[NAMESPACE_NAME_LABEL] = name  # the API server always sets it to the name
        out[name] = FrozenDict(labels)
    return out


def _nodes(raw: object, default_hostname: bool = True) -> tuple[Node, ...]:
    nodes: list[Node] = []
    names: set[str] = set()
    for i, item in enumerate(sequence(raw, ("nodes",))):
        path = ("nodes", i)
        body = mapping(item, path, NODE_FIELDS, required=("name",))
        name = string(body["name"], path + ("name",))
        if name in names:
            raise FieldError(path + ("name",), f"duplicate node name '{name}'")
        names.add(name)
        labels = dict(string_map(body.get("labels"), path + ("labels",)))
        if default_hostname:
            labels.setdefault(HOSTNAME_LABEL, name)
        taints = tuple(parse_taint(t, path + ("taints", j)) for j, t in enumerate(sequence(body.get("taints"), path + ("taints",))))
        seen = set()
        for j, taint in enumerate(taints):
            if (taint.key, taint.effect) in seen:
                raise FieldError(path + ("taints", j), f"duplicate taint '{taint.key}:{taint.effect}'")
            seen.add((taint.key, taint.effect))
        nodes.append(Node(
            name=name,
            labels=FrozenDict(labels),
            capacity=_resources(body.get("capacity"), path + ("capacity",), allow_pods=True),
            taints=taints,
            unschedulable=boolean(body.get("unschedulable"), path + ("unschedulable",), False),
            attached=parse_attached(body.get("attachedVolumes"), path + ("attachedVolumes",)),
        ))
    return tuple(nodes)


def _resources(raw: object, path: Path, *, allow_pods: bool) -> FrozenDict[str, int]:
    """A resource list: cpu in millicores, ``pods`` a whole count, others in base units."""
    if raw is None:
        return FrozenDict()
    if not isinstance(raw, dict):
        raise FieldError(path, f"expected a mapping of resource quantities, got {type_name(raw)}")
    out: dict[str, int] = {}
    for name, value in raw.items():
        if not isinstance(name, str) or not name:
            raise FieldError(path, f"resource names must be non-empty strings, got {name!r}")
        if name == PODS_RESOURCE and not allow_pods:
            raise FieldError(path + (name,), "the pods resource is implicit (one per pod); do not request it")
        try:
            out[name] = parse_count(value) if name == PODS_RESOURCE else parse_quantity(value, name)
        except QuantityError as err:
            raise FieldError(path + (name,), str(err)) from None
    return FrozenDict(out)


def _pod_types(raw: object, profile: str, node_names: set[str]) -> tuple[PodTypeSpec, ...]:
    out: list[PodTypeSpec] = []
    names: set[str] = set()
    for i, item in enumerate(sequence(raw, ("podTypes",))):
        spec = _pod_type(item, ("podTypes", i), profile, node_names)
        if spec.name in names:
            raise FieldError(spec.path + ("name",), f"duplicate pod type name '{spec.name}'")
        names.add(spec.name)
        out.append(spec)
    return tuple(out)


def _pod_type(raw: object, path: Path, profile: str, node_names: set[str]) -> PodTypeSpec:
    body = mapping(raw, path, POD_FIELDS, required=("name",))
    name = string(body["name"], path + ("name",))
    namespace = DEFAULT_NAMESPACE
    if body.get("namespace") is not None:
        namespace = string(body["namespace"], path + ("namespace",))
    node_name = None
    if body.get("nodeName") is not None:
        node_name = string(body["nodeName"], path + ("nodeName",))
        if node_name not in node_names:
            raise FieldError(path + ("nodeName",), f"unknown node '{node_name}'")
    affinity = parse_affinity(body.get("affinity"), path + ("affinity",))
    placement = Placement(
        node_name=node_name,
        node_selector=FrozenDict(string_map(body.get("nodeSelector"), path + ("nodeSelector",))),
        node_affinity=affinity.node_affinity,
        tolerations=parse_tolerations(body.get("tolerations"), path + ("tolerations",)),
    )
    max_per_node = None
    if body.get("maxPerNode") is not None:
        max_per_node = integer(body["maxPerNode"], path + ("maxPerNode",), minimum=1)
    return PodTypeSpec(
        name=name,
        namespace=namespace,
        labels=FrozenDict(string_map(body.get("labels"), path + ("labels",))),
        requests=_resources(body.get("requests"), path + ("requests",), allow_pods=profile == PAPER),
        creatable=boolean(body.get("creatable"), path + ("creatable",), True),
        placement=placement,
        affinity=affinity,
        spread=parse_spread_constraints(body.get("topologySpreadConstraints"), path + ("topologySpreadConstraints",)),
        host_ports=_host_ports(body.get("hostPorts"), path + ("hostPorts",), profile),
        max_per_node=max_per_node,
        manifest=freeze(body),
        static_pod=boolean(body.get("staticPod"), path + ("staticPod",), False),
        path=path,
        terminating=boolean(body.get("terminating"), path + ("terminating",), False),
        volumes=_volumes(body.get("volumes"), path + ("volumes",), profile, node_names),
        dra=_dra(body.get("dra"), path + ("dra",), profile, node_names),
    )


def _volumes(raw: object, path: Path, profile: str, node_names: set[str]) -> VolumeSpec:
    if raw is not None and profile == PAPER:
        raise FieldError(path, "volumes are not part of the paper semantics (use semantics: kubernetes)")
    return parse_volumes(raw, path, node_names)


def _dra(raw: object, path: Path, profile: str, node_names: set[str]) -> DraSpec:
    if raw is not None and profile == PAPER:
        raise FieldError(path, "dra is not part of the paper semantics (use semantics: kubernetes)")
    return parse_dra(raw, path, node_names)


def _host_ports(raw: object, path: Path, profile: str) -> frozenset[HostPort]:
    items = sequence(raw, path)
    if items and profile == PAPER:
        raise FieldError(path, "host ports are not part of the paper semantics (use semantics: kubernetes)")
    ports: list[HostPort] = []
    for i, item in enumerate(items):
        body = mapping(item, path + (i,), ("port", "protocol", "hostIP"), required=("port",))
        port = integer(body["port"], path + (i, "port"), minimum=1, maximum=65535)
        protocol = choice(body.get("protocol"), path + (i, "protocol"), PROTOCOLS, default="TCP")
        host_ip = ANY_HOST_IP
        if body.get("hostIP"):
            host_ip = string(body["hostIP"], path + (i, "hostIP"))
        entry = HostPort(port, protocol, host_ip)
        if entry in ports:
            raise FieldError(path + (i,), f"duplicate host port {port}/{protocol} on {host_ip}")
        ports.append(entry)
    return frozenset(ports)


def _initial(raw: object, pods: tuple[PodTypeSpec, ...], nodes: tuple[Node, ...]) -> FrozenDict[Pair, int]:
    pod_index = {p.name: i for i, p in enumerate(pods)}
    node_index = {n.name: i for i, n in enumerate(nodes)}
    out: dict[Pair, int] = {}
    for i, item in enumerate(sequence(raw, ("initial",))):
        path = ("initial", i)
        body = mapping(item, path, ("pod", "node", "count"), required=("pod", "node"))
        pod = string(body["pod"], path + ("pod",))
        node = string(body["node"], path + ("node",))
        if pod not in pod_index:
            raise FieldError(path + ("pod",), f"unknown pod type '{pod}'")
        if node not in node_index:
            raise FieldError(path + ("node",), f"unknown node '{node}'")
        count = 1 if body.get("count") is None else integer(body["count"], path + ("count",), minimum=1)
        pair = (pod_index[pod], node_index[node])
        if pair in out:
            raise FieldError(path, f"duplicate entry for pod '{pod}' on node '{node}'")
        out[pair] = count
    return FrozenDict(out)


def freeze(value: object) -> object:
    """Deep immutable copy (dict -> FrozenDict, list -> tuple) so the manifest stays hashable."""
    if isinstance(value, dict):
        return FrozenDict({k: freeze(v) for k, v in value.items()})
    if isinstance(value, list):
        return tuple(freeze(v) for v in value)
    return value


def thaw(value: object) -> object:
    """Inverse of ``freeze``: plain dicts and lists again, e.g. to dump a manifest as YAML."""
    if isinstance(value, FrozenDict):
        return {k: thaw(v) for k, v in value.items()}
    if isinstance(value, tuple):
        return [thaw(v) for v in value]
    return value
