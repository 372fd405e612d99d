"""DAG families for the pebbling reduction (paper Appendix C).

A ``Dag`` lists its vertices (strings), its edges (u, v) meaning "u is a
predecessor of v", and a target. Known black-pebbling prices (standard game,
no sliding, the new pebble counts toward the bound):

- ``pyramid(h)``: levels 0..h, level l has h+1-l vertices, (h+1)(h+2)/2 in
  all; vertex (l, i) has predecessors (l-1, i) and (l-1, i+1); target the apex.
  Price h+2 for h >= 1 (1 for h = 0).
- ``binary_tree(h)``: complete binary in-tree of height h (2^(h+1)-1
  vertices, leaves at depth h, edges child -> parent); target the root.
  Price h+2 for h >= 1 (1 for h = 0).
- ``path(n)``: v0 -> v1 -> ... -> v(n-1); target the last vertex. Price 2 for
  n >= 2.
- ``random_dag(n, p, seed)``: edges only from lower to higher index, each
  present with probability p; target the last vertex.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Dag:
    vertices: tuple[str, ...]
    edges: tuple[tuple[str, str], ...]
    target: str

    def to_json(self) -> dict[str, Any]:
        """The CLI's DAG format ``{vertices, edges: [[u, v], ...], target}``."""
        return {"vertices": list(self.vertices),
                "edges": [[u, v] for u, v in self.edges],
                "target": self.target}


def pyramid(h: int) -> Dag:
    if h < 0:
        raise ValueError("height must be >= 0")

    def name(level: int, i: int) -> str:
        return f"v{level}_{i}"

    vertices = [name(lv, i) for lv in range(h + 1) for i in range(h + 1 - lv)]
    edges = [(name(lv - 1, i + d), name(lv, i))
             for lv in range(1, h + 1) for i in range(h + 1 - lv) for d in (0, 1)]
    return Dag(tuple(vertices), tuple(edges), name(h, 0))


def binary_tree(h: int) -> Dag:
    """Heap numbering: root 1, children of i are 2i and 2i+1."""
    if h < 0:
        raise ValueError("height must be >= 0")
    count = 2 ** (h + 1) - 1
    vertices = [f"t{i}" for i in range(1, count + 1)]
    edges = [(f"t{c}", f"t{c // 2}") for c in range(2, count + 1)]
    return Dag(tuple(vertices), tuple(edges), "t1")


def path(n: int) -> Dag:
    if n < 1:
        raise ValueError("a path needs at least one vertex")
    vertices = [f"p{i}" for i in range(n)]
    edges = [(f"p{i}", f"p{i + 1}") for i in range(n - 1)]
    return Dag(tuple(vertices), tuple(edges), f"p{n - 1}")


def random_dag(n: int, p: float = 0.3, seed: int = 0, max_indegree: int | None = None) -> Dag:
    """A random DAG on r0..r(n-1); edges go from lower to higher index."""
    if n < 1:
        raise ValueError("a DAG needs at least one vertex")
    rng = random.Random(seed)
    vertices = [f"r{i}" for i in range(n)]
    edges: list[tuple[str, str]] = []
    for v in range(1, n):
        preds = [u for u in range(v) if rng.random() < p]
        if max_indegree is not None and len(preds) > max_indegree:
            preds = sorted(rng.sample(preds, max_indegree))
        edges.extend((f"r{u}", f"r{v}") for u in preds)
    return Dag(tuple(vertices), tuple(edges), f"r{n - 1}")


def by_shape(shape: str, height: int, seed: int = 0) -> Dag:
    """The CLI's entry point: ``path`` and ``random`` read ``height`` as a size."""
    if shape == "pyramid":
        return pyramid(height)
    if shape == "tree":
        return binary_tree(height)
    if shape == "path":
        return path(height + 1)
    if shape == "random":
        return random_dag(max(1, height), seed=seed)
    raise ValueError(f"unknown shape {shape!r}")
