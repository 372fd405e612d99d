"""Truth tables for label selectors, node selector terms, tolerations and static filters."""

import pytest

from symreach import reasons
from symreach.loader.labels import (
    EVERYTHING,
    NOTHING,
    Placement,
    Requirement,
    Toleration,
    label_key_requirements,
    parse_label_selector,
    parse_node_selector,
    parse_node_selector_term,
    parse_taint,
    parse_toleration,
    static_reason,
    untolerated_taint,
)
from symreach.model import FrozenDict, Node, Taint
from symreach.loader.shapes import FieldError

WEB = {"app": "web", "tier": "front"}
DB = {"app": "db"}
NONE: dict = {}


# ---- label selectors ----------------------------------------------------------

SELECTOR_TABLE = [
    # (selector, labels, expected)
    (None, WEB, False),
    (None, NONE, False),
    ({}, WEB, True),
    ({}, NONE, True),
    ({"matchLabels": {"app": "web"}}, WEB, True),
    ({"matchLabels": {"app": "web"}}, DB, False),
    ({"matchLabels": {"app": "web", "tier": "front"}}, WEB, True),
    ({"matchLabels": {"app": "web", "tier": "back"}}, WEB, False),
    ({"matchLabels": {}}, DB, True),
    ({"matchExpressions": [{"key": "app", "operator": "In", "values": ["web", "db"]}]}, DB, True),
    ({"matchExpressions": [{"key": "app", "operator": "In", "values": ["web"]}]}, NONE, False),
    ({"matchExpressions": [{"key": "app", "operator": "NotIn", "values": ["web"]}]}, DB, True),
    ({"matchExpressions": [{"key": "app", "operator": "NotIn", "values": ["web"]}]}, WEB, False),
    ({"matchExpressions": [{"key": "app", "operator": "NotIn", "values": ["web"]}]}, NONE, True),
    ({"matchExpressions": [{"key": "tier", "operator": "Exists"}]}, WEB, True),
    ({"matchExpressions": [{"key": "tier", "operator": "Exists"}]}, DB, False),
    ({"matchExpressions": [{"key": "tier", "operator": "DoesNotExist"}]}, DB, True),
    ({"matchExpressions": [{"key": "tier", "operator": "DoesNotExist", "values": []}]}, WEB, False),
    ({"matchLabels": {"app": "web"}, "matchExpressions": [{"key": "tier", "operator": "DoesNotExist"}]}, WEB, False),
]


@pytest.mark.parametrize("raw,labels,expected", SELECTOR_TABLE)
def test_label_selector_truth_table(raw, labels, expected):
    assert parse_label_selector(raw).matches(labels) is expected


def test_null_and_empty_selector_flags():
    assert parse_label_selector(None) == NOTHING and not NOTHING.is_empty()
    assert parse_label_selector({}) == EVERYTHING and EVERYTHING.is_empty()
    assert not parse_label_selector({"matchLabels": {"a": "b"}}).is_empty()


BAD_SELECTORS = [
    ({"matchExpressions": [{"key": "a", "operator": "In"}]}, ("matchExpressions", 0, "values")),
    ({"matchExpressions": [{"key": "a", "operator": "In", "values": []}]}, ("matchExpressions", 0, "values")),
    ({"matchExpressions": [{"key": "a", "operator": "Exists", "values": ["x"]}]}, ("matchExpressions", 0, "values")),
    ({"matchExpressions": [{"key": "a", "operator": "Gt", "values": ["1"]}]}, ("matchExpressions", 0, "operator")),
    ({"matchExpressions": [{"key": "a", "operator": "in", "values": ["1"]}]}, ("matchExpressions", 0, "operator")),
    ({"matchExpressions": [{"operator": "Exists"}]}, ("matchExpressions", 0, "key")),
    ({"matchExpressions": [{"key": "a", "operator": "Exists", "extra": 1}]}, ("matchExpressions", 0, "extra")),
    ({"matchLabels": {"a": 1}}, ("matchLabels", "a")),
    ({"matchLabels": ["a"]}, ("matchLabels",)),
    ({"matchLabel": {"a": "b"}}, ("matchLabel",)),
    ("app=web", ()),
]


@pytest.mark.parametrize("raw,path", BAD_SELECTORS)
def test_label_selector_shape_errors(raw, path):
    with pytest.raises(FieldError) as err:
        parse_label_selector(raw, ("sel",))
    assert err.value.path == ("sel",) + path


def test_selector_with_requirements_keeps_null():
    extra = (Requirement("app", "In", ("web",)),)
    assert NOTHING.with_requirements(extra) is NOTHING
    narrowed = EVERYTHING.with_requirements(extra)
    assert narrowed.matches(WEB) and not narrowed.matches(DB) and not narrowed.is_empty()


