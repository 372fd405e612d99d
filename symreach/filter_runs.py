"""Whether some run of kube-scheduler's parallel Filter phase misses every erring node (v1.35).

``findNodesThatPassFilters`` filters the node list from ``nextStartNodeIndex`` (any index) with
``parallelize.Until``: chunks of ``chunkSizeFor(N, 16)`` consecutive pieces, handed out in order to
W = min(16, chunks) workers, each running its chunk's pieces in order and checking the stop channel
before each. The k + 1st feasible node counted cancels (and is dropped); an Error from a node filtered
before the cancel aborts the cycle. The node tree lists zones round robin, zones and each zone's nodes
in any order (``model.zone_key``); a PreFilterResult's names are one zone.

The filtered nodes of a run at any moment: chunks 0..L picked, each filtered a prefix of itself; an
unfinished chunk keeps its worker, so at most W are unfinished, and when W are, L is one of them (no
worker was free to pick a later chunk). In the rotated list the unfiltered nodes are therefore a tail
(from anywhere to the end) and the suffixes of at most W - 1 chunks wholly before the tail's first
chunk ("holes"); every such shape is a run (one worker finishes the whole chunks in order, each
hole's worker stalls). Kinds are placed freely within a zone, so a run misses every erring node and counts
k + 1 feasible ones iff the unfiltered counts u_z cover the erring nodes (u_z >= erring) and lose at
most ``spare`` feasible nodes (sum of u_z - erring - others, where positive). Node n is among the
first k iff, n taken as its zone's first filtered node in chunk j, the W - 1 other workers hold
chunks before j (the unfinished ones among them) and every other chunk before j, with j's nodes
before n, is filtered first: there the zones' nodes beyond their others are feasible and must be
fewer than k, and one more feasible node must be filtered after n. ``tests/filter_runs_brute.py``
simulates every list, start and interleaving; the tests compare the two on every small split, with
fewer workers than chunks. The search is exact; ``exact_domain`` says where its size stays within a bound
(the search budget's ``filter-runs`` guard, ``symreach.search_budget``: the front end checks it at load and
records a value other than the default in the instance, which the solve's ``runs_past`` then reads).

Three cheap stages answer first, each exact where it answers, so also past the bound: ``segments_cover``,
a necessary condition from the round robin alone (the unfiltered nodes are at most W stretches, and a
stretch holds about as many nodes of each zone: False where even that loses too many feasible nodes),
``windows_cover``, the same sharpened by where the stretches end (zones of sizes at most one apart), and
``narrowed_runs_past``, the same search on a few lists keeping a few states a chunk (a subset of its
states: True where it finds a run). At the scale benchmark's answer edges they decide most
counts up to 5,000 nodes in 2 to 8 zones in under a second (benchmarks/results/filter_runs_scale.md);
between them (a run barred only by where the chunks' ends fall) the exact search is left, within the
bound. The bound is on that search's worst case from the zones' sizes, unchanged: polynomial in the
nodes for a fixed number of zones, but its count vectors grow as a power of the zones' sizes, and
it tries every zone order (and, for unequal sizes, every start)."""

from __future__ import annotations

from functools import lru_cache
from itertools import permutations
from math import isqrt
from typing import Iterator, Optional, Sequence

from symreach import search_budget

PARALLELISM = 16   # kube-scheduler's default parallelism: Until's workers
MAX_WORK = search_budget.BY_NAME[search_budget.FILTER_RUNS].default   # the default bound on ``_work``; beyond, None


