"""kube-scheduler's reason strings, verbatim, so explanations read like `kubectl describe`.

Static reasons (folded into ``Instance.static_block`` by the loader) come first,
in plugin order; the dynamic ones are used by the executable semantics. Where Go's
random map order or a pointer picks a message's text, the reason shows one text marked
and carries the pattern of every one (``marked_reason``, ``reason_admits``).
"""

from __future__ import annotations

import re
from typing import Optional

# Plugin names, in the kube-scheduler's Filter order.
NODE_UNSCHEDULABLE_PLUGIN = "NodeUnschedulable"
NODE_NAME_PLUGIN = "NodeName"
TAINT_TOLERATION_PLUGIN = "TaintToleration"
NODE_AFFINITY_PLUGIN = "NodeAffinity"
NODE_PORTS_PLUGIN = "NodePorts"
NODE_RESOURCES_FIT_PLUGIN = "NodeResourcesFit"
VOLUME_RESTRICTIONS_PLUGIN = "VolumeRestrictions"
NODE_VOLUME_LIMITS_PLUGIN = "NodeVolumeLimits"
VOLUME_BINDING_PLUGIN = "VolumeBinding"
VOLUME_ZONE_PLUGIN = "VolumeZone"
POD_TOPOLOGY_SPREAD_PLUGIN = "PodTopologySpread"
INTER_POD_AFFINITY_PLUGIN = "InterPodAffinity"

# Static filters, in kube-scheduler plugin order.
NODE_UNSCHEDULABLE = "node(s) were unschedulable"
NODE_NAME = "node(s) didn't match the requested node name"
TAINT_TOLERATION = "node(s) had untolerated taint(s)"
NODE_AFFINITY = "node(s) didn't match Pod's node affinity/selector"

# NodeAffinity's PreFilter: a ``matchFields metadata.name In`` in every term names
# the only candidate nodes (the others get the framework's wording), and terms
# whose names cannot all hold reject every node.
PREFILTER_NODE_AFFINITY = f"node(s) didn't satisfy plugin(s) [{NODE_AFFINITY_PLUGIN}]"
NODE_AFFINITY_CONFLICT = "pod affinity terms conflict"

STATIC_REASONS = (NODE_UNSCHEDULABLE, NODE_NAME, TAINT_TOLERATION, NODE_AFFINITY, PREFILTER_NODE_AFFINITY,
                  NODE_AFFINITY_CONFLICT)

# Volume plugins' static reasons (``frontends.k8s_volume_filters``, ``Instance.volume_failures``).
VOLUME_NODE_CONFLICT = "node(s) didn't match PersistentVolume's node affinity"
VOLUME_BIND_CONFLICT = "node(s) didn't find available persistent volumes to bind"
VOLUME_NOT_ENOUGH_SPACE = "node(s) did not have enough free storage"
VOLUME_ZONE_CONFLICT = "node(s) had no available volume zone"
UNBOUND_IMMEDIATE_CLAIMS = "pod has unbound immediate PersistentVolumeClaims"

# Dynamic filters (depend on the configuration).
NODE_PORTS = "node(s) didn't have free ports for the requested pod ports"
TOO_MANY_PODS = "Too many pods"
INSUFFICIENT = "Insufficient {resource}"
READ_WRITE_ONCE_POD_CONFLICT = ("node(s) unavailable due to PersistentVolumeClaim with ReadWriteOncePod access mode "
                               "already in-use by another pod")
MAX_VOLUME_COUNT = "node(s) exceed max volume count"
DISK_CONFLICT = "node(s) had no available disk"
SPREAD = "node(s) didn't match pod topology spread constraints"
SPREAD_MISSING_LABEL = "node(s) didn't match pod topology spread constraints (missing required label)"
POD_AFFINITY = "node(s) didn't match pod affinity rules"
POD_ANTI_AFFINITY = "node(s) didn't match pod anti-affinity rules"
EXISTING_ANTI_AFFINITY = "node(s) didn't satisfy existing pods anti-affinity rules"

# A Filter status of code Error (not Unschedulable): ``RunFilterPlugins`` wraps it in this prefix, and
# ``findNodesThatPassFilters`` cancels the pod's whole scheduling cycle on it (DynamicResources' allocator).
DYNAMIC_RESOURCES_PLUGIN = "DynamicResources"
FILTER_ERROR = 'running "DynamicResources" filter plugin: '
CYCLE_ABORT = "{error} (on node {node}: the error aborts the pod's whole scheduling cycle, no node is chosen)"


