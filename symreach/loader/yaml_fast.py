"""A fast reader for big Kubernetes YAML dumps: rapidyaml parses, ``json`` builds, kubectl's scalar rules repair.

Why: PyYAML's libyaml composition builds a Python node with two marks for
every scalar; a 10,000-pod dump (52 MB) takes about a minute there. This
module reads the same text with rapidyaml (``ryml``, C++), lets ryml write
the tree as JSON (C++) and builds Python data with ``json`` (C). That JSON
says nothing of which scalars were plain, and only plain scalars may be
typed (``yes``, ``0755``, ``~``), so the result is repaired where it matters:

- a bare JSON number or ``true``/``false``/``null`` came from a plain scalar:
  numbers are re-read from their text by ``yaml_scalars.resolve_plain``;
- a JSON string (value or key) that a plain scalar of the same text would
  turn into something else is looked up in ryml's tree, and resolved only if
  it was plain there (``status: "True"`` stays a string, ``ready: yes`` does not).

Contract: ``read_documents(text)`` returns exactly the data that
``yaml_source.read_documents_text(text, lines=False, kubectl=True)`` returns,
or ``None`` when it cannot vouch for that. ``None`` is the answer for
anything unusual (anchors, aliases, tags, directives, tabs, characters
libyaml refuses or reads as line breaks, duplicate or null keys, merge keys,
deep nesting) and for every error, so the libyaml reader keeps the alias and
depth guards and the error messages with lines. ``tests/test_yaml_fast.py``
compares both readers on every YAML file we have and on generated YAML.
"""

from __future__ import annotations

import json
import os
import re
import sys
from contextlib import contextmanager
from typing import Iterator, Optional

from symreach.loader import yaml_scalars
from symreach.loader.collector import collector_paused

try:  # rapidyaml is a dependency, but a platform without its wheel still reads YAML (slowly) through libyaml
    import ryml
except ImportError:  # pragma: no cover - exercised only where the wheel is missing
    ryml = None

AVAILABLE = ryml is not None

# Deeper documents go to libyaml, which decides whether they are nested too deeply.
MAX_DEPTH = 100

_MAYBE_TYPED = yaml_scalars.MAYBE_TYPED | {""}
_STR = yaml_scalars.STR

# Characters only the libyaml reader may judge: tabs (ryml and libyaml split ``a:<TAB>b`` differently), what
# libyaml refuses, a BOM inside the text, and NEL/LS/PS, which YAML 1.1 (libyaml) reads as line breaks and
# YAML 1.2 (ryml) does not. One negated class: a search over tens of megabytes takes milliseconds.
_UNUSUAL_CHAR = re.compile("[^\n\r\x20-\x7e\xa0-\u2027\u202a-\ud7ff\ue000-\ufefe\uff00-\ufffd\U00010000-\U0010ffff]")
# After a flow collection, ryml reads ``- {}  - x`` as two entries; libyaml refuses it.
_AFTER_FLOW = re.compile(r"[\]}][ ]+[-?:](?:[ \r\n]|\Z)")
_ASCII_USUAL = bytes(range(0x20, 0x7F)) + b"\n\r"
# An empty key in a flow collection (``[:``, ``{a: 1, : 2}``): ryml reads an empty mapping, libyaml
# refuses some of these; ``?`` there (``{?a: 1}``) is always libyaml's key indicator, ryml reads a key
# ``?a`` (found by tests/test_yaml_fast.py). One C-level search; dumps rarely have it.
_FLOW_EMPTY_KEY = re.compile(r"[\[{,] *[:?]")
# ``:`` right after a plain scalar and before a flow indicator (``{a:, b}``): libyaml refuses it in a
# flow collection ("found unexpected ':'"), ryml reads an empty value (found by tests/test_yaml_fast.py);
# declined where a flow collection may be open: one opened earlier on the line, or a line that ends
# inside one (``[a,`` then a line break). Not after a double-quoted key (``"metadata":{``: JSON, as in
# kubectl's last-applied-configuration), which libyaml reads; not in block context (managed fields'
# ``k:{"type":"Ready"}:`` keys).
_COLON_BEFORE_FLOW = re.compile(r":[,?\[\]{}]")
_QUOTED_KEY_BEFORE = frozenset("{[, :\t")
_OPEN_AT_LINE_END = re.compile(r"[\[{,][ \t]*(?:#[^\n]*)?\r?\n")
# A block scalar as the text's last line, without a line break: ryml keeps a final one, libyaml does not
_BLOCK_INDICATOR = frozenset("|>")
# Node properties (anchor ``&``, alias ``*``, tag ``!``) only start a node: at a line start or after an
# indicator (``: ? , [ {`` or ``-`` and a space). Found as characters first (rare in dumps), then judged.
_PROPERTY_CHARS = "&*!"
_NODE_START = frozenset(":?,[{\n\r")
# A property right after a quoted scalar (``'00'!``): libyaml refuses it, ryml read a document of ``''``
# (found by tests/test_yaml_fast.py); judged as if it started a node, so the text goes to libyaml.
_QUOTES = frozenset("'\"")
# Indicators that cannot start a plain scalar: libyaml refuses ``]x``, ``}x``, ``@x``, `` `x ``, ``%x`` there,
# ryml reads a string. Such a string is suspect like a typed-looking one, and declined if ryml saw it plain.
_BAD_PLAIN_START = frozenset("]}@`%")
_SUSPECT_START = _MAYBE_TYPED | _BAD_PLAIN_START


