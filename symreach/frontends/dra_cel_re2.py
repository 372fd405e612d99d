"""RE2 patterns (Go's ``regexp``) for one subject text, matched by RE2 C++ as Go matches them.

cel-go's ``matches`` and Kubernetes' ``find``/``findAll`` compile the pattern with Go's
``regexp.Compile`` (Perl flags: ``^``/``$`` at the text's ends unless ``(?m)``, ``.`` not
``\\n`` unless ``(?s)``, ASCII ``\\d \\s \\w \\b``, Unicode general categories ``\\pL``,
POSIX ``[[:alpha:]]``, ``\\Q...\\E``, flags anywhere ``(?i)``/``(?U)``, case folding by
Unicode's simple folding orbits). The parse below follows Go 1.25's ``regexp/syntax``
parser, with its error texts (``missing closing ]: `[```) and limits (repeat counts up to
1000). Each character class, ``.`` and case-folded literal becomes the explicit set of the
subject's characters it matches: the pattern only ever meets that one text, so the
translation is exact without RE2 C++ knowing Go's classes or folding. Unicode classes
(categories, scripts, ``Assigned``) and folding orbits are Go's own tables (``go_unicode``,
Unicode 15), not Python's older ``unicodedata``.

The emitted pattern uses only explicit character sets, ``(?:...)``, alternation, greedy and lazy
counted repetition, ``\\A \\z (?m:^) (?m:$)`` and ASCII ``\\b \\B``, and RE2 C++ (``google-re2``)
matches it: linear time, like Go (Python's backtracking ``re`` took minutes on ``^(a|a)*b$`` and
on long patterns), and Go's own semantics where backtracking differs (a loop body matching
empty, ``\\B`` in the empty text). RE2 runs on UTF-8 bytes; a search is ``(?s:.)*?(body)``
anchored at a character, so a match starts at a rune as in Go, and positions come back in
characters. Repetition counts are at most 1,000 as in Go; RE2 C++'s memory budget is 256 MB.

Go's limits on its tree's height, size and class runes (``expression nests too deeply``,
``expression too large``) are decided exactly: the parser tells each step to
``dra_cel_re2_limits``, which replays Go's parse stack and its bookkeeping.
``Re2Unsupported``: a surrogate (not in a Go string), a translation RE2 C++ refuses (past its
256 MB: a pattern near Go's size limit whose classes, written as the subject's characters,
take RE2 many instructions each, e.g. ``(?:.{3000}){1000}`` on a text of 60 CJK characters),
or a recursion past Python's limit (raised with the pattern's length; none known).
"""

from __future__ import annotations

import contextlib
import functools
import re
import sys
import threading
from dataclasses import dataclass, field
from typing import Callable, Iterator

import re2

from symreach.frontends import dra_cel_re2_limits as go, go_unicode
from symreach.frontends.dra_cel_re2_runes import (append_folded_range, append_group, append_range, clean, negate,
                                                  unicode_class, unicode_name)

__all__ = ["Re2Error", "Found", "Re2Unsupported", "Pattern", "emit", "find_all", "translate"]


class Re2Error(Exception):
    """Go's ``*syntax.Error``: the pattern does not compile."""

    def __init__(self, code: str, expr: str) -> None:
        super().__init__(f"error parsing regexp: {code}: `{expr}`")
        self.message = str(self)


class Re2Unsupported(Exception):
    pass


@dataclass(frozen=True)
class Found:
    """A match: its span in ``str`` characters, as Python's ``re.Match`` gives it."""

    text: str
    span: tuple[int, int]

    def start(self) -> int:
        return self.span[0]

    def end(self) -> int:
        return self.span[1]

    def group(self, index: int = 0) -> str:
        return self.text[self.span[0]:self.span[1]]


class Pattern:
    """A pattern RE2 compiled: ``(?s:.)*?(body)`` matched from a position on. RE2's own unanchored
    search may start a match inside a UTF-8 sequence (an empty one, such as ``\\B``); Go starts
    one at each rune, as this prefix does."""

    def __init__(self, body: str) -> None:
        self.regexp = re2.compile("(?s:.)*?(" + body + ")", _OPTIONS)

    def search(self, text: str, pos: int = 0) -> Found | None:
        m = self.regexp.match(text, pos)
        return None if m is None else Found(text, m.span(1))


