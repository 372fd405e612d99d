"""RE2 patterns (Go's ``regexp``) as Python ``re`` patterns for one subject text.

cel-go's ``matches`` and Kubernetes' ``find``/``findAll`` compile the pattern with Go's
``regexp.Compile`` (Perl flags: ``^``/``$`` at the text's ends unless ``(?m)``, ``.`` not
``\\n`` unless ``(?s)``, ASCII ``\\d \\s \\w \\b``, Unicode general categories ``\\pL``,
POSIX ``[[:alpha:]]``, ``\\Q...\\E``, flags anywhere ``(?i)``/``(?U)``, case folding by
Unicode's simple folding orbits). The parse below follows Go 1.25's ``regexp/syntax``
parser, with its error texts (``missing closing ]: `[```) and limits (repeat counts up to
1000). Each character class, ``.`` and case-folded literal becomes the explicit set of the
subject's characters it matches: the pattern only ever meets that one text, so the
translation is exact without Python knowing RE2's classes or folding. Python then
backtracks in RE2's leftmost-first preference order.

What Python's tables cannot settle raises ``Re2Unsupported``: Unicode scripts
(``\\p{Greek}``), a character Python's Unicode (14, older than Go's 15) leaves unassigned
meeting a Unicode class or case folding, and patterns near Go's size and nesting limits.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from dataclasses import dataclass, field
from typing import Callable

__all__ = ["Re2Error", "Re2Unsupported", "find_all", "translate"]


class Re2Error(Exception):
    """Go's ``*syntax.Error``: the pattern does not compile."""

    def __init__(self, code: str, expr: str) -> None:
        super().__init__(f"error parsing regexp: {code}: `{expr}`")
        self.message = str(self)


class Re2Unsupported(Exception):
    pass


_I, _M, _S, _U = 1, 2, 4, 8   # FoldCase, multi-line (not OneLine), DotNL, NonGreedy

_PERL = {"d": "0-9", "s": "\t\n\f\r ", "w": "0-9A-Za-z_"}
_POSIX = {"alnum": "0-9A-Za-z", "alpha": "A-Za-z", "ascii": "\x00-\x7f", "blank": "\t ", "cntrl": "\x00-\x1f\x7f",
          "digit": "0-9", "graph": "!-~", "lower": "a-z", "print": " -~", "punct": "!-/:-@[-`{-~",
          "space": "\t-\r ", "upper": "A-Z", "word": "0-9A-Za-z_", "xdigit": "0-9A-Fa-f"}
_CATEGORIES = {"C": ("Cc", "Cf", "Co", "Cs"), "L": ("Lu", "Ll", "Lt", "Lm", "Lo"), "M": ("Mn", "Mc", "Me"),
               "LC": ("Lu", "Ll", "Lt"),
               "N": ("Nd", "Nl", "No"), "P": ("Pc", "Pd", "Ps", "Pe", "Pi", "Pf", "Po"), "S": ("Sm", "Sc", "Sk", "So"),
               "Z": ("Zs", "Zl", "Zp")}
# Go 1.25's unicode tables: the category aliases (canonical name -> category) and the scripts
# ``\p{Name}`` reaches (their canonical name is their table key); scripts are not in Python's tables
_ALIASES = {"Casedletter": "LC", "Closepunctuation": "Pe", "Combiningmark": "M", "Connectorpunctuation": "Pc",
            "Control": "Cc", "Currencysymbol": "Sc", "Dashpunctuation": "Pd", "Decimalnumber": "Nd",
            "Enclosingmark": "Me", "Finalpunctuation": "Pf", "Format": "Cf", "Initialpunctuation": "Pi",
            "Letter": "L", "Letternumber": "Nl", "Lineseparator": "Zl", "Lowercaseletter": "Ll", "Mark": "M",
            "Mathsymbol": "Sm", "Modifierletter": "Lm", "Modifiersymbol": "Sk", "Nonspacingmark": "Mn",
            "Number": "N", "Openpunctuation": "Ps", "Other": "C", "Otherletter": "Lo", "Othernumber": "No",
            "Otherpunctuation": "Po", "Othersymbol": "So", "Paragraphseparator": "Zp", "Privateuse": "Co",
            "Punctuation": "P", "Separator": "Z", "Spaceseparator": "Zs", "Spacingmark": "Mc", "Surrogate": "Cs",
            "Symbol": "S", "Titlecaseletter": "Lt", "Unassigned": "Cn", "Uppercaseletter": "Lu", "Cntrl": "Cc",
            "Digit": "Nd", "Punct": "P", "Lc": "LC"}
