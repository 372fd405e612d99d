"""A reader for small, plain format-v1 YAML, so a small ``check`` need not import PyYAML.

Why: importing PyYAML costs more CPU than all of a small ``check``'s work
(its reader and resolver compile large regular expressions at import).
Hand-written instances are plain YAML: block mappings and sequences, flow
collections on one line, plain and quoted one-line scalars, comments.

Contract: ``read_document(text, lines)`` returns exactly the (data, lines)
that the libyaml reader (``yaml_libyaml``) returns for a v1 document, or
``None`` when it cannot vouch for that: anything else (anchors, aliases,
tags, block scalars, multi-line scalars, escapes, directives, several
documents, tabs, non-ASCII text, duplicate keys, numbers other than decimal
integers, timestamps, merge keys) and every error go to libyaml, which keeps
the safety guards and the error messages with lines. Scalars resolve as
PyYAML's YAML 1.1 resolver does. ``tests/test_yaml_simple.py`` compares both
readers on every YAML file we have and on generated YAML.
"""

from __future__ import annotations

from typing import Optional

Lines = dict[tuple, int]

MAX_DEPTH = 40        # deeper documents go to libyaml
MAX_BYTES = 1 << 20   # bigger ones too: this reader is for hand-written instances

_BOOLS = {w: True for w in ("yes", "Yes", "YES", "true", "True", "TRUE", "on", "On", "ON")}
_BOOLS.update({w: False for w in ("no", "No", "NO", "false", "False", "FALSE", "off", "Off", "OFF")})
_NULLS = frozenset({"~", "null", "Null", "NULL"})
_DIGITS = frozenset("0123456789")
# Every character of YAML 1.1's ints, floats and timestamps: a plain scalar starting like a number and made
# only of these may be one of them (declined); one with any other character (``500m``, ``2Gi``) is a string.
_NUMERIC = frozenset("0123456789_+-.:abcdefABCDEFxXoOeEtTzZiInN ")
# Characters that may change what a plain scalar means anywhere in it (properties, block scalars, complex
# keys, reserved indicators, escapes) or that the flow parser stops at: any of them -> libyaml.
_ODD = frozenset("&*!|>?@`%\\\"'{}[],#")
_FLOW_STOP = frozenset(",[]{}")
_PRINTABLE = frozenset(chr(c) for c in range(0x20, 0x7F)) | {"\n"}


class _Decline(Exception):
    """Not in the subset this reader vouches for."""


def read_document(text: str, lines: bool = True) -> Optional[tuple[object, Lines]]:
    """(data, lines by field path) of a plain one-document YAML text, or None."""
    if len(text) > MAX_BYTES or not _PRINTABLE.issuperset(text):
        return None
    try:
        reader = _Reader(text, lines)
        return reader.document(), reader.lines
    except (_Decline, RecursionError):
        return None


class _Reader:
    def __init__(self, text: str, track: bool) -> None:
        self.track = track
        self.lines: Lines = {}
        # (line number, indent, content without comment) of every line holding something
        self.rows: list[tuple[int, int, str]] = []
        for number, raw in enumerate(text.split("\n"), 1):
            content = _strip_comment(raw)
            if not content:
                continue
            if raw.startswith(("---", "...", "%")):
                raise _Decline
            indent = len(content) - len(content.lstrip(" "))
            self.rows.append((number, indent, content[indent:]))
        if not self.rows or self.rows[0][1] != 0:
            raise _Decline

    def document(self) -> object:
        value, end = self.block(0, 0, (), 0)
        if end != len(self.rows):
            raise _Decline
        return value

    def note(self, path: tuple, line: int) -> None:
        if self.track:
            self.lines.setdefault(path, line)

    # ---- block collections ------------------------------------------------------------------------

    def block(self, i: int, indent: int, path: tuple, depth: int) -> tuple[object, int]:
        """The block node whose first row is ``i`` (at ``indent``): (value, next row)."""
        if depth > MAX_DEPTH:
            raise _Decline
        number, _, content = self.rows[i]
        self.note(path, number)
        if content == "-" or content.startswith("- "):
            return self.sequence(i, indent, path, depth)
        if _key_end(content) is not None:
            return self.mapping(i, indent, path, depth)
        value = self.inline(content, path, number, depth)  # a lone scalar or flow node
        return value, i + 1

    def sequence(self, i: int, indent: int, path: tuple, depth: int) -> tuple[list, int]:
        out: list = []
        while i < len(self.rows) and self.rows[i][1] == indent:
            number, _, content = self.rows[i]
            if not content.startswith("- "):
                if content == "-":
                    raise _Decline  # an item on the next lines, or a null one
                break
            rest = content[2:].lstrip(" ")
            sub = path + (len(out),)
            # the item's node starts on this row: read it as a row of its own, at its column
            self.rows[i] = (number, indent + len(content) - len(rest), rest)
            value, i = self.block(i, self.rows[i][1], sub, depth + 1)
            out.append(value)
        self.after(i, indent)
        return out, i

    def mapping(self, i: int, indent: int, path: tuple, depth: int) -> tuple[dict, int]:
        out: dict = {}
        while i < len(self.rows) and self.rows[i][1] == indent:
            number, _, content = self.rows[i]
            end = _key_end(content)
            if end is None:
                raise _Decline
            key = _plain(content[:end].rstrip(" "))
            if key in out or (isinstance(key, (bool, int)) and any(k == key for k in out)):
                raise _Decline  # duplicates: libyaml names the line
            sub = path + (key,)
            if self.track:
                self.lines[sub] = number
            rest = content[end + 1:].lstrip(" ")
            i += 1
            if rest:
                out[key] = self.inline(rest, sub, number, depth + 1)
                self.after(i, indent)
            elif i < len(self.rows) and (self.rows[i][1] > indent or (
                    self.rows[i][1] == indent and (self.rows[i][2].startswith("- ") or self.rows[i][2] == "-"))):
                out[key], i = self.block(i, self.rows[i][1], sub, depth + 1)
            else:
                out[key] = None  # ``key:`` and nothing more
        self.after(i, indent)
        return out, i

    def after(self, i: int, indent: int) -> None:
        """A node ended before row ``i``: that row must belong to an enclosing node."""
        if i < len(self.rows) and self.rows[i][1] > indent:
            raise _Decline  # a continuation line (multi-line scalar) or a misindented row

    # ---- one-line nodes ---------------------------------------------------------------------------

    def inline(self, text: str, path: tuple, number: int, depth: int) -> object:
        self.note(path, number)
        if text[0] in "[{":
            value, end = self.flow(text, 0, path, number, depth)
            if text[end:].strip(" "):
                raise _Decline
            return value
        if text[0] in "\"'":
            value, end = _quoted(text, 0)
            if end != len(text):
                raise _Decline
            return value
        if _key_end(text) is not None or text.endswith(":"):
            raise _Decline  # ``a: b: c``, refused by libyaml
        return _plain(text)

    def flow(self, text: str, at: int, path: tuple, number: int, depth: int) -> tuple[object, int]:
        """The flow node at ``text[at]`` (one row): (value, index after it)."""
        if depth > MAX_DEPTH:
            raise _Decline
        self.note(path, number)
        at = _skip(text, at)
        if at >= len(text):
            raise _Decline
        opener = text[at]
        if opener in "\"'":
            return _quoted(text, at)
        if opener not in "[{":
            end = at
            while end < len(text) and text[end] not in _FLOW_STOP and text[end] != ":":
                end += 1
            return _plain(text[at:end].rstrip(" ")), end
        closer = "]" if opener == "[" else "}"
        items: list = []
        pairs: dict = {}
        at = _skip(text, at + 1)
        if at < len(text) and text[at] == closer:
            return ([] if opener == "[" else {}), at + 1
        while True:
            if opener == "[":
                value, at = self.flow(text, at, path + (len(items),), number, depth + 1)
                items.append(value)
            else:
                key, at = self.flow(text, at, path, number, depth + 1)
                if isinstance(key, (list, dict)) or key in pairs or not text.startswith(": ", at):
                    raise _Decline
                value, at = self.flow(text, at + 2, path + (key,), number, depth + 1)
                if self.track:
                    self.lines[path + (key,)] = number
                pairs[key] = value
            at = _skip(text, at)
            if at < len(text) and text[at] == closer:
                return (items if opener == "[" else pairs), at + 1
            if at >= len(text) or text[at] != ",":
                raise _Decline
            at = _skip(text, at + 1)
            if at < len(text) and text[at] == closer:
                raise _Decline  # a trailing comma


