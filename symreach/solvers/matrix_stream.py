"""Matrix rows written (and flushed) as their cells are decided, not after the last one.

``--stream`` (``ordered=False``): rows come out in the order their pod types
finish, not in input order; every line names its pod type, so it stands alone
(CSV, or JSON Lines: docs/json.md). Without ``--stream`` (``ordered=True``)
the output is the plain one, byte for byte (CSV, or one JSON document): rows
in input order, each written as soon as it and every row before it are
decided, so that little is left to write after the last result. A row that is
ready before an earlier one is formatted at once and held (up to
``HELD_CHARS`` characters; past that, it is formatted when its turn comes).
A DaemonSet's row waits for all of its pinned types. Rows no task decided (a
time or memory limit) are written at the end, with their cells ``?``
(``--stream``: after every decided row); the JSON trailer says why.
"""

from __future__ import annotations

import io
import json
from typing import Any, Optional, TextIO

from symreach.solvers.matrix import CSV_HEADER, Matrix, csv_line_writer, json_cell_writer, json_closing, json_opening

STREAM_FORMATS = ("csv", "json")
HELD_CHARS = 64 << 20   # formatted rows held for an earlier one, at most (characters)


class RowStream:
    """Writes ``m``'s rows to ``out`` as ``types_done`` reports their types finished."""

    def __init__(self, m: Matrix, fmt: str, out: TextIO, head: Optional[dict[str, Any]] = None,
                 ordered: bool = False) -> None:
        if fmt not in STREAM_FORMATS:
            raise ValueError(f"no streamed form of {fmt!r}")
        self.m, self.fmt, self.out, self.ordered = m, fmt, out, ordered
        self.subjects = m.row_subjects()
        self.waiting: dict[int, set[int]] = {}   # type -> subjects (indices) still waiting for it
        self.missing: list[int] = []             # subject -> how many of its types are not done
        for i, (_, per_node) in enumerate(self.subjects):
            types = {t for t in per_node if t is not None}
            self.missing.append(len(types))
            for t in types:
                self.waiting.setdefault(t, set()).add(i)
        self.written: set[int] = set()
        self.next = 0                       # ordered: the first row not written
        self.held: dict[int, str] = {}      # ordered: row -> its text, decided before ``next``
        self.held_chars = 0
        self.cells_written = False          # JSON document: the next cells need a ", " first
        if fmt == "csv":
            self.line = csv_line_writer(m)
            out.write(CSV_HEADER)
        else:
            self.cells = json_cell_writer(m)
            out.write(json_opening(m, head) if ordered else
                      json.dumps({**(head or {}), "stream": "rows", "pods": list(m.types),
                                  "nodes": list(m.nodes)}) + "\n")
        out.flush()

    def types_done(self, types: list[int]) -> None:
        """Write every row whose last undecided type is among ``types`` (``ordered``: and
        every row before it is written); flush."""
        ready = []
        for t in types:
            for i in self.waiting.pop(t, ()):
                self.missing[i] -= 1
                if self.missing[i] == 0:
                    ready.append(i)
        if not ready:
            return
        if not self.ordered:
            for i in sorted(ready):
                self._write(i)
        else:
            for i in ready:
                if i != self.next and self.held_chars < HELD_CHARS:
                    self.held[i] = self._text(i)
                    self.held_chars += len(self.held[i])
            self._write_decided()
        self.out.flush()

    def finish(self, trailer: Optional[dict[str, Any]] = None) -> None:
        """The rows not written yet (undecided: ``?``), then the JSON trailer."""
        for i in range(len(self.subjects)):
            if i not in self.written:
                self._write(i)
        m = self.m
        if self.fmt == "csv":
            self.out.write("\n")   # as write_matrix ends
        elif self.ordered:
            self.out.write(json_closing(m, trailer) + "\n")
        else:
            self.out.write(json.dumps({"stats": m.stats, "caveats": {m.types[t]: list(c) for t, c in
                                                                     sorted(m.caveats.items())},
                                       **(trailer or {})}, default=str) + "\n")
        self.out.flush()

    def _write_decided(self) -> None:
        """Ordered: every row from ``next`` on that is decided, up to the first that is not."""
        while self.next < len(self.subjects) and self.missing[self.next] == 0:
            self._write(self.next)

    def remainder(self, trailer: Optional[dict[str, Any]] = None, listed: bool = True) -> str:
        """What ``finish`` would write now, without writing it (a limit's fallback output);
        ``listed=False``: the rows not written yet left out."""
        saved = (self.out, set(self.written), self.next, dict(self.held), self.held_chars, self.cells_written)
        self.out = io.StringIO()
        try:
            if not listed:
                self.written = set(range(len(self.subjects)))
            self.finish(trailer)
            return self.out.getvalue()
        finally:
            self.out, self.written, self.next, self.held, self.held_chars, self.cells_written = saved

    def _text(self, i: int) -> str:
        name, per_node = self.subjects[i]
        if self.fmt == "csv":
            return self.line(name, per_node)
        text = self.cells(name, per_node)
        return text if self.ordered else '{"pod": ' + json.dumps(name) + ', "cells": [' + text + "]}\n"

    def _write(self, i: int) -> None:
        self.written.add(i)
        if self.ordered:
            self.next = i + 1
        text = self.held.pop(i, None)
        if text is not None:
            self.held_chars -= len(text)
        else:
            text = self._text(i)
        if self.ordered and self.fmt == "json" and text:   # cells of one document: ", " between rows
            text = ", " + text if self.cells_written else text
            self.cells_written = True
        self.out.write(text)
