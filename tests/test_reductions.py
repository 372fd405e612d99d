"""The paper's reductions (Appendix B: 1-safe Petri nets, Appendix C: pebbling).

Three layers:
1. the PNML/JSON readers and their refusals;
2. the emitted documents, term by term, against a hand reading of the appendices;
3. end to end: load the document, run the explicit engine, compare the verdict
   with ``answers.json`` and with the independent oracles in ``oracles.py``.
"""

from __future__ import annotations

import json
from typing import Optional

import pytest
import yaml
from click.testing import CliRunner

from symreach.errors import InputError
from symreach.frontends.petri_net import PetriNet, Transition, net_from_json, read_net, read_pnml
from symreach.frontends.reduction_pebbling import encode_pebbling
from symreach.frontends.reduction_petri import encode_petri, petri_type_names
from symreach.generators import dags, nets
from tests.oracles import coverable_places, pebbling_price
from benchmarks.shared_data import PETRI_DIR

DATA = PETRI_DIR
ANSWERS = json.loads((DATA / "answers.json").read_text()) if (DATA / "answers.json").exists() else {}
HOST = "kubernetes.io/hostname"
# Nets whose Appendix-B encoding the explicit engine explores in well under a second.
SMALL_NETS = ("ERK-PT-000001", "Sudoku-PT-AN01", "ResAllocation-PT-R002C002", "Eratosthenes-PT-010")

needs_data = pytest.mark.skipif(not ANSWERS, reason="shared MCC data not available")


# ---------------------------------------------------------------------------
# helpers
# ---------------------------------------------------------------------------

def _sel(selector: dict) -> tuple:
    """Normalize an emitted selector: ('has', key) or ('eq', key, value)."""
    if "matchExpressions" in selector:
        (expr,) = selector["matchExpressions"]
        assert expr["operator"] == "Exists" and set(selector) == {"matchExpressions"}
        return ("has", expr["key"])
    ((key, value),) = selector["matchLabels"].items()
    assert set(selector) == {"matchLabels"}
    return ("eq", key, value)


def _terms(pod: dict, kind: str) -> list[tuple]:
    terms = pod.get("affinity", {}).get(kind, {}).get(
        "requiredDuringSchedulingIgnoredDuringExecution", [])
    for t in terms:
        assert t["topologyKey"] == HOST
        assert set(t) == {"labelSelector", "topologyKey"}
    return [_sel(t["labelSelector"]) for t in terms]


def _matches(labels: dict, sel: tuple) -> bool:
    return sel[1] in labels if sel[0] == "has" else labels.get(sel[1]) == sel[2]


def _shape(doc: dict) -> dict[str, tuple[dict, set, set]]:
    """name -> (labels, affinity selectors, anti-affinity selectors)."""
    return {p["name"]: (p["labels"], set(_terms(p, "podAffinity")), set(_terms(p, "podAntiAffinity")))
            for p in doc["podTypes"]}


def _load(doc: dict):
    from symreach.loader import load_document

    return load_document(doc, filename="<test>")


def _check(doc: dict, timeout_s: Optional[float] = None, max_states: int = 2_000_000):
    """The explicit engine, bounded by a state count (deterministic), not by wall-clock time."""
    from symreach.solvers.base import Limits
    from symreach.solvers.explicit import ExplicitEngine

    return ExplicitEngine().check(_load(doc), run=Limits(timeout_s=timeout_s,
                                                              max_states=max_states))


def _verdict(doc: dict) -> str:
    result = _check(doc)
    assert result.verdict.value != "unknown", result.reason
    return result.verdict.value


def _tiny_net() -> PetriNet:
    """a: consumes p, preserves q, produces r; b: r -> s; c: s, q -> p (a cycle back)."""
    return net_from_json({
        "name": "tiny",
        "places": ["p", "q", "r", "s"],
        "transitions": [{"name": "a", "pre": ["p", "q"], "post": ["q", "r"]},
                        {"name": "b", "pre": ["r"], "post": ["s"]},
                        {"name": "c", "pre": ["s", "q"], "post": ["p"]}],
        "initial": ["p", "q"],
    })


