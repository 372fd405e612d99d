"""DRA errors whose text Go's random map order or a pointer picks: symreach's reason carries the pattern.

``tests/data/dra/message_patterns.yaml``: n1's one GPU fails each pod's CEL selector at run time
(the scheduler aborts the pod's cycle), with ``%s`` of the device (its attributes hold a semver,
its capacity a quantity: the map order picks which Go meets first) or ``insert failed`` naming
``device.attributes`` (its entries in map order, its default map's address), the device (its fields
in map order too) or formats (their validators' function pointers). ``ANSWERS`` are the kso DRA
variant's (k8s.io/kubernetes v1.35.4; 12 runs for ``fmt`` and ``ins``, 4 for ``dev`` and ``fk``,
21:50-22:15 UTC): both format texts, four attribute orders, three device orders, the formats' one. symreach's reason shows one text marked and the pattern of all
(``reasons.marked_reason``); ``kso_dra_verdicts`` takes kso's text when the pattern admits it and
counts it apart (``by_pattern``); ``explain -o json`` gives the pattern (``patterns``).
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from benchmarks.kso_dra_agreement import kso_dra_verdicts, symreach_dra
from benchmarks.kso_dra_verdicts import agrees, by_pattern, judged
from benchmarks.kso_harness import any_state
from symreach import reasons
from symreach.cli import cli
from symreach.generators.k8s_dra_states import MESSAGE_ERRORS, plain_objects, random_dra_states

DATA = Path(__file__).parent / "data" / "dra" / "message_patterns.yaml"
VARIANT = Path(os.environ.get("KSO_DRA", "/work/wt/dra-kso/kso"))
DRA = "DynamicResources"
_HEAD = 'running "DynamicResources" filter plugin: claim default/{}: selector #0: CEL runtime error: '
_FORMAT = _HEAD.format("c-format") + "error during formatting: no formatting function for kubernetes.{}"
_INSERT = _HEAD.format("c-insert") + "insert failed: key {{{{gpu.example.com: {{{}}}}} {}}} already exists"
_ATTRS = "attributes: {{{{gpu.example.com: {{{}}}}} {}}}"
_CAPACITY = "capacity: {{{{gpu.example.com: {{memory: 16Gi}}}} {}}}"
_DEVICE = _HEAD.format("c-device") + "insert failed: key {{{}}} already exists"
ANSWERS = {   # pod -> the variant's texts (it aborts the cycle: the same error on n1 and n2)
    "default/fmt": [_FORMAT.format("Quantity"), _FORMAT.format("Semver")],
    "default/ins": [_INSERT.format("model: h100, driverVersion: 2.0.0-rc.1, ecc: true, mem: 16", "0xc0008438c0"),
                    _INSERT.format("driverVersion: 2.0.0-rc.1, ecc: true, mem: 16, model: h100", "0xc000697840"),
                    _INSERT.format("mem: 16, model: h100, driverVersion: 2.0.0-rc.1, ecc: true", "0xc00079a200"),
                    _INSERT.format("model: h100, driverVersion: 2.0.0-rc.1, ecc: true, mem: 16", "0xc000838680")],
    "default/dev": [_DEVICE.format("driver: gpu.example.com, allowMultipleAllocations: false, " + _ATTRS.format(
                        "driverVersion: 2.0.0-rc.1, ecc: true, mem: 16, model: h100", "0xc000878b40") + ", "
                        + _CAPACITY.format("0xc000878b40")),
                    _DEVICE.format(_CAPACITY.format("0xc000819cc0") + ", driver: gpu.example.com, "
                                   "allowMultipleAllocations: false, " + _ATTRS.format(
                                       "driverVersion: 2.0.0-rc.1, ecc: true, mem: 16, model: h100", "0xc000819cc0")),
                    _DEVICE.format("allowMultipleAllocations: false, " + _ATTRS.format(
                        "ecc: true, mem: 16, model: h100, driverVersion: 2.0.0-rc.1", "0xc0007fc5c0") + ", "
                        + _CAPACITY.format("0xc0007fc5c0") + ", driver: gpu.example.com")],
    "default/fk": [_HEAD.format("c-formats") + "insert failed: key [{DNS1123Label 0x12c18c0 30}, {URI 0x12c1a40 1103}] "
                   "already exists"],
}


def _state(pod: str):
    objects = [o for o in yaml.safe_load_all(DATA.read_text()) if o]
    return any_state([o for o in objects if o["kind"] != "Pod" or f"default/{o['metadata']['name']}" == pod], pod)


@pytest.mark.parametrize("pod", sorted(ANSWERS))
def test_symreach_s_marked_reason_admits_each_variant_answer(pod):
    ours = symreach_dra(_state(pod))
    mine = ours.verdicts["n1"]
    assert ours.verdicts["n2"] == mine and mine[0] == DRA and len(mine[1]) == 1
    assert reasons.reason_pattern(mine[1][0]) is not None
    assert reasons.reason_admits(mine[1][0], reasons.reason_text(mine[1][0]))   # it shows one Go can print
    for answer in ANSWERS[pod]:
        theirs = {node: (DRA, (answer,)) for node in ("n1", "n2")}
        again = symreach_dra(_state(pod), theirs["n1"])
        assert judged(theirs, again, 0) == ([], 0)
        assert len(judged(theirs, again, 0, exact=True)[0]) == 2 and by_pattern(theirs, again, 0) == 2


def test_the_pattern_admits_no_other_device_or_error():
    mine = symreach_dra(_state("default/ins")).verdicts["n1"]
    answer = ANSWERS["default/ins"][0]
    assert agrees(mine, (DRA, (answer,)))
    for wrong in (answer.replace("mem: 16", "mem: 17"), answer.replace("0xc0008438c0", "0xz"),
                  answer.replace("c-insert", "c-other"), answer.replace(", ecc: true", "")):
        assert not agrees(mine, (DRA, (wrong,))), wrong
    fmt = symreach_dra(_state("default/fmt")).verdicts["n1"]
    assert not agrees(fmt, (DRA, (_FORMAT.format("net.IP"),)))


def test_marked_reasons_read_back():
    """A plain reason has no pattern and admits only itself; a marked one's pattern is found from the end
    even when the shown message holds the marks and the note's words (its pattern escapes them)."""
    assert reasons.marked_reason("h: ", "m", "") == "h: m" == reasons.marked_reason("h: ", "m", re.escape("m"))
    assert reasons.reason_pattern("h: m") is None and reasons.reason_admits("h: m", "h: m")
    assert not reasons.reason_admits("h: m", "h: n")
    tricky = "a \u00ab b \u00bb (Go's random map order or a pointer picks the text in \u00ab\u00bb: any that fully matches /x/)"
    reason = reasons.marked_reason("h: ", tricky, re.escape(tricky) + "|other")
    assert reasons.reason_text(reason) == "h: " + tricky
    assert reasons.reason_admits(reason, "h: " + tricky) and reasons.reason_admits(reason, "h: other")
    assert not reasons.reason_admits(reason, "other") and not reasons.reason_admits(reason, "h: x")


