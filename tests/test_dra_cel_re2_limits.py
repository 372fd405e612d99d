"""Go's ``regexp/syntax`` limits, decided as Go decides them, against the kso DRA variant's answers.

Go refuses a pattern whose parse tree passes 1,000 in height (``expression nests too deeply``),
3,355,443 in ``calcSize`` or 33,554,432 class runes (``expression too large``), each checked
at points of its parse with its own bookkeeping (``dra_cel_re2_limits``). ``tests/data/dra/
cel_re2_limits.json`` holds the variant's answer (k8s.io/kubernetes v1.35.4, Go 1.25.12) to
``matches`` of each pattern of ``dra_cel_re2_limit_patterns.patterns(SEED)`` on a short text:
nesting, factoring, size, stale cached sizes, class runes at their boundaries (both sides),
which error wins when a limit and a syntax error both occur, moderate random patterns.
symreach must give every answer (UNKNOWN for none). ``record()`` asks the variant again and
rewrites the file; ``test_answers_are_the_variant_answers`` re-asks it where it is installed.
"""

from __future__ import annotations

import gzip
import json
import sys
from pathlib import Path

import pytest

import tests.test_dra_cel_environment as environment
from symreach.frontends import dra_cel
from symreach.frontends.dra_cel_re2 import translate
from tests.dra_cel_re2_limit_patterns import patterns

DATA_FILE = Path(__file__).parent / "data" / "dra" / "cel_re2_limits.json.gz"   # (long repetitive patterns)
SEED = 15
SUBJECTS = ["ab", "", "xaby", "aaab", "k"]
_TEXT = 'device.attributes["gpu.example.com"].model.substring(4)'   # "" at run time: the pattern is not a constant


def _cel(text: str) -> str:
    """A CEL string literal of ``text``."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def expression(pattern: str, subject: str) -> str:
    """``subject.matches(pattern)``, both built at run time, as a device selector."""
    return f"({_cel(subject)} + {_TEXT}).matches({_TEXT} + {_cel(pattern)})"


def _symreach(expression_: str) -> dra_cel.Outcome:
    data = environment.DATA
    attributes = dra_cel.attribute_values(data["driver"], data["attributes"])
    capacity = dra_cel.capacity_values(data["driver"], data["capacity"])
    return dra_cel.evaluate(expression_, data["driver"], attributes, capacity)


def _want(answer: object) -> object:
    if isinstance(answer, str) and answer.startswith(environment.RUNTIME):
        return dra_cel.CelError(answer[len(environment.RUNTIME):])
    return answer


def record() -> None:
    """Writes ``DATA_FILE`` from the variant's answers (``PYTHONPATH=. python3 -c 'import
    tests.test_dra_cel_re2_limits as t; t.record()'``, ``KSO_DRA`` naming the variant)."""
    import tempfile

    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for i, pattern in enumerate(patterns(SEED)):
            subject = SUBJECTS[i % len(SUBJECTS)]
            rows.append([pattern, subject, environment.variant_answer(expression(pattern, subject),
                                                                      Path(tmp) / "s.yaml")])
            print(i, len(pattern), str(rows[-1][2])[:80], file=sys.stderr, flush=True)
    DATA_FILE.write_bytes(gzip.compress(json.dumps(
        {"note": f"The kso DRA variant's answers (k8s.io/kubernetes v1.35.4, go1.25.12) to {expression.__doc__} "
                 f"for tests/dra_cel_re2_limit_patterns.patterns({SEED}), the i-th on SUBJECTS[i % 5]",
         "answers": rows}, ensure_ascii=False, indent=0).encode() + b"\n", mtime=0))


DATA = json.loads(gzip.decompress(DATA_FILE.read_bytes())) if DATA_FILE.exists() else {"answers": []}


def _kind(answer: object) -> str:
    if not isinstance(answer, str):
        return "accepted"
    return answer[len(environment.RUNTIME):].split(":")[1].strip()


def test_symreach_gives_the_variant_answer():
    """Every recorded pattern: the same match or Go's same error text, UNKNOWN for none."""
    kinds: dict[str, int] = {}
    for pattern, subject, answer in DATA["answers"]:
        if isinstance(answer, str) and answer.startswith(environment.COMPILE):
            kinds["compile"] = kinds.get("compile", 0) + 1   # over CEL's 100,000 code points: in no cluster
            continue
        got = _symreach(expression(pattern, subject))
        assert got != dra_cel.UNKNOWN, pattern[:200]
        assert got == _want(answer), (pattern[:200], answer if not isinstance(answer, str) else answer[:200])
        kinds[_kind(answer)] = kinds.get(_kind(answer), 0) + 1
    # both sides of each limit are there (the boundaries are the families' point); the rest syntax errors
    assert len(DATA["answers"]) == 345
    assert (kinds["accepted"], kinds["expression nests too deeply"], kinds["expression too large"]) == (126, 75, 31)


def test_a_limit_and_a_syntax_error():
    """Which error Go reports when a pattern passes a limit and has a syntax error: the one its
    parse meets first (a refused group closed before a stray ``)``; an unclosed ``[`` before the
    final size check)."""
    answers = {p: a for p, _, a in DATA["answers"]}
    large = "(?:" + "x" * 3400 + "){1000}"
    assert _kind(answers[large + ")"]) == "expression too large"
    assert _kind(answers[large + "["]) == "missing closing ]"
    assert _kind(answers["(" * 1001 + "a" + ")" * 1001 + "["]) == "expression nests too deeply"


def test_a_literal_grown_after_the_size_check_started():
    """Go caches a literal's size when it is pushed one rune long and never updates it once its
    size tracking has started: after three ``{1000}`` repetitions Go accepts ``(y+x...){999}``
    with thousands of x's (counted as one), which it refuses alone; symreach too (above)."""
    answers = {p: a for p, _, a in DATA["answers"]}
    prefix = "a{1000}b{1000}c{1000}"
    pairs = [(p, p[len(prefix):]) for p in answers if p.startswith(prefix + "(") and p[len(prefix):] in answers]
    flipped = [p for p, alone in pairs if _kind(answers[p]) == "accepted"
               and _kind(answers[alone]) == "expression too large"]
    assert len(flipped) >= 4, len(flipped)


def test_deep_groups_of_any_depth():
    """Non-capturing groups add no height in Go's tree: 3,000 deep are accepted and matched (the
    recursion limit restored after)."""
    limit = sys.getrecursionlimit()
    pattern = "(?:" * 3000 + "b" + ")" * 3000
    found = translate(pattern, "ab").search("ab")
    assert found is not None and found.span == (1, 2)
    assert sys.getrecursionlimit() == limit


@pytest.mark.slow
@pytest.mark.skipif(not environment.VARIANT.exists(), reason="the kso DRA variant is not built here")
def test_answers_are_the_variant_answers(tmp_path):
    for pattern, subject, answer in DATA["answers"]:
        assert environment.variant_answer(expression(pattern, subject), tmp_path / "s.yaml") == answer, pattern[:200]