# ---------------------------------------------------------------------------
# 1. readers
# ---------------------------------------------------------------------------

@needs_data
@pytest.mark.parametrize("name", sorted(ANSWERS))
def test_pnml_reader_reads_every_mcc_net(name):
    net = read_pnml(DATA / f"{name}.pnml")
    assert net.name == name
    answer = ANSWERS[name]
    if answer["status"] == "complete":
        assert set(net.places) == set(answer["coverable"]) | set(answer["not_coverable"])
    assert net.initial and net.transitions


@needs_data
def test_pnml_reader_arcs_of_erk():
    net = read_pnml(DATA / "ERK-PT-000001.pnml")
    assert len(net.places) == 11 and len(net.transitions) == 11
    assert net.initial == {"Raf1Star", "RKIP", "MEKPP", "ERK", "RP"}


def _pnml(body: str, net_type: str = "http://www.pnml.org/version-2009/grammar/ptnet") -> bytes:
    return (f'<?xml version="1.0"?>\n<pnml xmlns="http://www.pnml.org/version-2009/grammar/pnml">\n'
            f'<net id="x" type="{net_type}"><page id="pg">\n{body}\n</page></net></pnml>\n').encode()


GOOD = ('<place id="p"><initialMarking><text>1</text></initialMarking></place>\n'
        '<place id="q"/>\n<transition id="t"/>\n'
        '<arc id="a1" source="p" target="t"><inscription><text>1</text></inscription></arc>\n'
        '<arc id="a2" source="t" target="q"/>')


def test_pnml_reader_small_document():
    net = read_pnml(_pnml(GOOD), "x.pnml")
    assert net.places == ("p", "q") and net.initial == {"p"}
    assert net.transitions == (Transition("t", frozenset({"p"}), frozenset({"q"})),)


@pytest.mark.parametrize("body, net_type, where, words", [
    (GOOD.replace('<arc id="a2" source="t" target="q"/>',
                  '<arc id="a2" source="t" target="q"><inscription><text>2</text></inscription></arc>'),
     None, 'x.pnml:8: arc id="a2" inscription', "weight 2"),
    (GOOD.replace("<text>1</text></initialMarking>", "<text>3</text></initialMarking>"),
     None, 'x.pnml:4: place id="p" initialMarking', "3 tokens"),
    (GOOD, "http://www.pnml.org/version-2009/grammar/symmetricnet", "x.pnml:3: net id=", "coloured"),
    (GOOD + '\n<arc id="a3" source="p" target="q"/>', None, 'x.pnml:9: arc id="a3"', "two places"),
    (GOOD + '\n<arc id="a4" source="p" target="zz"/>', None, 'x.pnml:9: arc id="a4"', "'zz'"),
    (GOOD + '\n<arc id="a5" source="p" target="t"/>', None, 'x.pnml:9: arc id="a5"', "parallel"),
])
def test_pnml_reader_refusals(body, net_type, where, words):
    raw = _pnml(body) if net_type is None else _pnml(body, net_type)
    with pytest.raises(InputError) as err:
        read_pnml(raw, "x.pnml")
    assert str(err.value).startswith(where), str(err.value)
    assert words in str(err.value)


def test_pnml_reader_refuses_bad_xml_with_line():
    with pytest.raises(InputError, match=r"^x.pnml:\d+: not well-formed"):
        read_pnml(b"<pnml><net>\n</pnm>", "x.pnml")


def test_json_net_round_trip_and_refusals(tmp_path):
    net = _tiny_net()
    assert net_from_json(net.to_json()) == net
    f = tmp_path / "n.json"
    f.write_text(json.dumps(net.to_json()))
    assert read_net(f) == net
    with pytest.raises(InputError, match=r"transitions\[0\].pre\[0\]: unknown place 'zz'"):
        net_from_json({"places": ["p"], "transitions": [{"name": "t", "pre": ["zz"], "post": []}]})
    with pytest.raises(InputError, match="initial: expected a list"):
        net_from_json({"places": ["p"], "transitions": [], "initial": "p"})
    with pytest.raises(InputError, match="listed twice"):
        net_from_json({"places": ["p"], "transitions": [{"name": "t", "pre": ["p", "p"]}]})


