"""kube-scheduler's reason strings, verbatim, so explanations read like `kubectl describe`.

Static reasons (folded into ``Instance.static_block`` by the loader) come first,
in plugin order; the dynamic ones are used by the executable semantics.
"""

from __future__ import annotations

# Static filters, in kube-scheduler plugin order.
NODE_UNSCHEDULABLE = "node(s) were unschedulable"
NODE_NAME = "node(s) didn't match the requested node name"
TAINT_TOLERATION = "node(s) had untolerated taint(s)"
NODE_AFFINITY = "node(s) didn't match Pod's node affinity/selector"

STATIC_REASONS = (NODE_UNSCHEDULABLE, NODE_NAME, TAINT_TOLERATION, NODE_AFFINITY)

# Dynamic filters (depend on the configuration).
NODE_PORTS = "node(s) didn't have free ports for the requested pod ports"
TOO_MANY_PODS = "Too many pods"
INSUFFICIENT = "Insufficient {resource}"
SPREAD = "node(s) didn't match pod topology spread constraints"
SPREAD_MISSING_LABEL = "node(s) didn't match pod topology spread constraints (missing required label)"
POD_AFFINITY = "node(s) didn't match pod affinity rules"
POD_ANTI_AFFINITY = "node(s) didn't match pod anti-affinity rules"
EXISTING_ANTI_AFFINITY = "node(s) didn't satisfy existing pods anti-affinity rules"


def insufficient(resource: str) -> str:
    """NodeResourcesFit's reason; the ``pods`` resource has its own wording."""
    if resource == "pods":
        return TOO_MANY_PODS
    return INSUFFICIENT.format(resource=resource)
