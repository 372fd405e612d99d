"""A hash-consed boolean circuit with pseudo-Boolean comparison nodes.

This is the backend-neutral language of guards and targets. Compilers build
circuits; each backend lowers them its own way (BDD: memoised ``ite``
recursion, see ``symreach.solvers.bdd``; SAT: Tseitin for ``AND``/``OR``/``NOT``
and a PB or cardinality encoding for ``PB`` nodes).

Node ids
    Every node is an ``int`` id into one ``Circuit``. ``Circuit.FALSE == 0`` and
    ``Circuit.TRUE == 1`` are the constants. Equal nodes get equal ids (hash
    consing), so ids can be used as dictionary keys and memo keys.

Node kinds (``Circuit.node(i)`` returns a ``Node``):

``CONST``  ``children == ()``; value ``bool(i)`` (only ids 0 and 1).
``VAR``    a variable; ``name`` is any hashable given to ``Circuit.var``
           (e.g. ``("present", t, n)``); ``children == ()``.
``NOT``    ``children == (a,)``; ``a`` is never a ``NOT`` or a constant.
``AND``    ``children`` sorted, >= 2 distinct ids, no constant, no ``AND`` child
           (flattened), never both ``x`` and ``NOT x``.
``OR``     as ``AND``.
``PB``     ``sum(weights[i] * value(children[i])) <= bound``. ``children`` are
           ``VAR`` ids only, sorted and distinct; ``weights`` are non-zero
           Python ints of either sign (negative weights express differences of
           sums, e.g. spread skews ``count(A) - count(B) <= k``); ``bound`` is
           an int. The node is never trivially true or false (folded to a
           constant) and has >= 2 children (one-term comparisons fold to a
           literal). Binary counters enter PB nodes as their bits with weights
           ``w * 2**j`` (see ``counter_terms``).

Constructors simplify (constant folding, flattening, complement detection),
so a compiled guard over pruned variables often collapses to a constant.
Nothing here knows about Kubernetes.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Hashable, Iterable, Mapping, Optional, Sequence

CONST, VAR, NOT, AND, OR, PB = "const", "var", "not", "and", "or", "pb"

Term = tuple[int, int]  # (weight, var node id)


@dataclass(frozen=True)
class Node:
    kind: str
    children: tuple[int, ...] = ()
    weights: tuple[int, ...] = ()
    bound: int = 0
    name: Optional[Hashable] = None


class Circuit:
    """A hash-consed DAG of boolean nodes; see the module docstring."""

    FALSE = 0
    TRUE = 1

    def __init__(self) -> None:
        self._nodes: list[Node] = [Node(CONST), Node(CONST)]
        self._index: dict[Node, int] = {}
        self._var_by_name: dict[Hashable, int] = {}

    # ---- access -----------------------------------------------------------
    def __len__(self) -> int:
        return len(self._nodes)

    def node(self, i: int) -> Node:
        return self._nodes[i]

    def kind(self, i: int) -> str:
        return self._nodes[i].kind

    def variables(self) -> list[int]:
        """Variable node ids in creation order."""
        return list(self._var_by_name.values())

    def var_name(self, i: int) -> Hashable:
        node = self._nodes[i]
        if node.kind != VAR:
            raise ValueError(f"node {i} is not a variable")
        return node.name

    # ---- constructors -----------------------------------------------------
    def _make(self, node: Node) -> int:
        i = self._index.get(node)
        if i is None:
            i = len(self._nodes)
            self._nodes.append(node)
            self._index[node] = i
        return i

    def const(self, value: bool) -> int:
        return self.TRUE if value else self.FALSE

    def var(self, name: Hashable) -> int:
        """The variable named ``name`` (created on first use)."""
        i = self._var_by_name.get(name)
        if i is None:
            i = self._make(Node(VAR, name=name))
            self._var_by_name[name] = i
        return i

    def not_(self, a: int) -> int:
        if a <= 1:
            return 1 - a
        node = self._nodes[a]
        if node.kind == NOT:
            return node.children[0]
        return self._make(Node(NOT, (a,)))

    def _nary(self, kind: str, args: Iterable[int]) -> int:
        absorbing, neutral = (self.FALSE, self.TRUE) if kind == AND else (self.TRUE, self.FALSE)
        seen: set[int] = set()
        for a in args:
            if a == absorbing:
                return absorbing
            if a == neutral:
                continue
            node = self._nodes[a]
            if node.kind == kind:
                seen.update(node.children)
            else:
                seen.add(a)
        for a in seen:
            node = self._nodes[a]
            if node.kind == NOT and node.children[0] in seen:
                return absorbing
        if not seen:
            return neutral
        if len(seen) == 1:
            return next(iter(seen))
        return self._make(Node(kind, tuple(sorted(seen))))

    def and_(self, *args: int) -> int:
        return self._nary(AND, args)

    def or_(self, *args: int) -> int:
        return self._nary(OR, args)

    def all_(self, args: Iterable[int]) -> int:
        return self._nary(AND, args)

    def any_(self, args: Iterable[int]) -> int:
        return self._nary(OR, args)

    def iff(self, a: int, b: int) -> int:
        return self.or_(self.and_(a, b), self.and_(self.not_(a), self.not_(b)))

    def pb_le(self, terms: Iterable[Term], bound: int) -> int:
        """``sum(w * x for w, x in terms) <= bound``; ``x`` must be variable ids."""
        acc: dict[int, int] = {}
        for w, x in terms:
            if self._nodes[x].kind != VAR:
                raise ValueError(f"PB term over non-variable node {x}")
            acc[x] = acc.get(x, 0) + int(w)
        items = sorted((x, w) for x, w in acc.items() if w != 0)
        lo = sum(w for _, w in items if w < 0)
        hi = sum(w for _, w in items if w > 0)
        if hi <= bound:
            return self.TRUE
        if lo > bound:
            return self.FALSE
        if len(items) == 1:
            x, w = items[0]
            # not trivially true/false: w > 0 means x must be 0, w < 0 means x must be 1
            return self.not_(x) if w > 0 else x
        if lo == 0 and all(w > bound for _, w in items):
            # every positive term alone already exceeds the bound: all must be 0
            return self.all_(self.not_(x) for x, _ in items)
        return self._make(Node(PB, tuple(x for x, _ in items), tuple(w for _, w in items), int(bound)))

    def pb_ge(self, terms: Iterable[Term], bound: int) -> int:
        """``sum(w * x) >= bound``."""
        return self.pb_le(((-w, x) for w, x in terms), -bound)

    # ---- reading ----------------------------------------------------------
    def support(self, root: int) -> frozenset[int]:
        """Variable ids a node depends on (syntactically)."""
        out: set[int] = set()
        for i in self.topological([root]):
            if self._nodes[i].kind == VAR:
                out.add(i)
        return frozenset(out)

    def topological(self, roots: Sequence[int]) -> list[int]:
        """All nodes below ``roots``, children before parents (iterative DFS)."""
        order: list[int] = []
        done: set[int] = set()
        stack: list[tuple[int, bool]] = [(r, False) for r in roots]
        while stack:
            i, expanded = stack.pop()
            if i in done:
                continue
            if expanded:
                done.add(i)
                order.append(i)
                continue
            stack.append((i, True))
            for c in self._nodes[i].children:
                if c not in done:
                    stack.append((c, False))
        return order

    def fresh_below(self, root: int, done: Callable[[int], bool]) -> list[int]:
        """Nodes below ``root`` for which ``done`` is false, children first; the walk
        stops at done nodes (memoised passes over shared cones, where
        ``topological`` would walk the whole cone on every call)."""
        order: list[int] = []
        seen: set[int] = set()
        stack: list[tuple[int, bool]] = [(root, False)]
        while stack:
            i, expanded = stack.pop()
            if expanded:
                order.append(i)
            elif i not in seen and not done(i):
                seen.add(i)
                stack.append((i, True))
                stack.extend((ch, False) for ch in self._nodes[i].children)
        return order

    def evaluate(self, root: int, value: Callable[[int], bool] | Mapping[int, bool]) -> bool:
        """Evaluate under an assignment of variable ids (a mapping or a function)."""
        get = value.__getitem__ if isinstance(value, Mapping) else value
        memo: dict[int, bool] = {}
        for i in self.topological([root]):
            node = self._nodes[i]
            k = node.kind
            if k == CONST:
                v = bool(i)
            elif k == VAR:
                v = bool(get(i))
            elif k == NOT:
                v = not memo[node.children[0]]
            elif k == AND:
                v = all(memo[c] for c in node.children)
            elif k == OR:
                v = any(memo[c] for c in node.children)
            else:
                v = sum(w for w, c in zip(node.weights, node.children) if memo[c]) <= node.bound
            memo[i] = v
        return memo[root]

    def size(self, roots: Sequence[int]) -> int:
        return len(self.topological(roots))

    def to_str(self, root: int) -> str:
        """A readable rendering (for debugging and error messages)."""
        node = self._nodes[root]
        k = node.kind
        if k == CONST:
            return "true" if root else "false"
        if k == VAR:
            return "/".join(map(str, node.name)) if isinstance(node.name, tuple) else str(node.name)
        if k == NOT:
            return "!" + self.to_str(node.children[0])
        if k in (AND, OR):
            sep = " & " if k == AND else " | "
            return "(" + sep.join(self.to_str(c) for c in node.children) + ")"
        terms = " + ".join(f"{w}*{self.to_str(c)}" for w, c in zip(node.weights, node.children))
        return f"[{terms} <= {node.bound}]"


def counter_terms(bits: Sequence[int], weight: int = 1) -> list[Term]:
    """PB terms for ``weight * value(counter)``; ``bits`` least significant first."""
    return [(weight << j, b) for j, b in enumerate(bits)]