# ---------------------------------------------------------------------------
# 2. Appendix B, term by term
# ---------------------------------------------------------------------------

def test_petri_encoding_is_exactly_appendix_b():
    doc = encode_petri(_tiny_net(), "s")
    assert doc["version"] == 1 and doc["semantics"] == "paper"
    assert doc["nodes"] == [{"name": "n"}]
    assert doc["query"] == {"pod": "G-s", "node": "n"}
    assert doc["initial"] == [{"pod": "I-p", "node": "n", "count": 1},
                              {"pod": "I-q", "node": "n", "count": 1},
                              {"pod": "R0", "node": "n", "count": 1}]
    assert all("requests" not in p and "creatable" not in p for p in doc["podTypes"])
    bot = ("has", "bottom")

    def place(x):
        return ("eq", "place", x)

    ready, start, execute, end = (("has", k) for k in ("ready", "start", "execute", "end"))
    expected = {
        # Initial tokens I_p: place = p; affinity s[⊥]; anti s[place = p].
        "I-p": ({"place": "p"}, {bot}, {place("p")}),
        "I-q": ({"place": "q"}, {bot}, {place("q")}),
        # R0: ready; affinity s[⊥]; anti s[ready].
        "R0": ({"ready": ""}, {bot}, {ready}),
        # a: Pre {p, q}, Post {q, r}; Consumed {p}, Preserved {q}, Produced {r}.
        "S-a": ({"start": "a"}, {ready, place("p"), place("q")}, {start, end}),
        "E-a": ({"execute": "a"}, {("eq", "start", "a")}, {ready, execute, place("p")}),
        "P-r-a": ({"place": "r"}, {("eq", "execute", "a")}, {place("r")}),
        "F-a": ({"end": "a"}, {("eq", "execute", "a"), place("q"), place("r")}, {end}),
        "R-a": ({"ready": ""}, {("eq", "end", "a")}, {ready, start, execute}),
        # b: r -> s.
        "S-b": ({"start": "b"}, {ready, place("r")}, {start, end}),
        "E-b": ({"execute": "b"}, {("eq", "start", "b")}, {ready, execute, place("r")}),
        "P-s-b": ({"place": "s"}, {("eq", "execute", "b")}, {place("s")}),
        "F-b": ({"end": "b"}, {("eq", "execute", "b"), place("s")}, {end}),
        "R-b": ({"ready": ""}, {("eq", "end", "b")}, {ready, start, execute}),
        # c: {s, q} -> {p}: Consumed {s, q}, Produced {p}.
        "S-c": ({"start": "c"}, {ready, place("s"), place("q")}, {start, end}),
        "E-c": ({"execute": "c"}, {("eq", "start", "c")}, {ready, execute, place("s"), place("q")}),
        "P-p-c": ({"place": "p"}, {("eq", "execute", "c")}, {place("p")}),
        "F-c": ({"end": "c"}, {("eq", "execute", "c"), place("p")}, {end}),
        "R-c": ({"ready": ""}, {("eq", "end", "c")}, {ready, start, execute}),
        # G_g: fresh label goal; affinity s[place = g].
        "G-s": ({"goal": "s"}, {place("s")}, set()),
    }
    assert _shape(doc) == expected
    # Each term appears once (sets above would hide duplicates).
    for pod in doc["podTypes"]:
        for kind in ("podAffinity", "podAntiAffinity"):
            terms = _terms(pod, kind)
            assert len(terms) == len(set(terms))