# An empty block scalar right before a document marker (``|-`` then ``---``): ryml takes the marker as
# the scalar's text, libyaml ends the scalar and the document (found by tests/test_yaml_fast.py).
_EMPTY_BLOCK_BEFORE_MARKER = re.compile(r"[|>][-+0-9]*[ \t]*(?:#[^\n]*)?\r?\n(?:[ \t]*\r?\n)*(?:---|\.\.\.)")


def unusual(text: str) -> bool:
    """Whether ``text`` may hold something the fast reader leaves to libyaml (a superset, never fewer)."""
    if ("---" in text or "..." in text) and _EMPTY_BLOCK_BEFORE_MARKER.search(text):
        return True
    for marker in ("%", "..."):  # directives; document end markers (libyaml refuses some that ryml accepts)
        if text.startswith(marker) or "\n" + marker in text or "\r" + marker in text:
            return True
    if "\r" in text and text.count("\r") != text.count("\r\n"):
        return True  # a lone CR: a line break to libyaml, not to ryml
    if text.isascii():
        if text.encode("ascii").translate(None, _ASCII_USUAL):  # what is left is unusual
            return True
    elif _UNUSUAL_CHAR.search(text):
        return True
    if _FLOW_EMPTY_KEY.search(text) or _colon_in_flow(text):
        return True
    if text and text[-1] not in "\n\r" and any(c in text for c in _BLOCK_INDICATOR):
        return True
    for closer in ("] ", "} "):  # where _AFTER_FLOW can match: found by str.find, much faster than re on big texts
        at = text.find(closer)
        while at != -1:
            if _AFTER_FLOW.match(text, at):
                return True
            at = text.find(closer, at + 1)
    for char in _PROPERTY_CHARS:
        at = text.find(char)
        while at != -1:
            if _starts_node(text, at):
                return True
            at = text.find(char, at + 1)
    return False


def _colon_in_flow(text: str) -> bool:
    """Whether a ``:`` before a flow indicator may sit in a flow collection after a plain scalar."""
    multi_line_flow: Optional[bool] = None
    for match in _COLON_BEFORE_FLOW.finditer(text):
        colon = match.start()
        line = _line_start(text, colon)
        if _after_quoted_key(text, line, colon):
            continue
        if "[" in text[line:colon] or "{" in text[line:colon]:
            return True
        if multi_line_flow is None:
            multi_line_flow = _OPEN_AT_LINE_END.search(text) is not None
        if multi_line_flow:
            return True
    return False