_I, _M, _S, _U = 1, 2, 4, 8   # FoldCase, multi-line (not OneLine), DotNL, NonGreedy

_PERL = {"d": "0-9", "s": "\t\n\f\r ", "w": "0-9A-Za-z_"}
_POSIX = {"alnum": "0-9A-Za-z", "alpha": "A-Za-z", "ascii": "\x00-\x7f", "blank": "\t ", "cntrl": "\x00-\x1f\x7f",
          "digit": "0-9", "graph": "!-~", "lower": "a-z", "print": " -~", "punct": "!-/:-@[-`{-~",
          "space": "\t-\r ", "upper": "A-Z", "word": "0-9A-Za-z_", "xdigit": "0-9A-Fa-f"}
_FRAMES = 12   # Python frames per pattern character, at most: the parser, Go's stack's walks, emit
_MAX_MEMORY = 1 << 28   # RE2 C++'s max_mem: its compiled program and DFA cache


def _ranges(spec: str) -> Callable[[str], bool]:
    pairs = re.findall(r"(.)(?:-(.))?", spec, re.DOTALL)
    return lambda c: any(lo <= c <= (hi or lo) for lo, hi in pairs)


def _folded(test: Callable[[str], bool]) -> Callable[[str], bool]:
    """Under ``(?i)``, a range or a Perl or POSIX class also holds the characters whose simple
    folding orbit meets it (``appendFoldedRange``)."""
    return lambda c: any(test(y) for y in go_unicode.orbit(c))


def _member(table: go_unicode.Table) -> Callable[[str], bool]:
    return lambda c: c in table


def _any(c: str) -> bool:
    return True


def _unicode_table(name: str) -> tuple[Callable[[str], bool], Callable[[str], bool], bool] | None:
    """``unicodeTable``: the class ``\\p{name}`` names, the class under ``(?i)`` (the table and Go's
    ``FoldCategory``/``FoldScript`` table, the table alone where Go has none), and whether it is
    inverted (``Assigned``); None for a name Go does not know."""
    resolved = unicode_name(name)
    if resolved is None:
        return None
    name = resolved
    if name == "Any":
        return _any, _any, False
    if name == "Assigned":
        cn = _member(go_unicode.category("Cn"))   # type: ignore[arg-type]
        return cn, cn, True
    if name == "Ascii":
        return (lambda c: c.isascii()), (lambda c: c.isascii() or c in "\u017f\u212a"), False
    table = go_unicode.category(name) or go_unicode.script(name)
    fold = go_unicode.fold_table(name)
    test = _member(table)   # type: ignore[arg-type]
    return test, (test if fold is None else lambda c: c in table or c in fold), False   # type: ignore[operator]


_Item = tuple[Callable[[str], bool], bool, Callable[[str], bool]]


@dataclass
class _Class:
    """A set of characters: items (test, negated, test under (?i)) joined, the whole maybe negated."""

    items: list[_Item] = field(default_factory=list)
    negated: bool = False
    fold: bool = False

    def has(self, c: str) -> bool:
        return any((folded if self.fold else test)(c) != neg for test, neg, folded in self.items) != self.negated


@dataclass
class _Node:
    kind: str   # lit class any bol eol bot eot wordb nwordb empty cat alt rep group
    subs: list["_Node"] = field(default_factory=list)
    value: object = None
    low: int = 0
    high: int = -1
    lazy: bool = False


