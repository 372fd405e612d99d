"""Pure label logic of the Kubernetes API: selectors, node selector terms, tolerations.

The loader uses it to resolve every label-based rule into index sets, so the
engines never match labels. Parsers validate the shapes the API server would
(operators, value counts) and raise ``FieldError`` with the offending path.
Semantics follow ``k8s.io/apimachinery/pkg/labels`` and
``component-helpers/scheduling/corev1`` (nodeaffinity, ToleratesTaint).
"""

from __future__ import annotations

import re
from dataclasses import field
from functools import cached_property
from typing import Mapping, Optional, Sequence

from symreach import reasons
from symreach.model import FrozenDict, Node, Taint
from symreach.loader.shapes import FieldError, Path, choice, integer, mapping, sequence, string, string_list, string_map
from symreach.records import record

IN, NOT_IN, EXISTS, DOES_NOT_EXIST, GT, LT = "In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"
SELECTOR_OPERATORS = (IN, NOT_IN, EXISTS, DOES_NOT_EXIST)
NODE_OPERATORS = (IN, NOT_IN, EXISTS, DOES_NOT_EXIST, GT, LT)
FIELD_OPERATORS = (IN, NOT_IN)
NODE_NAME_FIELD = "metadata.name"

NO_SCHEDULE, PREFER_NO_SCHEDULE, NO_EXECUTE = "NoSchedule", "PreferNoSchedule", "NoExecute"
TAINT_EFFECTS = (NO_SCHEDULE, PREFER_NO_SCHEDULE, NO_EXECUTE)
FILTERING_EFFECTS = (NO_SCHEDULE, NO_EXECUTE)
EQUAL = "Equal"
UNSCHEDULABLE_TAINT = Taint("node.kubernetes.io/unschedulable", "", NO_SCHEDULE)

# Re-exported so that callers find the static reasons next to the logic.
NODE_UNSCHEDULABLE = reasons.NODE_UNSCHEDULABLE
NODE_NAME = reasons.NODE_NAME
TAINT_TOLERATION = reasons.TAINT_TOLERATION
NODE_AFFINITY = reasons.NODE_AFFINITY


# ---- requirements and label selectors -------------------------------------

@record
class Requirement:
    """``key operator values``; Gt/Lt compare integers (node selectors only)."""

    key: str
    operator: str
    values: tuple[str, ...] = ()

    def matches(self, labels: Mapping[str, str]) -> bool:
        has = self.key in labels
        if self.operator == IN:
            return has and labels[self.key] in self.values
        if self.operator == NOT_IN:
            return not has or labels[self.key] not in self.values
        if self.operator == EXISTS:
            return has
        if self.operator == DOES_NOT_EXIST:
            return not has
        if not has:
            return False
        value, bound = go_int(labels[self.key]), go_int(self.values[0])
        if value is None or bound is None:
            return False
        return value > bound if self.operator == GT else value < bound


_INT64 = 2**63


def go_int(text: str) -> Optional[int]:
    """``strconv.ParseInt(text, 10, 64)``, as labels.Requirement uses for Gt/Lt: None when it fails.

    Stricter than Python's int(): no underscores, no spaces, int64 range only.
    """
    if not re.fullmatch(r"[+-]?[0-9]+", text):
        return None
    value = int(text)
    return value if -_INT64 <= value < _INT64 else None


@record
class LabelSelector:
    """A metav1.LabelSelector: AND of requirements; ``nothing`` is the null selector."""

    requirements: tuple[Requirement, ...] = ()
    nothing: bool = False

    def matches(self, labels: Mapping[str, str]) -> bool:
        return not self.nothing and all(r.matches(labels) for r in self.requirements)

    def is_empty(self) -> bool:
        """labels.Selector.Empty(): the ``{}`` selector (matches everything)."""
        return not self.nothing and not self.requirements

    def keys(self) -> frozenset[str]:
        return frozenset(r.key for r in self.requirements)

    def with_requirements(self, extra: Sequence[Requirement]) -> "LabelSelector":
        """Add requirements (matchLabelKeys); the null selector stays null."""
        if self.nothing or not extra:
            return self
        return LabelSelector(self.requirements + tuple(extra))


EVERYTHING = LabelSelector()
NOTHING = LabelSelector(nothing=True)


