"""``go_sort`` against Go's own ``sort.Sort`` (``tests/data/go_sort_cases.txt``, written by
``tools/go_sort_cases`` with go1.25): the same permutation on every input, ties included."""

from __future__ import annotations


import pytest

from symreach.frontends import go_sort as go_sort_module
from symreach.frontends.go_sort import go_sort
from tests.go_tool import GO, REPO, generated

CASES = REPO / "tests" / "data" / "go_sort_cases.txt"
DIGITS = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"


def _numbers(text: str) -> list[int]:
    return [DIGITS.index(text[k]) * 62 + DIGITS.index(text[k + 1]) for k in range(0, len(text), 2)]


def _cases() -> list[tuple[list[int], list[int]]]:
    out = []
    for line in CASES.read_text().splitlines()[1:]:
        n, keys, perm = line.split(" ")
        out.append((_numbers(keys), _numbers(perm)))
        assert len(out[-1][0]) == len(out[-1][1]) == int(n)
    return out


def test_go_sort_leaves_every_case_as_go_does(monkeypatch):
    used: dict[str, int] = {}
    for name in ("heap_sort", "break_patterns", "partition_equal", "reverse", "partial_insertion_sort"):
        method = getattr(go_sort_module._Sorter, name)
        monkeypatch.setattr(go_sort_module._Sorter, name,
                            lambda self, *args, _m=method, _n=name: used.__setitem__(_n, used.get(_n, 0) + 1) or _m(self, *args))
    cases = _cases()
    for keys, perm in cases:
        assert [pos for _, pos in go_sort(list(zip(keys, range(len(keys)))), lambda x, y: x[0] < y[0])] == perm
    assert len(cases) == 538
    long_ties = [keys for keys, _ in cases if len(keys) > 12 and len(set(keys)) < len(keys)]
    unstable = [perm for keys, perm in cases if sorted(range(len(keys)), key=keys.__getitem__) != perm]
    assert len(long_ties) == 391 and len(unstable) == 293 and max(len(k) for k, _ in cases) == 200
    assert all(used.get(name, 0) > 0 for name in ("heap_sort", "break_patterns", "partition_equal", "reverse",
                                                  "partial_insertion_sort")), used


def test_short_and_stable_up_to_twelve():
    assert go_sort([], lambda x, y: x < y) == []
    pairs = [(2, "a"), (1, "b"), (2, "c"), (1, "d")]
    assert go_sort(pairs, lambda x, y: x[0] < y[0]) == [(1, "b"), (1, "d"), (2, "a"), (2, "c")]


@pytest.mark.slow
@pytest.mark.skipif(not GO.exists(), reason="no Go toolchain here")
def test_the_cases_file_is_what_the_generator_writes(tmp_path):
    """``go_sort_cases.txt`` is generated: rerunning the generator with go1.25 gives it byte for byte."""
    assert generated("tools/go_sort_cases/main.go", tmp_path) == CASES.read_text()
