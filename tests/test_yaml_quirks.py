"""Kubernetes YAML/JSON is read as kubectl reads it (sigs.k8s.io/yaml -> go-yaml v2 -> JSON).

One test per quirk: what kubectl keeps as a string stays a string, what it
turns into a number or a boolean does so here, and what it refuses is refused.
"""

from __future__ import annotations

import math

import pytest

from symreach.errors import InputError
from symreach.frontends.dispatch import Source, load_kubernetes_sources
from symreach.frontends.k8s_source import read_documents_text
from symreach.loader.yaml_scalars import resolve_plain

NODE = """apiVersion: v1
kind: Node
metadata: {name: n1, labels: {kubernetes.io/hostname: n1}}
status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}}
"""


def value(text: str) -> object:
    docs, _ = read_documents_text(f"x: {text}\n", "q.yaml")
    return docs[0]["x"]


def pod(labels: str, extra: str = "") -> str:
    return (f"apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n  labels: {labels}\n{extra}"
            "spec:\n  containers: [{name: c, image: i}]\n")


@pytest.mark.parametrize("text, expected", [
    ("=", "="),                        # PyYAML: tag:yaml.org,2002:value, no constructor
    ("2024-01-01", "2024-01-01"),      # go-yaml keeps timestamps as strings in untyped decoding
    ("2024-01-01T10:00:00Z", "2024-01-01T10:00:00Z"),
    ("1:20", "1:20"),                  # base 60 (PyYAML: 80) is not in go-yaml
    ("yes", True), ("Yes", True), ("on", True), ("ON", True), ("y", True), ("Y", True),
    ("no", False), ("off", False), ("n", False), ("N", False), ("true", True), ("False", False),
    ("~", None), ("null", None), ("", None),
    ("0x1F", 31), ("017", 15), ("0o17", 15), ("0b101", 5), ("1_000", 1000), ("-12", -12), ("+7", 7),
    ("1e3", 1000.0), ("1.5", 1.5), (".5", 0.5), ("09", 9.0), ("18446744073709551615", 2**64 - 1),
    (".inf", math.inf), ("-.inf", -math.inf),
    ("'yes'", "yes"), ('"017"', "017"), ("1.2.3", "1.2.3"), ("-x", "-x"), ("+", "+"), ("0x", "0x"),
    ("yess", "yess"), ("<<x", "<<x"), ("100m", "100m"), ("1Gi", "1Gi"),
])
def test_scalars_read_as_kubectl_reads_them(text, expected):
    assert value(text) == expected and type(value(text)) is type(expected)


def test_nan_is_a_float():
    assert math.isnan(value(".nan")) and resolve_plain(".NaN")[0].endswith("float")


def test_mapping_keys_become_json_strings():
    docs, _ = read_documents_text("1: a\ntrue: b\n1.5: c\nnull-ish: d\n", "k.yaml")
    assert docs[0] == {"1": "a", "true": "b", "1.5": "c", "null-ish": "d"}


def test_keys_that_collide_after_conversion_are_duplicates():
    with pytest.raises(InputError, match="duplicate key 'true'"):
        read_documents_text("true: b\nyes: d\n", "k.yaml")


def test_null_key_is_refused_like_kubectl():
    with pytest.raises(InputError, match="unsupported mapping key"):
        read_documents_text("~: a\n", "k.yaml")


def test_bare_equals_and_dates_load_as_label_values():
    instance, _ = load_kubernetes_sources([Source("d.yaml", NODE + "---\n" + pod("{op: =, release-date: 2024-01-01}"))])
    assert dict(instance.pod_types[0].labels) == {"op": "=", "release-date": "2024-01-01"}


def test_yes_as_a_label_value_is_refused_with_its_line():
    with pytest.raises(InputError) as err:
        load_kubernetes_sources([Source("d.yaml", NODE + "---\n" + pod("{release: yes}"))])
    assert err.value.line == 10 and "expected a string, got a boolean" in str(err.value)


def test_empty_documents_comments_anchors_and_merge_keys():
    text = ("# a comment\n---\n---\n" + NODE + "---\n# only a comment\n---\n"
            "apiVersion: v1\nkind: Pod\nmetadata: {name: p, labels: &l {app: web}}\n"
            "spec:\n  nodeSelector: *l\n  containers:\n  - &c {name: c, image: i, resources: {requests: {cpu: 100m}}}\n"
            "---\napiVersion: v1\nkind: Pod\nmetadata: {name: q, labels: {<<: &l {app: web}, tier: x}}\n"
            "spec: {containers: [{name: c, image: i}]}\n")
    instance, report = load_kubernetes_sources([Source("d.yaml", text)])
    assert [t.name for t in instance.pod_types] == ["default/p", "default/q"]
    assert dict(instance.pod_types[1].labels) == {"app": "web", "tier": "x"}
    assert report.kinds == {"Node": 1, "Pod": 2}


def test_bom_and_crlf():
    text = "\ufeff" + (NODE + "---\n" + pod("{app: web}")).replace("\n", "\r\n")
    instance, _ = load_kubernetes_sources([Source("d.yaml", text)])
    assert dict(instance.pod_types[0].labels) == {"app": "web"} and instance.nodes[0].name == "n1"


def test_typed_list_items_without_kind():
    """``kubectl get --raw /api/v1/nodes`` prints a NodeList whose items carry no kind."""
    text = ('{"kind": "NodeList", "apiVersion": "v1", "metadata": {}, "items": [\n'
            ' {"metadata": {"name": "n1"}, "status": {"allocatable": {"cpu": "2", "pods": "10"}}}]}\n')
    instance, report = load_kubernetes_sources([Source("nodes.json", text)])
    assert [n.name for n in instance.nodes] == ["n1"] and report.kinds == {"Node": 1}


def test_a_generic_list_item_without_kind_is_refused():
    with pytest.raises(InputError, match="kind: required field is missing"):
        load_kubernetes_sources([Source("l.yaml", "apiVersion: v1\nkind: List\nitems:\n- metadata: {name: a}\n")])


def test_an_object_without_kind_is_refused_like_kubectl():
    with pytest.raises(InputError, match=r"l.yaml:1: document 1: kind: required field is missing"):
        load_kubernetes_sources([Source("l.yaml", "metadata: {name: a}\nspec: {}\n")])


def test_json_duplicate_keys_and_syntax_errors_are_located():
    with pytest.raises(InputError) as err:
        load_kubernetes_sources([Source("d.json", '{"kind": "Node",\n "kind": "Node"}')])
    assert "duplicate key 'kind'" in str(err.value)
    with pytest.raises(InputError) as err:
        read_documents_text('{"kind": "Node",\n "metadata": }', "d.json")
    assert err.value.line == 2 and "invalid JSON" in str(err.value)


def test_json_with_tabs_and_stdin_without_suffix():
    text = '{\n\t"apiVersion": "v1",\n\t"kind": "List",\n\t"items": []\n}\n'
    assert read_documents_text(text, "<stdin>", lines=False)[0] == [{"apiVersion": "v1", "kind": "List", "items": []}]
    docs, lines = read_documents_text(text, "dump.json")
    assert lines[0][("kind",)] == 3


def test_explicit_tags():
    assert value("!!str 017") == "017" and value("!!int 017") == 15
    with pytest.raises(InputError, match="cannot read 'abc' as int"):
        value("!!int abc")
    with pytest.raises(InputError, match="unsupported YAML tag"):
        value("!!binary aGk=")