def test_label_key_requirements_skip_missing_keys():
    reqs = label_key_requirements(["app", "missing"], WEB, "In")
    assert reqs == (Requirement("app", "In", ("web",)),)
    assert label_key_requirements(["app"], WEB, "NotIn")[0].matches(DB)


# ---- node selector terms --------------------------------------------------------

NODE_LABELS = {"zone": "a", "cores": "8", "disk": "ssd", "weird": "x1"}


def term(*exprs, fields=()):
    raw = {}
    if exprs:
        raw["matchExpressions"] = [dict(zip(("key", "operator", "values"), e)) for e in exprs]
    if fields:
        raw["matchFields"] = [dict(zip(("key", "operator", "values"), f)) for f in fields]
    return raw


NODE_TERM_TABLE = [
    (term(("zone", "In", ["a", "b"])), True),
    (term(("zone", "In", ["b"])), False),
    (term(("zone", "NotIn", ["b"])), True),
    (term(("nope", "NotIn", ["b"])), True),
    (term(("zone", "Exists", [])), True),
    (term(("nope", "Exists", [])), False),
    (term(("nope", "DoesNotExist", [])), True),
    (term(("cores", "Gt", ["4"])), True),
    (term(("cores", "Gt", ["8"])), False),
    (term(("cores", "Lt", ["9"])), True),
    (term(("cores", "Lt", ["8"])), False),
    (term(("weird", "Gt", ["0"])), False),  # non-integer label never matches Gt/Lt
    (term(("nope", "Lt", ["100"])), False),
    (term(("zone", "In", ["a"]), ("disk", "In", ["hdd"])), False),  # AND inside a term
    (term(fields=[("metadata.name", "In", ["wk-1"])]), True),
    (term(fields=[("metadata.name", "In", ["wk-2"])]), False),
    (term(fields=[("metadata.name", "NotIn", ["wk-2"])]), True),
    (term(("zone", "In", ["a"]), fields=[("metadata.name", "In", ["wk-2"])]), False),
    ({}, False),  # an empty term matches nothing
]


@pytest.mark.parametrize("raw,expected", NODE_TERM_TABLE)
def test_node_selector_term_truth_table(raw, expected):
    assert parse_node_selector_term(raw).matches("wk-1", NODE_LABELS) is expected


def test_node_selector_terms_are_ored():
    sel = parse_node_selector({"nodeSelectorTerms": [term(("zone", "In", ["z"])), term(("disk", "In", ["ssd"]))]})
    assert sel.matches("wk-1", NODE_LABELS)
    sel = parse_node_selector({"nodeSelectorTerms": [term(("zone", "In", ["z"])), {}]})
    assert not sel.matches("wk-1", NODE_LABELS)
    assert not parse_node_selector({"nodeSelectorTerms": []}).matches("wk-1", NODE_LABELS)


BAD_NODE_TERMS = [
    (term(("cores", "Gt", ["4", "5"])), ("matchExpressions", 0, "values")),
    (term(("cores", "Lt", [])), ("matchExpressions", 0, "values")),
    (term(("zone", "Equals", ["a"])), ("matchExpressions", 0, "operator")),
    (term(fields=[("metadata.labels", "In", ["x"])]), ("matchFields", 0, "key")),
    (term(fields=[("metadata.name", "Exists", [])]), ("matchFields", 0, "operator")),
    (term(fields=[("metadata.name", "In", ["a", "b"])]), ("matchFields", 0, "values")),
    ({"matchLabels": {"a": "b"}}, ("matchLabels",)),
]


@pytest.mark.parametrize("raw,path", BAD_NODE_TERMS)
def test_node_selector_term_shape_errors(raw, path):
    with pytest.raises(FieldError) as err:
        parse_node_selector_term(raw)
    assert err.value.path == path


def test_node_selector_requires_terms_field():
    with pytest.raises(FieldError) as err:
        parse_node_selector({})
    assert err.value.path == ("nodeSelectorTerms",)


# ---- tolerations ---------------------------------------------------------------------

GPU = Taint("dedicated", "gpu", "NoSchedule")
GPU_EXEC = Taint("dedicated", "gpu", "NoExecute")

