"""The order Go's ``sort.Sort`` leaves a slice in, for a given ``Less``.

``sort.Sort`` is not stable, yet it is deterministic: the same input order and ``Less`` give the same
result. The scheduler relies on it where ties matter (VolumeBinding's ``findMatchingVolumes`` sorts a
pod's claims by size, ``byPVCSize``), so symreach must reproduce the exact permutation, not any sorted
one. This follows Go 1.25's ``src/sort/sort.go`` and ``src/sort/zsortinterface.go`` (pattern-defeating
quicksort, Go 1.19 onwards): insertion sort up to 12 elements, pivots by median of three or Tukey's
ninther with a sortedness hint, a bounded partial insertion sort on likely sorted input, a partition
of elements equal to the previous pivot, pattern breaking by an xorshift seeded with the length after
an unbalanced partition, and heap sort once ``bits.Len(n)`` unbalanced partitions have been made.
``tools/go_sort_cases`` and ``tests/test_go_sort.py`` check it against Go's own output.
"""

from __future__ import annotations

from typing import Callable, Sequence, TypeVar

T = TypeVar("T")

_INSERTION = 12          # slices this short are insertion sorted
_NINTHER = 50            # from this length the pivot is Tukey's ninther
_HINT_SWAPS = 12         # swaps in choosing the pivot that mean "reversed"
_SHIFT_STEPS = 5         # out-of-order pairs partial insertion sort fixes at most
_SHIFT_FROM = 50         # partial insertion sort only shifts on slices this long
_MASK = (1 << 64) - 1    # Go's uint64 (and uint on 64-bit targets)

INCREASING, DECREASING, UNKNOWN = "increasing", "decreasing", "unknown"


def go_sort(items: Sequence[T], less: Callable[[T, T], bool]) -> list[T]:
    """``items`` in the order ``sort.Sort`` leaves them with ``Less(i, j) = less(items[i], items[j])``."""
    data = list(items)
    if len(data) > 1:
        _Sorter(data, less).pdqsort(0, len(data), len(data).bit_length())
    return data


