"""The v1 loader: per-field errors (file, line, path), resolution and bounds."""

import json
import textwrap
from pathlib import Path

import pytest
import yaml

from symreach import reasons
from symreach.errors import InputError
from symreach.loader import MAX_FILE_BYTES, load_document, load_instance, load_text, parse_query, thaw
from symreach.model import PAPER, FrozenDict

DATA = Path(__file__).parent / "data" / "loader"

NODES = """\
version: 1
nodes:
  - name: n1
    labels: {zone: a}
    capacity: {cpu: 2, memory: 1Gi, pods: 10}
  - name: n2
    labels: {zone: b}
    capacity: {cpu: 2, memory: 1Gi, pods: 10}
"""


def write(tmp_path, text, name="inst.yaml"):
    path = tmp_path / name
    path.write_text(textwrap.dedent(text))
    return path


def error_of(path):
    with pytest.raises(InputError) as err:
        load_instance(path)
    return err.value


# ---- per-field errors: message = FILE:LINE: path: problem, line marked "#!" ------------

FIELD_ERRORS = [
    # (yaml text, field path, fragment of the problem)
    ("nodes: []  #!\n", "version", "required"),
    ("version: 2  #!\n", "version", "unsupported version 2"),
    ("version: '1'  #!\n", "version", "unsupported version"),
    ("version: 1\nsemantics: papers  #!\n", "semantics", "must be one of kubernetes, paper"),
    ("version: 1\nnode: []  #!\n", "node", "did you mean 'nodes'"),
    ("version: 1\nnodes: {name: n1}  #!\n", "nodes", "expected a list"),
    (NODES + "  - name: n3\n    capacity: {cpu: 5x}  #!\n", "nodes[2].capacity.cpu", "invalid quantity '5x'"),
    (NODES + "  - name: n3\n    capacity:\n      memory: -1Gi  #!\n", "nodes[2].capacity.memory", "negative"),
    (NODES + "  - name: n3\n    capacity: {pods: 1.5}  #!\n", "nodes[2].capacity.pods", "whole number"),
    (NODES + "  - name: n1  #!\n", "nodes[2].name", "duplicate node name 'n1'"),
    (NODES + "  - name: n3\n    labels: {ssd: true}  #!\n", 'nodes[2].labels.ssd', "quote it"),
    (NODES + "  - name: n3\n    unschedulable: 'yes'  #!\n", "nodes[2].unschedulable", "true or false"),
    (NODES + "  - name: n3\n    taints:\n      - {key: k, effect: NoWay}  #!\n", "nodes[2].taints[0].effect", "must be one of"),
    (NODES + "  - name: n3\n    taints:\n      - {key: k, effect: NoSchedule}\n      - {key: k, effect: NoSchedule}  #!\n",
     "nodes[2].taints[1]", "duplicate taint"),
    (NODES + "  - name: n3\n    cpu: 4  #!\n", "nodes[2].cpu", "unknown field 'cpu'"),
    (NODES + "  - labels: {}  #!\n", "nodes[2].name", "required"),
    (NODES + "podTypes:\n  - name: a\n  - name: web\n    requests:\n      cpu: 5x  #!\n",
     "podTypes[1].requests.cpu", "invalid quantity '5x'"),
    (NODES + "podTypes:\n  - name: a\n    requests: {pods: 1}  #!\n", "podTypes[0].requests.pods", "implicit"),
    (NODES + "podTypes:\n  - name: a\n    requests: [cpu]  #!\n", "podTypes[0].requests", "expected a mapping"),
    (NODES + "podTypes:\n  - name: a\n    replicas: 3  #!\n", "podTypes[0].replicas", "unknown field 'replicas'"),
    (NODES + "podTypes:\n  - name: a\n  - name: a  #!\n", "podTypes[1].name", "duplicate pod type name 'a'"),
    (NODES + "podTypes:\n  - name: a\n    nodeName: n9  #!\n", "podTypes[0].nodeName", "unknown node 'n9'"),
    (NODES + "podTypes:\n  - name: a\n    creatable: 1  #!\n", "podTypes[0].creatable", "true or false"),
    (NODES + "podTypes:\n  - name: a\n    creatable: 'false'  #!\n", "podTypes[0].creatable", "true or false"),
    (NODES + "podTypes:\n  - name: a\n    maxPerNode: 0  #!\n", "podTypes[0].maxPerNode", "at least 1"),
    (NODES + "podTypes:\n  - name: a\n    namespace: 7  #!\n", "podTypes[0].namespace", "expected a string"),
    (NODES + "podTypes:\n  - name: a\n    nodeSelector: {zone: [a]}  #!\n", "podTypes[0].nodeSelector.zone", "expected a string"),
    (NODES + "podTypes:\n  - name: a\n    tolerations:\n      - {key: k, operator: Has}  #!\n",
     "podTypes[0].tolerations[0].operator", "must be one of Equal, Exists"),
    (NODES + "podTypes:\n  - name: a\n    tolerations:\n      - {key: k, tolerationSeconds: 5}  #!\n",
     "podTypes[0].tolerations[0].effect", "NoExecute"),
    (NODES + "podTypes:\n  - name: a\n    hostPorts: [{port: 70000}]  #!\n", "podTypes[0].hostPorts[0].port", "at most 65535"),
    (NODES + "podTypes:\n  - name: a\n    hostPorts: [{port: 80, protocol: HTTP}]  #!\n",
     "podTypes[0].hostPorts[0].protocol", "must be one of"),
    (NODES + "podTypes:\n  - name: a\n    hostPorts:\n      - {port: 80}\n      - {port: 80, protocol: TCP}  #!\n",
     "podTypes[0].hostPorts[1]", "duplicate host port 80/TCP"),
    (NODES.replace("version: 1", "version: 1\nsemantics: paper")
     + "podTypes:\n  - name: a\n    hostPorts: [{port: 80}]  #!\n", "podTypes[0].hostPorts", "paper"),
    (NODES + "podTypes:\n  - name: a\n    affinity:\n      podAffinity:\n"
     "        requiredDuringSchedulingIgnoredDuringExecution:\n          - labelSelector: {}  #!\n",
     "podTypes[0].affinity.podAffinity.requiredDuringSchedulingIgnoredDuringExecution[0].topologyKey", "required"),
    (NODES + "podTypes:\n  - name: a\n    affinity:\n      podAntiAffinity:\n"
     "        requiredDuringSchedulingIgnoredDuringExecution:\n          - topologyKey: zone\n"
     "            labelSelectors: {}  #!\n",
     "podTypes[0].affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution[0].labelSelectors",
     "did you mean 'labelSelector'"),
    (NODES + "podTypes:\n  - name: a\n    affinity:\n      podAffinity:\n"
     "        requiredDuringSchedulingIgnoredDuringExecution:\n          - topologyKey: zone\n"
     "            matchLabelKeys: [app]  #!\n",
     "podTypes[0].affinity.podAffinity.requiredDuringSchedulingIgnoredDuringExecution[0].matchLabelKeys",
     "labelSelector is not set"),
    (NODES + "podTypes:\n  - name: a\n    affinity:\n      podAffinity:\n"
     "        preferredDuringSchedulingIgnoredDuringExecution:\n          - weight: 0  #!\n"
     "            podAffinityTerm: {topologyKey: zone}\n",
     "podTypes[0].affinity.podAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].weight", "at least 1"),
    (NODES + "podTypes:\n  - name: a\n    affinity:\n      nodeAffinity:\n"
     "        requiredDuringSchedulingIgnoredDuringExecution:\n          nodeSelectorTerms:\n"
     "            - matchExpressions: [{key: cores, operator: Gt, values: ['1', '2']}]  #!\n",
     "podTypes[0].affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0]"
     ".matchExpressions[0].values", "exactly one value"),
    (NODES + "podTypes:\n  - name: a\n    affinity:\n      nodeAffinity: {requiredDuringScheduling: {}}  #!\n",
     "podTypes[0].affinity.nodeAffinity.requiredDuringScheduling", "unknown field"),
    (NODES + "podTypes:\n  - name: a\n    topologySpreadConstraints:\n"
     "      - {maxSkew: 0, topologyKey: zone, whenUnsatisfiable: DoNotSchedule}  #!\n",
     "podTypes[0].topologySpreadConstraints[0].maxSkew", "at least 1"),
    (NODES + "podTypes:\n  - name: a\n    topologySpreadConstraints:\n"
     "      - {maxSkew: 1, topologyKey: zone, whenUnsatisfiable: Maybe}  #!\n",
     "podTypes[0].topologySpreadConstraints[0].whenUnsatisfiable", "DoNotSchedule"),
    (NODES + "podTypes:\n  - name: a\n    topologySpreadConstraints:\n"
     "      - {maxSkew: 1, topologyKey: zone, whenUnsatisfiable: ScheduleAnyway, minDomains: 2}  #!\n",
     "podTypes[0].topologySpreadConstraints[0].minDomains", "DoNotSchedule"),
    (NODES + "podTypes:\n  - name: a\n    topologySpreadConstraints:\n"
     "      - {maxSkew: 1, topologyKey: zone, whenUnsatisfiable: DoNotSchedule, nodeTaintsPolicy: honor}  #!\n",
     "podTypes[0].topologySpreadConstraints[0].nodeTaintsPolicy", "Honor, Ignore"),
    (NODES + "podTypes:\n  - name: a\n    topologySpreadConstraints:\n"
     "      - {maxSkew: 1, whenUnsatisfiable: DoNotSchedule}  #!\n",
     "podTypes[0].topologySpreadConstraints[0].topologyKey", "required"),
    (NODES + "podTypes:\n  - name: a\n    topologySpreadConstraints:\n"
     "      - {maxSkew: 1, topologyKey: zone, whenUnsatisfiable: DoNotSchedule, labelSelector: {}, maxPerNode: 1}  #!\n",
     "podTypes[0].topologySpreadConstraints[0].maxPerNode", "unknown field"),
    (NODES + "podTypes:\n  - name: a\ninitial:\n  - {pod: b, node: n1}  #!\n", "initial[0].pod", "unknown pod type 'b'"),
    (NODES + "podTypes:\n  - name: a\ninitial:\n  - {pod: a, node: n7}  #!\n", "initial[0].node", "unknown node 'n7'"),
    (NODES + "podTypes:\n  - name: a\ninitial:\n  - {pod: a, node: n1, count: 0}  #!\n", "initial[0].count", "at least 1"),
    (NODES + "podTypes:\n  - name: a\ninitial:\n  - {pod: a, node: n1}\n  - {pod: a, node: n1, count: 2}  #!\n",
     "initial[1]", "duplicate entry"),
    (NODES + "podTypes:\n  - name: a\nquery:\n  pod: b  #!\n", "query.pod", "unknown pod type 'b' (known: a)"),
    (NODES + "podTypes:\n  - name: a\nquery:\n  pod: a\n  node: n1\n  nodeSelector: {zone: a}  #!\n",
     "query.nodeSelector", "not both"),
    (NODES + "podTypes:\n  - name: a\nquery:\n  pod: a\n  nodeSelector: {zone: q}  #!\n", "query.nodeSelector", "no node matches zone=q"),
    (NODES + "podTypes:\n  - name: a\nquery:\n  pod: a\n  with:\n    - {pod: a, node: n3}  #!\n", "query.with[0].node", "unknown node"),
    ("version: 1\nnamespaces:\n  - {name: x}\n  - {name: x}  #!\n", "namespaces[1].name", "duplicate namespace"),
]