def _line_start(text: str, at: int) -> int:
    return max(text.rfind("\n", 0, at), text.rfind("\r", 0, at)) + 1


def _after_quoted_key(text: str, line: int, colon: int) -> bool:
    """Whether the ``:`` at ``colon`` (on the line from ``line``) follows a double-quoted scalar
    that starts a node (``{"a":[``), not a plain scalar ending in a quote (``{a":,``)."""
    if colon == line or text[colon - 1] != '"':
        return False
    opening = text.rfind('"', line, colon - 1)
    return opening != -1 and (opening == line or text[opening - 1] in _QUOTED_KEY_BEFORE)


def _starts_node(text: str, at: int) -> bool:
    """Whether the character at ``at`` may begin a node."""
    before = at - 1
    while before >= 0 and text[before] == " ":
        before -= 1
    if before < 0 or text[before] in _NODE_START or text[before] in _QUOTES:
        return True
    return text[before] == "-" and before + 1 < at  # "- &x": a sequence entry


class _Decline(Exception):
    """The fast reader cannot vouch for this input: the libyaml reader must read it."""


def _quoted(node_type: int, key: bool) -> bool:
    """Whether ryml saw the key (or value) of a node in a quoted or block style (so it is a string)."""
    return bool(node_type & (ryml.KEYQUO if key else ryml.VALQUO))


def read_documents(text: str) -> Optional[list[object]]:
    """Every document of ``text`` as kubectl reads it (``None`` for an empty one), or ``None`` to decline."""
    if not AVAILABLE or unusual(text):
        return None
    try:
        return _Reader(text).documents()
    except _Decline:
        return None
    except (ryml.ExceptionBasic, ValueError, RecursionError, UnicodeError, MemoryError):
        return None  # an error: the libyaml reader names it, with its line


@contextmanager
def _quiet_stderr() -> Iterator[None]:
    """ryml prints every parse error to file descriptor 2 before raising; the libyaml reader reports it instead."""
    try:
        sys.stderr.flush()
        saved = os.dup(2)
    except (OSError, ValueError):  # no stderr to protect
        yield
        return
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, 2)
        yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)
        os.close(devnull)