class _Sorter:
    """One ``sort.Sort`` run on ``data``: every step compares and swaps as Go's does, in the same order."""

    def __init__(self, data: list, less: Callable) -> None:
        self.data = data
        self.less_items = less

    def less(self, i: int, j: int) -> bool:
        return bool(self.less_items(self.data[i], self.data[j]))

    def swap(self, i: int, j: int) -> None:
        self.data[i], self.data[j] = self.data[j], self.data[i]

    def insertion_sort(self, a: int, b: int) -> None:
        for i in range(a + 1, b):
            j = i
            while j > a and self.less(j, j - 1):
                self.swap(j, j - 1)
                j -= 1

    def sift_down(self, root: int, hi: int, first: int) -> None:
        while True:
            child = 2 * root + 1
            if child >= hi:
                return
            if child + 1 < hi and self.less(first + child, first + child + 1):
                child += 1
            if not self.less(first + root, first + child):
                return
            self.swap(first + root, first + child)
            root = child

    def heap_sort(self, a: int, b: int) -> None:
        size = b - a
        for i in range((size - 1) // 2, -1, -1):
            self.sift_down(i, size, a)
        for i in range(size - 1, -1, -1):
            self.swap(a, a + i)
            self.sift_down(0, i, a)

    def pdqsort(self, a: int, b: int, limit: int) -> None:
        """Sort ``data[a:b]``; ``limit`` unbalanced partitions are allowed before heap sort takes over.
        The larger side is sorted by the loop, the smaller by recursion, as in Go."""
        balanced, partitioned = True, True
        while True:
            length = b - a
            if length <= _INSERTION:
                self.insertion_sort(a, b)
                return
            if limit == 0:
                self.heap_sort(a, b)
                return
            if not balanced:
                self.break_patterns(a, b)
                limit -= 1
            pivot, hint = self.choose_pivot(a, b)
            if hint == DECREASING:
                self.reverse(a, b)
                pivot = (b - 1) - (pivot - a)   # the same element, now counted from the end
                hint = INCREASING
            if balanced and partitioned and hint == INCREASING and self.partial_insertion_sort(a, b):
                return
            if a > 0 and not self.less(a - 1, pivot):
                # data[a-1] (an earlier pivot) bounds data[a:b] from below and equals this pivot:
                # put the elements equal to it first and go on with the greater ones only.
                a = self.partition_equal(a, b, pivot)
                continue
            mid, partitioned = self.partition(a, b, pivot)
            left, right = mid - a, b - mid
            if left < right:
                balanced = left >= length // 8
                self.pdqsort(a, mid, limit)
                a = mid + 1
            else:
                balanced = right >= length // 8
                self.pdqsort(mid + 1, b, limit)
                b = mid

    def partition(self, a: int, b: int, pivot: int) -> tuple[int, bool]:
        """Move the pivot to ``a``, then elements less than it left and the rest right; the pivot ends
        between them. Also says whether no element had to move (the slice was already partitioned)."""
        self.swap(a, pivot)
        i, j = a + 1, b - 1
        i, j = self.scan(a, i, j)
        if i > j:
            self.swap(j, a)
            return j, True
        self.swap(i, j)
        i, j = i + 1, j - 1
        while True:
            i, j = self.scan(a, i, j)
            if i > j:
                break
            self.swap(i, j)
            i, j = i + 1, j - 1
        self.swap(j, a)
        return j, False

    def scan(self, a: int, i: int, j: int) -> tuple[int, int]:
        """Advance i past elements less than ``data[a]``, then j back past those not less."""
        while i <= j and self.less(i, a):
            i += 1
        while i <= j and not self.less(j, a):
            j -= 1
        return i, j

    def partition_equal(self, a: int, b: int, pivot: int) -> int:
        """Split ``data[a:b]`` (nothing in it less than the pivot) into elements equal to the pivot, then
        greater ones; returns where the greater ones start."""
        self.swap(a, pivot)
        i, j = a + 1, b - 1
        while True:
            while i <= j and not self.less(a, i):
                i += 1
            while i <= j and self.less(a, j):
                j -= 1
            if i > j:
                return i
            self.swap(i, j)
            i, j = i + 1, j - 1

    def partial_insertion_sort(self, a: int, b: int) -> bool:
        """Fix up to ``_SHIFT_STEPS`` adjacent out-of-order pairs (only on long slices); True when
        ``data[a:b]`` is sorted at the end."""
        i = a + 1
        for _ in range(_SHIFT_STEPS):
            while i < b and not self.less(i, i - 1):
                i += 1
            if i == b:
                return True
            if b - a < _SHIFT_FROM:
                return False
            self.swap(i, i - 1)
            if i - a >= 2:
                # Go shifts the smaller element left down to index 1 (not a + 1); data[a-1] stops it.
                k = i - 1
                while k >= 1 and self.less(k, k - 1):
                    self.swap(k, k - 1)
                    k -= 1
            if b - i >= 2:
                k = i + 1
                while k < b and self.less(k, k - 1):
                    self.swap(k, k - 1)
                    k += 1
        return False

    def break_patterns(self, a: int, b: int) -> None:
        """Swap the three middle elements with pseudo-random ones (xorshift seeded with the length)."""
        length = b - a
        if length < 8:
            return
        state = length
        modulus = 1 << length.bit_length()
        middle = a + (length // 4) * 2
        for idx in range(middle - 1, middle + 2):
            state ^= (state << 13) & _MASK
            state ^= state >> 7
            state ^= (state << 17) & _MASK
            other = state & (modulus - 1)
            if other >= length:
                other -= length
            self.swap(idx, a + other)

    def choose_pivot(self, a: int, b: int) -> tuple[int, str]:
        """The pivot's index (median of three, or of three medians from 50 elements on) and a hint
        from how many swaps ordering the samples took: none, increasing; all, decreasing."""
        length = b - a
        quarter = length // 4
        i, j, k = a + quarter, a + quarter * 2, a + quarter * 3
        swaps = [0]
        if length >= 8:
            if length >= _NINTHER:
                i = self.median(i - 1, i, i + 1, swaps)
                j = self.median(j - 1, j, j + 1, swaps)
                k = self.median(k - 1, k, k + 1, swaps)
            j = self.median(i, j, k, swaps)
        if swaps[0] == 0:
            return j, INCREASING
        return j, DECREASING if swaps[0] == _HINT_SWAPS else UNKNOWN

    def order2(self, x: int, y: int, swaps: list[int]) -> tuple[int, int]:
        if self.less(y, x):
            swaps[0] += 1
            return y, x
        return x, y

    def median(self, x: int, y: int, z: int, swaps: list[int]) -> int:
        x, y = self.order2(x, y, swaps)
        y, z = self.order2(y, z, swaps)
        x, y = self.order2(x, y, swaps)
        return y

    def reverse(self, a: int, b: int) -> None:
        i, j = a, b - 1
        while i < j:
            self.swap(i, j)
            i, j = i + 1, j - 1