@needs_data
@pytest.mark.parametrize("name", sorted(ANSWERS))
def test_petri_encoding_invariants_on_mcc_nets(name):
    net = read_pnml(DATA / f"{name}.pnml")
    goal = ANSWERS[name]["coverable"][-1]
    doc = encode_petri(net, goal)
    pods = doc["podTypes"]
    # |T_P| = |M0| + Σ_a |Produced(a)| + 4|T| + 2  (Theorem 12's count).
    assert len(pods) == (len(net.initial) + sum(len(t.produced) for t in net.transitions)
                         + 4 * len(net.transitions) + 2)
    names = [p["name"] for p in pods]
    assert len(set(names)) == len(names)
    assert list(petri_type_names(net, goal).values()) == names
    assert all("bottom" not in p["labels"] for p in pods)  # ⊥ is fresh
    for p in pods:
        # No type matches its own affinity terms: the bootstrap rule never applies.
        assert not any(_matches(p["labels"], s) for s in _terms(p, "podAffinity"))
    # The place label values are distinct per place (a valid Kubernetes label value each).
    token_values = {p["labels"]["place"] for p in pods if "place" in p["labels"]}
    assert len(token_values) <= len(net.places)


@needs_data
@pytest.mark.parametrize("name", SMALL_NETS)
def test_petri_encoding_yaml_round_trip_and_loads(name):
    from symreach.cli.output import dump_yaml

    net = read_pnml(DATA / f"{name}.pnml")
    doc = encode_petri(net, net.places[0])
    text = dump_yaml(doc)
    assert "&" not in text and "*" not in text  # no YAML anchors or aliases
    assert yaml.safe_load(text) == doc
    inst = _load(doc)
    assert inst.profile == "paper" and len(inst.nodes) == 1
    assert len(inst.pod_types) == len(doc["podTypes"])


def test_petri_encoding_rejects_unknown_goal():
    with pytest.raises(InputError, match="goal: net tiny has no place 'zz'"):
        encode_petri(_tiny_net(), "zz")


def test_petri_names_are_sanitized_and_unique():
    # 'a-b' x 'c' and 'a' x 'b-c' both want the name P-a-b-c.
    net = PetriNet("clash", ("a-b", "a", "x y"),
                   (Transition("c", frozenset(), frozenset({"a-b"})),
                    Transition("b-c", frozenset(), frozenset({"a", "x y"}))),
                   frozenset())
    doc = encode_petri(net, "x y")
    names = [p["name"] for p in doc["podTypes"]]
    assert len(set(names)) == len(names)
    assert "P-a-b-c" in names and "P-a-b-c.2" in names and "G-x_y" in names
    values = {p["labels"]["place"] for p in doc["podTypes"] if "place" in p["labels"]}
    assert len(values) == 3 and "x y" not in values


# ---------------------------------------------------------------------------
# 2'. Appendix C, term by term
# ---------------------------------------------------------------------------

def test_pebbling_encoding_is_exactly_appendix_c():
    doc = encode_pebbling(["u", "w", "v"], [("u", "v"), ("w", "v"), ("u", "v")], "v", 3)
    assert doc == {
        "version": 1,
        "semantics": "paper",
        "nodes": [{"name": "n", "capacity": {"pebbles": 3}}],
        "podTypes": [
            {"name": "P-u", "labels": {"id": "u"}, "requests": {"pebbles": 1}},
            {"name": "P-w", "labels": {"id": "w"}, "requests": {"pebbles": 1}},
            {"name": "P-v", "labels": {"id": "v"}, "requests": {"pebbles": 1},
             "affinity": {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
                 {"labelSelector": {"matchLabels": {"id": "u"}}, "topologyKey": HOST},
                 {"labelSelector": {"matchLabels": {"id": "w"}}, "topologyKey": HOST}]}}},
        ],
        "initial": [],
        "query": {"pod": "P-v", "node": "n"},
    }


@pytest.mark.parametrize("dag", [dags.pyramid(3), dags.binary_tree(3), dags.random_dag(12, seed=4)])
def test_pebbling_encoding_one_type_per_vertex_one_term_per_edge(dag):
    doc = encode_pebbling(dag.vertices, dag.edges, dag.target, 4)
    assert len(doc["podTypes"]) == len(dag.vertices)
    assert sum(len(_terms(p, "podAffinity")) for p in doc["podTypes"]) == len(dag.edges)
    assert all(_terms(p, "podAntiAffinity") == [] for p in doc["podTypes"])