class _Reader:
    """One text: ryml's tree, its JSON, the data, and the repairs."""

    def __init__(self, text: str) -> None:
        self.source = text
        self.tree = ryml.Tree()
        with _quiet_stderr():
            ryml.parse_in_arena(text.encode("utf-8"), self.tree)
        # Containers holding, at any depth, a string that a plain scalar of the same text would type.
        self.suspect: set[int] = set()
        self.depth: dict[int, int] = {}

    def documents(self) -> list[object]:
        tree = self.tree
        root = tree.root_id()
        root_type = tree.type(root)
        if root_type == ryml.NOTYPE:
            return []  # no document: empty text or only comments
        with _quiet_stderr():  # too deep for ryml's writer (64 levels) is an error it prints
            emitted = ryml.emit_json(tree, root)
        if emitted is None:
            raise _Decline()
        plain_strings = _all_strings_plain(emitted, self.source)
        with collector_paused():
            data = json.loads(emitted, object_pairs_hook=_unique_keys if plain_strings else self.mapping,
                              parse_int=_plain_int, parse_float=_plain_number,
                              parse_constant=_no_constant, strict=False)
        stream = root_type & ryml.STREAM == ryml.STREAM
        if stream and not isinstance(data, list):
            raise _Decline()
        if stream:
            nodes = list(_children(tree, root))
            if len(nodes) != len(data):
                raise _Decline()
        if plain_strings:
            return data if stream else [data]
        if stream:
            return [self.document(doc, node) for doc, node in zip(data, nodes)]
        return [self.document(data, root)]

    # ---- building (the json hook) ------------------------------------------------------------------

    def mapping(self, pairs: list[tuple[str, object]]) -> dict:
        """A JSON object: refuse duplicate keys, note its depth and whether anything inside needs repair."""
        out = dict(pairs)
        if len(out) != len(pairs):
            raise _Decline()  # duplicate keys: libyaml names the line
        suspect = False
        depth = 1
        maybe, suspect_text, suspects, depths = _SUSPECT_START, _suspect, self.suspect, self.depth
        for key, value in pairs:
            if key[:1] in maybe and suspect_text(key):
                suspect = True
            kind = type(value)
            if kind is str:
                if value[:1] in maybe and suspect_text(value):
                    suspect = True
            elif kind is dict:
                key_id = id(value)
                if key_id in suspects:
                    suspect = True
                inner = depths.get(key_id, 1)
                if inner >= depth:
                    depth = inner + 1
            elif kind is list:
                sub, inner = self.sequence(value)
                if sub:
                    suspect = True
                if inner >= depth:
                    depth = inner + 1
        if depth > 1:
            if depth > MAX_DEPTH:
                raise _Decline()
            depths[id(out)] = depth
        if suspect:
            suspects.add(id(out))
        return out

    def sequence(self, items: list) -> tuple[bool, int]:
        """(needs repair, depth) of a list (json has no hook for arrays, so lists are judged by their parent)."""
        suspect, depth = False, 1
        for item in items:
            kind = type(item)
            if kind is str:
                if item[:1] in _SUSPECT_START and _suspect(item):
                    suspect = True
            elif kind is dict:
                suspect = suspect or id(item) in self.suspect
                depth = max(depth, self.depth.get(id(item), 1) + 1)
            elif kind is list:
                sub, inner = self.sequence(item)
                suspect = suspect or sub
                depth = max(depth, inner + 1)
        if depth > MAX_DEPTH:
            raise _Decline()
        return suspect, depth

    # ---- repairing from the tree -------------------------------------------------------------------

    def document(self, data: object, node: int) -> object:
        if type(data) is str:
            return self.value(data, node)
        if type(data) is list:
            self.sequence(data)  # a top-level list has no parent that judged it
        return self.repair(data, node)

    def repair(self, data: object, node: int) -> object:
        """``data`` (built from ``node``) with every plain scalar inside resolved as kubectl does."""
        if type(data) is dict:
            return self.repair_mapping(data, node) if id(data) in self.suspect else data
        if type(data) is list and self.sequence(data)[0]:
            return [self.value(item, child) for item, child in zip(data, _children(self.tree, node))]
        return data

    def value(self, item: object, node: int) -> object:
        if type(item) is str:
            if item[:1] in _SUSPECT_START and _suspect(item) and not _quoted(self.tree.type(node), key=False):
                return _plain(self.text(node, key=False))
            return item
        return self.repair(item, node)

    def text(self, node: int, key: bool) -> str:
        """A scalar's text as ryml parsed it (its JSON writer may normalise plain scalars: ``inf`` -> ``".inf"``)."""
        view = self.tree.key(node) if key else self.tree.val(node)
        return "" if view is None else str(view, "utf-8")

    def repair_mapping(self, data: dict, node: int) -> dict:
        """Resolve the plain scalars of a suspect mapping in place; rebuilt (order kept) only if a key changes."""
        tree = self.tree
        renamed: dict[str, str] = {}
        for key, item in data.items():
            key_suspect = key[:1] in _SUSPECT_START and _suspect(key)
            kind = type(item)
            if not key_suspect and not (kind is str and item[:1] in _SUSPECT_START and _suspect(item)) and not (
                    (kind is dict and id(item) in self.suspect) or (kind is list and self.sequence(item)[0])):
                continue
            child = tree.find_child(node, key)
            if child == ryml.NONE:
                raise _Decline()
            if key_suspect and not _quoted(tree.type(child), key=True):
                text = self.text(child, key=True)
                resolved = _plain(text)
                if resolved is not text or text != key:
                    as_json = yaml_scalars.json_key(resolved)
                    if as_json is None:
                        raise _Decline()  # a null key: libyaml names it
                    renamed[key] = as_json
            data[key] = self.value(item, child)
        if not renamed:
            return data
        out: dict = {}
        for key, item in data.items():
            key = renamed.get(key, key)
            if key in out:
                raise _Decline()  # two keys that mean the same (``true`` and ``"true"``)
            out[key] = item
        return out