class _Parser:
    """Go's ``regexp/syntax.Parse`` with the Perl flags, as a recursive descent; each step it
    takes is also told to ``go``, Go's parse stack, which raises ``GoLimit`` where Go's limits
    refuse the pattern (``dra_cel_re2_limits``)."""

    def __init__(self, pattern: str) -> None:
        self.s = pattern
        self.i = 0
        self.go = go.GoStack()

    def error(self, code: str, expr: str) -> Re2Error:
        return Re2Error(code, expr)

    def parse(self) -> _Node:
        node, flags = self.alternation(0)
        if self.i < len(self.s):   # a ')' with no group open
            self.go.close(_go_flags(flags))
            raise self.error("unexpected )", self.s)
        self.go.finish(_go_flags(flags))
        return node

    def alternation(self, flags: int) -> tuple[_Node, int]:
        """Branches up to a ``)`` or the end; the flags in force there."""
        branches = []
        while True:
            concat, flags = self.concat(flags)
            branches.append(concat)
            if self.i < len(self.s) and self.s[self.i] == "|":
                self.go.bar(_go_flags(flags))
                self.i += 1
                continue
            return (branches[0] if len(branches) == 1 else _Node("alt", branches)), flags

    def concat(self, flags: int) -> tuple[_Node, int]:
        items: list[_Node] = []
        last_repeat = -1   # where the previous token, a repetition, began
        while self.i < len(self.s) and self.s[self.i] not in "|)":
            start = self.i
            c = self.s[self.i]
            repeat = -1
            if c in "*+?{":
                bounds = self.repeat_bounds() if c == "{" else ((0, -1), (1, -1), (0, 1))["*+?".index(c)]
                if bounds is None:   # not a counted repetition: a literal {
                    self.i += 1
                    items.append(self.literal("{", flags))
                else:
                    self.apply_repeat(items, bounds, start, last_repeat, flags)
                    repeat = start
            elif c == "(":
                flags = self.group(items, flags)
            elif c == "[":
                items.append(self.bracket(flags))
            elif c == "\\":
                self.escape(items, flags)
            else:
                self.i += 1
                items.append(self.atom(c, flags))
            last_repeat = repeat
        return (items[0] if len(items) == 1 else _Node("cat", items)), flags

    def atom(self, c: str, flags: int) -> _Node:
        if c in "^$.":
            kind = {"^": ("bot", "bol"), "$": ("eot", "eol"), ".": ("any", "any")}[c][bool(flags & _M)]
            self.go.op(_GO_OPS[kind] if c != "." else go.ANY if flags & _S else go.ANY_NOT_NL, _go_flags(flags),
                       dollar=c == "$")
            return _Node(kind, value=bool(flags & _S) if c == "." else None)
        return self.literal(c, flags)

    def literal(self, c: str, flags: int) -> _Node:
        self.go.literal(ord(c), _go_flags(flags))
        return _Node("lit", value=(c, bool(flags & _I)))

    def repeat_bounds(self) -> tuple[int, int] | None:
        m = re.match(r"\{(\d+)(,(\d*))?\}", self.s[self.i:])
        if not m or any(g and len(g) > 1 and g[0] == "0" for g in (m.group(1), m.group(3))):
            return None
        low = _go_int(m.group(1))
        high = low if m.group(2) is None else -1 if m.group(3) == "" else _go_int(m.group(3))
        if m.group(3) and high < 0:
            low = -1
        expr = m.group(0)
        if low < 0 or low > 1000 or high > 1000 or high >= 0 and low > high:
            raise self.error("invalid repeat count", expr)
        self.i += len(expr) - 1   # apply_repeat steps over the last character
        return low, high

    def apply_repeat(self, items: list[_Node], bounds: tuple[int, int], start: int, last_repeat: int,
                     flags: int) -> None:
        self.i += 1
        lazy = bool(flags & _U)
        if self.i < len(self.s) and self.s[self.i] == "?":
            self.i += 1
            lazy = not lazy
        if last_repeat >= 0:
            raise self.error("invalid nested repetition operator", self.s[last_repeat:self.i])
        if not items:
            raise self.error("missing argument to repetition operator", self.s[start:self.i])
        node = _Node("rep", [items[-1]], low=bounds[0], high=bounds[1], lazy=lazy)
        counted = self.s[start] == "{"
        op = go.REPEAT if counted else {"*": go.STAR, "+": go.PLUS, "?": go.QUEST}[self.s[start]]
        self.go.repeat(op, *(bounds if counted else (0, 0)), _go_flags(flags & ~_U | (_U if lazy else 0)))
        if counted and (bounds[0] >= 2 or bounds[1] >= 2) and not _repeat_valid(node, 1000):
            raise self.error("invalid repeat count", self.s[start:self.i])
        items[-1] = node

    def group(self, items: list[_Node], flags: int) -> int:
        """``(``: a capture, ``(?:``, a named capture or flags; returns the flags that follow."""
        s = self.s
        inner, name, capture = flags, "", True
        if s.startswith("(?", self.i):
            t = s[self.i:]
            named = len(t) > 4 and t[2] == "P" and t[3] == "<" or len(t) > 3 and t[2] == "<"
            if named:
                end = t.find(">")
                if end < 0:
                    raise self.error("invalid named capture", t)
                name = t[4 if t[2] == "P" else 3:end]
                if not name or not all(c == "_" or c.isascii() and c.isalnum() for c in name):
                    raise self.error("invalid named capture", t[:end + 1])
                self.i += end + 1
            else:
                inner, scoped = self.flags(flags)
                if not scoped:
                    return inner   # (?flags): the rest of the enclosing group
                capture = False
        else:
            self.i += 1
        self.go.open(_go_flags(flags), capture, name)
        body, inner = self.alternation(inner)
        if self.i >= len(self.s):
            self.go.finish(_go_flags(inner))
            raise self.error("missing closing )", self.s)
        self.go.close(_go_flags(inner))
        self.i += 1
        items.append(_Node("group", [body]))
        return flags

    def flags(self, flags: int) -> tuple[int, bool]:
        """``(?imsU-imsU)`` or ``(?imsU-imsU:``: the new flags, and whether a group opens."""
        start = self.i
        self.i += 2
        sign, saw, new = 1, False, flags
        while self.i < len(self.s):
            c = self.s[self.i]
            self.i += 1
            if c in "imsU":
                bit = {"i": _I, "m": _M, "s": _S, "U": _U}[c]
                new = new | bit if sign > 0 else new & ~bit
                saw = True
            elif c == "-" and sign > 0:
                sign, saw = -1, False
            elif c in ":)" and not (sign < 0 and not saw):
                return new, c == ":"
            else:
                break
        raise self.error("invalid or unsupported Perl syntax", self.s[start:self.i])

    def escape(self, items: list[_Node], flags: int) -> None:
        s, i = self.s, self.i
        nxt = s[i + 1:i + 2]
        simple = {"A": "bot", "z": "eot", "b": "wordb", "B": "nwordb"}
        if nxt in simple:
            self.i += 2
            self.go.op(_GO_OPS[simple[nxt]], _go_flags(flags))
            items.append(_Node(simple[nxt]))
            return
        if nxt == "C":
            raise self.error("invalid escape sequence", "\\C")
        if nxt == "Q":
            end = s.find("\\E", i + 2)
            text = s[i + 2:] if end < 0 else s[i + 2:end]
            self.i = len(s) if end < 0 else end + 2
            items.extend(self.literal(c, flags) for c in text)
            return
        runes: list[int] = []
        cls = self.class_escape(flags, runes)
        if cls is not None:
            self.go.char_class(runes, _go_flags(flags))
            items.append(_Node("class", value=_Class([cls], fold=bool(flags & _I))))
            return
        items.append(self.literal(self.escaped_char(), flags))

    def class_escape(self, flags: int, runes: list[int]) -> _Item | None:
        """``\\pX \\p{Name} \\PX`` and ``\\d \\s \\w`` and their negations, as a class item;
        Go's runes for it appended to ``runes``."""
        s, i = self.s, self.i
        nxt = s[i + 1:i + 2]
        if nxt in ("p", "P"):
            negated = nxt == "P"
            if s[i + 2:i + 3] == "{":
                end = s.find("}", i)
                if end < 0:
                    raise self.error("invalid character class range", s[i:])
                seq, name = s[i:end + 1], s[i + 3:end]
            else:
                seq, name = s[i:i + 3], s[i + 2:i + 3]
            if name.startswith("^"):
                negated, name = not negated, name[1:]
            self.i += len(seq)
            found = _unicode_table(name)
            if found is None:
                raise self.error("invalid character class range", seq)
            test, folded, inverted = found
            runes[:] = unicode_class(runes, name, negated, bool(flags & _I))
            return test, negated != inverted, folded
        if nxt.lower() in _PERL:
            self.i += 2
            test = _ranges(_PERL[nxt.lower()])
            runes[:] = append_group(runes, _group_runes(_PERL[nxt.lower()]), nxt.isupper(), bool(flags & _I))
            return test, nxt.isupper(), _folded(test)
        return None

    def escaped_char(self) -> str:
        """``parseEscape``: one escaped character (octal, hex, C escapes, punctuation)."""
        s, start = self.s, self.i
        if start + 1 >= len(s):
            raise self.error("trailing backslash at end of expression", "")
        c = s[start + 1]
        self.i = start + 2
        if c in "01234567":
            digits = re.match(r"[0-7]{0,2}", s[self.i:]).group(0)   # type: ignore[union-attr]
            if c != "0" and not digits:
                raise self.error("invalid escape sequence", s[start:self.i])
            self.i += len(digits)
            return chr(int(c + digits, 8))
        if c == "x":
            return self.hex_escape(start)
        if c in "afnrtv":
            return {"a": "\a", "f": "\f", "n": "\n", "r": "\r", "t": "\t", "v": "\v"}[c]
        if c.isascii() and not c.isalnum():
            return c
        raise self.error("invalid escape sequence", s[start:self.i])

    def hex_escape(self, start: int) -> str:
        """``\\xHH`` or ``\\x{H...}``; Go's error shows the text up to where its scan stopped."""
        s, j = self.s, self.i
        hexdigits = "0123456789abcdefABCDEF"
        if j >= len(s):
            raise self.error("invalid escape sequence", s[start:j])
        first, j = s[j], j + 1
        if first == "{":
            value, count = 0, 0
            while True:
                if j >= len(s):
                    raise self.error("invalid escape sequence", s[start:j])
                c, j = s[j], j + 1
                if c == "}":
                    break
                if c not in hexdigits or value * 16 + int(c, 16) > 0x10FFFF:
                    raise self.error("invalid escape sequence", s[start:j])
                value, count = value * 16 + int(c, 16), count + 1
            if not count:
                raise self.error("invalid escape sequence", s[start:j])
            self.i = j
            return chr(value)
        second = s[j:j + 1]
        j += len(second)
        if first not in hexdigits or not second or second not in hexdigits:
            raise self.error("invalid escape sequence", s[start:j])
        self.i = j
        return chr(int(first + second, 16))

    def bracket(self, flags: int) -> _Node:
        """``parseClass``: ``[...]`` with ranges, escapes, ``[:name:]`` and Unicode classes."""
        s, whole_start = self.s, self.i
        self.i += 1
        cls = _Class(fold=bool(flags & _I))
        runes: list[int] = []   # Go's, as parseClass appends them
        if s[self.i:self.i + 1] == "^":
            cls.negated = True
            self.i += 1
        first = True
        while self.i >= len(s) or s[self.i] != "]" or first:
            first = False
            if self.i >= len(s):
                raise self.error("missing closing ]", s[whole_start:])
            if s.startswith("[:", self.i) and len(s) - self.i > 2:
                end = s.find(":]", self.i + 2)
                if end >= 0:
                    name = s[self.i:end + 2]
                    body = name[2:-2]
                    negated = body.startswith("^")
                    if body.lstrip("^") not in _POSIX or body.count("^") > 1:
                        raise self.error("invalid character class range", name)
                    test = _ranges(_POSIX[body.lstrip("^")])
                    cls.items.append((test, negated, _folded(test)))
                    runes = append_group(runes, _group_runes(_POSIX[body.lstrip("^")]), negated, cls.fold)
                    self.i = end + 2
                    continue
            item = self.class_escape(flags, runes) if s[self.i] == "\\" else None
            if item is not None:
                cls.items.append(item)
                continue
            range_start = self.i
            lo = self.class_char(whole_start)
            hi = lo
            if s[self.i:self.i + 1] == "-" and self.i + 1 < len(s) and s[self.i + 1] != "]":
                self.i += 1
                hi = self.class_char(whole_start)
                if hi < lo:
                    raise self.error("invalid character class range", s[range_start:self.i])
            test = (lambda c, lo=lo, hi=hi: lo <= c <= hi)
            cls.items.append((test, False, _folded(test)))
            runes = (append_folded_range if cls.fold else append_range)(runes, ord(lo), ord(hi))
        self.i += 1
        runes = clean(runes)
        self.go.char_class(negate(runes) if cls.negated else runes, _go_flags(flags))
        return _Node("class", value=cls)

    def class_char(self, whole_start: int) -> str:
        if self.i >= len(self.s):
            raise self.error("missing closing ]", self.s[whole_start:])
        if self.s[self.i] == "\\":
            return self.escaped_char()
        self.i += 1
        return self.s[self.i - 1]