# ---- scalars ----------------------------------------------------------------------------------------

def _strip_comment(raw: str) -> str:
    """``raw`` without a trailing comment and trailing spaces (quotes respected)."""
    if "#" not in raw:
        return raw.rstrip(" ")
    quote = None
    for at, char in enumerate(raw):
        if quote:
            if char == quote:
                quote = None
        elif char in "\"'" and (at == 0 or raw[at - 1] in " [{,:-"):
            quote = char
        elif char == "#" and (at == 0 or raw[at - 1] == " "):
            return raw[:at].rstrip(" ")
    if quote:
        raise _Decline  # an unclosed quote: a multi-line scalar
    return raw.rstrip(" ")


def _key_end(text: str) -> Optional[int]:
    """The index of the ``:`` that ends a plain mapping key on this row, or None."""
    if text[:1] in "\"'[{":
        return None if text[:1] in "[{" else _quoted_key_end(text)
    at = text.find(":")
    while at != -1:
        if at + 1 == len(text) or text[at + 1] == " ":
            return at if at > 0 else None
        at = text.find(":", at + 1)
    return None


def _quoted_key_end(text: str) -> Optional[int]:
    try:
        _, end = _quoted(text, 0)
    except _Decline:
        return None
    if text.startswith(":", end) and (end + 1 == len(text) or text[end + 1] == " "):
        raise _Decline  # quoted keys: left to libyaml
    return None


def _quoted(text: str, at: int) -> tuple[str, int]:
    """A one-line quoted scalar at ``text[at]``: (value, index after the closing quote)."""
    quote = text[at]
    if quote == '"':
        end = text.find('"', at + 1)
        if end == -1 or "\\" in text[at + 1:end]:
            raise _Decline  # escapes: libyaml
        return text[at + 1:end], end + 1
    parts = []
    at += 1
    while True:
        end = text.find("'", at)
        if end == -1:
            raise _Decline
        parts.append(text[at:end])
        if text.startswith("''", end):
            parts.append("'")
            at = end + 2
            continue
        return "".join(parts), end + 1


def _plain(text: str) -> object:
    """A plain scalar as PyYAML's YAML 1.1 resolver and safe constructor read it."""
    if not text or _ODD.intersection(text) or text.startswith(("- ", ":")) or text == "-":
        raise _Decline
    first = text[0]
    if first in _DIGITS or first in "+-.":
        digits = text[1:] if first in "+-" else text
        if digits and digits.isdigit() and (digits == "0" or digits[0] != "0"):
            return int(text)
        if _NUMERIC.issuperset(text):
            raise _Decline  # octal, hex, floats, sexagesimal, timestamps: libyaml
        return text
    if first in "<=" or (first == "~" and text != "~"):
        raise _Decline
    if text in _BOOLS:
        return _BOOLS[text]
    if text in _NULLS:
        return None
    return text


def _skip(text: str, at: int) -> int:
    while at < len(text) and text[at] == " ":
        at += 1
    return at