TOLERATION_TABLE = [
    ({"key": "dedicated", "value": "gpu"}, GPU, True),  # Equal is the default operator
    ({"key": "dedicated", "operator": "Equal", "value": "gpu", "effect": "NoSchedule"}, GPU, True),
    ({"key": "dedicated", "operator": "Equal", "value": "cpu"}, GPU, False),
    ({"key": "dedicated", "operator": "Equal", "value": "gpu", "effect": "NoExecute"}, GPU, False),
    ({"key": "dedicated", "operator": "Exists"}, GPU, True),
    ({"key": "dedicated", "operator": "Exists", "effect": "NoExecute"}, GPU_EXEC, True),
    ({"key": "other", "operator": "Exists"}, GPU, False),
    ({"operator": "Exists"}, GPU, True),  # empty key + Exists: every key
    ({"operator": "Exists", "effect": "NoSchedule"}, GPU_EXEC, False),
    ({"key": "", "operator": "Exists", "effect": ""}, GPU_EXEC, True),
    ({"key": "dedicated"}, Taint("dedicated", "", "NoSchedule"), True),  # "" == ""
    ({"key": "dedicated", "effect": "NoExecute", "value": "gpu", "tolerationSeconds": 30}, GPU_EXEC, True),
]


@pytest.mark.parametrize("raw,taint,expected", TOLERATION_TABLE)
def test_toleration_truth_table(raw, taint, expected):
    assert parse_toleration(raw).tolerates(taint) is expected


BAD_TOLERATIONS = [
    ({"operator": "Equal", "value": "x"}, ("operator",)),  # empty key needs Exists
    ({"key": "a", "operator": "Exists", "value": "x"}, ("value",)),
    ({"key": "a", "operator": "Contains"}, ("operator",)),
    ({"key": "a", "effect": "Sometimes"}, ("effect",)),
    ({"key": "a", "effect": "NoSchedule", "tolerationSeconds": 5}, ("effect",)),
    ({"key": "a", "tolerationSeconds": "5"}, ("tolerationSeconds",)),
    ({"key": "a", "seconds": 5}, ("seconds",)),
]


@pytest.mark.parametrize("raw,path", BAD_TOLERATIONS)
def test_toleration_shape_errors(raw, path):
    with pytest.raises(FieldError) as err:
        parse_toleration(raw)
    assert err.value.path == path


def test_taints_parse_and_filter_only_hard_effects():
    soft = parse_taint({"key": "x", "effect": "PreferNoSchedule"})
    assert untolerated_taint((soft,), ()) is None
    assert untolerated_taint((soft, GPU), ()) == GPU
    assert untolerated_taint((GPU,), (Toleration("dedicated", "Exists"),)) is None
    with pytest.raises(FieldError):
        parse_taint({"key": "x"})
    with pytest.raises(FieldError):
        parse_taint({"key": "x", "effect": "Never"})


# ---- static filters, in plugin order -----------------------------------------------

def node(**kw):
    labels = kw.pop("labels", {"zone": "a"})
    return Node(name=kw.pop("name", "wk-1"), labels=FrozenDict(labels), **kw)


def test_static_reason_plugin_order():
    tainted_closed = node(unschedulable=True, taints=(GPU,))
    pod = Placement(node_name="wk-2", node_selector=FrozenDict({"zone": "b"}))
    assert static_reason(pod, tainted_closed) == reasons.NODE_UNSCHEDULABLE
    tolerant = Placement(
        node_name="wk-2",
        node_selector=FrozenDict({"zone": "b"}),
        tolerations=(Toleration("node.kubernetes.io/unschedulable", "Exists", "", "NoSchedule"),),
    )
    assert static_reason(tolerant, tainted_closed) == reasons.NODE_NAME
    pinned = Placement(node_name="wk-1", node_selector=FrozenDict({"zone": "b"}))
    assert static_reason(pinned, node(taints=(GPU,))) == reasons.TAINT_TOLERATION
    assert static_reason(pinned, node(taints=(Taint("x", "", "PreferNoSchedule"),))) == reasons.NODE_AFFINITY
    assert static_reason(Placement(node_name="wk-1"), node()) is None


def test_node_affinity_is_selector_and_required_terms():
    aff = parse_node_selector({"nodeSelectorTerms": [term(("zone", "In", ["a"]))]})
    both = Placement(node_selector=FrozenDict({"disk": "ssd"}), node_affinity=aff)
    assert static_reason(both, node(labels={"zone": "a", "disk": "ssd"})) is None
    assert static_reason(both, node(labels={"zone": "a"})) == reasons.NODE_AFFINITY
    assert static_reason(both, node(labels={"zone": "b", "disk": "ssd"})) == reasons.NODE_AFFINITY
    by_name = Placement(node_affinity=parse_node_selector({"nodeSelectorTerms": [term(fields=[("metadata.name", "In", ["wk-1"])])]}))
    assert static_reason(by_name, node()) is None
    assert static_reason(by_name, node(name="wk-3")) == reasons.NODE_AFFINITY


def test_reason_strings_are_kube_scheduler_strings():
    assert reasons.TAINT_TOLERATION == "node(s) had untolerated taint(s)"
    assert reasons.insufficient("cpu") == "Insufficient cpu"
    assert reasons.insufficient("pods") == "Too many pods"