@pytest.mark.parametrize("text,field,fragment", FIELD_ERRORS, ids=[c[1] + ":" + str(i) for i, c in enumerate(FIELD_ERRORS)])
def test_field_errors_name_file_line_and_path(tmp_path, text, field, fragment):
    path = write(tmp_path, text)
    line = next(i for i, l in enumerate(text.splitlines(), 1) if "#!" in l)
    err = error_of(path)
    assert str(err).startswith(f"{path}:{line}: {field}: "), str(err)
    if fragment:
        assert fragment in err.problem
    assert (err.filename, err.line, err.field_path) == (str(path), line, field)


def test_example_message_format(tmp_path):
    text = NODES + "podTypes:\n  - name: a\n  - name: web\n    requests:\n      cpu: 5x\n"
    path = write(tmp_path, text, "bad.yaml")
    assert str(error_of(path)) == f"{path}:13: podTypes[1].requests.cpu: invalid quantity '5x'"


def test_in_memory_document_has_no_line():
    with pytest.raises(InputError) as err:
        load_document({"version": 1, "nodes": [{"name": "n", "capacity": {"cpu": "x"}}]}, filename="mem")
    assert str(err.value) == "mem: nodes[0].capacity.cpu: invalid quantity 'x'"


def test_label_keys_with_dots_are_quoted_in_paths():
    with pytest.raises(InputError) as err:
        load_document({"version": 1, "nodes": [{"name": "n", "labels": {"kubernetes.io/os": 1}}]})
    assert 'nodes[0].labels["kubernetes.io/os"]' in str(err.value)


