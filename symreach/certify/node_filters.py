"""The four static filters re-evaluated from the pod spec and the node, not from the loader.

A static-filter certificate names the failing filter; the loader folded all
of them into ``Instance.static_block`` with its own label machinery
(``loader.labels``, ``loader.resolve``). This module re-reads the pod type's
spec fields as given (``PodType.manifest``) and the node's labels, taints and
``unschedulable`` flag, and evaluates the filters as the kube-scheduler
documents them, in plugin order:

- NodeUnschedulable: an unschedulable node, unless the pod tolerates the
  ``node.kubernetes.io/unschedulable:NoSchedule`` taint;
- NodeName: ``nodeName`` set to another node;
- TaintToleration: a ``NoSchedule`` or ``NoExecute`` taint that no toleration
  tolerates (``PreferNoSchedule`` never filters);
- NodeAffinity: ``nodeSelector`` labels, then the required node affinity's
  terms (OR of terms, AND of requirements; an empty term matches nothing;
  ``In``/``NotIn``/``Exists``/``DoesNotExist``/``Gt``/``Lt`` on labels,
  ``metadata.name`` in ``matchFields``; Gt/Lt compare 64-bit integers as Go
  parses them, and a value that does not parse never matches).

The volume plugins' verdicts are read as the Kubernetes front end recorded
them in the spec's ``volumes`` field (this module has no volume objects): a
PreFilter rejection fails every node (but a NodeAffinity conflict), a Filter
failure a node no earlier filter fails. DynamicResources' verdicts (the
spec's ``dra`` field) come after the volume plugins' the same way.
"""

from __future__ import annotations

import re
from typing import Any, Mapping, Optional

from symreach import reasons
from symreach.model import Node

UNSCHEDULABLE_TAINT = "node.kubernetes.io/unschedulable"


def static_failure(manifest: Mapping[str, Any], node: Node, kube: bool = False) -> Optional[str]:
    """The first failing static filter of a pod spec on a node, or None.

    ``kube``: NodeAffinity's PreFilter runs first (kubernetes profile): when
    every required term has ``matchFields metadata.name In`` lists, a node
    outside the union of the terms' common names fails before any filter.
    """
    volumes = manifest.get("volumes") or {}
    dra = manifest.get("dra") or {}
    if kube:
        names = _prefilter_names(manifest)
        if names is not None and not names:
            return reasons.NODE_AFFINITY_CONFLICT
        for rejected in (volumes.get("preFilter"), dra.get("preFilter")):
            if rejected:
                return rejected["reasons"][0]
        if names is not None and node.name not in names:
            return reasons.PREFILTER_NODE_AFFINITY
    failure = _filters(manifest, node)
    if failure is None:
        for entry in (*(volumes.get("filter") or ()), *(dra.get("filter") or ())):
            if entry["node"] == node.name:
                return entry["reasons"][0]
    return failure


def _filters(manifest: Mapping[str, Any], node: Node) -> Optional[str]:
    tolerations = list(manifest.get("tolerations") or ())
    if node.unschedulable and not any(tolerates(tol, UNSCHEDULABLE_TAINT, "", "NoSchedule") for tol in tolerations):
        return reasons.NODE_UNSCHEDULABLE
    name = manifest.get("nodeName")
    if name and name != node.name:
        return reasons.NODE_NAME
    for taint in node.taints:
        if taint.effect in ("NoSchedule", "NoExecute") and \
                not any(tolerates(tol, taint.key, taint.value, taint.effect) for tol in tolerations):
            return reasons.TAINT_TOLERATION
    if not node_affinity_ok(manifest, node):
        return reasons.NODE_AFFINITY
    return None


def tolerates(tol: Mapping[str, Any], key: str, value: str, effect: str) -> bool:
    if tol.get("effect") and tol.get("effect") != effect:
        return False
    operator = tol.get("operator") or "Equal"
    if not tol.get("key"):
        return operator == "Exists"
    if tol.get("key") != key:
        return False
    return operator == "Exists" or str(tol.get("value") or "") == value


def node_affinity_ok(manifest: Mapping[str, Any], node: Node) -> bool:
    for key, value in (manifest.get("nodeSelector") or {}).items():
        if node.labels.get(key) != str(value):
            return False
    affinity = (manifest.get("affinity") or {}).get("nodeAffinity") or {}
    required = affinity.get("requiredDuringSchedulingIgnoredDuringExecution")
    if required is None:
        return True
    terms = required.get("nodeSelectorTerms") or ()
    return any(_term_ok(term, node) for term in terms)


def _prefilter_names(manifest: Mapping[str, Any]) -> Optional[set[str]]:
    affinity = (manifest.get("affinity") or {}).get("nodeAffinity") or {}
    terms = (affinity.get("requiredDuringSchedulingIgnoredDuringExecution") or {}).get("nodeSelectorTerms") or ()
    if not terms:
        return None
    names: set[str] = set()
    for term in terms:
        lists = [set(r.get("values") or ()) for r in term.get("matchFields") or ()
                 if r.get("key") == "metadata.name" and r.get("operator") == "In"]
        if not lists:
            return None
        names |= set.intersection(*lists)
    return names


def _int64(text: Optional[str]) -> Optional[int]:
    """Go's strconv.ParseInt(text, 10, 64): ASCII digits with an optional sign, in range."""
    if text is None or not re.fullmatch(r"[+-]?[0-9]+", text):
        return None
    value = int(text)
    return value if -(2**63) <= value < 2**63 else None


def _term_ok(term: Mapping[str, Any], node: Node) -> bool:
    labels = term.get("matchExpressions") or ()
    fields = term.get("matchFields") or ()
    if not labels and not fields:
        return False
    return all(requirement_ok(r, node.labels.get(r.get("key"))) for r in labels) and \
        all(requirement_ok(r, node.name if r.get("key") == "metadata.name" else None) for r in fields)


def requirement_ok(req: Mapping[str, Any], value: Optional[str]) -> bool:
    op = req.get("operator")
    values = [str(v) for v in (req.get("values") or ())]
    if op == "In":
        return value is not None and value in values
    if op == "NotIn":
        return value is None or value not in values
    if op == "Exists":
        return value is not None
    if op == "DoesNotExist":
        return value is None
    if op in ("Gt", "Lt"):
        have, bound = _int64(value), _int64(values[0] if values else None)
        if have is None or bound is None:
            return False
        return have > bound if op == "Gt" else have < bound
    return False