def test_explain_json_carries_the_pattern():
    run = CliRunner().invoke(cli, ["explain", str(DATA), "--pod", "default/ins", "-o", "json"])
    assert run.exit_code == 0, run.output
    nodes = {n["node"]: n for n in json.loads(run.output)["pods"][0]["nodes"]}
    assert nodes["n2"]["patterns"] == [None] and nodes["n2"]["reasons"] == ["cannot allocate all claims"]
    (pattern,) = nodes["n1"]["patterns"]
    assert all(re.fullmatch(pattern, a) for a in ANSWERS["default/ins"])
    assert "\u00ab" in nodes["n1"]["reason"] and pattern in reasons.reason_pattern(nodes["n1"]["reason"])


def test_the_generator_makes_such_errors_and_plain_states_drop_them():
    """Some random DRA states fail with such an error (the acceptance runs meet them); ``plain_objects``
    (walks that must not err) removes those selectors."""
    states = random_dra_states(200, 43)
    marked = [i for i, s in enumerate(states)
              if any(v is not None and reasons.reason_pattern(v[1][0]) for v in symreach_dra(s).verdicts.values())]
    assert marked
    for i in marked:
        text = json.dumps(plain_objects(json.loads(json.dumps(states[i].objects))))
        assert not any(json.dumps(e)[1:-1] in text for e in MESSAGE_ERRORS)


@pytest.mark.skipif(not os.access(VARIANT, os.X_OK), reason="the kso variant with DRA is not built here")
@pytest.mark.parametrize("pod", sorted(ANSWERS))
def test_the_variant_answers_are_admitted(pod):
    """The variant asked again: each answer symreach's marked reason admits (not necessarily one written)."""
    ours = symreach_dra(_state(pod))
    for _ in range(4):
        theirs = kso_dra_verdicts(_state(pod), VARIANT)
        assert theirs["n1"] == theirs["n2"] and agrees(ours.verdicts["n1"], theirs["n1"]), theirs
