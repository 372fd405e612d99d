"""What one pod asks of a node: effective requests and host ports, as the kube-scheduler sees them.

Effective requests follow ``resource.PodRequests`` (k8s.io/component-helpers,
the function NodeResourcesFit calls), after the API server's defaulting:

1. A container's request for a resource defaults to its limit when the
   request is absent (``SetDefaults_Pod``).
2. Regular containers and restartable init containers (sidecars,
   ``restartPolicy: Always``) run together: their requests add up.
3. A regular init container runs alone beside the sidecars declared before
   it: its use is its requests plus theirs. The pod needs the maximum, per
   resource, of (2) and every such init use.
4. Pod-level ``spec.resources.requests`` (cpu, memory, hugepages-*), when set,
   replace the aggregate for those resources. When pod-level limits are set,
   missing pod-level requests default to the containers' aggregate request,
   else to the pod-level limit (``defaultPodRequests``).
5. ``spec.overhead`` (RuntimeClass) is added last.

For a bound pod, ``status`` counts too (in-place resize, GA in v1.35): a
container or sidecar whose status carries ``resources`` is charged, per
resource, the largest of its spec request, ``resources.requests`` and
``allocatedResources``; without the spec when the pod's ``PodResizePending``
condition says ``Infeasible`` (``determineContainerReqs``).

Amounts are integers in model units (millicores for cpu, base units
otherwise); zero amounts are dropped because the scheduler never checks them.
"""

from __future__ import annotations

from typing import Optional

from symreach.model import ANY_HOST_IP
from symreach.loader.quantities import QuantityError, parse_quantity
from symreach.loader.shapes import FieldError, Path, type_name

Resources = dict[str, int]

CPU = "cpu"
MEMORY = "memory"
HUGEPAGES_PREFIX = "hugepages-"


def is_pod_level_resource(name: str) -> bool:
    """``IsSupportedPodLevelResource``: cpu, memory and hugepages-*."""
    return name in (CPU, MEMORY) or name.startswith(HUGEPAGES_PREFIX)


def resource_list(raw: object, path: Path) -> Resources:
    """A Kubernetes ResourceList (name -> quantity) in model units."""
    if raw is None:
        return {}
    if not isinstance(raw, dict):
        raise FieldError(path, f"expected a mapping of resource quantities, got {type_name(raw)}")
    out: Resources = {}
    for name, value in raw.items():
        if not isinstance(name, str) or not name:
            raise FieldError(path, f"resource names must be non-empty strings, got {name!r}")
        try:
            out[name] = parse_quantity(value, name)
        except QuantityError as err:
            raise FieldError(path + (name,), str(err)) from None
    return out


def _resources_field(container: dict, path: Path) -> dict:
    resources = container.get("resources")
    if resources is None:
        return {}
    if not isinstance(resources, dict):
        raise FieldError(path + ("resources",), f"expected a mapping, got {type_name(resources)}")
    return resources


def container_requests(container: object, path: Path) -> Resources:
    """A container's requests after defaulting: a missing request takes the limit's value."""
    if not isinstance(container, dict):
        raise FieldError(path, f"expected a container (a mapping), got {type_name(container)}")
    resources = _resources_field(container, path)
    requests = resource_list(resources.get("requests"), path + ("resources", "requests"))
    limits = resource_list(resources.get("limits"), path + ("resources", "limits"))
    for name, amount in limits.items():
        requests.setdefault(name, amount)
    return requests


def _add(into: Resources, other: Resources) -> None:
    for name, amount in other.items():
        into[name] = into.get(name, 0) + amount


def _max(into: Resources, other: Resources) -> None:
    """Per-resource maximum; a resource requested at 0 is still *listed* (it stops defaulting)."""
    for name, amount in other.items():
        if name not in into or amount > into[name]:
            into[name] = amount


def containers(spec: dict, field: str, path: Path) -> list:
    raw = spec.get(field)
    if raw is None:
        return []
    if not isinstance(raw, list):
        raise FieldError(path + (field,), f"expected a list of containers, got {type_name(raw)}")
    return raw