def _go_flags(flags: int) -> int:
    return go.go_flags(bool(flags & _I), bool(flags & _M), bool(flags & _S), bool(flags & _U))


_GO_OPS = {"bol": go.BEGIN_LINE, "eol": go.END_LINE, "bot": go.BEGIN_TEXT, "eot": go.END_TEXT, "wordb": go.WORD,
           "nwordb": go.NO_WORD}


@functools.lru_cache(maxsize=None)
def _group_runes(spec: str) -> list[int]:
    """A Perl or POSIX class spec as Go's table of it (sorted, merged ranges)."""
    return clean([ord(c) for lo, hi in re.findall(r"(.)(?:-(.))?", spec, re.DOTALL) for c in (lo, hi or lo)])


def _go_int(digits: str) -> int:
    """``parseInt``: the value, or -1 past 1e8 (Go stops there to avoid overflow)."""
    n = 0
    for d in digits:
        if n >= 10 ** 8:
            return -1
        n = n * 10 + int(d)
    return n


def _repeat_valid(node: _Node, n: int) -> bool:
    """``repeatIsValid``: nested counted repetitions multiply to at most ``n`` copies."""
    if node.kind == "rep":
        m = node.high if node.high >= 0 else node.low
        if node.high == 0:
            return True
        if m > n:
            return False
        if m > 0:
            n //= m
    for sub in node.subs:
        if not _repeat_valid(sub, n):
            return False
    return True


