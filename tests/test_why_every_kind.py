"""``--why`` / ``certify --explain`` for every certificate kind and every target kind
(issue 26 item 3): sentences in the user's terms, never an encoding variable name,
never a blank where a term, a domain or a pod should be."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from symreach.certify.dispatch import parse
from symreach.certify.lemmas import lemmas_text
from symreach.cli import cli
from symreach.frontends.dispatch import load_any
from symreach.report import gang
from tests.cert_corpus import EIGHT_KINDS, TARGET_KINDS, corpus

# An encoding variable, a Python value or a blank: none may reach the user.
INTERNAL = re.compile(r"present\[|count\[|#\d|\bNone\b|\bTrue\b|\bFalse\b|\S  \S|\(\)|\[\]|\bbit \d|\bv\d+\b"
                      r"|needs ,|needs and|term needs|term  |: *$|,,|\bof ,|frozenset|\{\}|no number of")
# What the kinds cannot certify: static filters and Theorem 5 name blocked pairs, the lazy
# search declines count targets, the counter abstraction is for presence targets.
NOT_APPLICABLE = {(fmt, "count") for fmt in ("symreach-static-filter/1", "symreach-theorem5/1",
                                             "symreach-lazy-closure/1", "symreach-counter-invariant/1")}
NOT_APPLICABLE |= {("symreach-theorem5/1", "co-occurrence")}  # an affinity-free blocked pair is rare with --with
SEEDS = (6, 57, 171)  # together they yield every applicable (kind, target) pair (tests/cert_corpus.py)


def assert_readable(text: str) -> list[str]:
    lines = text.splitlines()
    assert lines[0].startswith("why (") and lines[0].endswith(":") and not INTERNAL.search(lines[0][:-1]), lines[0]
    lemmas = [line[4:] for line in lines[1:] if line.startswith("  - ")]
    assert lemmas, text
    for line in lemmas:
        assert line.strip() and not INTERNAL.search(line), line
    return lemmas


def test_every_kind_and_target_renders_in_the_users_terms():
    rendered: dict[tuple[str, str], int] = {}
    for fmt, kind, inst, _, text, _ in corpus(SEEDS):
        assert_readable(lemmas_text(inst, parse(text)))
        rendered[(fmt, kind)] = rendered.get((fmt, kind), 0) + 1
    wanted = {(fmt, kind) for fmt in EIGHT_KINDS for kind in TARGET_KINDS} - NOT_APPLICABLE
    assert set(rendered) == wanted, sorted(wanted - set(rendered))
    assert len(wanted) == 35 and sum(rendered.values()) >= 70


Z = "topology.kubernetes.io/zone"


def _term(selector: dict, key: str = "kubernetes.io/hostname") -> dict:
    return {"labelSelector": selector, "topologyKey": key}


SHOP = {"version": 1, "semantics": "kubernetes", "nodes": [
    {"name": "wk-1", "labels": {Z: "eu-west-1a"}, "capacity": {"cpu": "4", "pods": 10}},
    {"name": "wk-2", "labels": {Z: "eu-west-1b"}, "capacity": {"cpu": "4", "pods": 10},
     "taints": [{"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}]}],
    "podTypes": [
        {"name": "db", "labels": {"security": "S1"}, "requests": {"cpu": "1500m"}, "nodeSelector": {Z: "eu-west-1a"},
         "tolerations": [{"key": "dedicated", "operator": "Exists"}]},
        {"name": "web", "labels": {"app": "web"}, "requests": {"cpu": "1500m"},
         "tolerations": [{"key": "dedicated", "operator": "Exists"}],
         "affinity": {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [_term(
             {"matchExpressions": [{"key": "security", "operator": "In", "values": ["S1"]}]}, Z)]}}},
        {"name": "batch", "labels": {"app": "batch"}, "requests": {"cpu": "1"}}],
    "initial": [{"pod": "db", "node": "wk-1"}]}


@pytest.mark.parametrize("args,expected", [
    # may-be-present fixpoint: the term, the domain, and why the witness never gets there
    (["--pod", "web", "--node", "wk-2"],
     ["never web on wk-2: its affinity term security In [S1] needs a pod in topology.kubernetes.io/zone=eu-west-1b "
      "(db matches), and none can ever run there",
      "never db on wk-2: node(s) didn't match Pod's node affinity/selector: nodeSelector "
      "topology.kubernetes.io/zone=eu-west-1a: wk-2 has topology.kubernetes.io/zone=eu-west-1b"]),
    # static filter: the taint
    (["--pod", "batch", "--node", "wk-2"],
     ["never batch on wk-2: node(s) had untolerated taint(s): untolerated taint dedicated=gpu:NoSchedule on wk-2 "
      "(a static filter: no sequence of steps changes it)"]),
    # count: the capacity arithmetic
    (["--pod", "db", "--node", "wk-1", "--count", "3"],
     ["never 3 pods of db at once on wk-1", "3 pods of 1500m cpu need 4500m; wk-1 has 4000m"]),
])
def test_check_why_names_terms_domains_taints_and_amounts(tmp_path, args, expected):
    path = tmp_path / "shop.yaml"
    path.write_text(yaml.safe_dump(SHOP))
    out = CliRunner().invoke(cli, ["check", str(path), *args, "--why", "--quiet"])
    assert out.exit_code == 1, out.output
    lemmas = assert_readable(out.output[out.output.index("why ("):])
    for line in expected:
        assert line in lemmas, lemmas


def test_lazy_closure_certificates_explain_instead_of_failing(tmp_path):
    """Once "no lemmas for symreach-lazy-closure/1" and exit 4: now lemmas, and certify --explain."""
    found = next((inst, query, text, doc) for fmt, kind, inst, query, text, doc in corpus(SEEDS)
                 if fmt == "symreach-lazy-closure/1" and kind == "presence")
    inst, query, text, doc = found
    assert_readable(lemmas_text(inst, parse(text)))
    (pair,) = query.alternatives[0]
    target = {"pod": inst.pod_types[pair[0]].name, "node": inst.nodes[pair[1]].name}
    (tmp_path / "i.yaml").write_text(yaml.safe_dump({**doc, "query": target}))
    (tmp_path / "c.json").write_text(text)
    out = CliRunner().invoke(cli, ["certify", str(tmp_path / "i.yaml"), str(tmp_path / "c.json"), "--explain"])
    assert out.exit_code == 0, out.output
    assert_readable(out.output[out.output.index("why ("):])


GANG = Path(__file__).resolve().parents[1] / "examples" / "gang-never.yaml"


def test_gang_certificates_explain_which_member_blocks_and_why(tmp_path):
    """The ninth kind (symreach-gang-states/1): ``--why`` and ``certify --explain`` print the same
    lemmas, each in the scheduler's words with the object it names, never an internal name."""
    cert = tmp_path / "g.json"
    # explicit by name: under auto the BDD may win the gang race and write the other kind
    checked = CliRunner().invoke(cli, ["check", str(GANG), "--engine", "explicit", "--why", "--cert-out", str(cert)])
    assert checked.exit_code == 1, checked.output
    why = checked.output[checked.output.index("why ("):]
    lemmas = assert_readable(why)
    certified = CliRunner().invoke(cli, ["certify", str(GANG), str(cert), "--explain"])
    assert certified.exit_code == 0, certified.output
    assert certified.output[certified.output.index("why ("):] == why
    assert parse(cert.read_text()).format == "symreach-gang-states/1"
    assert lemmas[0] == ("never group db/replicas (minCount 4, 4 pending): in none of the 16 configurations the "
                         "rest of the cluster can reach do 4 pending members fit at once in any order and on any "
                         "nodes")
    now = lemmas[1]
    assert now.startswith("in 2 of the 16 configurations (now among them), after replica on db-1, replica on db-2, "
                          "replica on db-3, the 4th replica fits on no node: "), now
    for part in ("db-1: Insufficient cpu: requests 1000m, 0m free of 4000m on db-1",
                 "db-2: node(s) didn't match pod anti-affinity rules: term app=db: replica runs on db-2",
                 "web-1: node(s) didn't match Pod's node affinity/selector: nodeSelector pool=db: web-1 has pool=web"):
        assert part in now, now
    assert all("fits on no node: " in line for line in lemmas[1:]) and len(lemmas) == 6


def test_gang_lemmas_say_how_many_configurations_they_simulated(monkeypatch, tmp_path):
    """Past ``MAX_CYCLES`` configurations the lemmas stop simulating and say so."""
    cert = tmp_path / "g.json"
    assert CliRunner().invoke(cli, ["check", str(GANG), "--cert-out", str(cert)]).exit_code == 1
    monkeypatch.setattr(gang, "MAX_CYCLES", 3)
    monkeypatch.setattr(gang, "CYCLES_S", 1e9)
    loaded = load_any(str(GANG))
    inst = loaded[0] if isinstance(loaded, tuple) else loaded
    lemmas = assert_readable(lemmas_text(inst, parse(cert.read_text())))
    assert lemmas[-1] == "the scheduler's cycle was simulated in 3 of the 16 configurations", lemmas
    assert lemmas[1].startswith("now, after replica on db-1") or "(now among them)" in lemmas[1], lemmas