def is_sidecar(container: dict) -> bool:
    """A restartable init container: starts before the app and keeps running beside it."""
    return container.get("restartPolicy") == "Always"


def aggregate_container_requests(spec: dict, path: Path, status: Optional[dict] = None) -> Resources:
    """``AggregateContainerRequests``: max(sum of long-running containers, every init step)."""
    held = _HeldResources(status)
    total: Resources = {}
    for i, container in enumerate(containers(spec, "containers", path)):
        _add(total, held.of(container, container_requests(container, path + ("containers", i))))
    sidecars: Resources = {}
    init_peak: Resources = {}
    for i, container in enumerate(containers(spec, "initContainers", path)):
        own = container_requests(container, path + ("initContainers", i))
        if is_sidecar(container):
            own = held.of(container, own)
            _add(total, own)
            _add(sidecars, own)
            step = dict(sidecars)  # the sidecar runs with those declared before it
        else:
            step = dict(own)
            _add(step, sidecars)
        _max(init_peak, step)
    _max(total, init_peak)
    return total


class _HeldResources:
    """What a running container holds after an in-place resize, from the pod's status."""

    def __init__(self, status: Optional[dict]) -> None:
        status = status if isinstance(status, dict) else {}
        self.statuses: dict[str, tuple[dict, Path]] = {}
        for field in ("containerStatuses", "initContainerStatuses"):
            for i, cs in enumerate(_list(status.get(field))):
                if isinstance(cs, dict) and isinstance(cs.get("name"), str):
                    self.statuses.setdefault(cs["name"], (cs, ("status", field, i)))
        self.infeasible = any(isinstance(c, dict) and c.get("type") == "PodResizePending"
                              and c.get("reason") == "Infeasible" for c in _list(status.get("conditions")))

    def of(self, container: dict, requests: Resources) -> Resources:
        cs, path = self.statuses.get(container.get("name"), ({}, ()))  # type: ignore[arg-type]
        actual = cs.get("resources")
        if actual is None:
            return requests
        if not isinstance(actual, dict):
            raise FieldError(path + ("resources",), f"expected a mapping, got {type_name(actual)}")
        out: Resources = {} if self.infeasible else dict(requests)
        _max(out, resource_list(actual.get("requests"), path + ("resources", "requests")))
        _max(out, resource_list(cs.get("allocatedResources"), path + ("allocatedResources",)))
        return out


def _list(value: object) -> list:
    return value if isinstance(value, list) else []


def pod_requests(spec: object, path: Path = (), status: Optional[dict] = None) -> Resources:
    """``PodRequests`` with default options: what NodeResourcesFit charges a node for this pod
    (with ``status``: what a bound pod holds, ``UseStatusResources``)."""
    if not isinstance(spec, dict):
        raise FieldError(path, f"expected a pod spec (a mapping), got {type_name(spec)}")
    requests = aggregate_container_requests(spec, path, status)
    # The API server defaulted pod-level requests from the spec when the pod was created.
    spec_requests = requests if status is None else aggregate_container_requests(spec, path)
    pod_level = _pod_level_requests(spec, spec_requests, path)
    if any(is_pod_level_resource(name) for name in pod_level):
        for name, amount in pod_level.items():
            if is_pod_level_resource(name):
                requests[name] = amount
    _add(requests, resource_list(spec.get("overhead"), path + ("overhead",)))
    return {name: amount for name, amount in requests.items() if amount > 0}


def _pod_level_requests(spec: dict, aggregate: Resources, path: Path) -> Resources:
    """``spec.resources.requests`` after ``defaultPodRequests`` (v1.35)."""
    raw = spec.get("resources")
    if raw is None:
        return {}
    if not isinstance(raw, dict):
        raise FieldError(path + ("resources",), f"expected a mapping, got {type_name(raw)}")
    requests = resource_list(raw.get("requests"), path + ("resources", "requests"))
    limits = resource_list(raw.get("limits"), path + ("resources", "limits"))
    if limits:
        # defaultPodRequests: the containers' aggregate first, the pod-level limit
        # only for resources no container requests.
        for name, amount in aggregate.items():
            if is_pod_level_resource(name):
                requests.setdefault(name, amount)
        for name, amount in limits.items():
            if is_pod_level_resource(name):
                requests.setdefault(name, amount)
    return requests