# ---- YAML-level problems ------------------------------------------------------------------

@pytest.mark.parametrize("text,line,fragment", [
    ("version: 1\nnodes: [\n", 3, "invalid YAML"),
    ("version: 1\nnodes:\n  - name: a\n   bad: indentation\n", 4, "invalid YAML"),
    ("version: 1\nversion: 1\n", 2, "duplicate key 'version'"),
    ("version: 1\n---\nversion: 1\n", 3, "single YAML document"),
    ("version: 1\nnodes: !!python/object:os.system {}\n", 2, "tag"),
    ("version: 1\nnodes: !custom [a]\n", 2, "tag"),
    ("version: 1\nx: &a [*a]\n", 2, "recursive"),
    ("version: 1\n? [a, b]\n: c\n", 2, "plain scalars"),
    ("version: 1\nnodes:\n  - name: \x07\n", 3, "U+0007"),
    ("version: 1\n<<: 5\n", 1, "merge"),
])
def test_yaml_errors(tmp_path, text, line, fragment):
    path = write(tmp_path, text)
    err = error_of(path)
    assert err.line == line and fragment in err.problem and str(path) in str(err)


def test_multi_document_reader_for_other_front_ends(tmp_path):
    from symreach.loader.yaml_source import read_documents_file, read_documents_text

    docs = read_documents_text("a: 1\n---\n---\nb:\n  - c\n", "m.yaml")
    assert [d for d, _ in docs] == [{"a": 1}, None, {"b": ["c"]}]
    assert docs[2][1][("b", 0)] == 5
    path = write(tmp_path, "x: 1\n---\ny: &y [1, 2]\nz: [*y, *y]\n")
    assert len(read_documents_file(path)) == 2
    # Without aliases any size is fine; what aliases add is bounded over all documents together.
    assert len(read_documents_text("x: [1, 2, 3]\n---\ny: [1, 2, 3]\n", max_nodes=1)) == 2
    read_documents_text("x: &a [1, 2, 3]\ny: *a\n---\nx: &b [1]\ny: *b\n", max_nodes=6)  # 4 + 2 added
    with pytest.raises(InputError, match="more than 5 nodes through aliases"):
        read_documents_text("x: &a [1, 2, 3]\ny: *a\n---\nx: &b [1]\ny: *b\n", max_nodes=5)


