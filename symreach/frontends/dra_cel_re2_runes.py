"""Go's character classes as ``regexp/syntax`` builds them: flat lists ``[lo, hi, lo, hi, ...]``.

Go's limit on runes (``maxRunes``) counts the length of these lists as each class is pushed, and
its alternation factoring compares and merges them, so ``dra_cel_re2_limits`` needs them as Go
has them, unsorted and unmerged where Go leaves them so: a range appended merges only into one
of the last two ranges (``appendRange``), folding walks ``unicode.SimpleFold``'s orbit rune by
rune, a table is appended range by range as Go holds it (a category's own ranges, not its
parts'), and only ``cleanClass`` sorts and merges.
"""

from __future__ import annotations

import functools

from symreach.frontends import go_unicode

__all__ = ["MAX_RUNE", "append_class", "append_folded_range", "append_group", "append_literal", "append_range",
           "clean", "min_fold", "negate", "simple_fold", "unicode_class", "unicode_name"]

MAX_RUNE = 0x10FFFF
_MIN_FOLD, _MAX_FOLD = 0x41, 0x1E943   # the runes folding involves (Go's minFold, maxFold)
Ranges = list[tuple[int, int, int]]   # (lo, hi, stride), as Go's unicode.RangeTable
_ANY: Ranges = [(0, 0xFFFF, 1), (0x10000, MAX_RUNE, 1)]   # Go's anyTable: one R16, one R32 range
_ASCII: Ranges = [(0, 0x7F, 1)]
_ASCII_FOLD: Ranges = [(0, 0x7F, 1), (0x17F, 0x17F, 1), (0x212A, 0x212A, 1)]


@functools.lru_cache(maxsize=None)
def _orbit(c: int) -> tuple[int, ...]:
    return tuple(ord(x) for x in go_unicode.orbit(chr(c)))


def simple_fold(c: int) -> int:
    """``unicode.SimpleFold``: the next rune of ``c``'s orbit upwards, wrapping to its least."""
    orbit = _orbit(c)
    return next((x for x in orbit if x > c), orbit[0])


def min_fold(c: int) -> int:
    """``minFoldRune``: the least rune of ``c``'s orbit (a folded literal holds that one)."""
    return min(_orbit(c)) if _MIN_FOLD <= c <= _MAX_FOLD else c


def append_range(r: list[int], lo: int, hi: int) -> list[int]:
    """``appendRange``: merged into the last range, else the one before it, if it touches; else appended."""
    n = len(r)
    for i in (2, 4):
        if n >= i and lo <= r[n - i + 1] + 1 and r[n - i] <= hi + 1:
            r[n - i] = min(r[n - i], lo)
            r[n - i + 1] = max(r[n - i + 1], hi)
            return r
    r += (lo, hi)
    return r


def append_folded_range(r: list[int], lo: int, hi: int) -> list[int]:
    """``appendFoldedRange``: the range, then each rune and its orbit, one by one."""
    if lo <= _MIN_FOLD and hi >= _MAX_FOLD or hi < _MIN_FOLD or lo > _MAX_FOLD:
        return append_range(r, lo, hi)
    if lo < _MIN_FOLD:
        r = append_range(r, lo, _MIN_FOLD - 1)
        lo = _MIN_FOLD
    if hi > _MAX_FOLD:
        r = append_range(r, _MAX_FOLD + 1, hi)
        hi = _MAX_FOLD
    c = lo
    while c <= hi:
        orbit = _orbit(c)
        if len(orbit) == 1 and r and r[-1] == c - 1:   # abuts the last range: each rune would extend it
            r[-1] = c
        else:
            r = append_range(r, c, c)
            f = simple_fold(c)
            while f != c:
                r = append_range(r, f, f)
                f = simple_fold(f)
        c += 1
    return r


def append_literal(r: list[int], c: int, fold: bool) -> list[int]:
    return append_folded_range(r, c, c) if fold else append_range(r, c, c)


def append_class(r: list[int], x: list[int]) -> list[int]:
    for i in range(0, len(x), 2):
        r = append_range(r, x[i], x[i + 1])
    return r


def _append_negated_class(r: list[int], x: list[int]) -> list[int]:
    """``appendNegatedClass`` of a clean ``x``."""
    next_lo = 0
    for i in range(0, len(x), 2):
        if next_lo <= x[i] - 1:
            r = append_range(r, next_lo, x[i] - 1)
        next_lo = x[i + 1] + 1
    return append_range(r, next_lo, MAX_RUNE) if next_lo <= MAX_RUNE else r


