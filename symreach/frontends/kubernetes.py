"""Kubernetes objects -> a format-v1 document (SPEC 3, input 2).

Reads manifests and dumps (``kubectl get nodes,pods,deployments,... -A -o
yaml``, multi-document YAML, ``kind: List``) and writes the same plain
document a user would write by hand (SPEC 3.1), which the v1 loader then turns
into the model. This front end never builds model objects itself.

What becomes what:

- Node -> node: labels, ``status.allocatable`` (else ``status.capacity``) as
  capacity, including ``pods``; taints; ``spec.unschedulable``.
- Namespace -> namespace with its labels (for namespaceSelector).
- Deployment, StatefulSet, ReplicaSet, ReplicationController, Job, CronJob ->
  one pod type per workload, from its pod template, named ``ns/name``.
  A ReplicaSet owned by a Deployment of the input (a Job owned by a CronJob)
  is the same workload and adds no type.
- DaemonSet -> one type per node, ``ns/name@node``: the controller pins each
  pod with required node affinity ``matchFields metadata.name In [node]``,
  ANDed here with the template's own node affinity (which decides where the
  controller creates pods), and adds its standard tolerations.
- Pod without a controller -> its own creatable type ``ns/name`` (it can be
  applied again). Static (mirror) pods are not creatable (and marked
  ``staticPod``: protected under operator moves).
- PodDisruptionBudget -> a v1 ``disruptionBudgets`` entry (name, namespace,
  selector, minAvailable/maxUnavailable, unhealthyPodEvictionPolicy),
  checked strictly by the v1 loader (``loader/search_budget.py``).
- Pod with ``spec.nodeName`` and not finished -> one pod of the initial
  configuration, attached to its workload's type through ownerReferences
  (Pod -> ReplicaSet -> Deployment, Pod -> Job -> CronJob, DaemonSet per
  node); a pod whose scheduling-relevant spec differs from its workload's
  template (an old rollout revision) gets a non-creatable type of its own.
  A pod whose controller is not in the input joins a type with an identical
  scheduling-relevant spec, else a type named after that controller.

Other kinds are skipped and counted in the ``Report``, never errors. Missing
required fields raise ``InputError`` naming the file, the line, the object
(document, kind, name) and the field.
"""

from __future__ import annotations

import os
import re
from collections import Counter
from dataclasses import dataclass, field, replace
from typing import Optional, Union

from symreach import search_budget
from symreach.errors import InputError
from symreach.frontends.k8s_controllers import (
    TEMPLATE_PATHS,
    controller_base_name,
    stored,
    without_label_keys,
    controller_ref,
    implied_parent,
    pin_daemon_pod,
    pinned_node,
    required_node_terms,
    signature,
    term_nonempty,
    without_controller_labels,
)
from symreach.frontends.k8s_dra import DRA_KINDS, DraIndex, dra_caveats, dra_field, pod_dra
from symreach.frontends.k8s_dra import DRA_FIELD_TYPES, NODE_SELECTORS, POD_FIELDS, concrete_paths, node_selector_problem
from symreach.frontends.k8s_dra_state import DraUser, dra_user, explore, owned_claims
from symreach.frontends.k8s_groups import GROUP_KINDS, GroupIndex
from symreach.frontends.k8s_nominated import CATEGORY as NOMINATED, NominationIndex
from symreach.frontends.k8s_requests import format_requests, host_ports, pod_requests
from symreach.frontends.k8s_volume_bindings import Binder, bind_all, binder
from symreach.frontends.k8s_volume_filters import own_volumes, pod_volumes, verdict_fields
from symreach.frontends.k8s_volumes import VOLUME_KINDS, VolumeIndex, statefulset_claim
from symreach.frontends.replica_targets import ReplicaTargets
from symreach.frontends.k8s_source import Lines, is_kubernetes_document, read_documents, read_documents_text
from symreach.model import ATTACH_PREFIX, KUBERNETES, Instance
from symreach.run import RunContext
from symreach.loader.shapes import FieldError, Path, copy_plain, format_path, type_name

__all__ = [
    "Report", "is_kubernetes_document", "kubernetes_to_v1", "load_kubernetes", "load_kubernetes_documents",
    "load_kubernetes_with_report", "read_documents", "read_documents_text",
]

USED_KINDS = frozenset(TEMPLATE_PATHS) | {"Node", "Namespace", "Pod", "PodDisruptionBudget"} | VOLUME_KINDS | GROUP_KINDS | DRA_KINDS
CLUSTER_SCOPED = frozenset({"Node", "Namespace", "PersistentVolume", "StorageClass", "ClusterRole",
                            "ClusterRoleBinding", "PriorityClass", "RuntimeClass", "CustomResourceDefinition"})

FINISHED_PHASES = ("Succeeded", "Failed")
MIRROR_ANNOTATION = "kubernetes.io/config.mirror"
DEFAULT_NAMESPACE = "default"
DEFAULT_SCHEDULER = "default-scheduler"
_CAVEATS = "(caveats)"           # a pod body's caveats until the type is named
_BINDER = "(binder)"             # a pod body's claim binder until the type is named
_DRA_USER = "(dra user)"         # a pod body's claims as DRA state reads them, until the type is named


# (path, type) of the volume objects' fields that decide placement (``k8s_volumes``).
VOLUME_FIELD_TYPES: dict[str, tuple[tuple[Path, type], ...]] = {
    "PersistentVolume": ((("spec",), dict), (("spec", "nodeAffinity"), dict),
                         (("spec", "nodeAffinity", "required"), dict),
                         (("spec", "nodeAffinity", "required", "nodeSelectorTerms"), list)),
    "PersistentVolumeClaim": ((("spec",), dict), (("spec", "volumeName"), str), (("spec", "storageClassName"), str)),
    "StorageClass": ((("volumeBindingMode",), str), (("provisioner",), str), (("allowedTopologies",), list)),
}