def test_empty_file_and_non_mapping(tmp_path):
    assert "no document" in str(error_of(write(tmp_path, "# nothing\n")))
    assert "expected a mapping" in str(error_of(write(tmp_path, "- 1\n- 2\n")))


def test_alias_bomb_is_refused():
    with pytest.raises(InputError, match="expands to more than 1000000 nodes"):
        load_instance(DATA / "alias_bomb.yaml")


def test_size_limit(tmp_path):
    path = tmp_path / "big.yaml"
    path.write_bytes(b"version: 1\n" + b"#" * MAX_FILE_BYTES)
    with pytest.raises(InputError, match="too large"):
        load_instance(path)


def test_missing_file_and_binary(tmp_path):
    with pytest.raises(InputError, match="cannot read"):
        load_instance(tmp_path / "nope.yaml")
    path = tmp_path / "bin.yaml"
    path.write_bytes(b"version: 1\n\xff\xfe")
    with pytest.raises(InputError, match="UTF-8"):
        load_instance(path)


def test_merge_keys_and_anchors_are_supported():
    inst = load_text(NODES + textwrap.dedent("""\
        podTypes:
          - &a {name: a, labels: {app: a}, requests: {cpu: 1}}
          - <<: *a
            name: b
        """))
    assert inst.pod_types[1].requests == {"cpu": 1000} and inst.pod_types[1].labels == {"app": "a"}


# ---- the full fixture, YAML and JSON ------------------------------------------------------

def test_full_fixture_yaml_and_json_agree():
    from_yaml = load_instance(DATA / "full.yaml")
    from_json = load_instance(DATA / "full.json")
    assert from_yaml.source.endswith("full.yaml") and from_json.source.endswith("full.json")
    assert from_yaml.static_block == from_json.static_block
    assert from_yaml.pod_types == from_json.pod_types
    assert from_yaml.multiplicity_bound == from_json.multiplicity_bound
    assert from_yaml.query == from_json.query
    hash(from_yaml)  # everything is immutable and hashable


def test_json_errors_have_lines(tmp_path):
    doc = json.loads((DATA / "full.json").read_text())
    doc["nodes"][1]["capacity"]["cpu"] = "two"
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(doc, indent="\t"))
    err = error_of(path)
    assert err.field_path == "nodes[1].capacity.cpu" and err.line is not None
    assert '"two"' in path.read_text().splitlines()[err.line - 1]


def test_full_fixture_contents():
    inst = load_instance(DATA / "full.yaml")
    names = [n.name for n in inst.nodes]
    assert names == ["wk-1", "wk-2", "wk-3"]
    assert inst.nodes[0].labels["kubernetes.io/hostname"] == "wk-1"
    assert inst.nodes[2].capacity == {"cpu": 1500, "memory": 2 * 2**30}
    web, db, legacy = inst.pod_types
    assert web.requests == {"cpu": 500, "memory": 2**30}
    assert db.namespace == "shop" and legacy.namespace == "default"
    assert not legacy.creatable and legacy.max_per_node == 4
    assert {(p.port, p.protocol) for p in web.host_ports} == {(8080, "TCP")}
    # static: web tolerates the gpu taint, needs disk=ssd; db needs disk in (ssd, hdd)
    assert inst.static_block[0] == (None, None, reasons.NODE_AFFINITY)
    assert inst.static_block[1] == (reasons.TAINT_TOLERATION, None, None)
    assert inst.static_block[2] == (reasons.TAINT_TOLERATION, None, None)
    # db's affinity sees web in namespace default; web's anti-affinity sees web only
    assert db.affinity[0].selects == frozenset({0})
    assert web.anti_affinity[0].selects == frozenset({0})
    # ScheduleAnyway is dropped; the zone constraint keeps wk-1, wk-2 (wk-3 lacks the key)
    assert len(web.spread) == 1 and web.spread[0].eligible == frozenset({0, 1})
    assert web.spread[0].counts == frozenset({0}) and web.spread[0].self_match
    # bounds: host port -> 1
    assert inst.multiplicity_bound == {(0, 0): 1, (0, 1): 1}
    assert inst.initial == {(0, 0): 1, (2, 2): 1}
    assert inst.query.alternatives == (frozenset({(1, 1), (0, 0)}),)
    assert inst.query.description == "db on wk-2 with web on wk-1"
    assert set(inst.namespaces) == {"default", "shop"}
    assert inst.namespaces["shop"] == {"team": "retail", "kubernetes.io/metadata.name": "shop"}