_BYTE_RESOURCES = (MEMORY, "ephemeral-storage")
_BINARY_SUFFIXES = (("Ti", 2**40), ("Gi", 2**30), ("Mi", 2**20), ("Ki", 2**10))


def format_amount(resource: str, amount: int) -> object:
    """A model-unit amount as a quantity the v1 loader reads back to the same integer.

    Readable where exact: ``1500m`` or ``2`` cpu, ``256Mi`` memory; otherwise a plain integer.
    """
    if resource == CPU:
        return str(amount // 1000) if amount % 1000 == 0 else f"{amount}m"
    if resource in _BYTE_RESOURCES or resource.startswith(HUGEPAGES_PREFIX):
        for suffix, size in _BINARY_SUFFIXES:
            if amount >= size and amount % size == 0:
                return f"{amount // size}{suffix}"
    return amount


def format_requests(requests: Resources) -> dict[str, object]:
    return {name: format_amount(name, requests[name]) for name in sorted(requests)}


PROTOCOLS = ("SCTP", "TCP", "UDP")


def host_ports(spec: dict, path: Path = ()) -> tuple[list[dict[str, object]], list[str]]:
    """Host ports the NodePorts filter checks (``GetHostPorts``), and warnings.

    Ports of ``spec.containers`` and of restartable init containers (sidecars)
    count. With ``hostNetwork: true`` the API server defaults every hostPort to
    its containerPort. An empty hostIP means 0.0.0.0 (every address).
    """
    out: list[dict[str, object]] = []
    seen: set[tuple[int, str, str]] = set()
    host_network = spec.get("hostNetwork") is True
    listed = [("containers", i, c) for i, c in enumerate(containers(spec, "containers", path))]
    listed += [("initContainers", i, c) for i, c in enumerate(containers(spec, "initContainers", path))
               if isinstance(c, dict) and is_sidecar(c)]
    for kind, i, container in listed:
        if not isinstance(container, dict):
            raise FieldError(path + (kind, i), f"expected a container (a mapping), got {type_name(container)}")
        ports = container.get("ports") or []
        if not isinstance(ports, list):
            raise FieldError(path + (kind, i, "ports"), f"expected a list, got {type_name(ports)}")
        for j, port in enumerate(ports):
            where = path + (kind, i, "ports", j)
            if not isinstance(port, dict):
                raise FieldError(where, f"expected a container port (a mapping), got {type_name(port)}")
            number = port.get("hostPort")
            if not number and host_network:
                number = port.get("containerPort")
            if not number:
                continue
            if isinstance(number, bool) or not isinstance(number, int) or not 0 < number < 65536:
                raise FieldError(where + ("hostPort",), f"expected a port number 1-65535, got {number!r}")
            protocol = port.get("protocol") or "TCP"
            if protocol not in PROTOCOLS:  # the API server's validation, in its words
                raise FieldError(where + ("protocol",), f"unsupported value {protocol!r}: supported values: "
                                 + ", ".join(f'"{p}"' for p in PROTOCOLS))
            host_ip = port.get("hostIP") or ANY_HOST_IP
            if not isinstance(host_ip, str):
                raise FieldError(where + ("hostIP",), f"expected a string, got {type_name(host_ip)}")
            if (number, protocol, host_ip) in seen:
                continue
            seen.add((number, protocol, host_ip))
            entry: dict[str, object] = {"port": number, "protocol": protocol}
            if host_ip != ANY_HOST_IP:
                entry["hostIP"] = host_ip
            out.append(entry)
    out.sort(key=lambda p: (p["port"], p["protocol"], str(p.get("hostIP", ""))))
    return out, []


def describe(requests: Optional[Resources]) -> str:
    """``cpu=1500m, memory=1073741824`` for reports."""
    if not requests:
        return "nothing"
    return ", ".join(f"{k}={format_amount(k, v)}" for k, v in sorted(requests.items()))