# ---- the hook-free path ----------------------------------------------------------------------------
#
# Repairing costs a Python call per mapping and a look at every scalar. It is needed only where a JSON
# string ryml wrote may stand for a plain scalar kubectl types. Such a string's text is typed-looking
# (``_suspect``); dumps hold few distinct ones ("True", "0", "1.5"), so they are collected from the JSON
# text with one regular expression (a superset of the typed forms: numbers, the YAML 1.1 words, ``~``,
# ``<<``, the empty string, and anything starting with an indicator libyaml refuses there) and judged
# one by one:
# - ryml writes the plain scalar of that text as a bare JSON token (``1``, ``1.5``, ``null``) and kubectl
#   keeps the text as a key: then every JSON *string* of that text was quoted in the YAML; or
# - no plain scalar of that text occurs in the YAML text: every occurrence is checked for the contexts
#   a plain scalar can stand in (after an indicator or an indentation, before an end of line, a comment,
#   a flow indicator or ``:``), a superset, so quoted occurrences never count.
# Otherwise the repairing hook runs as before. Depth needs no check here: ryml's writer refuses more than
# 64 levels (an error: declined), fewer than ``MAX_DEPTH``.

# An opening quote (after ``[{,:`` or white space: ryml's JSON layout; a closing quote there only adds
# candidates; a string at the very start is left to the repairing path), then a typed-looking text and its
# closing quote, or an indicator libyaml refuses at the start of a plain scalar (judged by that character
# alone: escapes may follow). The look-ahead first: most quotes fail it at once.
_STRING_CANDIDATE = re.compile(r'"(?=[-+.0-9yYnNoOtTfF~<"\]}@`%])(?<=[\[{,:\s]")'
                               r'(?:([-+.0-9][-+.0-9a-zA-Z_]*|[yYnNoOtTfF][a-zA-Z]{0,4}|~|<<|)"|([\]}@`%]))')
_PLAIN_STARTS_AFTER = frozenset("\n\r-:?,[{")
_PLAIN_ENDS_BEFORE = frozenset("\r\n#,]}")
_NORMALISED = frozenset({".inf", "-.inf", "+.inf", ".nan"})
_BARE: dict[str, bool] = {}


def _all_strings_plain(emitted: str, text: str) -> bool:
    """Whether every JSON string in ``emitted`` is the string kubectl reads from ``text`` (no repair)."""
    if emitted.lstrip()[:1] == '"':
        return False  # one document, a string: no quote before it for the pattern to see
    for typed_looking, bad_start in set(_STRING_CANDIDATE.findall(emitted)):
        if bad_start:  # libyaml refuses a plain scalar starting so, whatever follows (it may fold over lines)
            if _plain_occurrence(text, bad_start, whole=False):
                return False
        elif typed_looking == "":  # ryml writes an empty plain value as null, an empty plain key as ""
            if '"": ' in emitted:
                return False
        elif typed_looking.lower() in _NORMALISED:
            return False  # ryml writes plain inf, .Inf, nan, ... as these: the YAML text may spell them otherwise
        elif _suspect(typed_looking) and not _bare_and_same_key(typed_looking):
            if _plain_occurrence(text, typed_looking, whole=True):
                return False
    return True