def chunk_size(nodes: int, parallelism: int = PARALLELISM) -> int:
    """v1.35 ``parallelize.chunkSizeFor``: min(floor(sqrt n), n / parallelism + 1), at least 1."""
    return max(1, min(isqrt(nodes), nodes // parallelism + 1))


def exact_domain(nodes: int, zones: int, k: int, parallelism: int = PARALLELISM,
                 sizes: Optional[Sequence[int]] = None, bound: int = MAX_WORK) -> bool:
    """Whether ``runs_past`` under ``bound`` answers (not None) for ``nodes`` nodes in ``zones`` zones
    with the scheduler's chunks, whatever their kinds: the search is small enough."""
    return work(nodes, zones, k, parallelism, sizes) <= bound


def work(nodes: int, zones: int, k: int, parallelism: int = PARALLELISM, sizes: Optional[Sequence[int]] = None) -> int:
    """The bound ``runs_past`` needs to answer on every count of ``nodes`` nodes in ``zones`` zones.
    ``sizes``: the zones' node counts, if known (the distinct lists, ``_lists``; else every order and start)."""
    lists = _lists(tuple(sizes)) if sizes is not None else _factorial(zones) * nodes
    return _work(nodes, zones, k, chunk_size(nodes, parallelism), lists)


ROTATIONS_UP_TO = 5   # zones up to which ``_lists`` compares the orders' lists (5! = 120 of them)


@lru_cache(maxsize=256)
def _lists(sizes: tuple[int, ...]) -> int:
    """The distinct node lists (zone order and start) of zones of these sizes, each zone told apart,
    at most: a list from start s is the round robin of another order where it is a rotation of it
    (always with equal sizes), and ``_search`` takes each rotation class once (``_cycles``). Past
    ``ROTATIONS_UP_TO`` zones: every order, and every start (one per order where sizes are equal)."""
    if len(sizes) > ROTATIONS_UP_TO:
        return _factorial(len(sizes)) * (1 if len(set(sizes)) <= 1 else sum(sizes))
    words = ["".join(map(chr, _round_robin(order, sizes))) for order in permutations(range(len(sizes)))]
    return sum(period for _, period in _cycles(words))


def _cycles(words: Sequence[str]) -> list[tuple[int, int]]:
    """(index, period) of each word that is no rotation of an earlier one: its first ``period``
    rotations are every rotation of it, and of the later words rotating it."""
    kept: list[str] = []
    out = []
    for index, word in enumerate(words):
        if any(len(word) == len(w) and word in w + w for w in kept):
            continue
        kept.append(word)
        out.append((index, (word + word).find(word, 1)))
    return out


def _work(nodes: int, zones: int, k: int, chunk: int, lists: int) -> int:
    """A bound on the search's steps for any counts (``_steps`` of the worst): the zones' free slots
    sum to at most nodes - k - 1 when it is asked at all, so their count vectors are at most share ** zones."""
    share = max(0, nodes - k - 1) // max(zones, 1) + 2
    return share ** zones * lists * (nodes + chunk)


def _steps(zones: "Counts", chunk: int, workers: int) -> int:
    """The search's steps for these counts: count vectors (a zone's unfiltered count before the tail
    is at most its erring + others, and at most the holes' W - 1 chunks) x distinct lists x chunk
    suffixes. At most ``_work``."""
    nodes = sum(map(sum, zones))
    holes = (min(workers, -(-nodes // chunk)) - 1) * chunk
    vectors = 1
    for _, o, r in zones:
        vectors *= min(r + o, holes) + 1
    return vectors * _lists(tuple(sum(z) for z in zones)) * (nodes + chunk)


def _factorial(n: int) -> int:
    out = 1
    for i in range(2, n + 1):
        out *= i
    return out


Counts = tuple[tuple[int, int, int], ...]


def runs_past(zones: Counts, own: Optional[int], k: int, chunk: int, workers: int,
              bound: int = MAX_WORK) -> Optional[bool]:
    """Whether some run misses every erring node and finds a feasible node of zone ``own`` (None:
    any node): zones' (feasible, others, erring) counts. None when the search is beyond ``bound``."""
    return _runs_past(tuple(sorted(zones)) if own is None else _own_first(zones, own), own is not None,
                      k, chunk, workers, bound)


def segments_cover(zones: Counts, spare: int, segments: int) -> bool:
    """A necessary condition for a run to miss every erring node: the unfiltered nodes form at most
    ``segments`` (W = min(16, chunks)) contiguous stretches of the cyclic node list (the tail and
    W - 1 chunk suffixes; one suffix a chunk where chunks <= W). In the zones' round robin, between
    two nodes of zone z of rounds below the size of zone y, consecutive among them, lies a node of y
    (both are listed in each of those rounds, in one order; wrapping, from y's last round to round 0,
    too), so a stretch holds at most one node of z more than of y besides z's nodes of rounds y has
    none in (max(0, size z - size y) in the whole list). So y keeps unfiltered at least z's erring
    nodes less ``segments`` and that difference, for every z; where that passes y's erring and other
    nodes, feasible ones are lost (``spare`` is what may be)."""
    sizes = [sum(z) for z in zones]
    lost = 0
    for y, (_, o, r) in enumerate(zones):
        floor = max(rz - segments - max(0, sizes[z] - sizes[y]) for z, (_, _, rz) in enumerate(zones))
        lost += max(0, floor - o - r)
    return lost <= spare


def windows_cover(zones: Counts, spare: int, chunk: int, segments: int) -> bool:
    """``segments_cover`` sharpened by where the stretches end, for zones of sizes at most one apart.
    With equal sizes the list is m-periodic: a stretch ending at position b holds each zone q or q + 1
    times, q + 1 for the zones of its last (length mod m) places, so zone z, at distance d (1..m)
    before b, has one node more than at most m - d zones there. With sizes one apart, the last round
    lists only the a larger zones: put back the m - a missing places (phantoms, one of each smaller
    zone) and the list is m-periodic again; a stretch, read from its first to its last node, then
    holds one node of y fewer where y's phantom lies inside it (m - a in all). The stretches end at
    chunk ends (the tail at the list's end; with more chunks than W the others at W - 1 chunk ends
    before it, else one a chunk), so over every place of z and of the short round (``_room``), z
    exceeds the others by at most that room in all; each other zone y keeps unfiltered at least z's
    erring nodes less what it is exceeded by (at most ``segments`` and the size difference,
    ``segments_cover``), the room in all."""
    sizes = [sum(z) for z in zones]
    room = _room(tuple(sorted(sizes)), chunk, segments)
    if room is None:
        return True
    for z, (_, _, r) in enumerate(zones):
        excess = [max(0, r - o - ry) for _, o, ry in zones]
        caps = [segments + max(0, sizes[z] - size) for size in sizes]
        if sum(excess) - min(room, sum(min(c, e) for c, e in zip(caps, excess))) > spare:
            return False
    return True


@lru_cache(maxsize=256)
def _room(sizes: tuple[int, ...], chunk: int, segments: int) -> Optional[int]:
    """``windows_cover``'s most one zone can exceed the others by over the stretches (None: sizes
    more than one apart). The short round (its a places) starts anywhere (D); a chunk end past it
    sits m - a places later in the periodic list than before it (where the round wraps the list's
    end, every end outside it alike), one inside it gains at most m - 1; z at any place."""
    m, nodes = len(sizes), sum(sizes)
    if sizes[0] < sizes[-1] - 1:
        return None
    a = sizes.count(sizes[-1]) if sizes[0] < sizes[-1] else 0
    chunks = -(-nodes // chunk)
    ends = [(c + 1) * chunk for c in range(chunks - 1)]
    starts = {0} if not a else {0, nodes - a} | {(b - x) % nodes for b in ends + [nodes] for x in (a, 0)}
    best = 0
    for start in starts:
        def shift(b: int) -> Optional[int]:
            last = b - 1
            if a and (last - start) % nodes < a:
                return None   # inside the short round
            return m - a if a and start + a <= nodes and last >= start + a else 0
        shifts = [shift(b) for b in ends]
        tail = shift(nodes)
        for place in range(m):
            def gain(b: int, moved: Optional[int]) -> int:
                return m - 1 if moved is None else m - ((b + moved - 1 - place) % m + 1)
            gains = sorted((gain(b, moved) for b, moved in zip(ends, shifts)), reverse=True)
            kept = gains if chunks <= segments else gains[:segments - 1]
            best = max(best, gain(nodes, tail) + sum(kept))
    return best + (m - a if a else 0)


def _own_first(zones: Counts, own: int) -> Counts:
    return (zones[own],) + tuple(sorted(z for i, z in enumerate(zones) if i != own))


@lru_cache(maxsize=4096)
def _runs_past(zones: Counts, has_own: bool, k: int, chunk: int, workers: int, bound: int) -> Optional[bool]:
    nodes = sum(map(sum, zones))
    if has_own and not zones[0][0]:
        return False
    if not any(r for _, _, r in zones):
        return any(f for f, _, _ in zones)   # nothing errs: every run finds its nodes
    spare = sum(f for f, _, _ in zones) - k - 1   # feasible nodes that may stay unfiltered
    if spare < 0:
        return False   # never k + 1 feasible nodes: every node is filtered, an erring one too
    held = min(workers, -(-nodes // chunk))
    if not segments_cover(zones, spare, held) or not windows_cover(zones, spare, chunk, held):
        return False   # exact at any size: no unfiltered set of so few segments covers the erring nodes
    steps = _steps(zones, chunk, workers)
    if steps > QUICK_FROM and QUICK_LISTS * QUICK_STATES * (nodes + chunk) <= bound \
            and _quick(zones, has_own, k, chunk, held, spare):
        return True   # a run found by the narrowed search is a run (its steps as ``_steps`` counts them)
    if steps > bound:
        return None
    if has_own:
        if not _search(zones, False, k, chunk, held, spare, "any"):
            return False   # no run misses the erring nodes at all
        if chunk <= k and _search(zones, True, k, chunk, held, spare, "any"):
            return True   # n in one of the first W chunks: held back, fewer than k nodes before it
    return _search(zones, has_own, k, chunk, held, spare, "own" if has_own else "any")


QUICK_FROM = 10 ** 8   # the exact search's steps (``_steps``) past which the narrowed one goes first
QUICK_LISTS = 12   # the lists the narrowed search tries (evenly over every order's starts)
QUICK_STATES = 160   # the states a chunk of the narrowed search keeps (least loss with the best tail)


def narrowed_runs_past(zones: Counts, own: Optional[int], k: int, chunk: int, workers: int,
                       lists: int = QUICK_LISTS, states: int = QUICK_STATES) -> bool:
    """``runs_past``'s True on ``lists`` lists keeping ``states`` states a chunk: sound, not complete."""
    ordered = tuple(sorted(zones)) if own is None else _own_first(zones, own)
    nodes = sum(map(sum, zones))
    spare = sum(f for f, _, _ in zones) - k - 1
    return spare >= 0 and (own is None or zones[own][0] > 0) and \
        _quick(ordered, own is not None, k, chunk, min(workers, -(-nodes // chunk)), spare, lists, states)


def _quick(zones: Counts, has_own: bool, k: int, chunk: int, held: int, spare: int,
           lists: int = QUICK_LISTS, states: int = QUICK_STATES) -> bool:
    """The exact search's own questions on a few lists, keeping a few states a chunk (``_States.keep``):
    every state it keeps is one of the exact search's, so a run it finds is one (sound, not complete)."""
    narrow = (lists, states)
    if not has_own:
        return _search(zones, False, k, chunk, held, spare, "any", narrow)
    return chunk <= k and _search(zones, True, k, chunk, held, spare, "any", narrow) \
        or _search(zones, True, k, chunk, held, spare, "own", narrow)


def _search(zones: Counts, has_own: bool, k: int, chunk: int, held: int, spare: int, kind: str,
            narrow: tuple[int, int] = (0, 0)) -> bool:
    """Some zone order and start whose list a ``_Scan`` fits (``kind``: its method), each list once;
    ``narrow``: (lists, states) of ``_quick``, lists taken evenly over the orders' starts."""
    sizes = [sum(z) for z in zones]
    orders = _orders(zones, has_own)
    listed = [_round_robin(order, sizes) for order in orders]
    classes: dict[tuple, int] = {}
    words = ["".join(chr(classes.setdefault(_class(zones, has_own, z), len(classes))) for z in lst) for lst in listed]
    pairs = [(index, start) for index, period in _cycles(words) for start in range(period)]
    lists, states = narrow
    if lists and len(pairs) > lists:
        pairs = [pairs[i * len(pairs) // lists] for i in range(lists)]
    for index, start in pairs:
        rotated = listed[index][start:] + listed[index][:start]
        scan = _Scan(rotated, zones, k, chunk, held, spare, states)
        if scan.any_fits(has_own) if kind == "any" else scan.own_fits():
            return True
    return False


def _class(zones: Counts, has_own: bool, z: int) -> tuple:
    return (zones[z], has_own and z == 0)


def _orders(zones: Counts, has_own: bool) -> list[tuple[int, ...]]:
    """Zone orders up to zones that are interchangeable (same counts, neither n's)."""
    out, seen = [], set()
    for order in permutations(range(len(zones))):
        key = tuple(_class(zones, has_own, z) for z in order)
        if key not in seen:
            seen.add(key)
            out.append(order)
    return out


def _round_robin(order: Sequence[int], sizes: Sequence[int]) -> tuple[int, ...]:
    depth = max(sizes)
    return tuple(z for j in range(depth) for z in order if j < sizes[z])


Vec = tuple[int, ...]


class _States:
    """A dynamic program's states: key -> the (holes taken, loss) no other of the key beats in both
    (fewer holes leave more choices, less loss too: a state beaten in both reaches nothing more)."""

    def __init__(self) -> None:
        self.least: dict[tuple, list[tuple[int, int]]] = {}

    def add(self, key: tuple, holes: int, loss: int) -> None:
        front = self.least.get(key)
        if front is None:
            self.least[key] = [(holes, loss)]
            return
        for h, lost in front:
            if h <= holes and lost <= loss:
                return
        front[:] = [(h, lost) for h, lost in front if h < holes or lost < loss]
        front.append((holes, loss))

    def keep(self, limit: int, score) -> "_States":
        """The ``limit`` keys of least ``score(key, front)`` (all where ``limit`` is 0): a subset."""
        if limit and len(self.least) > limit:
            kept = sorted(self.least.items(), key=lambda item: score(*item))[:limit]
            self.least = dict(kept)
        return self

    def items(self) -> Iterator[tuple[tuple, int, int]]:
        for key, front in self.least.items():
            for holes, loss in front:
                yield key, holes, loss


class _Scan:
    """The runs over one rotated list (zone indices; n's zone is 0): dynamic programs over its
    chunks, each filtered whole, left with a hole (a suffix, at most W - 1 of them) or where the
    tail starts. States: the unfiltered counts so far, capped at the zone's erring + others (above,
    a feasible node lost, counted), the holes taken -> the least loss. A hole or tail is shrunk to
    start at an erring zone's node: a shorter one covers the same erring nodes and loses no more."""

    def __init__(self, rotated: tuple[int, ...], zones: Counts, k: int, chunk: int, held: int, spare: int,
                 narrow: int = 0):
        self.rotated, self.zones, self.k, self.chunk, self.held, self.spare = rotated, zones, k, chunk, held, spare
        self.narrow = narrow   # the states kept a chunk (0: all)
        self.count = int(-(-len(rotated) // chunk) > held)   # holes and held chunks bind only past W chunks
        self.width = len(zones)
        self.caps = [r + o for _, o, r in zones]
        self.need = [r for _, _, r in zones]
        suffix = [[0] * self.width]
        for z in reversed(rotated):
            row = list(suffix[-1])
            row[z] += 1
            suffix.append(row)
        self.suffix = [tuple(row) for row in reversed(suffix)]   # counts of rotated[p:]
        positions: list[list[int]] = [[] for _ in zones]
        for p, z in enumerate(rotated):
            positions[z].append(p)
        # latest[z][x]: the last start p whose suffix holds x nodes of zone z
        self.latest = [[len(rotated)] + pos[::-1] for pos in positions]

    def outlook(self, u: Vec, front: list[tuple[int, int]]) -> tuple[int, int]:
        """How promising a state is for the narrowed search: its least loss with the latest tail
        covering the erring nodes (wherever it starts), then its fewest holes."""
        loss, holes = min(lost for _, lost in front), min(h for h, _ in front)
        p = self.tail_from(u)
        return (self.add(u, loss, self.suffix[p])[1] if p >= 0 else len(self.rotated) + loss, holes)

    def seg(self, lo: int, hi: int) -> Vec:
        return tuple(a - b for a, b in zip(self.suffix[lo], self.suffix[hi]))

    def add(self, u: Vec, loss: int, counts: Vec) -> tuple[Vec, int]:
        out = []
        for z, c in enumerate(counts):
            v = u[z] + c
            if v > self.caps[z]:
                loss += v - self.caps[z]
                v = self.caps[z]
            out.append(v)
        return tuple(out), loss

    def tail_from(self, u: Vec) -> int:
        """The latest tail start that covers every zone's erring nodes besides u (-1: none)."""
        p = len(self.rotated)
        for z, need in enumerate(self.need):
            x = need - u[z]
            if x > 0:
                if x >= len(self.latest[z]):
                    return -1
                p = min(p, self.latest[z][x])
        return p

    def holes(self, u: Vec, loss: int, lo: int, hi: int, upto: int = -1) -> list[tuple[int, Vec, int]]:
        """The holes of chunk [lo, hi) worth taking: (start, counts, loss) for each start at an erring
        zone's node (or ``upto``, and none after it when given) losing at most spare, grown one node
        at a time from the chunk's end."""
        out: list[tuple[int, Vec, int]] = []
        v = list(u)
        for p in range(hi - 1, lo - 1, -1):
            z = self.rotated[p]
            if v[z] < self.caps[z]:
                v[z] += 1
            else:
                loss += 1
                if loss > self.spare:
                    break
            if (self.need[z] or p == upto) and (upto < 0 or p <= upto):
                out.append((p, tuple(v), loss))
        return out

    def tail_loss(self, u: Vec, loss: int, lo: int, hi: int) -> int:
        """The start of the best tail beginning in [lo, hi) (-1: none) if it loses at most spare."""
        p = self.tail_from(u)
        if p < lo:
            return -1
        p = min(p, hi - 1)
        return p if self.add(u, loss, self.suffix[p])[1] <= self.spare else -1

    def any_fits(self, own_early: bool) -> bool:
        """Some run misses every erring node and counts k + 1 feasible nodes; ``own_early``: with a
        node of zone 0 filtered in one of the first W chunks."""
        n, width = len(self.rotated), self.width
        states = _States()   # (u, own seen) -> (holes, loss)
        states.add(((0,) * width, not own_early), 0, 0)
        for index, lo in enumerate(range(0, n, self.chunk)):
            hi = min(lo + self.chunk, n)
            early = own_early and index < self.held
            for (u, seen), holes, loss in states.items():
                p = self.tail_loss(u, loss, lo, hi)
                if p >= 0 and (seen or early and 0 in self.rotated[lo:p]):
                    return True
            nxt = _States()
            for (u, seen), holes, loss in states.items():
                nxt.add((u, seen or early and 0 in self.rotated[lo:hi]), holes, loss)
                if holes < self.held - 1:
                    for p, v, lost in self.holes(u, loss, lo, hi):
                        nxt.add((v, seen or early and 0 in self.rotated[lo:p]), holes + self.count, lost)
            states = nxt.keep(self.narrow, lambda key, front: (not key[1],) + self.outlook(key[0], front))
        return any(seen and self.tail_from(u) >= n for (u, seen), _, _ in states.items())

    def own_fits(self) -> bool:
        """Some run misses every erring node and counts node n (zone 0's first filtered node) among
        the first k. Before n's chunk j (phase 0) a chunk is filtered first (its counts added to the
        early nodes a, capped at the zone's others, the rest feasible: ``excess`` < k), held whole
        or held with a hole (at most W - 1 held); zone 0's nodes there are in holes. After n
        (phase 1) as ``any_fits``. b: each zone's nodes filtered after n, capped at min(feasible, 2)."""
        n, width, k = len(self.rotated), self.width, self.k
        others = [o for _, o, _ in self.zones]
        late_cap = [min(f, 2) for f, _, _ in self.zones]

        def late(b: Vec, counts: Vec) -> Vec:
            return tuple(min(late_cap[z], b[z] + counts[z]) for z in range(width))

        def early(a: Vec, excess: int, counts: Vec) -> tuple[Vec, int]:
            out = []
            for z, c in enumerate(counts):
                v = a[z] + c
                if v > others[z]:
                    excess += v - others[z]
                    v = others[z]
                out.append(v)
            return tuple(out), excess

        def tail_fits(u: Vec, loss: int, b: Vec, lo: int, hi: int, since: int) -> bool:
            p = self.tail_loss(u, loss, lo, hi)
            return p >= 0 and sum(late(b, self.seg(since, p))) >= 2

        zero = (0,) * width
        before = _States()   # (u, a, b, held, excess) -> (holes, loss)
        before.add((zero, zero, zero, 0, 0), 0, 0)
        after = _States()   # (u, b) -> (holes, loss)
        for lo in range(0, n, self.chunk):
            hi = min(lo + self.chunk, n)
            mine = [p for p in range(lo, hi) if self.rotated[p] == 0]
            first = mine[0] if mine else hi
            nxt_after = _States()
            for (u, b), holes, loss in after.items():
                if tail_fits(u, loss, b, lo, hi, lo):
                    return True
                nxt_after.add((u, late(b, self.seg(lo, hi))), holes, loss)
                if holes < self.held - 1:
                    for p, v, lost in self.holes(u, loss, lo, hi):
                        nxt_after.add((v, late(b, self.seg(lo, p))), holes + self.count, lost)
            nxt_before = _States()
            for (u, a, b, held, excess), holes, loss in before.items():
                if mine and early(a, excess, self.seg(lo, first))[1] < k:   # n is this chunk's `first`
                    if tail_fits(u, loss, b, first + 1, hi, first):
                        return True
                    nxt_after.add((u, late(b, self.seg(first, hi))), holes, loss)
                    if holes < self.held - 1:
                        for p, v, lost in self.holes(u, loss, first + 1, hi):
                            nxt_after.add((v, late(b, self.seg(first, p))), holes + self.count, lost)
                if not mine:
                    a2, e2 = early(a, excess, self.seg(lo, hi))
                    if e2 < k:
                        nxt_before.add((u, a2, b, held, e2), holes, loss)
                    if held < self.held - 1:
                        nxt_before.add((u, a, late(b, self.seg(lo, hi)), held + self.count, excess), holes, loss)
                if held < self.held - 1 and holes < self.held - 1:
                    for p, v, lost in self.holes(u, loss, lo, hi, first if mine else -1):
                        nxt_before.add((v, a, late(b, self.seg(lo, p)), held + self.count, excess), holes + self.count, lost)
            before = nxt_before.keep(self.narrow, lambda key, front: (key[4],) + self.outlook(key[0], front))
            after = nxt_after.keep(self.narrow, lambda key, front: self.outlook(key[0], front))
        return any(self.tail_from(u) >= n and sum(b) >= 2 for (u, b), _, _ in after.items())