@dataclass
class Report:
    """What the conversion read, used and left out. Warnings never stop it."""

    kinds: dict[str, int] = field(default_factory=dict)        # objects read, per kind
    skipped: dict[str, int] = field(default_factory=dict)      # kinds not used, with counts
    nodes: int = 0
    pod_types: int = 0
    pods_attached: int = 0                                     # running pods in sigma0
    pods_not_counted: dict[str, int] = field(default_factory=dict)  # reason -> count
    attachments: dict[str, str] = field(default_factory=dict)  # "ns/pod" -> pod type
    pending: dict[str, str] = field(default_factory=dict)      # pending "ns/pod" -> pod type
    # running "ns/pod" holding other requests than its spec (in-place resize; ``attachments`` has its
    # own non-creatable type) -> the pod type of new pods of its spec
    resized: dict[str, str] = field(default_factory=dict)
    # (pod type, node) -> names of the running pods, for trace export.
    initial_pod_names: dict[tuple[str, str], list[str]] = field(default_factory=dict)
    # (pod type, running pod's name) -> the DRA devices it holds, as a deletion names them (``Step.holding``)
    initial_holdings: dict[tuple[str, str], str] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    # (category, message) for every warning, in order; ``symreach.report.warnings`` groups them.
    notes: list[tuple[str, str]] = field(default_factory=list)
    # (kind, apiVersion, name) of every object of a kind not used, for warnings and query hints.
    skipped_objects: list[tuple[str, str, str]] = field(default_factory=list)
    # workloads that give no pod type, and why (asked about with --pod, the error says so)
    unplaceable: dict[str, str] = field(default_factory=dict)
    # "Kind ns/name" of every workload -> its pod type (a DaemonSet: "ns/name", its row), for operator names
    workloads: dict[str, str] = field(default_factory=dict)
    # pod type -> what its answers depend on that is not modelled (``symreach.report.caveats``)
    caveats: dict[str, list[str]] = field(default_factory=dict)
    # pending pods the scheduler holds nominated to a node, and each pod type's priority (``k8s_nominated``)
    nominated: NominationIndex = field(default_factory=NominationIndex)

    def warn(self, category: str, message: str) -> None:
        """Record a warning: ``category`` groups it on the command line and in ``--json``."""
        self.warnings.append(message)
        self.notes.append((category, message))

    def summary(self) -> str:
        read = ", ".join(f"{n} {k}" for k, n in sorted(self.kinds.items())) or "nothing"
        parts = [f"read {read}",
                 f"{self.nodes} nodes, {self.pod_types} pod types, {self.pods_attached} running pods"]
        if self.skipped:
            parts.append("skipped " + ", ".join(f"{n} {k}" for k, n in sorted(self.skipped.items())))
        if self.pods_not_counted:
            parts.append("not counted: " + ", ".join(f"{n} {r}" for r, n in sorted(self.pods_not_counted.items())))
        if self.warnings:
            parts.append(f"{len(self.warnings)} warning(s)")
        return "; ".join(parts)


# ---- public entry points ----------------------------------------------------

def kubernetes_to_v1(docs: list, filename: str, lines: Optional[list[Lines]] = None) -> tuple[dict, Report]:
    """Convert Kubernetes documents (each an object, a List, or None) into a v1 document."""
    conversion = _Converter(filename, docs, lines).run()
    return conversion.document, conversion.report


def load_kubernetes(path: Union[str, os.PathLike]) -> Instance:
    """Read Kubernetes manifests or a dump from ``path`` and load them as an instance."""
    return load_kubernetes_with_report(path)[0]


def load_kubernetes_with_report(path: Union[str, os.PathLike]) -> tuple[Instance, Report]:
    docs, lines = read_documents(path)
    return load_kubernetes_documents(docs, str(path), lines)


def load_kubernetes_documents(docs: list, filename: str, lines: Optional[list[Lines]] = None,
                              doc_files: Optional[list[tuple[str, int]]] = None,
                              default_namespace: str = DEFAULT_NAMESPACE,
                              run: Optional[RunContext] = None,
                              budget: search_budget.BudgetLike = None) -> tuple[Instance, Report]:
    """Convert, then load through the v1 loader; its errors point back at the source objects.

    ``doc_files`` names (file, document index in it) per document when the
    documents come from several files. ``default_namespace`` is the namespace
    of namespaced objects that name none (``kubectl apply -n NS``). ``budget``:
    the exact searches' (``symreach.search_budget``; None: the active one); where it
    gave another instance than the default would, the instance records it.
    """
    from symreach.loader import load_document

    converter = _Converter(filename, docs, lines, doc_files)
    converter.default_namespace = default_namespace
    converter.context = run if run is not None else RunContext()
    with search_budget.loading(budget) as load:
        conversion = converter.run()
    try:
        instance = load_document(conversion.document, filename, conversion.v1_lines, default_hostname=False)
    except InputError as err:
        raise conversion.relocate(err) from None
    if load.departed:
        runs = load.budget.limit(search_budget.FILTER_RUNS) if search_budget.FILTER_RUNS in load.departed else None
        instance = replace(instance, search_budget=load.budget.text(), filter_runs_work=runs)
    return instance, conversion.report


# ---- the converter ------------------------------------------------------------

@dataclass
class _Object:
    """One Kubernetes object and where it came from."""

    data: dict
    kind: str
    doc: int          # 0-based document index
    item: Optional[int]  # index in a List's items, if any
    lines: Lines      # field path relative to the object -> line
    filename: str = ""   # the input file this object came from
    label: str = ""      # prefix of ``where`` when objects come from several files

    def line(self, sub: Path) -> Optional[int]:
        path = tuple(sub)
        while True:
            if path in self.lines:
                return self.lines[path]
            if not path:
                return None
            path = path[:-1]

    @property
    def where(self) -> str:
        place = f"{self.label}document {self.doc + 1}"
        if self.item is not None:
            place += f", items[{self.item}]"
        if self.kind == "?":
            return place
        name = self.name
        return f"{place} ({self.kind} {name})" if name else f"{place} ({self.kind})"

    @property
    def name(self) -> str:
        """``namespace/name`` (``name`` for cluster-scoped kinds), or "" when the object has none."""
        meta = self.data.get("metadata") if isinstance(self.data.get("metadata"), dict) else {}
        name = meta.get("name") or meta.get("generateName")
        if not isinstance(name, str) or not name:
            return ""
        if self.kind not in CLUSTER_SCOPED:
            ns = meta.get("namespace")
            name = f"{ns if isinstance(ns, str) and ns else DEFAULT_NAMESPACE}/{name}"
        return name


@dataclass
class _Workload:
    kind: str
    namespace: str
    name: str
    obj: _Object
    owner: Optional[dict]
    type_name: Optional[str] = None   # for non-DaemonSets; aliases resolve to the owner's


@dataclass
class _Conversion:
    document: dict
    report: Report
    v1_lines: Lines
    origins: dict[str, str]   # v1 path prefix ("podTypes[3]") -> source description
    origin_files: dict[str, str] = field(default_factory=dict)  # v1 path prefix -> source file

    def relocate(self, err: InputError) -> InputError:
        """Prefix a loader error on the generated document with the source object it came from."""
        field_path = err.field_path or ""
        match = re.match(r"(podTypes|nodes|namespaces|initial)\[\d+\]", field_path)
        if match and match.group(0) in self.origins:
            origin = self.origins[match.group(0)]
            filename = self.origin_files.get(match.group(0)) or err.filename
            return InputError(err.problem, filename, err.line, f"{origin}: {field_path}")
        return err