def label_key_requirements(
    keys: Sequence[str], owner_labels: Mapping[str, str], operator: str
) -> tuple[Requirement, ...]:
    """matchLabelKeys (In) / mismatchLabelKeys (NotIn) resolved against the owner's labels.

    A key the owner lacks is skipped, as the scheduler and API server do.
    """
    return tuple(Requirement(k, operator, (owner_labels[k],)) for k in keys if k in owner_labels)


def parse_label_selector(raw: object, path: Path = ()) -> LabelSelector:
    """A metav1.LabelSelector; null is NOTHING, ``{}`` is EVERYTHING."""
    if raw is None:
        return NOTHING
    body = mapping(raw, path, ("matchLabels", "matchExpressions"))
    reqs = [Requirement(k, IN, (v,)) for k, v in string_map(body.get("matchLabels"), path + ("matchLabels",)).items()]
    exprs_path = path + ("matchExpressions",)
    for i, expr in enumerate(sequence(body.get("matchExpressions"), exprs_path)):
        reqs.append(_parse_requirement(expr, exprs_path + (i,), SELECTOR_OPERATORS))
    return LabelSelector(tuple(reqs))


def _parse_requirement(raw: object, path: Path, operators: Sequence[str]) -> Requirement:
    body = mapping(raw, path, ("key", "operator", "values"), required=("key", "operator"))
    key = string(body["key"], path + ("key",))
    op = choice(body["operator"], path + ("operator",), operators)
    values = tuple(string_list(body.get("values"), path + ("values",), empty_items=True))
    vpath = path + ("values",)
    if op in (IN, NOT_IN) and not values:
        raise FieldError(vpath, f"must be non-empty when operator is {op}")
    if op in (EXISTS, DOES_NOT_EXIST) and values:
        raise FieldError(vpath, f"must be empty when operator is {op}")
    if op in (GT, LT) and len(values) != 1:
        raise FieldError(vpath, f"must have exactly one value when operator is {op}")
    # A Gt/Lt value that is not an integer passes API validation; the scheduler
    # then cannot parse the term, which matches no node (``Requirement.matches``).
    return Requirement(key, op, values)


# ---- node selector terms ----------------------------------------------------

@record
class NodeSelectorTerm:
    """AND of label and field requirements; a term with no requirement matches nothing."""

    label_requirements: tuple[Requirement, ...] = ()
    field_requirements: tuple[Requirement, ...] = ()

    def matches(self, node_name: str, labels: Mapping[str, str]) -> bool:
        if not self.label_requirements and not self.field_requirements:
            return False
        fields = {NODE_NAME_FIELD: node_name}
        return all(r.matches(labels) for r in self.label_requirements) and all(
            r.matches(fields) for r in self.field_requirements
        )


@record
class NodeSelector:
    """OR of terms; an empty list of terms matches nothing."""

    terms: tuple[NodeSelectorTerm, ...] = ()

    def matches(self, node_name: str, labels: Mapping[str, str]) -> bool:
        return any(t.matches(node_name, labels) for t in self.terms)


def parse_node_selector(raw: object, path: Path = ()) -> NodeSelector:
    """A v1.NodeSelector (``nodeSelectorTerms`` required)."""
    body = mapping(raw, path, ("nodeSelectorTerms",))
    if "nodeSelectorTerms" not in body:
        raise FieldError(path + ("nodeSelectorTerms",), "required field is missing")
    tpath = path + ("nodeSelectorTerms",)
    terms = sequence(body["nodeSelectorTerms"], tpath)
    return NodeSelector(tuple(parse_node_selector_term(t, tpath + (i,)) for i, t in enumerate(terms)))


def parse_node_selector_term(raw: object, path: Path = ()) -> NodeSelectorTerm:
    body = mapping(raw, path, ("matchExpressions", "matchFields"))
    epath, fpath = path + ("matchExpressions",), path + ("matchFields",)
    labels = tuple(_parse_requirement(e, epath + (i,), NODE_OPERATORS) for i, e in enumerate(sequence(body.get("matchExpressions"), epath)))
    fields = []
    for i, e in enumerate(sequence(body.get("matchFields"), fpath)):
        req = _parse_requirement(e, fpath + (i,), FIELD_OPERATORS)
        if req.key != NODE_NAME_FIELD:
            raise FieldError(fpath + (i, "key"), f"only '{NODE_NAME_FIELD}' is supported, got '{req.key}'")
        if len(req.values) != 1:
            raise FieldError(fpath + (i, "values"), "must have exactly one value for a field selector")
        fields.append(req)
    return NodeSelectorTerm(labels, tuple(fields))


# ---- taints and tolerations -------------------------------------------------

