"""Nominated pods and pod priority, as the kube-scheduler's Filter phase reads them.

The scheduling queue nominates a pending pod from its ``status.nominatedNodeName``
when the pod is added (``nominator.addNominatedPod``), and
``RunFilterPluginsWithNominatedPods`` filters a pod p on node N twice: once with
every pod nominated to N of priority >= p's (another UID) added to N, and, if
any was added and that passes, once without; p fits only if both pass. So a
plain dump with such a pod changes Filter verdicts on N for every pod of lower
or equal priority, until the nominated pod is scheduled or deleted.

This module reads what that needs from the objects (priorities resolved as the
API server's Priority admission plugin does, the nominations the scheduler
would make), warns once per nominated pod, and marks every pod type whose
answers a nomination can change (``Report.caveats``). The Kubernetes front end
(``kubernetes.py``) feeds it; ``k8s_nominated_filter.py`` decides a Filter
verdict with the nominations exactly.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

# PriorityClasses the API server creates itself (scheduling/v1 SystemPriorityClasses).
SYSTEM_CLASSES = {"system-node-critical": 2000001000, "system-cluster-critical": 2000000000}
DEFAULT_SCHEDULER = "default-scheduler"
CATEGORY = "nominated pods"
NOMINATED_CAVEAT = "(status.nominatedNodeName)"   # in every caveat this module records


@dataclass(frozen=True)
class Nomination:
    """A pending pod the scheduler holds nominated to a node."""

    pod: str                 # "ns/name"
    uid: str                 # metadata.uid ("" when the input has none)
    type_name: str           # its pod type
    node: str                # status.nominatedNodeName
    priority: Optional[int]  # None: its priority class is not in the input
    where: str               # the object, as warnings name it


@dataclass
class Priorities:
    """PriorityClass values, and a pod spec's priority as the Priority admission plugin sets it."""

    classes: dict[str, int] = field(default_factory=lambda: dict(SYSTEM_CLASSES))
    defaults: list[int] = field(default_factory=list)   # values of globalDefault classes

    def add_class(self, data: dict) -> None:
        """A PriorityClass object (malformed ones are ignored: the API server would refuse them)."""
        meta = data.get("metadata") if isinstance(data.get("metadata"), dict) else {}
        name, value = meta.get("name"), data.get("value")
        if not isinstance(name, str) or not isinstance(value, int) or isinstance(value, bool):
            return
        self.classes[name] = value
        if data.get("globalDefault") is True:
            self.defaults.append(value)

    def of(self, spec: dict) -> Optional[int]:
        """``spec.priority`` when stored (a dump: admission wrote it), else its class's value, else the
        smallest global default's, else 0. None when the named class is not known here."""
        priority = spec.get("priority")
        if isinstance(priority, int) and not isinstance(priority, bool):
            return priority
        name = spec.get("priorityClassName")
        if isinstance(name, str) and name:
            return self.classes.get(name)
        return min(self.defaults) if self.defaults else 0


@dataclass
class NominationIndex:
    """What the front end saw: each type's priority and each nomination the scheduler would make."""

    priorities: Priorities = field(default_factory=Priorities)
    type_priority: dict[str, Optional[int]] = field(default_factory=dict)   # creatable types
    pod_priority: dict[str, Optional[int]] = field(default_factory=dict)    # pending "ns/name"
    nominations: list[Nomination] = field(default_factory=list)

    def add_type(self, name: str, spec: dict) -> None:
        self.type_priority[name] = self.priorities.of(spec)

    def pending(self, where: str, pod: str, type_name: str, data: dict) -> None:
        """A pending pod (no ``spec.nodeName``, not finished): a nomination when the queue would make one.
        Only the default scheduler's pods are in its queue, and a gated pod (``schedulingGates``)
        is held back by PreEnqueue before it is nominated."""
        spec = data.get("spec") if isinstance(data.get("spec"), dict) else {}
        status = data.get("status") if isinstance(data.get("status"), dict) else {}
        meta = data.get("metadata") if isinstance(data.get("metadata"), dict) else {}
        self.pod_priority[pod] = self.priorities.of(spec)
        node = status.get("nominatedNodeName")
        if not isinstance(node, str) or not node:
            return
        if spec.get("schedulerName", DEFAULT_SCHEDULER) != DEFAULT_SCHEDULER or spec.get("schedulingGates"):
            return
        uid = meta.get("uid") if isinstance(meta.get("uid"), str) else ""
        self.nominations.append(Nomination(pod, uid, type_name, node, self.priorities.of(spec), where))

    def marks(self, nodes: set[str]) -> tuple[list[str], dict[str, list[str]]]:
        """The warnings (one per nomination) and the caveats per pod type: every type whose priority is
        at most a nomination's (or unknown) on a node in the input."""
        warnings: list[str] = []
        caveats: dict[str, list[str]] = {}
        for nom in self.nominations:
            shown = "unknown (its priorityClassName is not in the input)" if nom.priority is None \
                else str(nom.priority)
            if nom.node not in nodes:
                warnings.append(f"{nom.where}: status.nominatedNodeName {nom.node!r}: not a node in the input; "
                                "the nomination filters nothing here")
                continue
            warnings.append(
                f"{nom.where}: status.nominatedNodeName {nom.node!r}: the scheduler counts this pending pod "
                f"(priority {shown}) on {nom.node} when it filters pods of lower or equal priority there, until "
                "it is scheduled or deleted; answers it can change are marked")
            caveat = (f"pending pod {nom.pod} (priority {shown}) is nominated to {nom.node} "
                      f"{NOMINATED_CAVEAT}: until it is scheduled, pods of lower or equal priority must fit "
                      "there with it too; check and matrix search around it, and an answer still marked was "
                      "not decided with it (verdicts now and witnesses are checked with it)")
            for name, priority in self.type_priority.items():
                if nom.priority is None or priority is None or priority <= nom.priority:
                    caveats.setdefault(name, []).append(caveat)
        return warnings, caveats
