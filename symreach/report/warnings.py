"""Warnings: everything the front end skipped, dropped or could not model, grouped and counted.

Nothing about the input is silently ignored: the Kubernetes front end records
each warning with a category (``Report.warn``), and this module adds the
objects it did not use (skipped kinds, custom resources). The command line prints one line per category on
stderr and lists every message under ``warnings`` in ``--json``; ``--strict``
turns any warning into an input error (exit 2).
"""

from __future__ import annotations

from dataclasses import field
from typing import Optional, Sequence

from symreach.records import record


# API groups served by Kubernetes itself; any other group is a custom resource.
BUILTIN_GROUPS = frozenset({
    "", "apps", "batch", "autoscaling", "policy", "networking.k8s.io", "rbac.authorization.k8s.io",
    "storage.k8s.io", "scheduling.k8s.io", "coordination.k8s.io", "discovery.k8s.io", "node.k8s.io",
    "admissionregistration.k8s.io", "apiextensions.k8s.io", "apiregistration.k8s.io", "certificates.k8s.io",
    "events.k8s.io", "flowcontrol.apiserver.k8s.io", "resource.k8s.io", "authentication.k8s.io",
    "authorization.k8s.io", "internal.apiserver.k8s.io", "storagemigration.k8s.io", "extensions",
})
# Built-in kinds that change where or whether pods run, but that symreach does not model.
UNMODELLED_KINDS = {
    "LimitRange": "default requests it would add to pods without requests are not applied",
    "ResourceQuota": "a quota may refuse pods; not checked",
    "PriorityClass": "read only for the priorities of nominated pods' Filter runs; preemption is out of scope",
    "RuntimeClass": "runtime class overhead and node selection are not applied",
}
SHOWN_PER_LINE = 3


@record(frozen=False)
class WarningGroup:
    """Warnings of one category: shown as one line, listed in full in JSON."""

    category: str
    messages: list[str] = field(default_factory=list)

    @property
    def count(self) -> int:
        return len(self.messages)

    def line(self) -> str:
        if self.count == 1:
            return f"{self.category}: {self.messages[0]}"
        shown = "; ".join(self.messages[:SHOWN_PER_LINE])
        more = f"; and {self.count - SHOWN_PER_LINE} more" if self.count > SHOWN_PER_LINE else ""
        return f"{self.category} ({self.count}): {shown}{more}"

    def to_json(self) -> dict:
        return {"category": self.category, "count": self.count, "messages": list(self.messages)}


def api_group(api_version: str) -> str:
    return api_version.split("/", 1)[0] if "/" in api_version else ""


def is_custom_resource(api_version: str) -> bool:
    return api_group(api_version) not in BUILTIN_GROUPS


def warning_groups(report) -> list[WarningGroup]:
    """The Kubernetes front end's ``Report`` as warning groups, in a stable order."""
    if report is None:
        return []
    groups: dict[str, WarningGroup] = {}

    def add(category: str, message: str) -> None:
        groups.setdefault(category, WarningGroup(category)).messages.append(message)

    skipped: dict[str, int] = {}
    for kind, api_version, name in report.skipped_objects:
        if is_custom_resource(api_version):
            add("custom resources not modelled",
                f"{kind} {name} ({api_version}): pods it would create are not pod types; "
                "only its running pods in the input are modelled")
        elif kind in UNMODELLED_KINDS:
            add("kinds not modelled", f"{kind} {name}: {UNMODELLED_KINDS[kind]}")
        else:
            skipped[kind] = skipped.get(kind, 0) + 1
    for kind, count in sorted(skipped.items()):
        add("skipped kinds", f"{count} {kind} (no effect on scheduling)")
    for category, message in report.notes:
        add(category, message)
    # Pending and finished pods are not left out: they do not run, exactly as in the model
    # (a pending pod's type is still asked about). Pods on nodes not in the input are warned above.
    return list(groups.values())


def unknown_pod_hint(report, name: str) -> Optional[str]:
    """Why ``name`` is no pod type, when a custom resource of the input would create it."""
    if report is None:
        return None
    for workload, why in report.unplaceable.items():
        if name in (workload, workload.split("/", 1)[-1]):
            return f"{workload} gives no pod type: {why}"
    custom = [(kind, api, obj) for kind, api, obj in report.skipped_objects if is_custom_resource(api)]
    for kind, api, obj in custom:
        if name == obj or name == obj.split("/", 1)[-1] or name.startswith(obj + "-"):
            return (f"pod type {name!r} would be created by the custom resource {kind} {obj} ({api}), "
                    "whose pods symreach does not model; apply its pods (or a workload with the same "
                    "pod template) to the input to ask about them")
    if custom:
        return f"{len(custom)} custom resource(s) in the input are not modelled (see the warnings)"
    return None