_SCRIPTS = frozenset("""Adlam Ahom Arabic Armenian Avestan Balinese Bamum Batak Bengali Bhaiksuki Bopomofo Brahmi
Braille Buginese Buhid Carian Chakma Cham Cherokee Chorasmian Common Coptic Cuneiform Cypriot Cyrillic Deseret
Devanagari Dogra Duployan Elbasan Elymaic Ethiopic Georgian Glagolitic Gothic Grantha Greek Gujarati Gurmukhi Han
Hangul Hanunoo Hatran Hebrew Hiragana Inherited Javanese Kaithi Kannada Katakana Kawi Kharoshthi Khmer Khojki
Khudawadi Lao Latin Lepcha Limbu Lisu Lycian Lydian Mahajani Makasar Malayalam Mandaic Manichaean Marchen Medefaidrin
Miao Modi Mongolian Mro Multani Myanmar Nabataean Nandinagari Newa Nko Nushu Ogham Oriya Osage Osmanya Palmyrene
Phoenician Rejang Runic Samaritan Saurashtra Sharada Shavian Siddham Sinhala Sogdian Soyombo Sundanese Syriac
Tagalog Tagbanwa Takri Tamil Tangsa Tangut Telugu Thaana Thai Tibetan Tifinagh Tirhuta Toto Ugaritic Vai Vithkuqi
Wancho Yezidi Yi""".split())
_FOLDED_CATEGORIES = ("L", "Ll", "Lt", "Lu", "M", "Mn")   # Go's FoldCategory: other categories are not folded
_MAX_LENGTH, _MAX_DEPTH = 2000, 200   # far below Go's limits (size 3.3M instructions, depth 1000)


def _ranges(spec: str) -> Callable[[str], bool]:
    pairs = re.findall(r"(.)(?:-(.))?", spec, re.DOTALL)
    return lambda c: any(lo <= c <= (hi or lo) for lo, hi in pairs)


def _category(name: str) -> Callable[[str], bool]:
    cats = _CATEGORIES.get(name, (name,))

    def test(c: str) -> bool:
        cat = unicodedata.category(c)
        if cat == "Cn" and not c.isascii() or name == "Cn" and cat == "Cn":
            raise Re2Unsupported("a character Python's Unicode tables leave unassigned")
        return cat in cats
    return test


def _canonical(name: str) -> str:
    """Go's ``canonicalName``: a capital, then lower case, without ``_ - `` and spaces."""
    kept = [c for c in name if c not in "_- "]
    return "".join(c.upper() if i == 0 else c.lower() for i, c in enumerate(kept)) if kept else ""


def _fold_key(c: str) -> str:
    """The representative of ``c``'s simple case folding orbit (``unicode.SimpleFold``): Python's
    one-character folding, else its one-character lower case (``ẞ``, ``ᾈ``); a character whose
    only folding is to several characters (``ß``'s ``ss``, ``ΐ``, ``ﬅ``) is alone in Go's orbits."""
    folded = c.casefold()
    if len(folded) == 1:
        return folded
    lower = c.lower()
    return lower if len(lower) == 1 else c


@functools.lru_cache(maxsize=1)
def _orbits() -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for code in range(0x110000):
        c = chr(code)
        key = _fold_key(c)
        if key != c:
            out.setdefault(key, [key]).append(c)
    return out


def _orbit(c: str) -> list[str]:
    if unicodedata.category(c) == "Cn" and not c.isascii():
        raise Re2Unsupported("a character Python's Unicode tables leave unassigned")
    key = _fold_key(c)
    return _orbits().get(key, [key, c] if key != c else [c])


_Item = tuple[Callable[[str], bool], bool, bool]


@dataclass
class _Class:
    """A set of characters: items (test, negated, foldable) joined, the whole maybe negated; under
    (?i) a foldable item also holds the characters whose folding orbit meets it."""

    items: list[_Item] = field(default_factory=list)
    negated: bool = False
    fold: bool = False

    def has(self, c: str) -> bool:
        def item(test: Callable[[str], bool], neg: bool, foldable: bool) -> bool:
            hit = any(test(y) for y in _orbit(c)) if self.fold and foldable else test(c)
            return hit != neg
        return any(item(*i) for i in self.items) != self.negated


@dataclass
class _Node:
    kind: str   # lit class any bol eol bot eot wordb nwordb empty cat alt rep group
    subs: list["_Node"] = field(default_factory=list)
    value: object = None
    low: int = 0
    high: int = -1
    lazy: bool = False


