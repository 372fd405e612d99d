"""``matrix -o yaml`` of every cell, written one cell at a time.

The whole document as Python objects and one ``yaml.safe_dump`` cost about
1 KiB and 0.5 ms per cell: a 5,000-node, 1,000-type matrix (five million
cells) needs gigabytes and most of an hour. Here each distinct scalar (a pod
type, a node, a verdict, how it was decided, a type's caveats) is rendered
once by PyYAML in the very place it takes in the document, and a cell is the
concatenation of its pieces. The text is byte for byte what ``safe_dump``
writes for the document ``write_json`` writes (same keys, same order).
"""

from __future__ import annotations

import json
from typing import Any, Callable, Optional, TextIO

from symreach.solvers.matrix import Matrix

CELL_KEYS = ("pod", "node", "verdict", "by", "caveats")   # docs/json.md


def _dump(value: Any) -> str:
    import yaml  # imported on use: PyYAML costs start-up

    plain = json.loads(json.dumps(value, default=str))   # what the JSON document holds
    return yaml.safe_dump(plain, sort_keys=False, default_flow_style=False, allow_unicode=True)


def entry(key: str, value: Any) -> str:
    """``key: value`` as one top-level entry of the document."""
    return _dump({key: value})


def item_piece(key: str) -> Callable[[Any], str]:
    """``value -> its `key: value` lines`` inside a sequence item (the first key:
    with the item's ``- ``), each distinct value rendered once."""
    first = key == CELL_KEYS[0]
    lead = _dump([{CELL_KEYS[0]: ""}])
    cache: dict[Any, str] = {}

    def piece(value: Any) -> str:
        hashable = tuple(value) if isinstance(value, list) else value
        hit = cache.get(hashable)
        if hit is None:
            if first:
                hit = _dump([{key: value}])
            else:
                text = _dump([{CELL_KEYS[0]: "", key: value}])
                assert text.startswith(lead), text
                hit = text[len(lead):]
            cache[hashable] = hit
        return hit
    return piece


def write_yaml(m: Matrix, out: TextIO, extra: Optional[dict[str, Any]] = None,
               head: Optional[dict[str, Any]] = None) -> None:
    """``write_json``'s document as YAML on ``out`` (ends with a newline)."""
    for key, value in (head or {}).items():
        out.write(entry(key, value))
    out.write(entry("pods", list(m.types)) + entry("nodes", list(m.nodes)))
    pod, node, verdict, by, caveats = (item_piece(k) for k in CELL_KEYS)
    nodes = [node(name) for name in m.nodes]
    started = False
    for name, per_node in m.row_subjects():
        p = pod(name)
        text = "".join([p + nodes[n] + verdict(m.cells[(t, n)]) + by(m.how[(t, n)]) + caveats(list(m.caveats_of(t, n)))
                        for n, t in enumerate(per_node) if t is not None])
        if text:
            out.write(text if started else "cells:\n" + text)
            started = True
    if not started:
        out.write(entry("cells", []))
    out.write(entry("stats", m.stats))
    out.write(entry("caveats", {m.types[t]: list(c) for t, c in sorted(m.caveats.items())}))
    for key, value in (extra or {}).items():
        if key == "rows" and value:
            write_rows(value, out)
        else:
            out.write(entry(key, value))


def write_rows(rows: list[dict[str, Any]], out: TextIO) -> None:
    """``rows`` (``report.matrix_view.view_json``: a pod and its mark per pool) as a top-level
    entry, each (pool, mark) rendered once: with every node its own pool, five million marks."""
    pod = item_piece("pod")
    lead = _dump([{"pod": ""}])
    marks_lead = _dump([{"pod": "", "marks": {"k": "v"}}])[len(lead):].split("\n", 1)[0] + "\n"
    cache: dict[tuple[Any, Any], str] = {}

    def mark(key: Any, value: Any) -> str:
        hit = cache.get((key, value))
        if hit is None:
            text = _dump([{"pod": "", "marks": {key: value}}])[len(lead):]
            assert text.startswith(marks_lead), text
            hit = cache[key, value] = text[len(marks_lead):]
        return hit

    out.write("rows:\n")
    for row in rows:
        if list(row) != ["pod", "marks"] or not row["marks"]:
            out.write(_dump([row]))
            continue
        out.write(pod(row["pod"]) + marks_lead + "".join([mark(k, v) for k, v in row["marks"].items()]))