def _char(c: str) -> str:
    """One character in RE2's syntax: a letter or digit as itself, any other as ``\\x{...}``."""
    return c if c.isascii() and c.isalnum() else f"\\x{{{ord(c):x}}}"


def _charset(chars: list[str], alphabet: list[str]) -> str:
    """The subject's characters ``chars`` as a set, or the others' complement where they are
    fewer (the subject holds no other character): RE2 C++ compiles a set of many non-ASCII
    characters into many instructions, and a pattern near Go's size limit repeats it thousands
    of times within RE2's memory budget."""
    if not chars:
        return _NOTHING
    if len(chars) == len(alphabet):
        return "(?s:.)"
    if 2 * len(chars) > len(alphabet):
        members = set(chars)
        return "[^" + "".join(_char(x) for x in alphabet if x not in members) + "]"
    return "[" + "".join(map(_char, chars)) + "]"


_NOTHING = "[^\\x00-\\x{10ffff}]"   # the empty class (a class of no subject character)
_FIXED = {"bol": "(?m:^)", "eol": "(?m:$)", "bot": "\\A", "eot": "\\z", "wordb": "\\b", "nwordb": "\\B", "empty": ""}


def _emit(node: _Node, alphabet: list[str]) -> str:
    """RE2 syntax for ``node``: explicit character sets, ``(?:...)`` groups, alternation,
    counted repetition (greedy or lazy), the anchors and ASCII ``\\b``."""
    kind = node.kind
    if kind == "lit":
        c, fold = node.value   # type: ignore[misc]
        if not fold:
            return _char(c)
        orbit = go_unicode.orbit(c)
        return _charset([x for x in alphabet if x in orbit], alphabet)
    if kind == "class":
        return _charset([x for x in alphabet if node.value.has(x)], alphabet)   # type: ignore[union-attr]
    if kind == "any":
        return _charset([x for x in alphabet if node.value or x != "\n"], alphabet)
    if kind in _FIXED:
        return _FIXED[kind]
    if kind == "cat":
        return "".join([_emit(s, alphabet) for s in node.subs])
    if kind == "alt":
        return "(?:" + "|".join([_emit(s, alphabet) for s in node.subs]) + ")"
    if kind == "group":
        return "(?:" + _emit(node.subs[0], alphabet) + ")"
    low, high = node.low, node.high
    count = {(0, -1): "*", (1, -1): "+", (0, 1): "?"}.get((low, high)) or (
        f"{{{low},}}" if high < 0 else f"{{{low}}}" if low == high else f"{{{low},{high}}}")
    return "(?:" + _emit(node.subs[0], alphabet) + ")" + count + ("?" if node.lazy else "")


