"""IC3's delta-encoded frames with literal indexes for subsumption.

``level(i)`` holds the cubes blocked at level ``i`` and not known beyond it
(IC3ref's layout); a cube is blocked in ``F_j`` when some lemma at a level
``>= j`` is a subset of it. Scanning every lemma for every obligation and
every new lemma was a measurable share of IC3's Python time on deep
witnesses (binary tree h = 6: ~1,000 lemmas, ~2,000 obligations), so two
indexes answer the subset questions from a few candidates:

- ``_watch[x]``: the lemmas whose *smallest* literal (by variable) is ``x``;
  a lemma ``d`` is a subset of ``cube`` only if ``d``'s smallest literal is
  in ``cube``, so the candidates are the watch lists of ``cube``'s literals;
- ``_occurs[x]``: every lemma containing ``x``; the supersets of ``cube``
  (lemmas a new lemma subsumes) all contain ``cube``'s first literal.

Each cube lives at one level at most (``add`` moves it).
"""

from __future__ import annotations

from typing import Iterator

Cube = tuple[int, ...]  # sorted by variable, signed SAT ids


class Frames:
    """Lemmas per level, levels 1..top (level 0, the initial state, holds none)."""

    def __init__(self) -> None:
        self._levels: list[set[Cube]] = [set(), set()]
        self._level_of: dict[Cube, int] = {}
        self._watch: dict[int, set[Cube]] = {}
        self._occurs: dict[int, set[Cube]] = {}

    @property
    def top(self) -> int:
        return len(self._levels) - 1

    def extend(self) -> None:
        """Open level ``top + 1`` (empty)."""
        self._levels.append(set())

    def level(self, i: int) -> set[Cube]:
        """The cubes at level ``i`` (a live view; do not mutate)."""
        return self._levels[i]

    def __len__(self) -> int:
        return len(self._level_of)

    def items(self) -> Iterator[tuple[int, Cube]]:
        """(level, cube) for every lemma, lowest level first."""
        for i, cubes in enumerate(self._levels):
            for c in cubes:
                yield i, c

    def add(self, cube: Cube, level: int) -> None:
        """Put ``cube`` at ``level``; a cube stored lower moves up (one stored higher
        stays: it already holds at ``level``)."""
        if not cube:
            raise ValueError("an empty lemma would block every state")
        old = self._level_of.get(cube)
        if old is not None:
            if old >= level:
                return
            self._levels[old].discard(cube)
        else:
            self._watch.setdefault(cube[0], set()).add(cube)
            for x in cube:
                self._occurs.setdefault(x, set()).add(cube)
        self._levels[level].add(cube)
        self._level_of[cube] = level

    def remove(self, cube: Cube) -> None:
        level = self._level_of.pop(cube)
        self._levels[level].discard(cube)
        self._watch[cube[0]].discard(cube)
        for x in cube:
            self._occurs[x].discard(cube)

    def blocked(self, cube: Cube, level: int) -> bool:
        """Is ``cube`` excluded from F_level by a stored lemma (a subset of it at a
        level >= ``level``)?"""
        cs = set(cube)
        n = len(cube)
        level_of = self._level_of
        for x in cube:
            for d in self._watch.get(x, ()):
                if level_of[d] >= level and len(d) <= n and cs.issuperset(d):
                    return True
        return False

    def supersets(self, cube: Cube, up_to: int) -> list[Cube]:
        """Stored lemmas at levels <= ``up_to`` that contain ``cube`` (those it subsumes)."""
        cs = set(cube)
        n = len(cube)
        level_of = self._level_of
        return [d for d in self._occurs.get(cube[0], ()) if level_of[d] <= up_to and len(d) >= n and cs.issubset(d)]
