"""Go's Unicode tables (package ``unicode``, Unicode 15.0.0 in go1.25), as the scheduler's CEL reads them.

Python's ``unicodedata`` follows an older Unicode (14 in Python 3.11) and has no scripts, so what
RE2's ``\\p{..}`` classes and case folding, ``strconv.IsPrint`` and ``strings.TrimSpace`` decide is
read from ``go_unicode.txt`` instead: generated from Go's own tables by
``tools/go_unicode_tables/main.go`` (ranges, not code points), loaded on first use.
"""

from __future__ import annotations

import bisect
import functools
from dataclasses import dataclass, field
from importlib import resources

__all__ = ["Table", "aliases", "category", "category_ranges", "fold_table", "is_print", "is_space", "orbit", "script",
           "script_names", "version"]


@dataclass
class Table:
    """A set of runes: Go's ranges ``(lo, hi, stride)``, or the union of other tables, or the
    complement of a union (``Cn``)."""

    ranges: list[tuple[int, int, int]] = field(default_factory=list)
    parts: list["Table"] = field(default_factory=list)
    complement: bool = False

    def __post_init__(self) -> None:
        self.ranges.sort()
        self._los = [lo for lo, _, _ in self.ranges]

    def __contains__(self, c: str) -> bool:
        code = ord(c)
        i = bisect.bisect_right(self._los, code) - 1
        hit = i >= 0 and code <= self.ranges[i][1] and (code - self.ranges[i][0]) % self.ranges[i][2] == 0
        hit = hit or any(c in part for part in self.parts)
        return hit != self.complement


@dataclass
class _Tables:
    version: str = ""
    categories: dict[str, Table] = field(default_factory=dict)
    scripts: dict[str, Table] = field(default_factory=dict)
    folds: dict[str, Table] = field(default_factory=dict)
    aliases: dict[str, str] = field(default_factory=dict)
    space: Table = field(default_factory=Table)
    orbits: dict[int, tuple[int, ...]] = field(default_factory=dict)
    held: dict[str, list[tuple[int, int, int]]] = field(default_factory=dict)


def _ranges(words: list[str]) -> list[tuple[int, int, int]]:
    out = []
    for word in words:
        span, _, stride = word.partition(":")
        lo, _, hi = span.partition("-")
        out.append((int(lo, 16), int(hi or lo, 16), int(stride or "1", 16)))
    return out


def _orbits(words: list[str]) -> dict[int, tuple[int, ...]]:
    out: dict[int, tuple[int, ...]] = {}
    for word in words:
        if "," in word:
            members = [tuple(int(x, 16) for x in word.split(","))]
        else:
            run, _, delta = word.partition("+")
            members = [(x, x + int(delta, 16)) for lo, hi, stride in _ranges([run]) for x in range(lo, hi + 1, stride)]
        for orbit_ in members:
            for x in orbit_:
                out[x] = orbit_
    return out


@functools.lru_cache(maxsize=1)
def _tables() -> _Tables:
    text = resources.files("symreach.frontends").joinpath("go_unicode.txt").read_text(encoding="ascii")
    t = _Tables()
    unions: list[tuple[str, list[str], bool]] = []
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        kind, *words = line.split()
        if kind == "version":
            t.version = words[0]
        elif kind == "category":
            t.categories[words[0]] = Table(_ranges(words[1:]))
        elif kind in ("union", "complement"):
            unions.append((words[0], words[1:], kind == "complement"))
        elif kind == "fold":
            t.folds[words[0]] = Table(_ranges(words[1:]))
        elif kind == "script":
            t.scripts[words[0]] = Table(_ranges(words[1:]))
        elif kind == "alias":
            t.aliases[words[0]] = words[1]
        elif kind == "space":
            t.space = Table(_ranges(words))
        elif kind == "table":
            t.held[words[0]] = _ranges(words[1:])
        elif kind == "orbits":
            t.orbits = _orbits(words)
    leaves = list(t.categories.values())
    for name, parts, complement in unions:
        t.categories[name] = Table(parts=leaves if complement else [t.categories[p] for p in parts],
                                   complement=complement)
    return t


def version() -> str:
    return _tables().version


def category(name: str) -> Table | None:
    """``unicode.Categories[name]`` (``Cn`` and ``LC`` included)."""
    return _tables().categories.get(name)


def category_ranges(name: str) -> list[tuple[int, int, int]] | None:
    """``unicode.Categories[name]``'s ranges as Go holds them, in order (a union's own table, not
    its parts': ``regexp/syntax`` appends a table range by range, so the split matters)."""
    t = _tables()
    held = t.held.get(name)
    return held if held is not None else t.categories[name].ranges if name in t.categories else None


def script(name: str) -> Table | None:
    """``unicode.Scripts[name]``."""
    return _tables().scripts.get(name)


def script_names() -> list[str]:
    return sorted(_tables().scripts)


def fold_table(name: str) -> Table | None:
    """``unicode.FoldCategory[name]`` or ``unicode.FoldScript[name]``: the runes outside the table
    whose simple folding meets it (None: Go does not fold that class)."""
    return _tables().folds.get(name)


def aliases() -> dict[str, str]:
    """``unicode.CategoryAliases`` (``Letter`` -> ``L``)."""
    return _tables().aliases


def orbit(c: str) -> tuple[str, ...]:
    """``c``'s simple case folding orbit (the cycle ``unicode.SimpleFold`` walks), ascending."""
    members = _tables().orbits.get(ord(c))
    return tuple(chr(x) for x in members) if members else (c,)


_PRINT = ("L", "M", "N", "P", "S")


def is_print(c: str) -> bool:
    """``strconv.IsPrint``: letters, marks, numbers, punctuation, symbols and the ASCII space."""
    return c == " " or any(c in category(name) for name in _PRINT)   # type: ignore[operator]


def is_space(c: str) -> bool:
    """``unicode.IsSpace`` (``strings.TrimSpace``): White_Space."""
    return c in _tables().space
