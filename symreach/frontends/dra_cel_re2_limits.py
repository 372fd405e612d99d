"""Whether Go's ``regexp/syntax`` limits cannot refuse a pattern (``dra_cel_re2`` then needs no model of them).

Go's parser refuses a tree over ``maxHeight`` (1,000) high (``expression nests too deeply``), over
``maxSize`` (3,355,443) instructions by its ``calcSize`` or with over ``maxRunes`` (33,554,432) runes
in its character classes (``expression too large``). These bound Go's numbers from above on
``dra_cel_re2``'s own tree: Go only merges, flattens and factors it (a group counted as a capture,
an alternation unfactored for the size), except that factoring an alternation's common prefixes
nests a concatenation and an alternation per branching of its branches' prefixes, at most one
per branch beyond the first and per leading piece of its longest branch. Where a bound exceeds a
limit, whether Go refuses the pattern is not decided here (the caller answers UNKNOWN).
"""

from __future__ import annotations

import functools
import re
from typing import Any

from symreach.frontends import go_unicode

__all__ = ["may_exceed", "may_exceed_text"]

MAX_HEIGHT = 1000
MAX_SIZE = (128 << 20) // 40
MAX_RUNES = (128 << 20) // 4
_CHAR_RUNES = 16   # any other class item per pattern character (\w, [[:alpha:]], ., a range)


def may_exceed(tree: Any, pattern: str) -> bool:
    """Whether one of Go's limits may refuse ``pattern``, whose tree is ``tree``."""
    return (_height(tree) > MAX_HEIGHT or _size(tree) > MAX_SIZE
            or _runes(pattern) > MAX_RUNES)


def may_exceed_text(parsed: str) -> bool:
    """The same from the text Go parsed before a syntax error (whose tree is not built): each
    group a capture, alternation and concatenation, each ``|`` a factoring (``_text_height``),
    each character at most three instructions, repeated as its repetition says (``_text_size``)."""
    return _text_height(parsed) > MAX_HEIGHT or _text_size(parsed) > MAX_SIZE or _runes(parsed) > MAX_RUNES


def _text_height(parsed: str) -> int:
    depth = deepest = 0
    for c in parsed:
        depth += c == "("
        deepest = max(deepest, depth)
        depth -= c == ")" and depth > 0
    return 4 * (deepest + 1) + 2 * parsed.count("|") + 2


_COUNT = re.compile(r"\{(\d+)(?:,(\d*))?\}")


def _text_size(parsed: str) -> int:
    """Items per open group; a repetition multiplies the item before it (a bracket, an escape, a
    group or one character), counted ones by their largest count, ``*+?`` adding two."""
    frames: list[list[int]] = [[]]
    i = 0
    while i < len(parsed):
        c = parsed[i]
        m = _COUNT.match(parsed, i) if c == "{" else None
        if m and frames[-1]:
            high = max(int(m.group(1)), int(m.group(2) or 0), 1)
            frames[-1][-1] = frames[-1][-1] * high + high
            i = m.end()
            continue
        if c in "*+?" and frames[-1]:
            frames[-1][-1] += 2
        elif c == "(":
            frames.append([])
        elif c == ")" and len(frames) > 1:
            inner = frames.pop()
            frames[-1].append(sum(inner) + 2)
        elif c == "[":   # to the closing bracket: three per character
            end = parsed.find("]", i + 2)
            end = len(parsed) - 1 if end < 0 else end
            frames[-1].append(3 * (end - i + 1))
            i = end
        else:
            frames[-1].append(3 * (2 if c == "\\" else 1))
            i += c == "\\"
        i += 1
    return sum(sum(f) for f in frames) + 2 * len(frames)


def _height(node: Any) -> int:
    below = max((_height(s) for s in node.subs), default=0)
    if node.kind == "alt":
        longest = max(_pieces(s) for s in node.subs)
        return 1 + below + 2 * min(len(node.subs) - 1, longest)
    return 1 + below


def _pieces(node: Any) -> int:
    return len(node.subs) if node.kind == "cat" else 1


def _size(node: Any) -> int:
    """Go's ``calcSize``."""
    subs = [_size(s) for s in node.subs]
    if node.kind == "cat":
        size = sum(subs)
    elif node.kind == "alt":
        size = sum(subs) + len(subs) - 1
    elif node.kind == "group":
        size = 2 + subs[0]
    elif node.kind == "rep":
        low, high, sub = node.low, node.high, subs[0]
        if high == -1:
            size = 2 + sub if low == 0 else 1 + low * sub
        else:
            size = high * sub + high - low
    else:
        size = 1
    return max(1, size)


def _runes(pattern: str) -> int:
    """Runes of Go's classes: per ``\\p`` class twice its table's ranges (a stride's runes each a
    range; plus one negated; four times folded under ``(?i``), per other character 16."""
    fold = 4 if "(?i" in pattern or "(?" in pattern and "i" in pattern else 1
    runes = _CHAR_RUNES * len(pattern)
    for m in _TABLE.finditer(pattern):
        runes += 2 * (_ranges(m.group(1) or m.group(2)) + 1) * fold
    return runes


_TABLE = re.compile(r"\\[pP](?:\{([^}]*)\}|(.))")


@functools.lru_cache(maxsize=None)
def _ranges(name: str) -> int:
    table = go_unicode.category(name) or go_unicode.script(name) if name != "Any" else None
    return _LARGEST if table is None else _count(table)


def _count(table: go_unicode.Table) -> int:
    return sum(1 if stride == 1 else (hi - lo) // stride + 1 for lo, hi, stride in table.ranges) + sum(
        _count(part) for part in table.parts)


_LARGEST = 3673   # the most ranges of any of Go's tables (C); Any is one
