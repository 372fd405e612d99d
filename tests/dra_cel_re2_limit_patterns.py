"""Go patterns at ``regexp/syntax``'s limits, for ``tests/test_dra_cel_re2_limits.py``.

Families (``patterns(seed)``, deterministic): groups nested around an atom (captures, named,
non-capturing, flag groups, alternations and repetitions per level) and alternations whose
common-prefix factoring nests the tree, each at the depths around where Go's height check
(1,000) starts refusing; random bodies (literal strings that factor, classes, ``\\pL``, folded
letters, stars, small counted repetitions) repeated up to 1,000 times around where Go's size
check (3,355,443) starts refusing; long literals after a prefix that starts Go's size tracking
early (Go's cached size of a growing literal stays at one rune: such a pattern is accepted,
the same without the prefix refused); big classes pushed again by each enclosing group, up to
where Go's rune count (33,554,432) refuses; a limit passed before or after a syntax error
(which one Go reports); and random patterns of moderate size. A boundary is located with
symreach's own decision (``boundary``) and the patterns on both sides of it are kept, so the
recorded answers (the kso DRA variant's) test exactly where the limit falls.
"""

from __future__ import annotations

import random
from typing import Callable

from symreach.frontends.dra_cel_re2 import Re2Error, emit

__all__ = ["boundary", "patterns", "refusal"]

_ATOMS = ["a", "a*", "[ab]", "\\pL", "ab", "a|b", "(?:a|b)", "x{2}", "", "(?i)k", "[^a]", ".", "\\d+", "a{3,5}?"]
_OPENS = ["(", "(?:", "(?i:", "(?P<g>", "(?s:", "((?:", "(?:(", "(a|", "(?:a|", "(a*", "(?:ab|ac|"]
_CLASSES = ["[ab]", "[^a]", "\\pL", "\\p{Greek}", "\\PN", "(?i:k)", "[[:alpha:]]", "\\w", ".", "[a-f0-9]", "(?i:[k-q])",
            "\\p{Cn}", "\\pC"]


def refusal(pattern: str) -> str | None:
    """symreach's decision: Go's error text for the pattern, or None where Go accepts it."""
    try:
        emit(pattern, "")
    except Re2Error as err:
        return err.message
    return None


def boundary(make: Callable[[int], str], low: int, high: int) -> int:
    """The least n in [low, high] that ``make(n)`` is refused for by a limit (high + 1 if none),
    by bisection (refusal taken as monotone in n)."""
    def refused(n: int) -> bool:
        got = refusal(make(n))
        return got is not None and ("too large" in got or "too deeply" in got)
    lo, hi = low, high + 1
    while lo < hi:
        mid = (lo + hi) // 2
        if refused(mid):
            hi = mid
        else:
            lo = mid + 1
    return lo


def _around(make: Callable[[int], str], low: int, high: int) -> list[str]:
    n = boundary(make, low, high)
    return [make(k) for k in (n - 1, n, n + 1) if low <= k <= high]


def _nested(rng: random.Random) -> list[str]:
    """Groups nested around an atom, at the depths around Go's height limit."""
    out = []
    for atom in _ATOMS:
        opens = rng.sample(_OPENS, 3)
        for opener in opens:
            tail = rng.choice(["", "", "*", "{2}", "b", "|b", "+?"])
            out += _around(lambda n, o=opener, a=atom, t=tail: o * n + a + (")" + t) * n, 1, 3000)
    for opener in ["(?:", "(?i:", "(?:(?:"]:   # no height of their own: Go accepts any depth
        out.append(opener * 1500 + "a" + ")" * (1500 * opener.count("(")))
    return out


def _prefix_chain(rng: random.Random, n: int) -> str:
    """An alternation of n branches, each the one before and one more letter: factoring nests a
    concatenation and an alternation per branch."""
    letters = "".join(rng.choice("ab") for _ in range(n))
    return "|".join(letters[:k] + "c" for k in range(1, n + 1))


def _factored(rng: random.Random) -> list[str]:
    out = []
    for _ in range(6):
        seed = rng.random()
        wrap = rng.choice(["(", "(?:", "(x"])
        depth = rng.randint(300, 450)   # the chain's boundary then within CEL's 100,000 code points
        out += _around(lambda n, s=seed, w=wrap, d=depth: w * d + "(?:" + _prefix_chain(random.Random(s), n) + ")"
                       + ")" * d, 1, 400)
    return out


