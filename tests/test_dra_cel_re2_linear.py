"""``dra_cel_re2`` matches with RE2 (linear time) and finds what Python's backtracking ``re`` found.

Before, the pattern ``dra_cel_re2`` emits for one subject text was matched by Python's ``re``:
exact (leftmost-first, as Go) but exponential on patterns such as ``^(a|a)*b$``. Now RE2 C++
(``google-re2``) matches the same emitted pattern. Seeded random Go patterns and subjects, small
enough that backtracking stays cheap, give the same ``matches``, ``find`` and ``findAll`` spans
under both engines, non-ASCII subjects included (RE2 works on UTF-8 bytes; positions come back
in characters, matches start at characters only). Where they differed, the kso DRA variant
answered as RE2 does. ``tests/data/dra/cel_re2_long.json``: the variant's answers to 60 random
patterns of 2,000 to 9,000 characters (over the old cap, UNKNOWN before), all given now.
"""

from __future__ import annotations

import json
import random
import re
import sys
from pathlib import Path

import pytest
import re2

from symreach.frontends import dra_cel
from tests.test_dra_cel_environment import RUNTIME, VARIANT, variant_answer
from symreach.frontends.dra_cel_re2 import Re2Unsupported, emit, find_all, translate

_ATOMS = ["a", "b", "a", "b", ".", "[ab]", "[^a]", "[a-c\\n]", "\\b", "\\B", "^", "$", "\\A", "\\z", "\\d",
          "\\w", "\\W", "\\s", "(?i:k)", "(?i:ss)", "\\pL", "\\p{Greek}", "[[:alpha:]]", "é", "\\x{e9}", "ß", "😀",
          "\\n", "", "K", "[^\\x00-\\x{10FFFF}]", "\\Qa.\\E"]
_REPEATS = ["*", "+", "?", "{2}", "{0,2}", "{1,}", "{0}", "{1,3}"]
_LIMIT = sys.getrecursionlimit()
_SUBJECT = "aab\n é😀Kß1_k\u212a.Sſ"


def _pattern(rng: random.Random, depth: int = 0) -> str:
    """A random Go pattern: atoms, groups (capturing, non-capturing, with flags), alternations
    with empty branches, greedy and lazy repetitions."""
    parts = []
    for _ in range(rng.randint(1, 3)):
        if depth < 3 and rng.random() < 0.35:
            body = "|".join(_pattern(rng, depth + 1) for _ in range(rng.randint(1, 3)))
            part = rng.choice(["(", "(?:", "(?s:", "(?m:", "(?U:", "(?i:", "(?P<n>"]) + body + ")"
        else:
            part = rng.choice(_ATOMS)
        if part and rng.random() < 0.4:
            part += rng.choice(_REPEATS) + ("?" if rng.random() < 0.3 else "")
        parts.append(part)
    flags = rng.choice(["", "", "", "(?m)", "(?s)", "(?U)", "(?i)"])
    return flags + "".join(parts)


def _subject(rng: random.Random) -> str:
    return "".join(rng.choice(_SUBJECT) for _ in range(rng.randint(0, 8)))


def _python(text: str) -> re.Pattern:
    """``emit``'s RE2 syntax as Python's: ``\\x{...}`` as ``\\U...``, ``\\z`` as ``\\Z``, ``\\B``
    spelled out (Python's ``\\B`` never matches the empty text, Go's does: the old path answered
    ``"".matches("\\\\B")`` false). ``emit`` writes every other character as itself or escaped, so
    these never occur otherwise."""
    text = text.replace("[^\\x00-\\x{10ffff}]", "(?!)")   # the empty class (slow for Python to compile)
    text = re.sub(r"\\x\{([0-9a-f]+)\}", lambda m: "\\U%08x" % int(m.group(1), 16), text)
    text = text.replace("\\z", "\\Z").replace("\\B", "(?:(?<=\\w)(?=\\w)|(?<!\\w)(?!\\w))")
    return re.compile(text, re.ASCII)


def _expression(pattern: str, subject: str) -> str:
    """A selector showing ``findAll``'s matches (``no such key: m1|m2|...#``)."""
    literal = subject.replace("\n", "\\n")
    return f'{{"z": true}}["{literal}".findAll(r"{pattern}").join("|") + "#"]'


def _spans(pattern, subject: str) -> tuple:
    first = pattern.search(subject)
    everything = find_all(pattern, subject, -1)
    return (None if first is None else (first.start(), first.end(), first.group(0)), everything,
            find_all(pattern, subject, 2))


# Where the two differ, Go is RE2: a loop whose body matched empty is left by Python's ``re`` (the
# tail then follows), while Go's and RE2's machines drop that thread and take the body's next
# choice. The kso DRA variant's answer (k8s.io/kubernetes v1.35.4), asked as
# tests/test_dra_cel_environment.py's ``variant_answer`` does, written in:
_DIFFERS = {'{"z": true}["😀\u212a\u212aa1Séa".findAll(r"(?m)(?P<n>b|(?s:(?U)[ab]|(?m)(?i:ss)[^\\x00-\\x{10FFFF}])'
            '(\\w$*K|(?U)\\W|(?U)(\\d{0,2}?\\x{e9}*?|(?i)\\w)*?.*))").join("|") + "#"]': "no such key: a1Séa#"}


def test_re2_finds_what_backtracking_found():
    rng = random.Random(27)
    compared, differs = 0, []
    for _ in range(5000):
        pattern, subject = _pattern(rng), _subject(rng)
        text = emit(pattern, subject)   # (the generator writes only patterns Go accepts)
        compared += 1
        if _spans(translate(pattern, subject), subject) != _spans(_python(text), subject):
            differs.append(_expression(pattern, subject))
    assert compared == 5000
    assert differs == list(_DIFFERS)
    for expression, answer in _DIFFERS.items():
        assert dra_cel.evaluate(expression, "d", {}, {}) == dra_cel.CelError(answer)