def test_manifest_round_trips():
    raw = yaml.safe_load((DATA / "full.yaml").read_text())
    inst = load_instance(DATA / "full.yaml")
    assert thaw(inst.pod_types[0].manifest) == raw["podTypes"][0]
    assert isinstance(inst.pod_types[0].manifest, FrozenDict)


def test_explicit_hostname_label_is_kept():
    inst = load_document({"version": 1, "nodes": [{"name": "n", "labels": {"kubernetes.io/hostname": "h"}}]})
    assert inst.nodes[0].labels["kubernetes.io/hostname"] == "h"


# ---- helpers for semantic tests --------------------------------------------------------

def node(name, cpu=4, pods=None, **labels):
    cap = {"cpu": cpu}
    if pods is not None:
        cap["pods"] = pods
    return {"name": name, "labels": labels, "capacity": cap}


def doc(pod_types, nodes=None, **extra):
    out = {"version": 1, "nodes": nodes if nodes is not None else [node("n1", zone="a"), node("n2", zone="b")],
           "podTypes": pod_types}
    out.update(extra)
    return out


def spread(key="zone", selector=None, **kw):
    out = {"maxSkew": 1, "topologyKey": key, "whenUnsatisfiable": "DoNotSchedule"}
    if selector is not None:
        out["labelSelector"] = selector
    out.update(kw)
    return out


def term(selector, key="zone", **kw):
    return dict(labelSelector=selector, topologyKey=key, **kw)


def pod(name, labels=None, cpu="1", **kw):
    out = {"name": name, "labels": labels or {"app": name}, "requests": {"cpu": cpu}}
    out.update(kw)
    return out


def affinity(kind, *terms):
    return {kind: {"requiredDuringSchedulingIgnoredDuringExecution": list(terms)}}


# ---- namespaces -------------------------------------------------------------------------

def ns_instance(term_kw):
    types = [
        pod("owner", namespace="a", affinity=affinity("podAffinity", term({}, **term_kw))),
        pod("x", namespace="a"),
        pod("y", namespace="b"),
        pod("z", namespace="c"),
    ]
    return load_document(doc(types, namespaces=[{"name": "b", "labels": {"tier": "gold"}}, {"name": "unused"}]))


@pytest.mark.parametrize("term_kw,selects", [
    ({}, {0, 1}),  # default: the owner's namespace
    ({"namespaces": ["b"]}, {2}),
    ({"namespaces": ["b", "c"]}, {2, 3}),
    ({"namespaces": ["nowhere"]}, set()),
    ({"namespaceSelector": {}}, {0, 1, 2, 3}),  # {} = all namespaces
    ({"namespaceSelector": {"matchLabels": {"tier": "gold"}}}, {2}),
    ({"namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "c"}}}, {3}),  # implicit label
    ({"namespaces": ["a"], "namespaceSelector": {"matchLabels": {"tier": "gold"}}}, {0, 1, 2}),  # union
    ({"namespaceSelector": None}, {0, 1}),
])
def test_affinity_term_namespaces(term_kw, selects):
    assert ns_instance(term_kw).pod_types[0].affinity[0].selects == frozenset(selects)


def test_known_namespaces():
    inst = ns_instance({})
    assert set(inst.namespaces) == {"a", "b", "c", "unused"}
    assert inst.namespaces["b"] == {"tier": "gold", "kubernetes.io/metadata.name": "b"}


def test_null_and_empty_term_selectors():
    types = [pod("owner", affinity=affinity("podAntiAffinity", term(None), term({}))), pod("other")]
    anti = load_document(doc(types)).pod_types[0].anti_affinity
    assert anti[0].selects == frozenset() and anti[1].selects == frozenset({0, 1})


# ---- matchLabelKeys / mismatchLabelKeys ----------------------------------------------------

def test_match_and_mismatch_label_keys_in_terms():
    types = [
        pod("owner", labels={"app": "shop", "tenant": "t1"}, affinity=affinity(
            "podAffinity",
            term({"matchLabels": {"app": "shop"}}, matchLabelKeys=["tenant"]),
            term({"matchLabels": {"app": "shop"}}, mismatchLabelKeys=["tenant"]),
            term({"matchLabels": {"app": "shop"}}, matchLabelKeys=["missing"]),
        )),
        pod("same", labels={"app": "shop", "tenant": "t1"}),
        pod("other", labels={"app": "shop", "tenant": "t2"}),
        pod("none", labels={"app": "shop"}),
    ]
    aff = load_document(doc(types)).pod_types[0].affinity
    assert aff[0].selects == frozenset({0, 1})
    assert aff[1].selects == frozenset({2, 3})  # NotIn matches pods lacking the key
    assert aff[2].selects == frozenset({0, 1, 2, 3})  # a key the owner lacks is skipped


def test_match_label_keys_in_spread():
    types = [
        pod("owner", labels={"app": "shop", "rev": "1"},
            topologySpreadConstraints=[spread(selector={"matchLabels": {"app": "shop"}}, matchLabelKeys=["rev"])]),
        pod("old", labels={"app": "shop", "rev": "0"}),
        pod("new", labels={"app": "shop", "rev": "1"}),
    ]
    s = load_document(doc(types)).pod_types[0].spread[0]
    assert s.counts == frozenset({0, 2}) and s.self_match


def test_spread_match_label_keys_validation():
    for bad, fragment in [
        (spread(matchLabelKeys=["app"]), "labelSelector is not set"),
        (spread(selector={}, matchLabelKeys=["a", "a"]), "duplicate"),
    ]:
        with pytest.raises(InputError, match=fragment):
            load_document(doc([pod("p", topologySpreadConstraints=[bad])]))


# ---- spread: eligibility and counts ---------------------------------------------------------

TAINT = {"key": "t", "value": "v", "effect": "NoSchedule"}


def policy_nodes():
    return [
        node("plain", zone="a", disk="ssd"),
        {**node("tainted", zone="a", disk="ssd"), "taints": [TAINT]},
        node("hdd", zone="b", disk="hdd"),
        node("nozone", disk="ssd"),
        {**node("soft", zone="b", disk="ssd"), "taints": [{"key": "s", "effect": "PreferNoSchedule"}]},
    ]


@pytest.mark.parametrize("policies,eligible", [
    ({}, {"plain", "tainted", "soft"}),  # Honor affinity, Ignore taints
    ({"nodeAffinityPolicy": "Ignore"}, {"plain", "tainted", "hdd", "soft"}),
    ({"nodeTaintsPolicy": "Honor"}, {"plain", "soft"}),
    ({"nodeAffinityPolicy": "Ignore", "nodeTaintsPolicy": "Honor"}, {"plain", "hdd", "soft"}),
    ({"nodeAffinityPolicy": "Honor", "nodeTaintsPolicy": "Ignore"}, {"plain", "tainted", "soft"}),
])
def test_spread_eligibility_policies(policies, eligible):
    owner = pod("p", nodeSelector={"disk": "ssd"}, topologySpreadConstraints=[spread(selector={}, **policies)])
    inst = load_document(doc([owner], nodes=policy_nodes()))
    got = {inst.nodes[n].name for n in inst.pod_types[0].spread[0].eligible}
    assert got == eligible


def test_spread_eligibility_with_tolerations_and_required_affinity():
    owner = pod(
        "p",
        tolerations=[{"key": "t", "operator": "Exists"}],
        affinity={"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
            "nodeSelectorTerms": [{"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a"]}]}]}}},
        topologySpreadConstraints=[spread(selector={}, nodeTaintsPolicy="Honor")],
    )
    inst = load_document(doc([owner], nodes=policy_nodes()))
    assert {inst.nodes[n].name for n in inst.pod_types[0].spread[0].eligible} == {"plain", "tainted"}