def _plain_occurrence(text: str, token: str, whole: bool) -> bool:
    """Whether ``token`` occurs in ``text`` where a plain scalar may start (and, if ``whole``, end).

    A superset: after an indentation or an indicator (``- : ? , [ {``), before an end of line, a
    comment, a flow indicator or a ``:`` that ends a key. A quoted occurrence never qualifies."""
    end = len(text)
    at = text.find(token)
    while at != -1:
        before = at - 1
        while before >= 0 and text[before] == " ":
            before -= 1
        if before < 0 or text[before] in _PLAIN_STARTS_AFTER:
            if not whole:
                return True
            after = at + len(token)
            while after < end and text[after] == " ":
                after += 1
            if after == end or text[after] in _PLAIN_ENDS_BEFORE:
                return True
            if text[after] == ":" and (after + 1 == end or text[after + 1] in " \r\n"):
                return True
        at = text.find(token, at + 1)
    return False


def _bare_and_same_key(text: str) -> bool:
    """Whether ryml writes a plain scalar ``text`` as a bare JSON token and kubectl keeps it as a key."""
    known = _BARE.get(text)
    if known is None:
        resolved = yaml_scalars.resolve_plain(text)[1]
        known = yaml_scalars.json_key(resolved) == text and _ryml_writes_bare(text)
        if len(_BARE) < 10_000:
            _BARE[text] = known
    return known


def _ryml_writes_bare(text: str) -> bool:
    tree = ryml.Tree()
    try:
        with _quiet_stderr():
            ryml.parse_in_arena(("a: " + text + "\n").encode("utf-8"), tree)
            emitted = ryml.emit_json(tree, tree.root_id())
    except ryml.ExceptionBasic:
        return False
    return emitted is not None and '"a": "' not in emitted


def _unique_keys(pairs: list[tuple[str, object]]) -> dict:
    """A JSON object whose strings need no repair; duplicate keys go to libyaml, which names the line."""
    out = dict(pairs)
    if len(out) != len(pairs):
        raise _Decline()
    return out


_SUSPECT: dict[str, bool] = {}


def _suspect(text: str) -> bool:
    """Whether a plain scalar with this text is not a plain string (memoised: dumps repeat ``"True"``, ``"0"``).

    Typed (``yes``, ``0755``, ``~``), or starting with an indicator libyaml refuses there (``]x``)."""
    known = _SUSPECT.get(text)
    if known is None:
        known = text[:1] in _BAD_PLAIN_START or yaml_scalars.resolve_plain(text)[0] != _STR
        if len(_SUSPECT) < 100_000:
            _SUSPECT[text] = known
    return known


def _children(tree, node: int) -> Iterator[int]:
    child = tree.first_child(node)
    while child != ryml.NONE:
        yield child
        child = tree.next_sibling(child)


def _plain(text: str) -> object:
    """The value of a plain scalar; the same object when it is a string, so callers can tell."""
    if text[:1] in _BAD_PLAIN_START:
        raise _Decline()  # libyaml refuses this plain scalar; ryml read a string
    tag, value = yaml_scalars.resolve_plain(text)
    if tag == yaml_scalars.MERGE:
        raise _Decline()  # merge keys: the libyaml reader resolves them
    return text if tag == _STR else value


def _plain_number(text: str) -> object:
    """A bare JSON number ryml wrote for a plain scalar, read by kubectl's rules."""
    tag, value = yaml_scalars.resolve_plain(text)
    if tag not in (yaml_scalars.INT, yaml_scalars.FLOAT):
        raise _Decline()
    return value


def _plain_int(text: str) -> object:
    """A bare JSON integer: up to 18 characters it is a decimal int64, which kubectl reads as Python does."""
    return int(text) if len(text) <= 18 else _plain_number(text)


def _no_constant(text: str) -> object:
    raise _Decline()  # NaN / Infinity: not something ryml writes for YAML; let libyaml read it