def _options() -> re2.Options:
    options = re2.Options()
    options.log_errors = False
    options.max_mem = _MAX_MEMORY
    return options


_OPTIONS = _options()


def emit(pattern: str, subject: str) -> str:
    """The RE2 pattern (``re2`` syntax) that matches ``subject`` where Go's ``regexp.Compile(pattern)``
    does; ``Re2Error`` with Go's message when Go refuses the pattern."""
    if _SURROGATE.search(pattern) or _SURROGATE.search(subject):
        raise Re2Unsupported("a surrogate, which Go's UTF-8 strings cannot hold")
    tree = _parsed(pattern)
    if isinstance(tree, Re2Error):
        raise tree
    with _frames(len(pattern)):
        return _emit(tree, sorted(set(subject)))


@functools.lru_cache(maxsize=8)   # (a tree of a long pattern holds tens of MB)
def _parsed(pattern: str) -> _Node | Re2Error:
    """The pattern's tree, or Go's error for it: a syntax error, or a limit Go's parse stack
    passes before it (``expression nests too deeply``, ``expression too large``, the whole
    pattern quoted, as Go's ``parse`` reports a limit's panic)."""
    with _frames(len(pattern)):
        try:
            return _Parser(pattern).parse()
        except go.GoLimit as limit:
            return Re2Error(limit.code, pattern)
        except Re2Error as err:
            return err