_PLUGIN_OF = {
    NODE_UNSCHEDULABLE: NODE_UNSCHEDULABLE_PLUGIN,
    NODE_NAME: NODE_NAME_PLUGIN,
    TAINT_TOLERATION: TAINT_TOLERATION_PLUGIN,
    NODE_AFFINITY: NODE_AFFINITY_PLUGIN,
    PREFILTER_NODE_AFFINITY: NODE_AFFINITY_PLUGIN,
    NODE_AFFINITY_CONFLICT: NODE_AFFINITY_PLUGIN,
    NODE_PORTS: NODE_PORTS_PLUGIN,
    READ_WRITE_ONCE_POD_CONFLICT: VOLUME_RESTRICTIONS_PLUGIN,
    MAX_VOLUME_COUNT: NODE_VOLUME_LIMITS_PLUGIN,
    DISK_CONFLICT: VOLUME_RESTRICTIONS_PLUGIN,
    VOLUME_NODE_CONFLICT: VOLUME_BINDING_PLUGIN,
    VOLUME_BIND_CONFLICT: VOLUME_BINDING_PLUGIN,
    VOLUME_NOT_ENOUGH_SPACE: VOLUME_BINDING_PLUGIN,
    UNBOUND_IMMEDIATE_CLAIMS: VOLUME_BINDING_PLUGIN,
    VOLUME_ZONE_CONFLICT: VOLUME_ZONE_PLUGIN,
    TOO_MANY_PODS: NODE_RESOURCES_FIT_PLUGIN,
    SPREAD: POD_TOPOLOGY_SPREAD_PLUGIN,
    SPREAD_MISSING_LABEL: POD_TOPOLOGY_SPREAD_PLUGIN,
    POD_AFFINITY: INTER_POD_AFFINITY_PLUGIN,
    POD_ANTI_AFFINITY: INTER_POD_AFFINITY_PLUGIN,
    EXISTING_ANTI_AFFINITY: INTER_POD_AFFINITY_PLUGIN,
}


def plugin_of(reason: str) -> str:
    """The Filter plugin that reports ``reason`` (reason strings are unique per plugin)."""
    if reason.startswith("Insufficient "):
        return NODE_RESOURCES_FIT_PLUGIN
    return _PLUGIN_OF.get(reason, "")


def is_filter_error(reason: str) -> bool:
    """Whether a Filter reason is an error status (the cycle aborts), not an unschedulable verdict."""
    return reason.startswith(FILTER_ERROR)


def insufficient(resource: str) -> str:
    """NodeResourcesFit's reason; the ``pods`` resource has its own wording."""
    if resource == "pods":
        return TOO_MANY_PODS
    return INSUFFICIENT.format(resource=resource)


# ---- reasons whose text Go picks among several --------------------------------------------
# Some messages print a Go map (its order random per run) or a pointer (an address per run): a DRA
# CEL runtime error naming ``device.attributes`` in ``insert failed``, ``%s`` of a map holding a
# semver and a quantity (``dra_cel.CelError.pattern``). The error is certain, its text one of many.
# Such a reason stays a plain string everywhere (documents, JSON, certificates) and carries its
# pattern in its own text (``marked_reason``):
#     <head>«<one text Go can print>» (Go's random map order or a pointer picks the text in «»: any
#     that fully matches /<regex>/)
# The regex's literal parts are ``re.escape``'d (spaces and parentheses escaped), so the closing
# note never occurs inside it and is found from the end; the head (claim, class and request names:
# DNS names) holds no «.
MARK_OPEN, MARK_CLOSE = "\u00ab", "\u00bb"
_NOTE = MARK_CLOSE + " (Go's random map order or a pointer picks the text in \u00ab\u00bb: any that fully matches /"
_END = "/)"


def marked_reason(head: str, message: str, pattern: str) -> str:
    """``head + message``, or where ``pattern`` (a regex every message Go can print fully matches)
    is given, that text with ``message`` marked and the pattern carried along."""
    if not pattern or pattern == re.escape(message):
        return head + message
    return f"{head}{MARK_OPEN}{message}{_NOTE}{pattern}{_END}"


def _marked_parts(reason: str) -> Optional[tuple[str, str, str]]:
    """(head, shown message, message pattern) of a marked reason; None for a plain one."""
    if not reason.endswith(_END):
        return None
    j = reason.rfind(_NOTE)
    i = reason.find(MARK_OPEN)
    if j < 0 or i < 0 or i > j:
        return None
    return reason[:i], reason[i + len(MARK_OPEN):j], reason[j + len(_NOTE):-len(_END)]


def reason_pattern(reason: str) -> Optional[str]:
    """The regex every text Go can print for ``reason`` fully matches (None: a verbatim reason)."""
    parts = _marked_parts(reason)
    if parts is None:
        return None
    head, _, pattern = parts
    return re.escape(head) + "(?:" + pattern + ")"


def reason_text(reason: str) -> str:
    """A text Go can print for ``reason``: the reason itself, or a marked one's shown message."""
    parts = _marked_parts(reason)
    return reason if parts is None else parts[0] + parts[1]


def reason_admits(reason: str, message: str) -> bool:
    """Whether the scheduler may report ``reason`` with the text ``message``: the same text, or for
    a marked reason any text its pattern fully matches."""
    if message == reason:
        return True
    pattern = reason_pattern(reason)
    return pattern is not None and re.fullmatch(pattern, message) is not None