@record
class Toleration:
    """A v1.Toleration. Empty key with Exists tolerates every key; empty effect every effect."""

    key: str = ""
    operator: str = EQUAL
    value: str = ""
    effect: str = ""
    toleration_seconds: Optional[int] = None

    def tolerates(self, taint: Taint) -> bool:
        if self.effect and self.effect != taint.effect:
            return False
        if self.key and self.key != taint.key:
            return False
        if self.operator == EXISTS:
            return True
        return self.value == taint.value


def parse_toleration(raw: object, path: Path = ()) -> Toleration:
    body = mapping(raw, path, ("key", "operator", "value", "effect", "tolerationSeconds"))
    key = _opt_str(body.get("key"), path + ("key",))
    # An empty operator is valid and means Equal (v1 Toleration.ToleratesTaint).
    op = choice(body.get("operator") or None, path + ("operator",), (EQUAL, EXISTS), default=EQUAL)
    value = _opt_str(body.get("value"), path + ("value",))
    effect = _opt_str(body.get("effect"), path + ("effect",))
    if effect:
        choice(effect, path + ("effect",), TAINT_EFFECTS)
    if not key and op != EXISTS:
        raise FieldError(path + ("operator",), "must be Exists when key is empty")
    if op == EXISTS and value:
        raise FieldError(path + ("value",), "must be empty when operator is Exists")
    seconds = body.get("tolerationSeconds")
    if seconds is not None:
        integer(seconds, path + ("tolerationSeconds",))
        if effect != NO_EXECUTE:
            raise FieldError(path + ("effect",), "must be NoExecute when tolerationSeconds is set")
    return Toleration(key, op, value, effect, seconds)


def parse_taint(raw: object, path: Path = ()) -> Taint:
    body = mapping(raw, path, ("key", "value", "effect", "timeAdded"), required=("key", "effect"))
    key = string(body["key"], path + ("key",))
    value = _opt_str(body.get("value"), path + ("value",))
    effect = choice(body["effect"], path + ("effect",), TAINT_EFFECTS)
    return Taint(key, value, effect)


def tolerates(tolerations: Sequence[Toleration], taint: Taint) -> bool:
    return any(t.tolerates(taint) for t in tolerations)


def untolerated_taint(
    taints: Sequence[Taint], tolerations: Sequence[Toleration], effects: Sequence[str] = FILTERING_EFFECTS
) -> Optional[Taint]:
    """The first taint with one of ``effects`` that no toleration tolerates."""
    for taint in taints:
        if taint.effect in effects and not tolerates(tolerations, taint):
            return taint
    return None


def _opt_str(raw: object, path: Path) -> str:
    return "" if raw is None else string(raw, path, empty_ok=True)


# ---- the static filters of kube-scheduler -----------------------------------

@record
class Placement:
    """The parts of a pod spec that the static filters read.

    Methods take optional plain-dict ``labels`` of the node: callers that test
    many pods against many nodes pass them to avoid the FrozenDict overhead.
    """

    node_name: Optional[str] = None
    node_selector: Mapping[str, str] = field(default_factory=FrozenDict)
    node_affinity: Optional[NodeSelector] = None  # required node affinity, if any
    tolerations: tuple[Toleration, ...] = ()

    @cached_property
    def _selector_items(self) -> tuple[tuple[str, str], ...]:
        return tuple(self.node_selector.items())

    def matches_node_affinity(self, node: Node, labels: Optional[Mapping[str, str]] = None) -> bool:
        """nodeSelector AND required node affinity (NodeAffinity's Filter)."""
        labels = node.labels if labels is None else labels
        for key, value in self._selector_items:
            if labels.get(key) != value:
                return False
        return self.node_affinity is None or self.node_affinity.matches(node.name, labels)

    def tolerates_taints(self, node: Node) -> bool:
        return not node.taints or untolerated_taint(node.taints, self.tolerations) is None


def static_reason(pod: Placement, node: Node, labels: Optional[Mapping[str, str]] = None) -> Optional[str]:
    """The first failing static filter in plugin order, or None when all pass."""
    if node.unschedulable and not tolerates(pod.tolerations, UNSCHEDULABLE_TAINT):
        return NODE_UNSCHEDULABLE
    if pod.node_name and pod.node_name != node.name:
        return NODE_NAME
    if not pod.tolerates_taints(node):
        return TAINT_TOLERATION
    if not pod.matches_node_affinity(node, labels):
        return NODE_AFFINITY
    return None