@contextlib.contextmanager
def _frames(length: int) -> Iterator[None]:
    """Python's recursion limit raised for a pattern of ``length`` characters (no deeper than that
    in groups, in Go's tree or in its factoring), then restored; one pattern at a time (the limit
    is the process's). The recursive walks call themselves from Python only (no ``max``/``all``
    over a generator), so deep recursion uses no C stack on Python 3.11 on. A recursion error all
    the same is an unsupported pattern, never a crash."""
    with _RAISING:
        before = sys.getrecursionlimit()
        sys.setrecursionlimit(before + _FRAMES * (length + 2))
        try:
            yield
        except RecursionError:
            raise Re2Unsupported("nesting deeper than Python's recursion allows") from None
        finally:
            sys.setrecursionlimit(before)


_RAISING = threading.Lock()


_SURROGATE = re.compile("[\ud800-\udfff]")


def translate(pattern: str, subject: str) -> Pattern:
    """``emit``'s pattern compiled by RE2 (``search``, ``start``, ``end``, ``group`` as Python's
    ``re``; positions in ``str`` characters); ``Re2Unsupported`` where RE2 C++ refuses it.
    The last 4,096 are kept, but none of over ``_KEPT_PROGRAM`` instructions (one near Go's size
    limit holds tens of MB)."""
    key = (pattern, subject)
    found = _TRANSLATED.pop(key, None)
    if found is None:
        text = emit(pattern, subject)
        try:
            found = Pattern(text)
        except re2.error as err:   # e.g. over max_mem: Go may still accept it
            raise Re2Unsupported(f"RE2 C++ refuses the translation: {err}") from None
    if found.regexp.programsize <= _KEPT_PROGRAM:
        _TRANSLATED[key] = found   # (last used last)
        if len(_TRANSLATED) > 4096:
            del _TRANSLATED[next(iter(_TRANSLATED))]
    return found


_TRANSLATED: dict[tuple[str, str], Pattern] = {}
_KEPT_PROGRAM = 100_000


def find_all(pattern: Pattern, s: str, limit: int) -> list[str]:
    """Go's ``FindAllString``: no empty match right after the previous match."""
    out: list[str] = []
    pos, previous_end = 0, -1
    while (limit < 0 or len(out) < limit) and pos <= len(s):
        m = pattern.search(s, pos)
        if not m:
            break
        accept = True
        if m.end() == m.start():
            accept = m.start() != previous_end
            pos = m.end() + 1
        else:
            pos = m.end()
        previous_end = m.end()
        if accept:
            out.append(m.group(0))
    return out
