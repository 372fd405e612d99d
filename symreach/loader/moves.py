"""Which deletions a witness may make (SPEC 5.2): the paper's moves or an operator's.

``rules_for`` builds ``model.MoveRules`` from the options (``--moves``,
``--respect-pdb``, ``--protect``, ``--protect-namespace``, ``--keep-replicas``,
``moves:`` in a v1 query) and ``with_moves`` puts them on the instance; the executable
semantics (``semantics.delete_failure``), replay, the explicit engine and
its certificate read them from there.
Under operator moves DaemonSet pods, static/mirror pods and ``kube-system``
are protected by default, PodDisruptionBudgets are respected and controllers
keep their replicas (``--keep-replicas``: the witness ends with every
Deployment, ReplicaSet and StatefulSet running its replicas again); each rule
is also available alone.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Mapping, Optional, Sequence

from symreach.model import OPERATOR_MOVES, PAPER_MOVES, Instance, MoveRules, daemonset_groups

SYSTEM_NAMESPACE = "kube-system"


def default_protected(inst: Instance) -> frozenset[int]:
    """Pods nobody deletes to make room: DaemonSet pods, static/mirror pods, kube-system."""
    out = {t for members in daemonset_groups(inst).values() for t in members.values()}
    out |= {t for t, pod in enumerate(inst.pod_types) if pod.static_pod or pod.namespace == SYSTEM_NAMESPACE}
    return frozenset(out)


def selected_types(inst: Instance, selector: Mapping[str, str]) -> frozenset[int]:
    """Types whose labels carry every ``key=value`` of ``selector``."""
    return frozenset(t for t, pod in enumerate(inst.pod_types)
                     if all(pod.labels.get(k) == v for k, v in selector.items()))


def rules_for(inst: Instance, moves: Optional[str] = None, *, respect_pdb: bool = False,
              protect: Sequence[Mapping[str, str]] = (), protect_namespaces: Sequence[str] = (),
              keep_replicas: bool = False) -> MoveRules:
    """The move rules the options ask for; ``moves=None`` is the paper's unless another rule is given."""
    operator = moves == OPERATOR_MOVES
    protected = set(default_protected(inst)) if operator else set()
    for selector in protect:
        protected |= selected_types(inst, selector)
    namespaces = set(protect_namespaces)
    protected |= {t for t, pod in enumerate(inst.pod_types) if pod.namespace in namespaces}
    keep = operator or keep_replicas
    restricted = operator or respect_pdb or bool(protected) or keep
    return MoveRules(name=OPERATOR_MOVES if restricted else PAPER_MOVES,
                     respect_pdb=operator or respect_pdb, protected=frozenset(protected), keep_replicas=keep)


def with_moves(inst: Instance, rules: MoveRules) -> Instance:
    return replace(inst, moves=rules)


def paper(inst: Instance) -> Instance:
    """The same instance under the paper's moves (to compare answers)."""
    return replace(inst, moves=MoveRules())