@pytest.mark.parametrize("vertices, edges, target, match", [
    (["a", "b"], [("a", "b"), ("b", "a")], "b", "cycle a -> b -> a"),
    (["a"], [("a", "a")], "a", "cycle a -> a"),
    (["a", "b"], [("a", "b")], "c", "target: unknown vertex 'c'"),
    (["a", "b"], [("a", "z")], "b", r"edges\[0\]: unknown vertex 'z'"),
    (["a", "a"], [], "a", "duplicate vertex"),
])
def test_pebbling_encoding_refusals(vertices, edges, target, match):
    with pytest.raises(InputError, match=match):
        encode_pebbling(vertices, edges, target, 2)


# ---------------------------------------------------------------------------
# 3. end to end: loader + explicit engine vs answers.json and the oracles
# ---------------------------------------------------------------------------

def _goals(name: str) -> list[tuple[str, bool]]:
    """Every place of the net with its answer (coverable or not)."""
    answer = ANSWERS[name]
    return ([(p, True) for p in answer["coverable"]]
            + [(p, False) for p in answer["not_coverable"] or []])


@needs_data
@pytest.mark.parametrize("name", SMALL_NETS)
def test_oracle_agrees_with_answers(name):
    net = read_pnml(DATA / f"{name}.pnml")
    assert coverable_places(net) == set(ANSWERS[name]["coverable"])


@needs_data
@pytest.mark.parametrize("name, goal, coverable",
                         [(n, g, c) for n in SMALL_NETS for g, c in _goals(n)] if ANSWERS else [])
def test_petri_goal_deployable_iff_coverable(name, goal, coverable):
    doc = encode_petri(read_pnml(DATA / f"{name}.pnml"), goal)
    assert _verdict(doc) == ("deployable" if coverable else "not-deployable")


def test_petri_trace_simulates_the_protocol():
    """The witness for the tiny net runs S, E, P, F, R in the appendix's order."""
    result = _check(encode_petri(_tiny_net(), "s"))
    assert result.verdict.value == "deployable"
    deploys = [s.pod for s in result.trace if s.op == "deploy"]
    assert deploys[-1] == "G-s"
    assert deploys.index("S-a") < deploys.index("E-a") < deploys.index("P-r-a") < deploys.index("F-a")


@pytest.mark.parametrize("family", ["ring", "mutex", "philosophers"])
def test_generated_nets_covered_and_never_marked(family):
    fam = nets.FAMILIES[family](2, seed=5)
    oracle = coverable_places(fam.net)
    assert fam.coverable in oracle and fam.never_marked not in oracle
    assert _verdict(encode_petri(fam.net, fam.coverable)) == "deployable"
    assert _verdict(encode_petri(fam.net, fam.never_marked)) == "not-deployable"


def test_dead_place_is_not_deployable():
    net = nets.add_dead_place(nets.mutex(2).net)
    assert "dead" not in coverable_places(net)
    assert _verdict(encode_petri(net, "dead")) == "not-deployable"
    assert _verdict(encode_petri(net, "dead_next")) == "not-deployable"


@pytest.mark.parametrize("h", [1, 2, 3])
@pytest.mark.parametrize("shape", ["pyramid", "tree"])
def test_pebbling_price_h_plus_2(shape, h):
    dag = dags.pyramid(h) if shape == "pyramid" else dags.binary_tree(h)
    assert pebbling_price(dag.vertices, dag.edges, dag.target) == h + 2
    assert _verdict(encode_pebbling(dag.vertices, dag.edges, dag.target, h + 2)) == "deployable"
    assert _verdict(encode_pebbling(dag.vertices, dag.edges, dag.target, h + 1)) == "not-deployable"