def test_an_exponential_pattern_for_backtracking_answers():
    """``^(a|a)*b$`` on a's: 2^n paths for a backtracking matcher, one pass for RE2 (a hang would
    be CI's timeout; RE2's program is a few instructions per pattern piece by construction)."""
    device = {"s": {"string": "a" * 40}}
    attributes = dra_cel.attribute_values("d.example.com", device)
    capacity = dra_cel.capacity_values("d.example.com", {})
    s = 'device.attributes["d.example.com"].s'
    cases = {f'{s}.matches("^(a|a)*b$")': False, f'{s}.find("(a|a)*b") == ""': True,
             f'{s}.findAll("(a|aa)*(a|a)*c").size() == 0': True, f'{s}.matches("^((a*)*|b)*$")': True,
             f'{s}.findAll("(a|a)*?").size() == 41': True}
    for expression, answer in cases.items():
        assert dra_cel.evaluate(expression, "d.example.com", attributes, capacity) == answer, expression
    # RE2 runs in time (program size) x (text length): the program is a few instructions
    assert translate("^(a|a)*b$", "a" * 40).regexp.programsize < 40


def test_long_patterns_are_answered():
    """Past the old 2,000-character cap: a 30,000-character alternation, matched linearly."""
    pattern = "|".join("a" * 10 + format(i, "04d") for i in range(2300)) + "|(a|a)*b"
    assert len(pattern) > 30_000
    found = translate(pattern, "x" + "a" * 10 + "2299y").search("x" + "a" * 10 + "2299y")
    assert found is not None and found.group() == "a" * 10 + "2299"
    assert translate(pattern, "a" * 60).search("a" * 60) is None


def test_a_match_starts_at_a_character():
    """RE2's unanchored search finds ``\\B`` inside the UTF-8 bytes of ``ß``, ``ſ`` and the Kelvin
    sign (7 bytes, 8 places); Go steps by rune (4 places), as the anchored ``(?s:.)*?`` prefix does."""
    subject = "ß\u017f\u212a"
    assert len(re2.compile("\\B").findall(subject.encode())) == 8
    assert find_all(translate("\\B", subject), subject, -1) == ["", "", "", ""]
    assert [f.span for f in [translate("\\B", "ßé").search("ßé", 1)]] == [(1, 1)]
    assert translate("\\B", "").search("") is not None   # Go: \\B holds in the empty text


def test_groups_as_deep_as_go_allows():
    """999 nested groups: Go's tree is 1,000 high (its limit), and the answer is not UNKNOWN
    (the old cap was 200 groups)."""
    pattern = "(" * 999 + "b" + ")" * 999
    found = translate(pattern, "ab").search("ab")
    assert found is not None and found.span == (1, 2)
    assert sys.getrecursionlimit() == _LIMIT   # restored


LONG = Path(__file__).parent / "data" / "dra" / "cel_re2_long.json"


def long_expressions(seed: int, count: int) -> list[str]:
    """Selectors with random patterns of 2,000 to 9,000 characters (``_pattern``'s joined by ``|``
    or one after another; when they were drawn, ``emit`` also skipped patterns upper bounds of Go's
    limits left open, none of these) on random subjects up to 40 characters, showing ``findAll``'s
    matches."""
    rng = random.Random(seed)
    out: list[str] = []
    while len(out) < count:
        size, parts = rng.randint(2000, 9000), []
        while sum(map(len, parts)) < size:
            parts.append(_pattern(rng))
        pattern = ("|" if rng.random() < 0.8 else "").join(parts)
        subject = "".join(rng.choice(_SUBJECT) for _ in range(rng.randint(0, 40)))
        try:
            emit(pattern, subject)
        except Re2Unsupported:
            continue
        out.append(_expression(pattern, subject))
    return out


def record() -> None:
    """Writes ``LONG``: the kso DRA variant's answers (``PYTHONPATH=. python -c 'import
    tests.test_dra_cel_re2_linear as t; t.record()'``, with ``KSO_DRA`` set)."""
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        answers = [[e, variant_answer(e, Path(tmp) / "s.yaml")] for e in long_expressions(28, 60)]
    LONG.write_text(json.dumps({"note": "The kso DRA variant's answers (k8s.io/kubernetes v1.35.4) to "
                                "long_expressions(28, 60) of tests/test_dra_cel_re2_linear.py", "answers": answers},
                               ensure_ascii=False, indent=1) + "\n")


def test_long_patterns_give_the_variant_answer():
    """60 random patterns of 2,000 to 9,000 characters (answered UNKNOWN before: over the old
    2,000-character cap) give the kso DRA variant's ``findAll`` matches."""
    data = json.loads(LONG.read_text())
    expressions = [e for e, _ in data["answers"]]
    assert expressions == long_expressions(28, 60)
    for expression, answer in data["answers"]:
        assert answer.startswith(RUNTIME), expression
        got = dra_cel.evaluate(expression, "d", {}, {})
        assert got == dra_cel.CelError(answer[len(RUNTIME):]), expression
    assert sum(answer != RUNTIME + "no such key: #" for _, answer in data["answers"]) == 46   # some match


@pytest.mark.slow
@pytest.mark.skipif(not VARIANT.exists(), reason="the kso DRA variant is not built here")
def test_long_answers_are_the_variant_answers(tmp_path):
    for expression, answer in json.loads(LONG.read_text())["answers"]:
        assert variant_answer(expression, tmp_path / "s.yaml") == answer, expression
