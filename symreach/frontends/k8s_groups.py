"""Pod groups in Kubernetes objects -> the v1 ``groups:`` section (issue 28, SPEC 5.1).

Every shape the API has had, with its own field names (KEP-4671 and the
scheduling.k8s.io types):

- ``scheduling.k8s.io/v1alpha1`` Workload: ``spec.podGroups[]`` of
  ``{name, policy: {basic: {}} | {gang: {minCount}}}``; a pod joins with
  ``spec.workloadRef {name, podGroup, podGroupReplicaKey}``. Each replica key
  is an independent gang, named ``ns/workload/podGroup#key``; without a key
  ``ns/workload/podGroup``.
- ``v1alpha2``/``v1beta1`` PodGroup: ``spec.schedulingPolicy`` (basic or
  ``gang.minCount``), optional ``podGroupTemplateRef`` / ``workloadRef`` (read,
  not needed: the policy is copied into the PodGroup), optional
  ``parentCompositePodGroupName``; a pod joins with
  ``spec.schedulingGroup.podGroupName``. Named ``ns/name``.
- ``v1alpha3`` CompositePodGroup: ``spec.schedulingPolicy`` (basic or
  ``gang.minGroupCount``) and ``parentCompositePodGroupName``.

Members: pods that name a group (bound ones run in sigma0, pending ones are
the gang's members), and Jobs whose pod template names one and whose pods are
not in the input (``parallelism`` pending pods, default 1). Members of a gang
get pod types of their own, not creatable (the scheduler never places a gang
pod alone), in the scheduler's queue order: priority, then creation time.
A workload whose pod template names a gang likewise gets a non-creatable type.

As the API server and scheduler treat them: a policy with both or neither of
basic and gang, or a count below 1, is an input error; a pod whose group is
not in the input stays pending (warning; left out); a group without pods is
never queued (warning); minCount above the members waits in PreEnqueue
(warning; the gang answer is never); mixed ``schedulerName`` makes the
scheduler reject the group (warning; recorded as ``rejected``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional

from symreach.frontends.k8s_controllers import TEMPLATE_PATHS

GROUP_KINDS = frozenset({"Workload", "PodGroup", "CompositePodGroup"})
CATEGORY = "pod groups"
DEFAULT_SCHEDULER = "default-scheduler"


@dataclass
class _Group:
    name: str
    policy: dict            # v1 policy: {basic: {}} or {gang: {minCount|minGroupCount: N}}
    composite: bool
    parent: Optional[str]
    where: str
    members: list = field(default_factory=list)      # (sort key, type name)
    running: int = 0
    schedulers: set = field(default_factory=set)
    stamp: str = ""         # metadata.creationTimestamp: a composite takes its children in this order


class GroupIndex:
    """Groups and their members, collected while the converter reads objects."""

    def __init__(self) -> None:
        self.groups: dict[str, _Group] = {}
        self.workload_groups: dict[tuple[str, str], dict[str, dict]] = {}   # (ns, workload) -> podGroup -> policy
        self.member_types: dict[tuple, str] = {}
        self.jobs_with_pods: set[tuple[str, str]] = set()
        self.where_of: dict[tuple[str, str], str] = {}
        self.seen = 0

    # -- group objects ---------------------------------------------------------------------------
    def add(self, conv: Any, obj: Any) -> None:
        namespace, name, _ = conv.metadata(obj, namespaced=True)
        if obj.kind == "Workload":
            self.workload(conv, obj, namespace, name)
            return
        composite = obj.kind == "CompositePodGroup"
        policy = self.policy(conv, obj, ("spec", "schedulingPolicy"), composite)
        parent = conv.get(obj, ("spec", "parentCompositePodGroupName"), str)
        for ref in (("spec", "podGroupTemplateRef"), ("spec", "workloadRef")):
            conv.get(obj, ref, dict)
        for sub, kind, what in ((("spec", "schedulingConstraints"), dict, "topology-aware placement "
                                 "(schedulingConstraints)"), (("spec", "resourceClaims"), list,
                                                              "group resource claims (DRA)")):
            if conv.get(obj, sub, kind):
                conv.report.warn(CATEGORY, f"{obj.where[len(obj.label):]}: {what} is not modelled; "
                                           "the gang answer ignores it")
        key = f"{namespace}/{name}"
        if key in self.groups:
            raise conv.error(obj, ("metadata", "name"), f"duplicate {obj.kind} {key}")
        self.groups[key] = _Group(key, policy, composite, f"{namespace}/{parent}" if parent else None,
                                  obj.where[len(obj.label):],
                                  stamp=conv.get(obj, ("metadata", "creationTimestamp"), str) or "")

    def workload(self, conv: Any, obj: Any, namespace: str, name: str) -> None:
        """v1alpha1: ``spec.podGroups`` define groups; later versions' ``podGroupTemplates`` only templates."""
        groups = conv.get(obj, ("spec", "podGroups"), list)
        if groups is None:
            conv.get(obj, ("spec", "podGroupTemplates"), list)
            return
        table: dict[str, dict] = {}
        for i, _ in enumerate(groups):
            group = conv.get(obj, ("spec", "podGroups", i, "name"), str, required=True)
            if group in table:
                raise conv.error(obj, ("spec", "podGroups", i, "name"), f"duplicate pod group '{group}'")
            table[group] = self.policy(conv, obj, ("spec", "podGroups", i, "policy"), False)
        self.workload_groups[(namespace, name)] = table
        self.where_of[(namespace, name)] = obj.where[len(obj.label):]

    @staticmethod
    def policy(conv: Any, obj: Any, path: tuple, composite: bool) -> dict:
        body = conv.get(obj, path, dict, required=True)
        given = [k for k in ("basic", "gang") if body.get(k) is not None]
        if len(given) != 1:
            raise conv.error(obj, path, "exactly one of basic and gang must be set")
        if given[0] == "basic":
            return {"basic": {}}
        key = "minGroupCount" if composite else "minCount"
        count = conv.get(obj, path + ("gang", key), int, required=True)
        if count < 1:
            raise conv.error(obj, path + ("gang", key), f"must be greater than 0, got {count}")
        return {"gang": {key: count}}

    # -- members ---------------------------------------------------------------------------------
    def group_of(self, conv: Any, obj: Any, spec_path: tuple, namespace: str) -> Optional[str]:
        """The group a pod (template) names, "" when it names one the input lacks, None when none."""
        pod_group = conv.get(obj, spec_path + ("schedulingGroup", "podGroupName"), str)
        if pod_group:
            key = f"{namespace}/{pod_group}"
            return key if key in self.groups else ""
        ref = conv.get(obj, spec_path + ("workloadRef",), dict)
        if ref is None:
            return None
        workload = conv.get(obj, spec_path + ("workloadRef", "name"), str, required=True)
        group = conv.get(obj, spec_path + ("workloadRef", "podGroup"), str, required=True)
        replica = conv.get(obj, spec_path + ("workloadRef", "podGroupReplicaKey"), str)
        policy = self.workload_groups.get((namespace, workload), {}).get(group)
        if policy is None:
            return ""
        key = f"{namespace}/{workload}/{group}" + (f"#{replica}" if replica else "")
        if key not in self.groups:   # each replica key is a gang of its own
            self.groups[key] = _Group(key, policy, False, None, self.where_of[(namespace, workload)])
        return key

    def member(self, conv: Any, obj: Any, namespace: str, name: str, body: dict, pending: bool,
               spec: dict) -> Optional[str]:
        """The pod type of a pod that names a group; "" when it is left out; None when it names none."""
        group_name = self.group_of(conv, obj, ("spec",), namespace)
        if group_name is None:
            return None
        if not group_name:
            ref = spec.get("schedulingGroup") or spec.get("workloadRef")
            conv.report.warn(CATEGORY, f"{obj.where}: names pod group {ref!r}, which is not in the input; "
                                       "the scheduler keeps it pending (left out)")
            return ""
        group = self.groups[group_name]
        group.schedulers.add(spec.get("schedulerName") or DEFAULT_SCHEDULER)
        owner = (conv.get(obj, ("metadata", "ownerReferences"), list) or [])
        for ref in owner:
            if isinstance(ref, dict) and ref.get("kind") == "Job":
                self.jobs_with_pods.add((namespace, str(ref.get("name"))))
        type_name = self.member_type(conv, obj, group, body, name, gang="gang" in group.policy)
        if pending:
            priority = spec.get("priority") if isinstance(spec.get("priority"), int) else 0
            stamp = conv.get(obj, ("metadata", "creationTimestamp"), str) or ""
            self.seen += 1
            group.members.append(((-priority, stamp, self.seen), type_name))
        else:
            group.running += 1
        return type_name

    def member_type(self, conv: Any, obj: Any, group: _Group, body: dict, pod: str, gang: bool) -> str:
        """One pod type per group and scheduling-relevant spec, named ``ns/group/pod`` (ordinal dropped)."""
        from symreach.frontends.k8s_controllers import signature

        key = (group.name, signature(body, strict=True))
        if key not in self.member_types:
            ns = group.name.split("/", 1)[0]
            base = pod.rstrip("0123456789").rstrip("-") or pod
            type_name = conv.unique(f"{group.name}/{base}")
            conv.add_type(type_name, obj, ns, ("metadata",), ("spec",), origin=f"pods of group {group.name}",
                          template=False, creatable=not gang, body=dict(body))
            self.member_types[key] = type_name
        return self.member_types[key]

    def job_members(self, conv: Any, workloads: dict) -> None:
        """Workloads whose pod template names a group: a gang's template type is not creatable
        (its controller's pods join the gang, never alone); a Job whose pods are not in the input
        gives ``parallelism`` pending members (default 1)."""
        for (kind, namespace, name), workload in workloads.items():
            if workload.type_name is None or kind == "DaemonSet":
                continue
            spec_path = TEMPLATE_PATHS[kind] + ("spec",)
            group_name = self.group_of(conv, workload.obj, spec_path, namespace)
            if group_name is None:
                continue
            if not group_name:
                conv.report.warn(CATEGORY, f"{workload.obj.where}: its pods name a pod group that is not in the "
                                           "input; the scheduler keeps them pending")
                continue
            group = self.groups[group_name]
            if "gang" in group.policy:
                conv.types[workload.type_name]["creatable"] = False
            if kind != "Job" or (namespace, name) in self.jobs_with_pods:
                continue
            parallelism = conv.get(workload.obj, ("spec", "parallelism"), int)
            template = conv.get(workload.obj, spec_path, dict) or {}
            group.schedulers.add(template.get("schedulerName") or DEFAULT_SCHEDULER)
            stamp = conv.get(workload.obj, ("metadata", "creationTimestamp"), str) or ""
            for _ in range(1 if parallelism is None else parallelism):
                self.seen += 1
                group.members.append(((0, stamp, self.seen), workload.type_name))

    # -- output ----------------------------------------------------------------------------------
    def section(self, conv: Any) -> list[dict]:
        """The v1 ``groups:`` entries, after every pod was read (warnings for odd groups)."""
        self.job_members(conv, conv.workloads)
        parents = {g.parent for g in self.groups.values() if g.parent}
        out = []
        # KEP-6012: a composite's children are evaluated sorted by creation timestamp (stable: input order)
        for group in sorted(self.groups.values(), key=lambda g: g.stamp if g.parent else ""):
            if group.parent is not None and group.parent not in self.groups:
                conv.report.warn(CATEGORY, f"{group.where}: its parent {group.parent} is not in the input; "
                                           "the scheduler waits for it (treated as a root)")
                group.parent = None
            runs: list[dict] = []
            for _, type_name in sorted(group.members, key=lambda m: m[0]):
                if runs and runs[-1]["pod"] == type_name:
                    runs[-1]["count"] += 1
                else:
                    runs.append({"pod": type_name, "count": 1})
            pending = sum(r["count"] for r in runs)
            body: dict = {"name": group.name, "policy": group.policy}
            if group.composite:
                body["composite"] = True
            if group.parent:
                body["parent"] = group.parent
            if runs:
                body["members"] = runs
            if not group.composite and not pending and not group.running:
                conv.report.warn(CATEGORY, f"{group.where}: no pod of the input belongs to it; "
                                           "the scheduler does not queue it")
            if group.composite and group.name not in parents:
                conv.report.warn(CATEGORY, f"{group.where}: no group names it as parent")
            need = group.policy.get("gang", {}).get("minCount", 0)
            if need > pending + group.running and (pending or group.running):
                conv.report.warn(CATEGORY, f"{group.where}: minCount {need} but only {pending + group.running} "
                                           "pods in the input; the scheduler waits for more (it can never run)")
            if len(group.schedulers) > 1:
                why = f"its pods name different schedulers ({', '.join(sorted(group.schedulers))})"
                conv.report.warn(CATEGORY, f"{group.where}: {why}; the scheduler rejects the group")
                body["rejected"] = why
            out.append(body)
        self.mixed_hierarchies(conv, out)
        return out

    def mixed_hierarchies(self, conv: Any, out: list[dict]) -> None:
        """The scheduler validates a whole hierarchy before its cycle (``validatePodGroup``): pods
        of different leaves naming different schedulers make it reject the root."""
        schedulers: dict[str, set] = {}
        for group in self.groups.values():
            root, seen = group, {group.name}
            while root.parent in self.groups and root.parent not in seen:   # a cycle is the loader's error
                root = self.groups[root.parent]
                seen.add(root.name)
            schedulers.setdefault(root.name, set()).update(group.schedulers)
        for body in out:
            names = schedulers.get(body["name"], set())
            if "parent" not in body and len(names) > 1 and "rejected" not in body:
                why = f"pods of its hierarchy name different schedulers ({', '.join(sorted(names))})"
                conv.report.warn(CATEGORY, f"{self.groups[body['name']].where}: {why}; the scheduler rejects it")
                body["rejected"] = why