def test_spread_eligible_nodes_need_all_hard_keys():
    owner = pod("p", topologySpreadConstraints=[
        spread("zone", {}), spread("rack", {}),
        {"maxSkew": 1, "topologyKey": "row", "whenUnsatisfiable": "ScheduleAnyway"},
    ])
    nodes = [node("a", zone="1", rack="1"), node("b", zone="1"), node("c", rack="2"), node("d", zone="2", rack="3")]
    inst = load_document(doc([owner], nodes=nodes))
    for s in inst.pod_types[0].spread:
        assert s.eligible == frozenset({0, 3})


def test_spread_counts_in_kubernetes_profile():
    types = [
        pod("owner", namespace="a", labels={"app": "x"}, topologySpreadConstraints=[
            spread(selector={"matchLabels": {"app": "x"}}),
            spread("kubernetes.io/hostname", selector={}),
            spread("rack", selector=None),
            spread("row", selector={"matchLabels": {"app": "y"}}),
        ]),
        pod("peer", namespace="a", labels={"app": "x"}),
        pod("stranger", namespace="b", labels={"app": "x"}),
        pod("y", namespace="a", labels={"app": "y"}),
    ]
    nodes = [node("n1", zone="a", rack="r", row="w")]
    by_key, by_host, by_null, by_other = load_document(doc(types, nodes=nodes)).pod_types[0].spread
    assert by_key.counts == frozenset({0, 1}) and by_key.self_match  # only the owner's namespace
    assert by_host.counts == frozenset() and by_host.self_match  # {}: counts 0, never blocks
    assert by_null.counts == frozenset() and not by_null.self_match  # null: matches nothing
    assert by_other.counts == frozenset({3}) and not by_other.self_match
    assert by_key.max_skew == 1 and by_key.min_domains == 1


def test_spread_fields_are_kept():
    owner = pod("p", topologySpreadConstraints=[spread(selector={}, maxSkew=3, minDomains=2)])
    s = load_document(doc([owner])).pod_types[0].spread[0]
    assert (s.max_skew, s.min_domains) == (3, 2)


def test_duplicate_spread_constraint_is_rejected():
    with pytest.raises(InputError, match="duplicate constraint"):
        load_document(doc([pod("p", topologySpreadConstraints=[spread(selector={}), spread(selector={})])]))


