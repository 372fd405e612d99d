"""The last CEL constructs ``dra_cel`` once answered UNKNOWN, against the kso DRA variant's answers.

``tests/data/dra/cel_tail.json`` holds, for the device of ``cel_environment.json``, the variant's
answer to 1,166 expressions (71 of them compile errors, which no cluster can hold): an index or
``[?k]`` by a list (``*types.baseList``, ``*types.concatList`` for ``a + b``), a map, an optional,
null or the device (``map[string]interface {}`` when read directly, ``cel.mapper`` for its maps),
of every target type (cel-go's ``refQualify``: ``no such key`` on a scalar, Go's messages for a
list); the device and its maps as map keys (a new pointer per read of ``device``, one each for
``attributes`` and ``capacity``); ``insert failed`` naming a list, an optional, null, a map, a
``format.*`` value (its validator's function pointer) or the device; ``format`` precisions and ``%e`` widths of any size (x/text's int16, uint8 and uint16
fields, ``%!(NOVERB)`` past its parser's 1e6); ``%s`` of maps holding a semver and a quantity.
Where Go's random map order or a pointer picks the message (the error itself is certain), the
same expression is recorded several times with the messages the variant gave, and symreach's
``CelError.pattern`` must admit each. Then 181 RE2 patterns: random ones of 300 to 9,000
characters and some at Go's height and size limits: all decided now, the 5 once UNKNOWN (where
upper bounds of Go's height, size and runes passed its limits) too, as ``dra_cel_re2_limits``
replays Go's parse stack (Go refuses 4 of them: ``expression nests too deeply``, ``expression
too large``; it accepts ``(?:a||...|){1000}``, whose empty branches its factoring merges); the 106 over 2,000
characters that Python's backtracking ``re`` could take minutes on are matched by RE2 now, and
the 2 with 994 nested groups (over the old cap of 200).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import tests.test_dra_cel_environment as environment
from symreach.frontends import dra_cel
from tests.dra_cel_tail_expressions import expressions

DATA = json.loads((Path(__file__).parent / "data" / "dra" / "cel_tail.json").read_text())


def _symreach(expression: str) -> dra_cel.Outcome:
    attributes = dra_cel.attribute_values(DATA["driver"], DATA["attributes"])
    capacity = dra_cel.capacity_values(DATA["driver"], DATA["capacity"])
    return dra_cel.evaluate(expression, DATA["driver"], attributes, capacity)


def _agrees(got: dra_cel.Outcome, answer: object) -> bool:
    if isinstance(answer, str) and answer.startswith(environment.RUNTIME):
        return isinstance(got, dra_cel.CelError) and got.admits(answer[len(environment.RUNTIME):])
    return got == answer


def test_symreach_gives_the_variant_answer():
    agree, marked, refused, patterned = [], [], [], []
    for expression, answer in DATA["answers"]:
        if isinstance(answer, str) and answer.startswith(environment.COMPILE):
            refused.append(expression)
            continue
        got = _symreach(expression)
        if got == dra_cel.UNKNOWN:
            marked.append(expression)
            continue
        assert _agrees(got, answer), (expression, answer, got)
        agree.append(expression)
        if isinstance(got, dra_cel.CelError) and got.pattern:
            patterned.append(expression)
    assert (len(agree), len(marked), len(refused)) == (1095, 0, 71), marked
    assert len(patterned) == 106   # answers (repeats included) whose message Go's map order or a pointer picks


def test_a_pattern_admits_what_it_should_and_not_more():
    """The message pattern of ``insert failed`` naming ``device.attributes``: any address and
    order, but the device's own values."""
    got = _symreach("cel.bind(x, device.attributes, [1, 2].transformMapEntry(i, v, {x: v}).size() == 1)")
    assert isinstance(got, dra_cel.CelError) and got.pattern
    seen = [a for e, a in DATA["answers"] if e.startswith("cel.bind(x, device.attributes, [1, 2]")]
    assert len(set(seen)) == 7 and all(got.admits(a[len(environment.RUNTIME):]) for a in seen)
    assert not got.admits(seen[0][len(environment.RUNTIME):].replace("a100", "a101"))
    assert not got.admits(seen[0][len(environment.RUNTIME):].replace(" 0xc", " 0xz"))


def test_the_random_expressions_are_the_generators():
    """The 400 random expressions are ``dra_cel_tail_expressions``' with seed 41, in order."""
    made = expressions(41, 400)
    start = [e for e, _ in DATA["answers"]].index(made[0])
    assert [e for e, _ in DATA["answers"][start:start + 400]] == made


@pytest.mark.slow
@pytest.mark.skipif(not environment.VARIANT.exists(), reason="the kso DRA variant is not built here")
def test_answers_are_the_variant_answers(tmp_path):
    """The variant asked again: the same answer, or for a message Go's map order or a pointer picks,
    one symreach's pattern admits."""
    for expression, answer in DATA["answers"]:
        again = environment.variant_answer(expression, tmp_path / "s.yaml")
        assert again == answer or _agrees(_symreach(expression), again), expression