class _Converter:
    def __init__(self, filename: str, docs: list, lines: Optional[list[Lines]],
                 doc_files: Optional[list[tuple[str, int]]] = None) -> None:
        if isinstance(docs, dict):
            docs = [docs]
        self.filename = filename
        # (file, document index in that file) per document, when documents come from several files
        self.doc_files = doc_files
        self.docs = docs
        self.doc_lines = list(lines) if lines is not None else [{} for _ in docs]
        self.report = Report()
        self.namespaces: dict[str, dict[str, str]] = {}
        self.nodes: list[dict] = []
        self.node_names: set[str] = set()
        self.types: dict[str, dict] = {}             # name -> v1 podType body (ordered)
        self.strict_sigs: dict[str, str] = {}        # type name -> strict signature
        self.lenient_sigs: dict[str, str] = {}
        self.workloads: dict[tuple[str, str, str], _Workload] = {}
        self.extra_types: dict[tuple, str] = {}      # drift/unknown-owner/generateName keys -> type
        self.initial: Counter[tuple[str, str]] = Counter()
        self.v1_lines: Lines = {}
        self.origins: dict[str, str] = {}
        self.origin_files: dict[str, str] = {}
        self._generated: Counter[str] = Counter()
        self.bare_pods: set[tuple[str, str]] = set()
        self.groups = GroupIndex()
        self.volumes = VolumeIndex()
        self.dra = DraIndex()
        self.replica_targets = ReplicaTargets()
        self.attach_drivers: set[str] = set()
        self.binders: dict[str, Binder] = {}    # pod type -> what its deployment binds
        self.dra_users: dict[str, DraUser] = {}  # pod type -> its claims (``k8s_dra_state``)
        self.dra_running: dict[str, list[tuple[str, list[tuple[str, str]]]]] = {}  # type -> (node, own claims)
        self.dra_running_names: dict[str, list[str]] = {}   # type -> its running pods' names, as dra_running
        self.node_own: dict[str, dict[str, set[str]]] = {}   # node -> CSI driver -> running pods' own volumes
        self._warned: set[str] = set()
        self.budgets: list[dict] = []                # v1 disruptionBudgets (PodDisruptionBudgets)
        self.default_namespace = DEFAULT_NAMESPACE
        self.context = RunContext()  # polled between objects: loading is a phase of the run

    # -- errors and field access -------------------------------------------
    def error(self, obj: _Object, sub: Path, problem: str) -> InputError:
        where = obj.where[len(obj.label):] + (f": {format_path(sub)}" if sub else "")
        return InputError(problem, obj.filename or self.filename, obj.line(sub), where)

    def get(self, obj: _Object, sub: Path, expect: type, *, required: bool = False) -> object:
        value: object = obj.data
        for i, key in enumerate(sub):
            if isinstance(key, int) and isinstance(value, list):
                value = value[key] if 0 <= key < len(value) else None
            elif isinstance(value, dict):
                value = value.get(key)
            else:
                raise self.error(obj, sub[:i], f"expected a mapping, got {type_name(value)}")
            if value is None:
                if required:
                    raise self.error(obj, sub, "required field is missing")
                return None
        if not isinstance(value, expect) or isinstance(value, bool) and expect is not bool:
            raise self.error(obj, sub, f"expected {_expect_name(expect)}, got {type_name(value)}")
        return value

    def string_map(self, obj: _Object, sub: Path) -> dict[str, str]:
        raw = self.get(obj, sub, dict) or {}
        for key, value in raw.items():
            if not isinstance(key, str) or not isinstance(value, str):
                raise self.error(obj, sub + (str(key),), f"expected a string, got {type_name(value)}")
        return dict(raw)

    def metadata(self, obj: _Object, *, namespaced: bool) -> tuple[str, str, dict]:
        """(namespace, name, metadata); a name may come from ``generateName``."""
        meta = self.get(obj, ("metadata",), dict, required=True)
        name = self.get(obj, ("metadata", "name"), str)
        if not name:
            base = self.get(obj, ("metadata", "generateName"), str)
            if not base:
                raise self.error(obj, ("metadata", "name"), "required field is missing")
            name = base
        namespace = DEFAULT_NAMESPACE
        if namespaced:
            namespace = self.get(obj, ("metadata", "namespace"), str) or self.default_namespace
        return namespace, name, meta

    # -- driver ---------------------------------------------------------------
    def run(self) -> _Conversion:
        objects = self.flatten()
        for obj in objects:
            self.report.kinds[obj.kind] = self.report.kinds.get(obj.kind, 0) + 1
            if obj.kind not in USED_KINDS:
                self.report.skipped[obj.kind] = self.report.skipped.get(obj.kind, 0) + 1
                api = obj.data.get("apiVersion")
                self.report.skipped_objects.append((obj.kind, api if isinstance(api, str) else "", obj.name))
        for obj in objects:
            if obj.kind == "Namespace":
                self.namespace(obj)
            elif obj.kind == "Node":
                self.node(obj)
            elif obj.kind in VOLUME_KINDS:
                namespace, name, _ = self.metadata(obj, namespaced=obj.kind == "PersistentVolumeClaim")
                self.check_volume_fields(obj)
                self.volumes.add(obj.kind, obj.data, namespace, name)
            elif obj.kind == "PodDisruptionBudget":
                self.budget(obj)
            elif obj.kind == "PriorityClass":
                self.report.nominated.priorities.add_class(obj.data)
            elif obj.kind in DRA_KINDS:
                namespace, name, _ = self.metadata(obj, namespaced=obj.kind.startswith("ResourceClaim"))
                self.check_fields(obj, DRA_FIELD_TYPES[obj.kind])
                self.dra.add(obj.kind, obj.data, namespace, name)
        for change in self.volumes.settle():
            self.report.warn("volume objects settled", change)
        for obj in objects:
            self.context.check("loading")
            if obj.kind in TEMPLATE_PATHS:
                self.collect_workload(obj)
        for obj in sorted((o for o in objects if o.kind in GROUP_KINDS), key=lambda o: o.kind != "Workload"):
            self.groups.add(self, obj)
        for workload in self.workloads.values():
            self.workload_types(workload)
        for obj in objects:
            if obj.kind == "Pod":
                self.context.check("loading")
                self.pod(obj)
        self.claim_bindings()
        self.attach_capacities()
        self.device_allocations()
        self.nominations()
        return _Conversion(self.document(), self.report, self.v1_lines, self.origins, self.origin_files)

    def flatten(self) -> list[_Object]:
        out: list[_Object] = []
        for d, data in enumerate(self.docs):
            self.context.check("loading")
            lines = self.doc_lines[d] if d < len(self.doc_lines) else {}
            if data is None:
                continue
            filename, local = self.doc_files[d] if self.doc_files else (self.filename, d)
            label = f"{filename}: " if self.doc_files and len({f for f, _ in self.doc_files}) > 1 else ""
            if not isinstance(data, dict):
                raise InputError(f"expected a Kubernetes object (a mapping), got {type_name(data)}",
                                 filename, lines.get(()), f"document {local + 1}")
            kind = data.get("kind")
            if isinstance(kind, str) and kind.endswith("List") and "items" in data:
                items = data.get("items") or []
                if not isinstance(items, list):
                    raise self.error(_Object(data, kind, local, None, lines, filename), ("items",),
                                     f"expected a list, got {type_name(items)}")
                # A typed list (NodeList from ``kubectl get --raw``) leaves out its items' kind.
                item_kind = kind[:-len("List")] if kind != "List" else None
                buckets: dict[int, Lines] = {i: {} for i in range(len(items))}
                for path, line in lines.items():
                    if len(path) >= 2 and path[0] == "items" and path[1] in buckets:
                        buckets[path[1]][path[2:]] = line
                for i, item in enumerate(items):
                    out.append(self.object(item, local, i, buckets[i], filename, label, item_kind))
            else:
                out.append(self.object(data, local, None, lines, filename, label))
        return out

    def object(self, data: object, doc: int, item: Optional[int], lines: Lines, filename: str = "",
               label: str = "", default_kind: Optional[str] = None) -> _Object:
        obj = _Object(data if isinstance(data, dict) else {}, "?", doc, item, lines, filename, label)
        if not isinstance(data, dict):
            raise self.error(obj, (), f"expected a Kubernetes object (a mapping), got {type_name(data)}")
        kind = data.get("kind")
        if kind is None and default_kind:
            kind = default_kind
        if not isinstance(kind, str) or not kind:
            raise self.error(obj, ("kind",), "required field is missing" if kind is None
                             else f"expected a string, got {type_name(kind)}")
        obj.kind = kind
        return obj

    # -- cluster objects ------------------------------------------------------
    def namespace(self, obj: _Object) -> None:
        _, name, _ = self.metadata(obj, namespaced=False)
        labels = self.string_map(obj, ("metadata", "labels"))
        labels.setdefault("kubernetes.io/metadata.name", name)
        self.namespaces.setdefault(name, {}).update(labels)

    def node(self, obj: _Object) -> None:
        _, name, meta = self.metadata(obj, namespaced=False)
        if not meta.get("name"):
            self._generated[name] += 1
            name = f"{name}{self._generated[name]}"
            self.report.warn("nodes named by generateName", f"{obj.where}: node has only generateName; named it {name}")
        if name in self.node_names:
            raise self.error(obj, ("metadata", "name"), f"duplicate Node {name!r}")
        self.node_names.add(name)
        body: dict = {"name": name}
        labels = self.string_map(obj, ("metadata", "labels"))
        if labels:
            body["labels"] = labels
        # The API server defaults a missing allocatable to the capacity (as a whole).
        allocatable = self.get(obj, ("status", "allocatable"), dict)
        capacity = allocatable if allocatable is not None else self.get(obj, ("status", "capacity"), dict)
        source = ("status", "allocatable") if allocatable is not None else ("status", "capacity")
        body["capacity"] = dict(capacity or {})
        if not capacity:
            self.report.warn("nodes without capacity", f"{obj.where}: no status.allocatable or status.capacity; "
                                        "every resource counts as 0")
        # kube-scheduler: a node whose allocatable lacks ``pods`` admits no pod
        # (its allowed pod number is 0); a v1 node without ``pods`` has no such limit.
        body["capacity"].setdefault("pods", 0)
        taints = []
        for j, taint in enumerate(self.get(obj, ("spec", "taints"), list) or []):
            sub = ("spec", "taints", j)
            if not isinstance(taint, dict):
                raise self.error(obj, sub, f"expected a taint (a mapping), got {type_name(taint)}")
            key = self.get(obj, sub + ("key",), str, required=True)
            effect = self.get(obj, sub + ("effect",), str, required=True)
            entry = {"key": key, "effect": effect}
            value = self.get(obj, sub + ("value",), str)
            if value:
                entry["value"] = value
            taints.append(entry)
        if taints:
            body["taints"] = taints
        if self.get(obj, ("spec", "unschedulable"), bool):
            body["unschedulable"] = True
        prefix = ("nodes", len(self.nodes))
        self.map_lines(prefix, obj, ())
        self.map_lines(prefix + ("labels",), obj, ("metadata", "labels"))
        self.map_lines(prefix + ("capacity",), obj, source)
        self.map_lines(prefix + ("taints",), obj, ("spec", "taints"))
        self.origins[format_path(prefix)] = obj.where[len(obj.label):]
        self.origin_files[format_path(prefix)] = obj.filename
        self.nodes.append(body)
        self.report.nodes += 1

    # -- workloads ------------------------------------------------------------
    def collect_workload(self, obj: _Object) -> None:
        namespace, name, meta = self.metadata(obj, namespaced=True)
        key = (obj.kind, namespace, name)
        if key in self.workloads:
            raise self.error(obj, ("metadata", "name"), f"duplicate {obj.kind} {namespace}/{name}")
        self.get(obj, TEMPLATE_PATHS[obj.kind], dict, required=True)
        self.workloads[key] = _Workload(obj.kind, namespace, name, obj, controller_ref(meta))

    def parent_workload(self, workload: _Workload) -> Optional[_Workload]:
        """The Deployment owning a ReplicaSet, the CronJob owning a Job, when in the input."""
        owner = workload.owner
        if owner and (workload.kind, owner.get("kind")) in (("ReplicaSet", "Deployment"), ("Job", "CronJob")):
            return self.workloads.get((owner["kind"], workload.namespace, owner.get("name")))
        return None

    def workload_types(self, workload: _Workload) -> None:
        if workload.type_name is not None:
            return
        parent = self.parent_workload(workload)
        if parent is not None:
            self.workload_types(parent)
            workload.type_name = parent.type_name
            self.name_workload(workload, parent.type_name)
            return
        tpath = TEMPLATE_PATHS[workload.kind]
        obj = workload.obj
        self.get(obj, tpath + ("spec",), dict, required=True)
        origin = f"{workload.kind} {workload.namespace}/{workload.name}"
        if workload.kind == "DaemonSet":
            self.daemonset_types(workload, tpath, origin)
            self.name_workload(workload, f"{workload.namespace}/{workload.name}")
            return
        pinned = self.get(obj, tpath + ("spec", "nodeName"), str)
        if pinned and pinned not in self.node_names:
            why = f"its template pins pods with spec.nodeName to node {pinned!r}, which is not in the input"
            self.report.warn("pinned to nodes not in the input", f"{obj.where}: {why}; no pod type")
            self.report.unplaceable[f"{workload.namespace}/{workload.name}"] = why
            return
        name = self.unique(f"{workload.namespace}/{workload.name}", workload.kind)
        self.add_type(name, obj, workload.namespace, tpath + ("metadata",), tpath + ("spec",), origin=origin,
                      template=True)
        workload.type_name = name
        if workload.kind == "StatefulSet":
            self.claim_templates(workload, name)
        self.name_workload(workload, name)

    def name_workload(self, workload: _Workload, type_name: Optional[str]) -> None:
        if type_name is not None:
            self.report.workloads[f"{workload.kind} {workload.namespace}/{workload.name}"] = type_name

    def daemonset_types(self, workload: _Workload, tpath: Path, origin: str) -> None:
        if not self.nodes:
            self.report.warn("DaemonSets without nodes", f"{workload.obj.where}: no nodes in the input, so no pod types")
            return
        spec = self.get(workload.obj, tpath + ("spec",), dict, required=True)
        terms = required_node_terms(spec)
        if terms is not None and not any(term_nonempty(t) for t in terms):
            self.report.warn("DaemonSets that match no node",
                             f"{workload.obj.where}: required node affinity matches no node")
            return
        for node in self.nodes:
            name = self.unique(f"{workload.namespace}/{workload.name}@{node['name']}", "DaemonSet")
            body = self.type_body(workload.obj, workload.namespace, tpath + ("metadata",), tpath + ("spec",),
                                  template=True)
            pin_daemon_pod(body, node["name"], spec.get("hostNetwork") is True)
            self.add_type(name, workload.obj, workload.namespace, tpath + ("metadata",), tpath + ("spec",),
                          origin=f"{origin} on {node['name']}", template=True, body=body)

    # -- pod types ------------------------------------------------------------
    def unique(self, name: str, kind: str = "") -> str:
        if name not in self.types:
            return name
        if kind:
            ns, _, rest = name.partition("/")
            candidate = f"{ns}/{kind.lower()}/{rest}"
            if candidate not in self.types:
                return candidate
        k = 2
        while f"{name}~{k}" in self.types:
            k += 1
        return f"{name}~{k}"

    def type_body(self, obj: _Object, namespace: str, meta_path: Path, spec_path: Path,
                  *, template: bool) -> dict:
        """The v1 podType fields (without name) of a pod template or a pod."""
        spec = self.get(obj, spec_path, dict, required=True)
        containers = self.get(obj, spec_path + ("containers",), list, required=True)
        if not containers:
            raise self.error(obj, spec_path + ("containers",), "a pod needs at least one container")
        body: dict = {"namespace": namespace}
        labels = self.string_map(obj, meta_path + ("labels",))
        if labels:
            body["labels"] = labels
        try:
            status = None if template else self.get(obj, ("status",), dict)
            requests = pod_requests(spec, spec_path, status if spec.get("nodeName") else None)
            ports, port_warnings = host_ports(spec, spec_path)
        except FieldError as err:
            raise self.error(obj, err.path, err.problem) from None
        if requests:
            body["requests"] = format_requests(requests)
        for key, expect in (("nodeSelector", dict), ("tolerations", list), ("affinity", dict),
                            ("topologySpreadConstraints", list)):
            value = self.get(obj, spec_path + (key,), expect)
            if value:
                body[key] = copy_plain(value)
        if not template and stored(self.get(obj, ("metadata",), dict) or {}):
            without_label_keys(body)
        if template and spec.get("nodeName"):
            body["nodeName"] = self.get(obj, spec_path + ("nodeName",), str)
        if ports:
            body["hostPorts"] = ports
        for i, _ in enumerate(self.get(obj, spec_path + ("volumes",), list) or []):
            self.get(obj, spec_path + ("volumes", i, "ephemeral", "volumeClaimTemplate", "spec", "storageClassName"),
                     str)
        self.apply_volumes(obj, spec, namespace, body, template)
        self.apply_dra(obj, spec, namespace, body, template)
        for warning in port_warnings:
            self.report.warn("host ports", f"{obj.where}: {warning}")
        gates = self.get(obj, spec_path + ("schedulingGates",), list)
        if gates and not spec.get("nodeName"):
            caveat = gates_caveat(gates)
            self.report.warn("scheduling gates", f"{obj.where}: {caveat}")
            body.setdefault(_CAVEATS, []).append(caveat)
        scheduler = spec.get("schedulerName")
        if scheduler not in (None, DEFAULT_SCHEDULER):
            self.report.warn("other schedulers", f"{obj.where}: schedulerName {scheduler!r} is not the kube-scheduler; "
                                        "analysed as if it were")
        return body

    def check_volume_fields(self, obj: _Object) -> None:
        """The fields the volume index reads, with the types the API server insists on."""
        for sub, expect in VOLUME_FIELD_TYPES.get(obj.kind, ()):
            self.get(obj, sub, expect)
        if obj.kind == "PersistentVolume":
            self.string_map(obj, ("metadata", "labels"))

    def apply_volumes(self, obj: _Object, spec: dict, namespace: str, body: dict, template: bool) -> None:
        """What the volume plugins decide for this pod (``k8s_volume_filters``), as the v1 ``volumes``
        field, and its CSI volumes as attach-limit requests."""
        meta = self.get(obj, ("metadata",), dict) or {}
        owner = None if template else controller_ref(meta)
        pod_name = None if template else meta.get("name")
        uid = meta.get("uid") if isinstance(meta.get("uid"), str) else None
        found = pod_volumes(self.volumes, spec, namespace, pod_name, self.nodes, uid)
        volumes: dict = verdict_fields(found)
        if found.claims:
            volumes["claims"] = found.claims
        if found.read_write_once_pod:
            volumes["readWriteOncePod"] = found.read_write_once_pod
        if found.disks:
            volumes["disks"] = found.disks
        caveats = list(found.caveats)
        if found.delayed and found.prefilter is None:
            claims_binder, binder_caveats = binder(self.volumes, spec, namespace, pod_name, uid, found.delayed)
            caveats += binder_caveats
            if claims_binder is not None:
                body[_BINDER] = claims_binder
        self.attach_drivers.update(found.attach, found.attach_own)
        if volumes:
            body["volumes"] = volumes
        if template or owner is None:  # a controller's pods: its template warns once
            for caveat in caveats:
                self.warn_once("volumes", f"{obj.where}: {caveat}")
        if caveats:
            body[_CAVEATS] = caveats

    def claim_bindings(self) -> None:
        """The claims deployments bind, grouped, with their joint bindings (``k8s_volume_bindings``):
        each binding type's v1 ``binds``, the caveats where that is not modelled."""
        binds, caveats = bind_all(self.volumes, self.binders, self.nodes)
        for name, found in binds.items():
            self.types[name].setdefault("volumes", {})["binds"] = found
            for state in found["states"]:
                self.attach_drivers.update(state.get("attach", ()), state.get("attachOwn", ()))
        for name, notes in caveats.items():
            for note in notes:
                self.warn_once("volumes", note)
            self.report.caveats.setdefault(name, []).extend(notes)

    def device_allocations(self) -> None:
        """DRA devices as state (``k8s_dra_state``): each claim-using type's v1 ``dra.allocations``;
        where that is not modelled (a type also binding volume claims, too many states), the
        caveat on the types whose verdicts read allocation (``dra_caveats``)."""
        users = {name: u for name, u in self.dra_users.items() if name in self.types}
        holdings: dict[str, list[str]] = {}
        found, notes = (None, []) if not users or set(users) & set(self.binders) else \
            explore(self.dra, users, self.dra_running, self.nodes, holdings)
        if found is None:
            for name, caveat in dra_caveats(self.types, self.initial):
                self.report.caveats.setdefault(name, []).extend([caveat] + notes)
            return
        for name, labels in holdings.items():
            self.report.initial_holdings.update(zip(((name, pod) for pod in self.dra_running_names.get(name, [])), labels))
        for name, field in found.items():
            self.types[name].setdefault("dra", {})["allocations"] = field
            if notes:
                self.report.caveats.setdefault(name, []).extend(notes)

    def nominations(self) -> None:
        """A warning per nominated pending pod, a caveat on every type whose Filter verdicts it can change."""
        warnings, caveats = self.report.nominated.marks(self.node_names)
        for message in warnings:
            self.report.warn(NOMINATED, message)
        for name, notes in caveats.items():
            self.report.caveats.setdefault(name, []).extend(notes)

    def check_fields(self, obj: _Object, fields: tuple) -> None:
        """The fields a reader relies on, with the types the API server insists on ("*": each list item)."""
        for sub, expect in fields:
            for concrete in concrete_paths(obj.data, sub):
                self.get(obj, concrete, expect)
        where = NODE_SELECTORS.get(obj.kind)
        raw = self.get(obj, where, dict) if where else None
        err = node_selector_problem(raw) if raw is not None else None
        if err is not None:
            raise self.error(obj, where + tuple(err.path), err.problem)

    def apply_dra(self, obj: _Object, spec: dict, namespace: str, body: dict, template: bool) -> None:
        """What DynamicResources decides for this pod (``k8s_dra``), as the v1 ``dra`` field."""
        if not spec.get("resourceClaims"):
            return
        if obj.kind == "Pod":
            self.check_fields(obj, POD_FIELDS)
        meta = None if template else (self.get(obj, ("metadata",), dict) or {})
        status = None if template else self.get(obj, ("status",), dict)
        found = pod_dra(self.dra, spec, status, namespace, meta, self.nodes)
        field = dra_field(found)
        if field:
            body["dra"] = field
        user = dra_user(self.dra, spec, status, namespace, meta)
        if user is not None:
            body[_DRA_USER] = user
        if found.caveats:
            body.setdefault(_CAVEATS, []).extend(found.caveats)

    def attach_capacities(self) -> None:
        """NodeVolumeLimits: each node's attach limit per CSI driver (its CSINode) as capacity,
        and the volumes its VolumeAttachments attach as ``attachedVolumes`` (less the running
        pods' own ephemeral volumes, which their types count per pod). A driver without a
        limit on a node is not checked there (``semantics.volume_limit_ok``)."""
        for body in self.nodes:
            capacity = body["capacity"]
            for key in [k for k in capacity if k.startswith(ATTACH_PREFIX)]:
                del capacity[key]   # legacy allocatable keys; v1.35 reads CSINode only
            limits = self.volumes.attach_limits(body["name"])
            own = self.node_own.get(body["name"], {})
            attached = {driver: sorted(names - own.get(driver, set()))
                        for driver, names in sorted(self.volumes.attached(body["name"]).items())}
            for driver in sorted(self.attach_drivers):
                if driver in limits:
                    capacity[ATTACH_PREFIX + driver] = limits[driver]
            attached = {driver: names for driver, names in attached.items()
                        if names and driver in limits and driver in self.attach_drivers}
            if attached:
                body["attachedVolumes"] = attached

    def replica_type(self, obj: _Object, namespace: str, name: str, owner_name: str, body: dict) -> str:
        """A StatefulSet replica using its own claims (``<template>-<set>-<ordinal>``): its own
        pod type ``ns/<pod>``, with those claims' volume verdicts, ReadWriteOncePod terms and attach
        charges. Creatable: the controller recreates a deleted replica with the same name and claims."""
        key = ("replica", namespace, name)
        if key not in self.extra_types:
            type_name = self.unique(f"{namespace}/{name}", "StatefulSet replica")
            self.add_type(type_name, obj, namespace, ("metadata",), ("spec",),
                          origin=f"replica {namespace}/{name} of StatefulSet {namespace}/{owner_name} (its own claims)",
                          template=False, body=body)
            self.extra_types[key] = type_name
        return self.extra_types[key]

    def claim_templates(self, workload: _Workload, type_name: str) -> None:
        """A StatefulSet's ``volumeClaimTemplates``: the claims of replicas not in the input yet
        (their own pods, when present, are modelled by ``replica_type``) are a caveat."""
        templates = self.get(workload.obj, ("spec", "volumeClaimTemplates"), list) or []
        for i, template in enumerate(templates):
            self.get(workload.obj, ("spec", "volumeClaimTemplates", i, "spec", "storageClassName"), str)
            name = (template.get("metadata") or {}).get("name") if isinstance(template, dict) else None
            caveat = (f"volumeClaimTemplate {name!r}: the claim of a replica not in the input yet may tie it to a node "
                      "or zone, which is not modelled (replicas in the input are, with their own claims)")
            self.warn_once("volumes", f"{workload.obj.where}: {caveat}")
            self.report.caveats.setdefault(type_name, []).append(caveat)

    def namespace_caveats(self, implied: list[str]) -> None:
        """Types whose pod (anti-)affinity selects namespaces by label read labels the input lacks."""
        caveat = (f"namespace(s) {', '.join(implied)} have no Namespace object in the input: taken to carry only "
                  "kubernetes.io/metadata.name, which its namespaceSelector terms read")
        for name, body in self.types.items():   # shapes are checked by the loader afterwards
            affinity = body.get("affinity") if isinstance(body.get("affinity"), dict) else {}
            parts = [affinity.get(kind) for kind in ("podAffinity", "podAntiAffinity")]
            terms = [p.get("requiredDuringSchedulingIgnoredDuringExecution") for p in parts if isinstance(p, dict)]
            if any(isinstance(t, dict) and t.get("namespaceSelector") is not None
                   for ts in terms if isinstance(ts, list) for t in ts):
                self.report.caveats.setdefault(name, []).append(caveat)

    def warn_once(self, category: str, message: str) -> None:
        if message not in self._warned:
            self._warned.add(message)
            self.report.warn(category, message)

    def add_type(self, name: str, obj: _Object, namespace: str, meta_path: Path, spec_path: Path,
                 *, origin: str, template: bool, creatable: bool = True, body: Optional[dict] = None) -> dict:
        if body is None:
            body = self.type_body(obj, namespace, meta_path, spec_path, template=template)
        caveats = body.pop(_CAVEATS, None)
        if caveats:
            self.report.caveats.setdefault(name, []).extend(caveats)
        claims_binder = body.pop(_BINDER, None)
        if claims_binder is not None:
            self.binders[name] = claims_binder
        user = body.pop(_DRA_USER, None)
        if user is not None:
            self.dra_users[name] = user
        body = {"name": name, **body}
        if not creatable:
            body["creatable"] = False
        else:
            self.report.nominated.add_type(name, self.get(obj, spec_path, dict) or {})
        if origin.startswith("static pod"):
            body["staticPod"] = True
        prefix = ("podTypes", len(self.types))
        self.map_lines(prefix, obj, spec_path[:-1] if spec_path else ())
        self.map_lines(prefix + ("labels",), obj, meta_path + ("labels",))
        for key in ("nodeSelector", "tolerations", "affinity", "topologySpreadConstraints", "nodeName"):
            self.map_lines(prefix + (key,), obj, spec_path + (key,))
        self.map_lines(prefix + ("requests",), obj, spec_path + ("containers",))
        self.map_lines(prefix + ("hostPorts",), obj, spec_path + ("containers",))
        self.origins[format_path(prefix)] = f"{obj.where[len(obj.label):]} -> pod type {name}"
        self.origin_files[format_path(prefix)] = obj.filename
        self.types[name] = body
        self.strict_sigs[name] = signature(body, strict=True)
        self.lenient_sigs[name] = signature(body, strict=False)
        self.report.pod_types += 1
        return body

    def budget(self, obj: _Object) -> None:
        """A PodDisruptionBudget -> a v1 ``disruptionBudgets`` entry (checked by the v1 loader)."""
        namespace, name, _ = self.metadata(obj, namespaced=True)
        spec = self.get(obj, ("spec",), dict) or {}
        entry = {"name": name, "namespace": namespace}
        entry.update({k: copy_plain(spec[k]) for k in ("selector", "minAvailable", "maxUnavailable",
                                                      "unhealthyPodEvictionPolicy") if k in spec})
        self.map_lines(("disruptionBudgets", len(self.budgets)), obj, ("spec",))
        self.budgets.append(entry)

    # -- pods -----------------------------------------------------------------
    def pod(self, obj: _Object) -> None:
        namespace, name, meta = self.metadata(obj, namespaced=True)
        self.get(obj, ("spec",), dict, required=True)
        node = self.get(obj, ("spec", "nodeName"), str)
        phase = self.get(obj, ("status", "phase"), str)
        owner = controller_ref(meta)
        mirror = (owner is not None and owner.get("kind") == "Node") or MIRROR_ANNOTATION in (
            self.get(obj, ("metadata", "annotations"), dict) or {})
        finished = phase in FINISHED_PHASES
        if finished and (owner is not None or mirror):
            self.count_not_counted(f"finished ({phase}) controller pods")
            return
        body = self.type_body(obj, namespace, ("metadata",), ("spec",), template=False)
        created = self.as_created(obj, body)
        member = None if finished else self.groups.member(self, obj, namespace, name, created, not node,
                                                          self.get(obj, ("spec",), dict))
        if member == "":
            self.count_not_counted("pods of pod groups not in the input")
            return
        if member is not None:
            type_name = member
        elif node and not finished and meta.get("deletionTimestamp"):
            type_name = self.terminating_type(obj, namespace, name, owner, body)
        elif mirror:
            type_name = self.add_type(self.unique(f"{namespace}/{name}", "Pod"), obj, namespace, ("metadata",),
                                      ("spec",), origin=f"static pod {namespace}/{name}", template=False,
                                      creatable=False, body=body)["name"]
        elif owner is not None:
            type_name = self.owned_pod_type(obj, namespace, name, owner, node, created, held=body)
        else:
            type_name = self.bare_pod_type(obj, namespace, name, meta, created)
        if finished:
            self.count_not_counted(f"finished ({phase}) pods")
            return
        if not node:
            self.report.nominated.pending(obj.where, f"{namespace}/{name}", type_name, obj.data)
            self.report.pending[f"{namespace}/{name}"] = type_name
            self.count_not_counted("pending pods (no spec.nodeName)")
            if meta.get("deletionTimestamp"):
                caveat = (f"pending pod {namespace}/{name} is being deleted (metadata.deletionTimestamp): the scheduler "
                          "skips it (skipPodSchedule); analysed as if it were not")
                self.report.warn("pending pods being deleted", f"{obj.where}: {caveat}")
                self.report.caveats.setdefault(type_name, []).append(caveat)
            return
        if node not in self.node_names:
            self.count_not_counted("pods on nodes not in the input")
            self.report.warn("pods on nodes not in the input",
                             f"{obj.where}: runs on node {node!r}, which is not in the input; "
                                        "left out of the initial configuration")
            return
        type_name = self.holding_type(obj, namespace, name, type_name, body)
        self.initial[(type_name, node)] += 1
        spec = obj.data["spec"]
        if spec.get("resourceClaims"):
            self.dra_running.setdefault(type_name, []).append(
                (node, owned_claims(namespace, spec, self.get(obj, ("status",), dict))))
            self.dra_running_names.setdefault(type_name, []).append(name)
        if owner is not None and not meta.get("deletionTimestamp"):
            self.replica_targets.running(self.top_workload(owner, namespace, body.get("labels") or {}), type_name,
                                         name, node, obj.data["spec"], self.volumes, self.nodes)
        for driver, names in own_volumes(self.volumes, obj.data["spec"], namespace, name).items():
            self.node_own.setdefault(node, {}).setdefault(driver, set()).update(names)
        self.report.pods_attached += 1
        self.report.attachments[f"{namespace}/{name}"] = type_name
        self.report.initial_pod_names.setdefault((type_name, node), []).append(name)

    def as_created(self, obj: _Object, body: dict) -> dict:
        """``body`` as a new pod of this spec holds it: requests from the spec alone. A bound pod's
        own body counts its resize status (``pod_requests``); new pods of its type are created from
        the spec and hold what it requests. ``body`` itself when the two agree."""
        spec = obj.data["spec"]
        if not spec.get("nodeName") or not isinstance(obj.data.get("status"), dict):
            return body
        requests = format_requests(pod_requests(spec, ("spec",)))  # shapes checked by type_body
        if requests == (body.get("requests") or {}):
            return body
        created = {k: v for k, v in body.items() if k != "requests"}
        if requests:
            created["requests"] = requests
        return created

    def holding_type(self, obj: _Object, namespace: str, name: str, type_name: str, body: dict) -> str:
        """A running pod that holds more or less than new pods of its type (an in-place resize; an
        ephemeral volume NodeVolumeLimits counts under another CSI driver, its claim being bound to
        a PV of that driver): a non-creatable type of its own with what it holds, beside ``type_name``."""
        resized = (self.types[type_name].get("requests") or {}) != (body.get("requests") or {})
        if not resized and _attach_key(self.types[type_name]) == _attach_key(body):
            return type_name
        key = ("resized", type_name, signature(body, strict=True), _attach_key(body))
        if key not in self.extra_types:
            held = self.unique(type_name, "Resized" if resized else "Held")
            what = "resized pods" if resized else "pods holding other CSI volumes,"
            self.add_type(held, obj, namespace, ("metadata",), ("spec",),
                          origin=f"{what} like {namespace}/{name} (new pods: {type_name})", template=False,
                          creatable=False, body=dict(body))
            self.extra_types[key] = held
        if resized:
            self.report.resized[f"{namespace}/{name}"] = type_name
        return self.extra_types[key]

    def terminating_type(self, obj: _Object, namespace: str, name: str, owner: Optional[dict], body: dict) -> str:
        """A pod being deleted still holds its node's resources, ports and (anti-)affinity
        matches, but PodTopologySpread skips it: a non-creatable type marked ``terminating``."""
        base = controller_base_name(str(owner.get("kind")), str(owner.get("name")), body.get("labels") or {}) \
            if owner is not None else name
        key = ("terminating", namespace, base, signature(body, strict=True))
        if key not in self.extra_types:
            type_name = self.unique(f"{namespace}/{base}", "Terminating")
            body = dict(body, terminating=True)
            self.add_type(type_name, obj, namespace, ("metadata",), ("spec",),
                          origin=f"terminating pods like {namespace}/{name}", template=False, creatable=False,
                          body=body)
            self.extra_types[key] = type_name
        return self.extra_types[key]

    def count_not_counted(self, reason: str) -> None:
        self.report.pods_not_counted[reason] = self.report.pods_not_counted.get(reason, 0) + 1

    def bare_pod_type(self, obj: _Object, namespace: str, name: str, meta: dict, body: dict) -> str:
        if meta.get("name"):
            if (namespace, name) in self.bare_pods:
                raise self.error(obj, ("metadata", "name"), f"duplicate Pod {namespace}/{name}")
            self.bare_pods.add((namespace, name))
            type_name = self.unique(f"{namespace}/{name}", "Pod")
            return self.add_type(type_name, obj, namespace, ("metadata",), ("spec",),
                                 origin=f"Pod {namespace}/{name}", template=False, body=body)["name"]
        # generateName only: pods with the same spec are one type.
        key = ("generated", namespace, name, signature(body, strict=True))
        if key not in self.extra_types:
            type_name = self.unique(f"{namespace}/{name.rstrip('-') or 'pod'}", "Pod")
            self.add_type(type_name, obj, namespace, ("metadata",), ("spec",),
                          origin=f"Pod {namespace}/{name}*", template=False, body=body)
            self.extra_types[key] = type_name
        return self.extra_types[key]

    def owned_pod_type(self, obj: _Object, namespace: str, name: str, owner: dict, node: Optional[str],
                       body: dict, held: dict) -> str:
        """``body``: the pod as created from its spec; ``held``: what it holds (an older revision's
        type, which nobody creates, is built from it)."""
        owner_kind = str(owner.get("kind"))
        owner_name = str(owner.get("name"))
        labels = body.get("labels") or {}
        target = self.owner_type(namespace, owner_kind, owner_name, labels, node, body)
        if owner_kind == "StatefulSet" and any(statefulset_claim(owner_name)(c)
                                               for c in (body.get("volumes") or {}).get("claims", ())):
            return self.replica_type(obj, namespace, name, owner_name, body)
        if target is not None:
            # A pending pod whose volumes differ from the template's (a generic ephemeral
            # claim not created yet) is asked about as it is: it gets its own type.
            if signature(body, strict=False) == self.lenient_sigs[target] and (
                    node or body.get("volumes") == self.types[target].get("volumes")):
                return target
            # The pod differs from its workload's current template: an older
            # revision. It keeps its own spec; the controller would not create more.
            key = ("drift", namespace, owner_kind, owner_name, signature(held, strict=True))
            if key not in self.extra_types:
                type_name = self.unique(f"{namespace}/{owner_name}", owner_kind)
                self.add_type(type_name, obj, namespace, ("metadata",), ("spec",),
                              origin=f"pods of {owner_kind} {namespace}/{owner_name} (older revision of {target})",
                              template=False, creatable=False, body=held)
                self.extra_types[key] = type_name
                self.report.warn(
                    "pods of older revisions", f"{obj.where}: its spec differs from the template of {target} (older revision?); "
                    f"given its own non-creatable pod type {type_name}")
            return self.extra_types[key]
        # The controller is not in the input: join an identical type, else name one after it.
        # It joins only a type with its claims and CSI volumes (which other pods' verdicts read) and,
        # pending, its own volume verdicts (it is asked about as it is).
        strict = signature(body, strict=True)
        volumes = _volume_key(body, pending=not node)
        for type_name, sig in self.strict_sigs.items():
            if sig == strict and self.types[type_name].get("creatable", True) and (
                    volumes == _volume_key(self.types[type_name], pending=not node)):
                return type_name
        # A DaemonSet's pods each carry their own node pin: one type per node,
        # named ``ns/name@node`` like those built from the DaemonSet itself. Pods whose
        # specs differ (a resize patches the spec) are not one type either.
        daemon_node = (node or pinned_node(body)) if owner_kind == "DaemonSet" else None
        key = ("owner", namespace, owner_kind, owner_name, daemon_node, strict, volumes)
        if key not in self.extra_types:
            base = controller_base_name(owner_kind, owner_name, labels)
            if daemon_node:
                base = f"{base}@{daemon_node}"
            type_name = self.unique(f"{namespace}/{base}", owner_kind)
            self.add_type(type_name, obj, namespace, ("metadata",), ("spec",),
                          origin=f"pods of {owner_kind} {namespace}/{owner_name} (not in the input)",
                          template=False, body=without_controller_labels(body))
            self.extra_types[key] = type_name
            self.report.warn("controllers not in the input", f"{obj.where}: its controller {owner_kind} {owner_name} is not in the "
                                        f"input; pod type {type_name} is built from the pod itself")
        return self.extra_types[key]

    def owner_type(self, namespace: str, kind: str, name: str, labels: dict, node: Optional[str],
                   body: dict) -> Optional[str]:
        """The pod type of the workload that owns a pod, following RS -> Deployment and Job -> CronJob."""
        workload = self.owning_workload(namespace, kind, name, labels)
        if workload is None:
            return None
        if workload.kind == "DaemonSet":
            node = node or pinned_node(body)
            type_name = f"{namespace}/{workload.name}@{node}" if node else None
            return type_name if type_name in self.types else None
        return workload.type_name

    def owning_workload(self, namespace: str, kind: str, name: str, labels: dict) -> Optional[_Workload]:
        """The workload a pod's owner reference names, or the Deployment (CronJob) its name implies."""
        workload = self.workloads.get((kind, namespace, name))
        if workload is None:
            parent = implied_parent(kind, name, labels)
            if parent is not None:
                workload = self.workloads.get((parent[0], namespace, parent[1]))
        return workload

    def top_workload(self, owner: Optional[dict], namespace: str, labels: dict) -> Optional[_Workload]:
        """The controller that keeps a pod's replica count (the Deployment of its ReplicaSet)."""
        if owner is None:
            return None
        workload = self.owning_workload(namespace, str(owner.get("kind")), str(owner.get("name")), labels)
        while workload is not None and self.parent_workload(workload) is not None:
            workload = self.parent_workload(workload)
        return workload

    # -- output ---------------------------------------------------------------
    def map_lines(self, v1_prefix: Path, obj: _Object, sub: Path) -> None:
        """Let errors on the generated document at ``v1_prefix`` point at the source lines of ``sub``."""
        sub = tuple(sub)
        line = obj.line(sub)
        if line is not None:
            self.v1_lines.setdefault(v1_prefix, line)
        n = len(sub)
        for path, line in obj.lines.items():
            if len(path) > n and path[:n] == sub:
                self.v1_lines.setdefault(v1_prefix + path[n:], line)

    def document(self) -> dict:
        implied = sorted({body["namespace"] for body in self.types.values()} - set(self.namespaces))
        for ns in implied:
            # The API server admits no pod into a namespace that does not exist
            # (NamespaceLifecycle): it exists, with at least this label.
            self.namespaces[ns] = {"kubernetes.io/metadata.name": ns}
        if implied:
            self.namespace_caveats(implied)
        doc: dict = {"version": 1, "semantics": KUBERNETES}
        if self.namespaces:
            doc["namespaces"] = [{"name": ns, "labels": dict(sorted(labels.items()))}
                                 for ns, labels in sorted(self.namespaces.items())]
        doc["nodes"] = self.nodes
        doc["podTypes"] = list(self.types.values())
        doc["initial"] = [{"pod": t, "node": n, "count": c} for (t, n), c in self.initial.items()]
        if self.budgets:
            doc["disruptionBudgets"] = self.budgets
        controllers = self.replica_targets.section(
            [w for w in self.workloads.values() if self.parent_workload(w) is None],
            lambda w: self.get(w.obj, ("spec", "replicas"), int) if self.get(w.obj, ("spec", "replicas"), int)
            is not None else 1)
        if controllers:
            doc["controllers"] = controllers
        groups = self.groups.section(self)
        if groups:
            doc["groups"] = groups
        return doc