def _table_runs(table: Ranges) -> list[tuple[int, int]]:
    """The ranges ``appendTable`` appends: a stride-1 range whole, any other rune by rune."""
    out: list[tuple[int, int]] = []
    for lo, hi, stride in table:
        out += [(lo, hi)] if stride == 1 else [(c, c) for c in range(lo, hi + 1, stride)]
    return out


def _append_table(r: list[int], table: Ranges) -> list[int]:
    for lo, hi in _table_runs(table):
        r = append_range(r, lo, hi)
    return r


def _append_negated_table(r: list[int], table: Ranges) -> list[int]:
    next_lo = 0
    for lo, hi in _table_runs(table):
        if next_lo <= lo - 1:
            r = append_range(r, next_lo, lo - 1)
        next_lo = hi + 1
    return append_range(r, next_lo, MAX_RUNE) if next_lo <= MAX_RUNE else r


def clean(r: list[int]) -> list[int]:
    """``cleanClass``: sorted by low end (longer first), overlapping and abutting ranges merged
    (remembered: Go cleans a class again at each group around it)."""
    return list(_clean(tuple(r)))


@functools.lru_cache(maxsize=64)
def _clean(r: tuple[int, ...]) -> tuple[int, ...]:
    pairs = sorted(zip(r[0::2], r[1::2]), key=lambda p: (p[0], -p[1]))
    out: list[int] = []
    for lo, hi in pairs:
        if out and lo <= out[-1] + 1:
            out[-1] = max(out[-1], hi)
        else:
            out += (lo, hi)
    return tuple(out)


def negate(r: list[int]) -> list[int]:
    """``negateClass`` of a clean class."""
    return _append_negated_class([], r)


def append_group(r: list[int], group: list[int], negated: bool, fold: bool) -> list[int]:
    """``appendGroup``: a Perl (``\\d``) or POSIX (``[:alpha:]``) class, folded first under ``(?i)``."""
    if fold:
        folded: list[int] = []
        for i in range(0, len(group), 2):
            folded = append_folded_range(folded, group[i], group[i + 1])
        group = clean(folded)
    return _append_negated_class(r, group) if negated else append_class(r, group)


def unicode_name(name: str) -> str | None:
    """``unicodeTable``'s lookup of ``\\p{name}``: ``Any``, ``Ascii``, ``Assigned``, or the
    category (``LC``; an alias resolved) or script it names; None where Go knows no such table."""
    name = _canonical_name(name)
    if name in ("Any", "Ascii", "Assigned"):
        return name
    name = "LC" if name == "Lc" else name
    if go_unicode.category(name) is not None or go_unicode.script(name) is not None:
        return name
    return _aliases().get(name)


def _tables(name: str) -> tuple[Ranges, Ranges | None, bool]:
    """Go's table for a name ``unicode_name`` gave, its fold table, whether it is inverted."""
    special = {"Any": (_ANY, _ANY, False), "Ascii": (_ASCII, _ASCII_FOLD, False)}
    if name in special:
        return special[name]
    if name == "Assigned":
        cn = go_unicode.category_ranges("Cn")
        return cn, cn, True   # type: ignore[return-value]
    held = go_unicode.category_ranges(name)
    if held is None:
        held = go_unicode.script(name).ranges   # type: ignore[union-attr]
    fold = go_unicode.fold_table(name)
    return held, None if fold is None else fold.ranges, False


@functools.lru_cache(maxsize=1)
def _aliases() -> dict[str, str]:
    """``unicode.CategoryAliases`` by canonical name (Go's ``categoryAliases``)."""
    return {_canonical_name(alias): category for alias, category in go_unicode.aliases().items()}


def _canonical_name(name: str) -> str:
    """Go's ``canonicalName``: an ASCII capital, then ASCII lower case, without ``_ - `` and spaces."""
    kept = [c for c in name if c not in "_- "]
    return "".join((c.upper() if i == 0 else c.lower()) if c.isascii() else c for i, c in enumerate(kept))


def unicode_class(r: list[int], name: str, negated: bool, fold: bool) -> list[int]:
    """``parseUnicodeClass``'s appending of ``\\p{name}`` (``negated`` for ``\\P`` or ``^``) to ``r``;
    the caller has checked that Go knows the name."""
    resolved = unicode_name(name)
    assert resolved is not None, name
    table, fold_table, inverted = _tables(resolved)
    negated = negated != inverted
    if not fold or fold_table is None:
        return _append_negated_table(r, table) if negated else _append_table(r, table)
    both = clean(_append_table(_append_table([], table), fold_table))
    return _append_negated_class(r, both) if negated else append_class(r, both)