def test_topology_objects_are_shared_per_key():
    types = [
        pod("a", affinity=affinity("podAffinity", term({}))),
        pod("b", affinity=affinity("podAntiAffinity", term({})), topologySpreadConstraints=[spread(selector={})]),
    ]
    inst = load_document(doc(types))
    topo = inst.pod_types[0].affinity[0].topology
    assert inst.pod_types[1].anti_affinity[0].topology is topo
    assert inst.pod_types[1].spread[0].topology is topo
    assert topo.key == "zone" and topo.values == ("a", "b") and topo.domain_of == (0, 1)


def test_topology_with_missing_key_in_kubernetes_profile():
    types = [pod("a", affinity=affinity("podAffinity", term({}, key="rack")))]
    nodes = [node("n1", rack="r1"), node("n2"), node("n3", rack="r1"), node("n4", rack="r2")]
    topo = load_document(doc(types, nodes=nodes)).pod_types[0].affinity[0].topology
    assert topo.domain_of == (0, None, 0, 1)
    assert topo.members == (frozenset({0, 2}), frozenset({3}))
    assert topo.domain_nodes(1) == frozenset()


# ---- paper profile -------------------------------------------------------------------------

def test_paper_profile_selectors():
    inst = load_instance(DATA / "paper.yaml")
    assert inst.profile == PAPER
    a, b = inst.pod_types
    assert a.spread[0].counts == frozenset({0, 1}) and a.spread[0].self_match  # {} counts every type
    assert b.affinity[0].selects == frozenset({0})  # namespaces are ignored
    assert inst.multiplicity_bound == {(u, m): 2 for u in (0, 1) for m in (0, 1)}


def test_paper_profile_null_spread_selector_counts_nothing():
    types = [pod("a", topologySpreadConstraints=[spread(selector=None)])]
    s = load_document(doc(types, semantics="paper")).pod_types[0].spread[0]
    assert s.counts == frozenset() and not s.self_match


@pytest.mark.parametrize("owner,path", [
    (pod("a", affinity=affinity("podAffinity", term({}, key="rack"))),
     "podTypes[0].affinity.podAffinity.requiredDuringSchedulingIgnoredDuringExecution[0].topologyKey"),
    (pod("a", affinity=affinity("podAntiAffinity", term({}, key="rack"))),
     "podTypes[0].affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution[0].topologyKey"),
    (pod("a", topologySpreadConstraints=[spread("rack", {})]), "podTypes[0].topologySpreadConstraints[0].topologyKey"),
])
def test_paper_profile_missing_topology_key(owner, path):
    nodes = [node("n1", rack="r"), node("n2", zone="a")]
    with pytest.raises(InputError) as err:
        load_document(doc([owner], nodes=nodes, semantics="paper"), filename="p.yaml")
    assert err.value.field_path == path and "'n2'" in err.value.problem and "'rack'" in err.value.problem
    # the kubernetes profile accepts the same input
    load_document(doc([owner], nodes=nodes))


def test_paper_profile_allows_a_declared_pods_resource():
    inst = load_document(doc([pod("a", requests={"pods": 1})], semantics="paper"))
    assert inst.pod_types[0].requests == {"pods": 1}


# ---- multiplicity bounds --------------------------------------------------------------------

def counted(owner_extra=None, nodes=None, initial=None, semantics=None, **target):
    """Pod type ``t`` counted by the spread constraint of ``o`` on every node."""
    types = [
        {"name": "o", "labels": {"app": "o"}, "creatable": False,
         "topologySpreadConstraints": [spread(selector={"matchLabels": {"app": "t"}})]},
        {"name": "t", "labels": {"app": "t"}, **target},
    ]
    extra = {}
    if initial:
        extra["initial"] = initial
    if semantics:
        extra["semantics"] = semantics
    return load_document(doc(types, nodes=nodes, **extra))


def test_bound_from_cpu():
    nodes = [node("n1", cpu="2", zone="a"), node("n2", cpu="1100m", zone="b")]
    inst = counted(nodes=nodes, requests={"cpu": "500m"})
    assert inst.multiplicity_bound == {(1, 0): 4, (1, 1): 2}


def test_bound_from_pods_unit_and_missing_resource():
    nodes = [node("n1", cpu="2", pods=3, zone="a"), {"name": "n2", "labels": {"zone": "b"}, "capacity": {"pods": 5}}]
    inst = counted(nodes=nodes, requests={"cpu": "100m"})
    assert inst.multiplicity_bound == {(1, 0): 3, (1, 1): 0}  # n2 lists no cpu: capacity 0
    inst = counted(nodes=nodes)  # no requests: only the pods unit bounds
    assert inst.multiplicity_bound == {(1, 0): 3, (1, 1): 5}