def _attach_key(body: dict) -> str:
    """What NodeVolumeLimits counts of a type body's pods (its CSI volumes, own ephemeral ones)."""
    volumes = body.get("volumes") or {}
    return repr((sorted((volumes.get("attach") or {}).items()), sorted((volumes.get("attachOwn") or {}).items())))


def gates_caveat(gates: list) -> str:
    """Why a gated pod's answers are marked: the scheduling queue's PreEnqueue (SchedulingGates
    plugin) keeps it out of every scheduling cycle until a controller removes its gates; the
    Filter phase never sees it before, so symreach answers as if they were removed."""
    names = ", ".join(str(g.get("name")) if isinstance(g, dict) else str(g) for g in gates)
    return (f"schedulingGates [{names}]: the scheduler does not try the pod until they are removed "
            "(PreEnqueue); analysed as if they were")


def _volume_key(body: dict, *, pending: bool) -> str:
    """A type body's ``volumes`` as pods of one type must share them: all of it for a pending pod,
    without the verdicts for a running one (it is placed; its claims and CSI volumes still count)."""
    volumes = dict(body.get("volumes") or {})
    if not pending:
        volumes.pop("preFilter", None)
        volumes.pop("filter", None)
    return repr(sorted(volumes.items()))


def _expect_name(expect: type) -> str:
    return {dict: "a mapping", list: "a list", str: "a string", bool: "a boolean", int: "an integer"}.get(
        expect, expect.__name__)