def _body(rng: random.Random, size: int) -> str:
    """A random alternation or concatenation of about ``size`` characters."""
    parts: list[str] = []
    while sum(map(len, parts)) < size:
        kind = rng.random()
        if kind < 0.5:
            part = "".join(rng.choice("aab") for _ in range(rng.randint(1, 12)))
        elif kind < 0.75:
            part = rng.choice(_CLASSES)
        elif kind < 0.9:
            part = rng.choice(["a", "[ab]", "(?:ab)", "(b)"]) + rng.choice(["*", "+", "?", "{2}", "{0,3}", "{2,}"])
        else:
            part = "(?:" + "|".join("".join(rng.choice("ab") for _ in range(rng.randint(0, 4)))
                                    for _ in range(rng.randint(2, 5))) + ")"
        parts.append(part)
    return ("|" if rng.random() < 0.6 else "").join(parts)


def _sized(rng: random.Random) -> list[str]:
    """Random bodies repeated around where Go's size check refuses."""
    out = []
    for _ in range(40):
        body = _body(rng, rng.randint(200, 6000))
        opener = rng.choice(["(?:", "(", "(?i:"])
        inner = rng.choice([1, 1, 2, 4])
        if inner > 1:
            body = "(?:" + body + "){" + str(inner) + "}"
        counted = 3 if "{2" in body or "{0,3}" in body else 1   # Go's product of nested counts: at most 1,000
        out += _around(lambda n, b=body, o=opener: o + b + "){" + str(n) + "}", 1, 1000 // (inner * counted))
    return out


_TRACKING = "a{1000}b{1000}c{1000}"   # Go's size tracking starts at the third (product past its budget)


def _stale(rng: random.Random) -> list[str]:
    """A literal growing after Go's size tracking has started: Go keeps its first cached size, so
    a pattern is accepted after ``_TRACKING`` and the same refused alone; both, at the lengths
    around either boundary."""
    out = []
    for shape in ["(?:y{2}{lit}){500}", "(?:y*{lit})*{lit}", "(y+{lit}){999}", "(?:[ab]{lit}){1000}"]:
        lengths: set[int] = set()
        for prefix in (_TRACKING, ""):
            n = boundary(lambda k, p=prefix, s=shape: p + s.replace("{lit}", "x" * k), 1, 12000)
            lengths |= {k for k in (n - 1, n, n + 1) if 1 <= k <= 12000}
        out += [prefix + shape.replace("{lit}", "x" * k) for k in sorted(lengths) for prefix in (_TRACKING, "")]
    return out


def _runes(rng: random.Random) -> list[str]:
    """Big classes pushed again by each group around them, up to Go's rune count."""
    out = []
    for cls in ["\\pC", "\\pL", "[^\\x{1}\\x{3}\\x{5}\\x{7}]", "(?i)\\pL"]:
        opener = rng.choice(["(?:", "(?s:"])
        out += _around(lambda n, c=cls, o=opener: (o * n + c + ")" * n) + "|" + c * 40, 1, 10000)
    return out


def _precedence(rng: random.Random) -> list[str]:
    """A limit passed before or after a syntax error: Go reports whichever its parse meets first."""
    deep = "(" * 1001 + "a" + ")" * 1001
    large = "(?:" + "x" * 3400 + "){1000}"
    out = []
    for refused in (deep, large, _TRACKING + large):
        for error in [")", "[", "(", "*", "a**", "(?P<", "\\", "x{1001}", "[z-a]", "(?<n", "\\8"]:
            out += [refused + error, error + refused, refused[:len(refused) // 2] + error + refused[len(refused) // 2:]]
    return out


def _random(rng: random.Random) -> list[str]:
    """Moderate random patterns, repeated a random number of times (mostly accepted)."""
    out = []
    for _ in range(60):
        body = _body(rng, rng.randint(10, 400))
        out.append("(?:" + body + "){" + str(rng.randint(1, 1000)) + "}" + _body(rng, rng.randint(0, 50)))
    return out


def patterns(seed: int) -> list[str]:
    rng = random.Random(seed)
    out: list[str] = []
    for family in (_nested, _factored, _sized, _stale, _runes, _precedence, _random):
        out += family(rng)
    return list(dict.fromkeys(out))