def test_bound_ignores_zero_requests_and_takes_max_per_node():
    nodes = [node("n1", cpu="8", zone="a"), node("n2", cpu="8", zone="b")]
    inst = counted(nodes=nodes, requests={"cpu": "1", "memory": 0}, maxPerNode=3)
    assert inst.multiplicity_bound == {(1, 0): 3, (1, 1): 3}
    inst = counted(nodes=nodes, maxPerNode=20)
    assert inst.multiplicity_bound == {(1, 0): 20, (1, 1): 20}


def test_bound_host_ports_and_initial():
    nodes = [node("n1", cpu="8", zone="a"), node("n2", cpu="8", zone="b")]
    inst = counted(nodes=nodes, requests={"cpu": "1"}, hostPorts=[{"port": 80}],
                   initial=[{"pod": "t", "node": "n2", "count": 5}])
    assert inst.multiplicity_bound == {(1, 0): 1, (1, 1): 5}


def test_bound_not_creatable_or_static_blocked_is_initial():
    nodes = [node("n1", cpu="8", zone="a"), {**node("n2", cpu="8", zone="b"), "unschedulable": True}]
    inst = counted(nodes=nodes, requests={"cpu": "1"}, initial=[{"pod": "t", "node": "n2", "count": 2}])
    assert inst.multiplicity_bound == {(1, 0): 8, (1, 1): 2}
    assert inst.static_block[1][1] == reasons.NODE_UNSCHEDULABLE
    inst = counted(nodes=nodes, creatable=False, initial=[{"pod": "t", "node": "n1"}])
    assert inst.multiplicity_bound == {(1, 0): 1, (1, 1): 0}


def test_unbounded_counted_pair_is_an_error():
    nodes = [node("n1", cpu="8", zone="a"), node("n2", cpu="8", zone="b")]
    with pytest.raises(InputError) as err:
        counted(nodes=nodes, requests={"cpu": 0})
    msg = str(err.value)
    assert "podTypes[1]" in msg and "'t'" in msg and "'n1'" in msg and "maxPerNode" in msg
    with pytest.raises(InputError, match="maxPerNode"):
        counted(nodes=nodes, semantics="paper")  # the paper profile has no implicit pods unit


def test_uncounted_pairs_need_no_bound():
    inst = load_document(doc([pod("free", requests={})]))
    assert inst.multiplicity_bound == {}


# ---- queries -----------------------------------------------------------------------------------

def query_instance(query=None):
    nodes = [node("n1", pool="public"), node("n2", pool="private"), node("n3", pool="public")]
    return load_document(doc([pod("web"), pod("db")], nodes=nodes, **({"query": query} if query else {})))


def test_query_forms():
    assert query_instance().query is None
    q = query_instance({"pod": "web", "node": "n2"}).query
    assert q.alternatives == (frozenset({(0, 1)}),) and q.description == "web on n2"
    q = query_instance({"pod": "web", "nodeSelector": {"pool": "public"}, "with": [{"pod": "db", "node": "n2"}]}).query
    assert q.alternatives == (frozenset({(0, 0), (1, 1)}), frozenset({(0, 2), (1, 1)}))
    assert q.description == "web on any node matching pool=public with db on n2"
    q = query_instance({"pod": "db"}).query
    assert q.alternatives == tuple(frozenset({(1, n)}) for n in range(3)) and q.description == "db on any node"


def test_parse_query_from_cli_options():
    inst = query_instance()
    q = parse_query(inst, "web", "n3", with_pairs=[("db", "n1")])
    assert q.alternatives == (frozenset({(0, 2), (1, 0)}),)
    assert q.description == "web on n3 with db on n1"
    q = parse_query(inst, "db", node_selector={"pool": "private"})
    assert q.alternatives == (frozenset({(1, 1)}),)
    q = parse_query(inst, None, with_pairs=[("db", "n1"), ("web", "n2")])
    assert q.alternatives == (frozenset({(1, 0), (0, 1)}),)


@pytest.mark.parametrize("args,kwargs,field,text", [
    (("nope",), {}, "pod", "unknown pod type 'nope' (known: db, web)"),
    (("web", "n9"), {}, "node", "unknown node 'n9'"),
    (("web",), {"node_selector": {"pool": "none"}}, "nodeSelector", "no node matches pool=none"),
    (("web", "n1"), {"node_selector": {"pool": "public"}}, "nodeSelector", "give either"),
    (("web",), {"with_pairs": [("db", "n1"), ("db", "zz")]}, "with #2", "unknown node 'zz'"),
    ((None,), {}, "pod", "no target"),
    ((None, "n1"), {}, "pod", "a node or node selector needs a pod type"),
])
def test_parse_query_errors(args, kwargs, field, text):
    """The loader names the query's field; the command line renames it after its option."""
    from symreach.cli.options import naming_options

    with pytest.raises(InputError) as err:
        parse_query(query_instance(), *args, **kwargs)
    assert str(err.value).startswith(f"{field}: {text}")
    with pytest.raises(InputError) as err, naming_options():
        parse_query(query_instance(), *args, **kwargs)
    option = {"pod": "--pod", "node": "--node", "nodeSelector": "--node-selector", "with #2": "--with #2"}[field]
    assert str(err.value).startswith(f"{option}: {text}")