def test_pebbling_path_needs_two():
    dag = dags.path(6)
    assert pebbling_price(dag.vertices, dag.edges, dag.target) == 2
    assert _verdict(encode_pebbling(dag.vertices, dag.edges, dag.target, 2)) == "deployable"
    assert _verdict(encode_pebbling(dag.vertices, dag.edges, dag.target, 1)) == "not-deployable"


@pytest.mark.parametrize("seed", range(4))
def test_pebbling_random_dags_agree_with_oracle(seed):
    dag = dags.random_dag(9, p=0.35, seed=seed)
    price = pebbling_price(dag.vertices, dag.edges, dag.target)
    for k in (price - 1, price):
        want = "deployable" if k >= price else "not-deployable"
        assert _verdict(encode_pebbling(dag.vertices, dag.edges, dag.target, k)) == want


# ---------------------------------------------------------------------------
# command line
# ---------------------------------------------------------------------------

def test_cli_encode_petri_and_pebbling(tmp_path):
    from symreach.cli.encode import encode_group

    runner = CliRunner()
    net = tmp_path / "tiny.json"
    net.write_text(json.dumps(_tiny_net().to_json()))
    out = tmp_path / "tiny.yaml"
    res = runner.invoke(encode_group, ["petri", str(net), "--goal", "s", "-o", str(out)])
    assert res.exit_code == 0, res.output
    assert yaml.safe_load(out.read_text()) == encode_petri(_tiny_net(), "s")

    dag = tmp_path / "dag.json"
    dag.write_text(json.dumps(dags.pyramid(2).to_json()))
    res = runner.invoke(encode_group, ["pebbling", str(dag), "-k", "4"])
    assert res.exit_code == 0
    d = dags.pyramid(2)
    assert yaml.safe_load(res.output) == encode_pebbling(d.vertices, d.edges, d.target, 4)


@pytest.mark.parametrize("args, message", [
    (["petri", "{tmp}/missing.pnml", "--goal", "p"], "cannot read"),
    (["petri", "{tmp}/tiny.json", "--goal", "zz"], "has no place 'zz'"),
    (["pebbling", "{tmp}/cyc.json", "-k", "2"], "cycle"),
    (["pebbling", "{tmp}/bad.json", "-k", "2"], "invalid JSON"),
])
def test_cli_encode_errors_exit_2_without_traceback(tmp_path, args, message):
    from symreach.cli.encode import encode_group

    (tmp_path / "tiny.json").write_text(json.dumps(_tiny_net().to_json()))
    (tmp_path / "cyc.json").write_text(json.dumps(
        {"vertices": ["a", "b"], "edges": [["a", "b"], ["b", "a"]], "target": "b"}))
    (tmp_path / "bad.json").write_text("{")
    res = CliRunner().invoke(encode_group, [a.format(tmp=tmp_path) for a in args])
    assert res.exit_code == 2
    assert message in res.output and "Traceback" not in res.output


def _random_safe_nets(count: int, seed: int = 0):
    """Random small nets, kept when one-safe (checked by exhaustive search) and not inert."""
    import random

    rng = random.Random(seed)
    places = [f"q{i}" for i in range(5)]
    out = []
    while len(out) < count:
        ts = tuple(Transition(f"t{j}", frozenset(rng.sample(places, rng.randint(1, 2))),
                              frozenset(rng.sample(places, rng.randint(1, 2))))
                   for j in range(4))
        net = PetriNet(f"random-{len(out)}", tuple(places), ts,
                       frozenset(rng.sample(places, rng.randint(1, 2))))
        from tests.oracles import reachable_markings

        safe = all(not (t.produced & m) for m in reachable_markings(net)
                   for t in net.transitions if t.pre <= m)
        if safe and len(coverable_places(net)) > len(net.initial):
            out.append(net)
    return out


@pytest.mark.parametrize("net", _random_safe_nets(10, seed=1), ids=lambda n: n.name)
def test_petri_random_safe_nets_agree_with_oracle(net):
    cov = coverable_places(net)
    for place in net.places:
        want = "deployable" if place in cov else "not-deployable"
        assert _verdict(encode_petri(net, place)) == want, place
