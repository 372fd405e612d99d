"""``matrix --stream``: each row written (and flushed) once all of its cells are decided.

Rows come out in the order their pod types finish, not in input order; every
line names its pod type, so it stands alone. A DaemonSet's row waits for all
of its pinned types. Rows no task decided (a time or memory limit) are written
last, with their cells ``?``; the JSON Lines trailer says why (docs/json.md).
"""

from __future__ import annotations

import json
from typing import Any, Optional, TextIO

from symreach.solvers.matrix import CSV_HEADER, Matrix, csv_line_writer, json_cell_writer

STREAM_FORMATS = ("csv", "json")


class RowStream:
    """Writes ``m``'s rows to ``out`` as ``types_done`` reports their types finished."""

    def __init__(self, m: Matrix, fmt: str, out: TextIO, head: Optional[dict[str, Any]] = None) -> None:
        if fmt not in STREAM_FORMATS:
            raise ValueError(f"no streamed form of {fmt!r}")
        self.m, self.fmt, self.out = m, fmt, out
        self.subjects = m.row_subjects()
        self.waiting: dict[int, set[int]] = {}   # type -> subjects (indices) still waiting for it
        self.missing: list[int] = []             # subject -> how many of its types are not done
        for i, (_, per_node) in enumerate(self.subjects):
            types = {t for t in per_node if t is not None}
            self.missing.append(len(types))
            for t in types:
                self.waiting.setdefault(t, set()).add(i)
        self.written: set[int] = set()
        if fmt == "csv":
            self.line = csv_line_writer(m)
            out.write(CSV_HEADER)
        else:
            self.cells = json_cell_writer(m)
            out.write(json.dumps({**(head or {}), "stream": "rows", "pods": list(m.types),
                                  "nodes": list(m.nodes)}) + "\n")
        out.flush()

    def types_done(self, types: list[int]) -> None:
        """Write every row whose last undecided type is among ``types``; flush."""
        ready = []
        for t in types:
            for i in self.waiting.pop(t, ()):
                self.missing[i] -= 1
                if self.missing[i] == 0:
                    ready.append(i)
        for i in sorted(ready):
            self._write(i)
        if ready:
            self.out.flush()

    def finish(self, trailer: Optional[dict[str, Any]] = None) -> None:
        """The rows not written yet (undecided: ``?``), then the JSON Lines trailer."""
        for i in range(len(self.subjects)):
            if i not in self.written:
                self._write(i)
        if self.fmt == "json":
            m = self.m
            self.out.write(json.dumps({"stats": m.stats, "caveats": {m.types[t]: list(c) for t, c in
                                                                     sorted(m.caveats.items())},
                                       **(trailer or {})}, default=str) + "\n")
        else:
            self.out.write("\n")   # as write_matrix ends
        self.out.flush()

    def _write(self, i: int) -> None:
        self.written.add(i)
        name, per_node = self.subjects[i]
        if self.fmt == "csv":
            self.out.write(self.line(name, per_node))
        else:
            self.out.write('{"pod": ' + json.dumps(name) + ', "cells": ['
                           + ", ".join(self.cells(name, per_node)) + "]}\n")