class _Parser:
    """Go's ``regexp/syntax.Parse`` with the Perl flags, as a recursive descent."""

    def __init__(self, pattern: str) -> None:
        self.s = pattern
        self.i = 0
        self.depth = 0

    def error(self, code: str, expr: str) -> Re2Error:
        return Re2Error(code, expr)

    def parse(self) -> _Node:
        node = self.alternation(0)
        if self.i < len(self.s):   # a ')' with no group open
            raise self.error("unexpected )", self.s)
        return node

    def alternation(self, flags: int) -> _Node:
        branches = []
        while True:
            concat, flags = self.concat(flags)
            branches.append(concat)
            if self.i < len(self.s) and self.s[self.i] == "|":
                self.i += 1
                continue
            return branches[0] if len(branches) == 1 else _Node("alt", branches)

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
        if c == "^":
            return _Node("bol" if flags & _M else "bot")
        if c == "$":
            return _Node("eol" if flags & _M else "eot")
        if c == ".":
            return _Node("any", value=bool(flags & _S))
        return self.literal(c, flags)

    def literal(self, c: str, flags: int) -> _Node:
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
        if counted and (bounds[0] >= 2 or bounds[1] >= 2) and not _repeat_valid(node, 1000):
            raise self.error("invalid repeat count", self.s[start:self.i])
        items[-1] = node

    def group(self, items: list[_Node], flags: int) -> int:
        """``(``: a capture, ``(?:``, a named capture or flags; returns the flags that follow."""
        s = self.s
        inner = flags
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
        else:
            self.i += 1
        self.depth += 1
        if self.depth > _MAX_DEPTH:
            raise Re2Unsupported("deep nesting")
        body = self.alternation(inner)
        self.depth -= 1
        if self.i >= len(self.s):
            raise self.error("missing closing )", self.s)
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
        cls = self.class_escape(flags)
        if cls is not None:
            items.append(_Node("class", value=_Class([cls], fold=bool(flags & _I))))
            return
        items.append(self.literal(self.escaped_char(), flags))

    def class_escape(self, flags: int) -> _Item | None:
        """``\\pX \\p{Name} \\PX`` and ``\\d \\s \\w`` and their negations, as a class item."""
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
            name = _canonical(name)
            self.i += len(seq)
            if name == "Any":
                return (lambda c: True), negated, True
            if name == "Ascii":
                return (lambda c: c.isascii()), negated, True
            if name == "Assigned":
                return _category("Cn"), not negated, True
            name = _ALIASES.get(name, name)
            if name in _CATEGORIES or name in {c for cs in _CATEGORIES.values() for c in cs} | {"Cn"}:
                return _category(name), negated, name in _FOLDED_CATEGORIES
            if name in _SCRIPTS:
                raise Re2Unsupported(f"the Unicode script {seq}")
            raise self.error("invalid character class range", seq)
        if nxt.lower() in _PERL:
            self.i += 2
            return _ranges(_PERL[nxt.lower()]), nxt.isupper(), True
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
                    cls.items.append((_ranges(_POSIX[body.lstrip("^")]), negated, True))
                    self.i = end + 2
                    continue
            item = self.class_escape(flags) if s[self.i] == "\\" else None
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
            cls.items.append(((lambda c, lo=lo, hi=hi: lo <= c <= hi), False, True))
        self.i += 1
        return _Node("class", value=cls)

    def class_char(self, whole_start: int) -> str:
        if self.i >= len(self.s):
            raise self.error("missing closing ]", self.s[whole_start:])
        if self.s[self.i] == "\\":
            return self.escaped_char()
        self.i += 1
        return self.s[self.i - 1]


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
    return all(_repeat_valid(sub, n) for sub in node.subs)


def _charset(chars: list[str]) -> str:
    return "[" + "".join(re.escape(c) if c not in "\\]^-[" else "\\" + c for c in chars) + "]" if chars else "(?!)"


def _emit(node: _Node, alphabet: list[str]) -> str:
    kind = node.kind
    if kind == "lit":
        c, fold = node.value   # type: ignore[misc]
        if not fold:
            return re.escape(c)
        if any(unicodedata.category(x) == "Cn" and not x.isascii() for x in alphabet + [c]):
            raise Re2Unsupported("a character Python's Unicode tables leave unassigned")
        key = _fold_key(c)
        return _charset([x for x in alphabet if x == c or _fold_key(x) == key])
    if kind == "class":
        return _charset([x for x in alphabet if node.value.has(x)])   # type: ignore[union-attr]
    if kind == "any":
        return _charset([x for x in alphabet if node.value or x != "\n"])
    fixed = {"bol": r"(?:(?<=\n)|\A)", "eol": r"(?=\n|\Z)", "bot": r"\A", "eot": r"\Z", "wordb": r"\b",
             "nwordb": r"\B", "empty": ""}
    if kind in fixed:
        return fixed[kind]
    if kind == "cat":
        return "".join(_emit(s, alphabet) for s in node.subs)
    if kind == "alt":
        return "(?:" + "|".join(_emit(s, alphabet) for s in node.subs) + ")"
    if kind == "group":
        return "(?:" + _emit(node.subs[0], alphabet) + ")"
    low, high = node.low, node.high
    count = {(0, -1): "*", (1, -1): "+", (0, 1): "?"}.get((low, high)) or (
        f"{{{low},}}" if high < 0 else f"{{{low}}}" if low == high else f"{{{low},{high}}}")
    return "(?:" + _emit(node.subs[0], alphabet) + ")" + count + ("?" if node.lazy else "")


@functools.lru_cache(maxsize=4096)
def translate(pattern: str, subject: str) -> re.Pattern:
    """The Python pattern that matches ``subject`` where Go's ``regexp.Compile(pattern)`` does;
    ``Re2Error`` with Go's message when Go refuses the pattern."""
    if len(pattern) > _MAX_LENGTH:
        raise Re2Unsupported("a long pattern")
    tree = _Parser(pattern).parse()
    return re.compile(_emit(tree, sorted(set(subject))), re.ASCII)


def find_all(pattern: re.Pattern, s: str, limit: int) -> list[str]:
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
