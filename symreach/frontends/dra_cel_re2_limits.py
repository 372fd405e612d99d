"""Go's ``regexp/syntax`` parse stack, as far as its three limits depend on it, decided exactly.

Go's parser refuses a pattern when, at some step of its parse, the tree it is building is over
``maxHeight`` (1,000) high (``expression nests too deeply``), over ``maxSize`` (3,355,443)
instructions by its ``calcSize``, or when the runes of the character classes it pushed so far
pass ``maxRunes`` (33,554,432) (both ``expression too large``). The three are checked at each
push onto the parse stack, at each repetition and at each branch its alternation factoring
rewrites, the height only once 1,000 nodes have been allocated and the size only once the
nodes allocated times the product of the repetition counts seen could pass ``maxSize``; both are
cached per node (a node's cached size is never forgotten, even when the node is freed and
allocated again, nor updated when a literal grows), so Go's numbers are those of its own
bookkeeping, not of the final tree. ``GoStack`` replays that bookkeeping: ``dra_cel_re2``'s
parser reports each step (a literal, a class with Go's rune list from ``dra_cel_re2_runes``, an
operator, ``(``, ``|``, ``)``, a repetition, the end) and ``GoStack`` does what Go does with its
stack — allocation from Go's free list, incremental concatenation of literals, merging of
single characters across ``|``, flattening, the four rounds of common-prefix factoring — and
raises ``GoLimit`` at the step where Go panics. A limit refusal thus wins over a syntax error
later in the pattern and loses to one before, as in Go.
"""

from __future__ import annotations

from typing import Callable, Optional

from symreach.frontends.dra_cel_re2_runes import (MAX_RUNE, append_class, append_literal, clean, min_fold,
                                                  simple_fold)

__all__ = ["DEEP", "LARGE", "GoLimit", "GoStack", "go_flags", "MAX_HEIGHT", "MAX_RUNES", "MAX_SIZE"]

MAX_HEIGHT = 1000
MAX_SIZE = (128 << 20) // 40
MAX_RUNES = (128 << 20) // 4
DEEP, LARGE = "expression nests too deeply", "expression too large"

# Go's Op values (their order matters: factoring keeps the most complex of a run of classes)
(NO_MATCH, EMPTY, LITERAL, CHAR_CLASS, ANY_NOT_NL, ANY, BEGIN_LINE, END_LINE, BEGIN_TEXT, END_TEXT, WORD,
 NO_WORD, CAPTURE, STAR, PLUS, QUEST, REPEAT, CONCAT, ALTERNATE) = range(1, 20)
LEFT_PAREN, VERTICAL_BAR = 128, 129   # pseudo-ops, only ever on the stack
# Go's Flags bits
FOLD, DOT_NL, ONE_LINE, NON_GREEDY, WAS_DOLLAR = 1, 8, 16, 32, 256
_PERL = 4 | 16 | 64 | 128   # ClassNL | OneLine | PerlX | UnicodeGroups


class GoLimit(Exception):
    """Go's parser panics with ``ErrLarge`` or ``ErrNestingDepth`` (``code``) here."""

    def __init__(self, code: str) -> None:
        super().__init__(code)
        self.code = code


def go_flags(fold: bool, multi_line: bool, dot_nl: bool, non_greedy: bool) -> int:
    """Go's ``p.flags`` under ``syntax.Perl`` with ``(?imsU)`` as given."""
    flags = _PERL & ~ONE_LINE if multi_line else _PERL
    return flags | (FOLD if fold else 0) | (DOT_NL if dot_nl else 0) | (NON_GREEDY if non_greedy else 0)


class _Re:
    """A ``*syntax.Regexp``: compared by identity, as Go's maps key it by pointer."""

    __slots__ = ("op", "flags", "subs", "runes", "min", "max", "cap", "name")

    def __init__(self) -> None:
        self.reset(0)

    def reset(self, op: int) -> None:
        self.op, self.flags, self.subs, self.runes = op, 0, [], []
        self.min = self.max = self.cap = 0
        self.name = ""


def _is_char_class(re: _Re) -> bool:
    return re.op == LITERAL and len(re.runes) == 1 or re.op in (CHAR_CLASS, ANY_NOT_NL, ANY)


def _equal(x: Optional[_Re], y: Optional[_Re]) -> bool:
    """``(*Regexp).Equal``: the same structure (a literal's flags not compared, as Go)."""
    if x is None or y is None:
        return x is y
    if x.op != y.op:
        return False
    if x.op == END_TEXT:
        return x.flags & WAS_DOLLAR == y.flags & WAS_DOLLAR
    if x.op in (LITERAL, CHAR_CLASS):
        return x.runes == y.runes
    if x.op in (ALTERNATE, CONCAT):
        if len(x.subs) != len(y.subs):
            return False
        for a, b in zip(x.subs, y.subs):   # a loop, not all(): recursion without the C stack
            if not _equal(a, b):
                return False
        return True
    if x.op in (STAR, PLUS, QUEST, REPEAT):
        return (x.flags & NON_GREEDY == y.flags & NON_GREEDY and x.min == y.min and x.max == y.max
                and _equal(x.subs[0], y.subs[0]))
    if x.op == CAPTURE:
        return x.cap == y.cap and x.name == y.name and _equal(x.subs[0], y.subs[0])
    return True


def _matches_newline(re: _Re) -> bool:
    if re.op == LITERAL:
        return re.runes == [10]
    if re.op == CHAR_CLASS:
        return any(lo <= 10 <= hi for lo, hi in zip(re.runes[0::2], re.runes[1::2]))
    return re.op == ANY


def _merge_char_class(dst: _Re, src: _Re) -> None:
    """``mergeCharClass``: ``dst`` (the more complex) becomes ``dst|src``."""
    if dst.op == ANY_NOT_NL and _matches_newline(src):
        dst.op = ANY
    elif dst.op == CHAR_CLASS:
        dst.runes = (append_literal(dst.runes, src.runes[0], bool(src.flags & FOLD)) if src.op == LITERAL
                     else append_class(dst.runes, src.runes))
    elif dst.op == LITERAL and not (src.runes[0] == dst.runes[0] and src.flags == dst.flags):
        dst.op = CHAR_CLASS
        dst.runes = append_literal(append_literal([], dst.runes[0], bool(dst.flags & FOLD)), src.runes[0],
                                   bool(src.flags & FOLD))


def _clean_alt(re: _Re) -> None:
    """``cleanAlt``: a class sorted and merged; all runes is ``.`` under ``(?s)``, all but ``\\n`` is ``.``."""
    if re.op == CHAR_CLASS:
        re.runes = clean(re.runes)
        if re.runes in ([0, MAX_RUNE], [0, 9, 11, MAX_RUNE]):
            re.op = ANY if len(re.runes) == 2 else ANY_NOT_NL
            re.runes = []


class GoStack:
    """Go's parser state for one pattern; each method is the step Go takes for one piece of syntax."""

    def __init__(self) -> None:
        self.flags = _PERL
        self.stack: list[_Re] = []
        self.free: list[_Re] = []   # Go's free list (last freed, first reused)
        self.allocated = 0   # numRegexp
        self.runes = 0   # numRunes
        self.repeats = 0
        self.captures = 0
        self.height: Optional[dict[_Re, int]] = None
        self.size: Optional[dict[_Re, int]] = None

    # -- allocation and the limits --------------------------------------------------------

    def new(self, op: int) -> _Re:
        if self.free:
            re = self.free.pop()
            re.reset(op)
        else:
            re = _Re()
            re.op = op
            self.allocated += 1
        return re

    def reuse(self, re: _Re) -> None:
        if self.height is not None:
            self.height.pop(re, None)
        self.free.append(re)

    def check(self, re: _Re) -> None:
        """``checkLimits``: runes, then size, then height."""
        if self.runes > MAX_RUNES:
            raise GoLimit(LARGE)
        self.check_size(re)
        self.check_height(re)

    def _belated(self, cache: str, check: Callable[[_Re], None]) -> None:
        """A cache Go starts late: made empty, then filled by checking each node on the stack."""
        setattr(self, cache, {})
        for x in list(self.stack):
            check(x)

    def check_size(self, re: _Re) -> None:
        if self.size is None:
            self.repeats = self.repeats or 1
            if re.op == REPEAT:
                n = re.max if re.max != -1 else re.min
                n = max(n, 1)
                self.repeats = MAX_SIZE if n > MAX_SIZE // self.repeats else self.repeats * n
            if self.allocated < MAX_SIZE // self.repeats:
                return
            self._belated("size", self.check_size)
        if self.calc_size(re, True) > MAX_SIZE:
            raise GoLimit(LARGE)

    def calc_size(self, re: _Re, force: bool) -> int:
        assert self.size is not None
        if not force and re in self.size:
            return self.size[re]
        op = re.op
        if op == LITERAL:
            size = len(re.runes)
        elif op in (CAPTURE, STAR):
            size = 2 + self.calc_size(re.subs[0], False)
        elif op in (PLUS, QUEST):
            size = 1 + self.calc_size(re.subs[0], False)
        elif op in (CONCAT, ALTERNATE):
            size = max(len(re.subs) - 1, 0) if op == ALTERNATE else 0
            for sub in re.subs:
                size += self.calc_size(sub, False)
        elif op == REPEAT:
            sub = self.calc_size(re.subs[0], False)
            if re.max == -1:
                size = 2 + sub if re.min == 0 else 1 + re.min * sub
            else:
                size = re.max * sub + re.max - re.min
        else:
            size = 0
        size = max(1, size)
        self.size[re] = size
        return size

    def check_height(self, re: _Re) -> None:
        if self.allocated < MAX_HEIGHT:
            return
        if self.height is None:
            self._belated("height", self.check_height)
        if self.calc_height(re, True) > MAX_HEIGHT:
            raise GoLimit(DEEP)

    def calc_height(self, re: _Re, force: bool) -> int:
        assert self.height is not None
        if not force and re in self.height:
            return self.height[re]
        h = 1
        for sub in re.subs:
            h = max(h, 1 + self.calc_height(sub, False))
        self.height[re] = h
        return h

    # -- the stack ---------------------------------------------------------------------------

    def push(self, re: _Re) -> None:
        """``push``: a one-rune class becomes a literal (maybe joining the literal below), a
        literal pair of one folding orbit a folded literal."""
        self.runes += len(re.runes)
        r = re.runes
        if re.op == CHAR_CLASS and len(r) == 2 and r[0] == r[1]:
            if self.maybe_concat(r[0], self.flags & ~FOLD):
                return
            re.op, re.runes, re.flags = LITERAL, r[:1], self.flags & ~FOLD
        elif re.op == CHAR_CLASS and (
                len(r) == 4 and r[0] == r[1] and r[2] == r[3] and simple_fold(r[0]) == r[2]
                and simple_fold(r[2]) == r[0]
                or len(r) == 2 and r[0] + 1 == r[1] and simple_fold(r[0]) == r[1] and simple_fold(r[1]) == r[0]):
            if self.maybe_concat(r[0], self.flags | FOLD):
                return
            re.op, re.runes, re.flags = LITERAL, r[:1], self.flags | FOLD
        else:
            self.maybe_concat(-1, 0)
        self.stack.append(re)
        self.check(re)

    def maybe_concat(self, r: int, flags: int) -> bool:
        """``maybeConcat``: the two literals on top joined; the freed one holds ``r`` if given."""
        if len(self.stack) < 2:
            return False
        re1, re2 = self.stack[-1], self.stack[-2]
        if re1.op != LITERAL or re2.op != LITERAL or re1.flags & FOLD != re2.flags & FOLD:
            return False
        re2.runes.extend(re1.runes)
        if r >= 0:
            re1.runes, re1.flags = [r], flags
            return True
        self.stack.pop()
        self.reuse(re1)
        return False

    def literal(self, c: int, flags: int) -> None:
        self.flags = flags
        re = self.new(LITERAL)
        re.flags = flags
        re.runes = [min_fold(c) if flags & FOLD else c]
        self.push(re)

    def op(self, op: int, flags: int, dollar: bool = False) -> _Re:
        """An operator without operands (``^ $ . \\A \\z \\b \\B``, ``(``, ``|``); ``dollar``: ``$``."""
        self.flags = flags
        re = self.new(op)
        re.flags = flags | (WAS_DOLLAR if dollar else 0)
        self.push(re)
        return re

    def char_class(self, runes: list[int], flags: int) -> None:
        self.flags = flags
        re = self.new(CHAR_CLASS)
        re.flags, re.runes = flags, runes
        self.push(re)

    def open(self, flags: int, capture: bool, name: str = "") -> None:
        """``(``, ``(?P<name>`` or ``(?flags:`` (``flags`` those before the group)."""
        re = self.op(LEFT_PAREN, flags)
        if capture:
            self.captures += 1
            re.cap, re.name = self.captures, name

    def repeat(self, op: int, low: int, high: int, flags: int) -> None:
        """``*+?{n,m}`` on the top of the stack (``flags`` with ``NonGreedy`` as the operator says)."""
        re = self.new(op)
        re.min, re.max, re.flags = low, high, flags
        re.subs = [self.stack[-1]]
        self.stack[-1] = re
        self.check(re)

    def bar(self, flags: int) -> None:
        """``parseVerticalBar``."""
        self.flags = flags
        self.concat()
        if not self.swap_vertical_bar():
            self.op(VERTICAL_BAR, flags)

    def close(self, flags: int) -> bool:
        """``parseRightParen`` (``flags`` those inside the group); False where Go finds no ``(``."""
        self.flags = flags
        self.concat()
        if self.swap_vertical_bar():
            self.stack.pop()
        self.alternate()
        if len(self.stack) < 2 or self.stack[-2].op != LEFT_PAREN:
            return False
        re1, re2 = self.stack[-1], self.stack[-2]
        del self.stack[-2:]
        self.flags = re2.flags
        if re2.cap == 0:
            self.push(re1)
        else:
            re2.op, re2.subs = CAPTURE, [re1]
            self.push(re2)
        return True

    def finish(self, flags: int) -> bool:
        """The end of the pattern; False where a group is left open (``missing closing )``)."""
        self.flags = flags
        self.concat()
        if self.swap_vertical_bar():
            self.stack.pop()
        self.alternate()
        return len(self.stack) == 1

    def _popped(self) -> list[_Re]:
        """The nodes above the topmost pseudo-op, taken off the stack."""
        i = len(self.stack)
        while i > 0 and self.stack[i - 1].op < LEFT_PAREN:
            i -= 1
        subs = self.stack[i:]
        del self.stack[i:]
        return subs

    def concat(self) -> None:
        self.maybe_concat(-1, 0)
        subs = self._popped()
        self.push(self.collapse(subs, CONCAT) if subs else self.new(EMPTY))

    def alternate(self) -> None:
        subs = self._popped()
        if subs:
            _clean_alt(subs[-1])
        self.push(self.collapse(subs, ALTERNATE) if subs else self.new(NO_MATCH))

    def swap_vertical_bar(self) -> bool:
        """``swapVerticalBar``: two classes around ``|`` merged into one, or the top moved below the ``|``."""
        s = self.stack
        n = len(s)
        if n >= 3 and s[n - 2].op == VERTICAL_BAR and _is_char_class(s[n - 1]) and _is_char_class(s[n - 3]):
            re1, re3 = s[n - 1], s[n - 3]
            if re1.op > re3.op:
                re1, re3 = re3, re1
                s[n - 3] = re3
            _merge_char_class(re3, re1)
            self.reuse(re1)
            s.pop()
            return True
        if n >= 2 and s[n - 2].op == VERTICAL_BAR:
            if n >= 3:
                _clean_alt(s[n - 3])
            s[n - 2], s[n - 1] = s[n - 1], s[n - 2]
            return True
        return False

    # -- collapse and factoring ----------------------------------------------------------------

    def collapse(self, subs: list[_Re], op: int) -> _Re:
        """``collapse``: one node for ``subs`` joined by ``op``, nested ones of the same op flattened."""
        if len(subs) == 1:
            return subs[0]
        re = self.new(op)
        for sub in subs:
            if sub.op == op:
                re.subs += sub.subs
                self.reuse(sub)
            else:
                re.subs.append(sub)
        if op == ALTERNATE:
            re.subs = self.factor(re.subs)
            if len(re.subs) == 1:
                old, re = re, re.subs[0]
                self.reuse(old)
        return re

    def factor(self, sub: list[_Re]) -> list[_Re]:
        if len(sub) < 2:
            return sub
        sub = self._factor_strings(sub)
        sub = self._factor_leading(sub)
        sub = self._merge_classes(sub)
        return [re for i, re in enumerate(sub) if not (i + 1 < len(sub) and re.op == EMPTY
                                                        and sub[i + 1].op == EMPTY)]

    def _factored(self, prefix: _Re, suffixes: list[_Re]) -> _Re:
        suffix = self.collapse(suffixes, ALTERNATE)
        re = self.new(CONCAT)
        re.subs = [prefix, suffix]
        return re

    def _factor_strings(self, sub: list[_Re]) -> list[_Re]:
        """Round 1: runs of branches beginning with a common literal string."""
        out: list[_Re] = []
        prefix: list[int] = []
        prefix_flags, start = 0, 0
        for i in range(len(sub) + 1):
            lead: list[int] = []
            lead_flags = 0
            if i < len(sub):
                lead, lead_flags = self._leading_string(sub[i])
                if lead_flags == prefix_flags:
                    same = 0
                    while same < len(prefix) and same < len(lead) and prefix[same] == lead[same]:
                        same += 1
                    if same > 0:
                        prefix = prefix[:same]
                        continue
            if i == start + 1:
                out.append(sub[start])
            elif i > start + 1:
                head = self.new(LITERAL)
                head.flags, head.runes = prefix_flags, list(prefix)
                for j in range(start, i):
                    sub[j] = self._remove_leading_string(sub[j], len(prefix))
                    self.check(sub[j])
                out.append(self._factored(head, sub[start:i]))
            start, prefix, prefix_flags = i, list(lead), lead_flags
        return out

    @staticmethod
    def _leading_string(re: _Re) -> tuple[list[int], int]:
        if re.op == CONCAT and re.subs:
            re = re.subs[0]
        return (re.runes, re.flags & FOLD) if re.op == LITERAL else ([], 0)

    def _remove_leading_string(self, re: _Re, n: int) -> _Re:
        if re.op == CONCAT and re.subs:
            sub = self._remove_leading_string(re.subs[0], n)
            re.subs[0] = sub
            if sub.op == EMPTY:
                self.reuse(sub)
                if len(re.subs) <= 1:
                    re.op, re.subs = EMPTY, []
                elif len(re.subs) == 2:
                    old, re = re, re.subs[1]
                    self.reuse(old)
                else:
                    del re.subs[0]
            return re
        if re.op == LITERAL:
            re.runes = re.runes[n:]
            if not re.runes:
                re.op = EMPTY
        return re

    def _factor_leading(self, sub: list[_Re]) -> list[_Re]:
        """Round 2: runs of branches beginning with one equal class or fixed repetition of a class."""
        out: list[_Re] = []
        first: Optional[_Re] = None
        start = 0
        for i in range(len(sub) + 1):
            lead: Optional[_Re] = None
            if i < len(sub):
                lead = self._leading_regexp(sub[i])
                if first is not None and _equal(first, lead) and (
                        _is_char_class(first) or first.op == REPEAT and first.min == first.max
                        and _is_char_class(first.subs[0])):
                    continue
            if i == start + 1:
                out.append(sub[start])
            elif i > start + 1:
                assert first is not None
                for j in range(start, i):
                    sub[j] = self._remove_leading_regexp(sub[j], j != start)
                    self.check(sub[j])
                out.append(self._factored(first, sub[start:i]))
            start, first = i, lead
        return out

    @staticmethod
    def _leading_regexp(re: _Re) -> Optional[_Re]:
        if re.op == EMPTY:
            return None
        if re.op == CONCAT and re.subs:
            return None if re.subs[0].op == EMPTY else re.subs[0]
        return re

    def _remove_leading_regexp(self, re: _Re, reuse: bool) -> _Re:
        if re.op == CONCAT and re.subs:
            if reuse:
                self.reuse(re.subs[0])
            del re.subs[0]
            if not re.subs:
                re.op = EMPTY
            elif len(re.subs) == 1:
                old, re = re, re.subs[0]
                self.reuse(old)
            return re
        if reuse:
            self.reuse(re)
        return self.new(EMPTY)

    def _merge_classes(self, sub: list[_Re]) -> list[_Re]:
        """Round 3: runs of single characters and classes merged into one class."""
        out: list[_Re] = []
        start = 0
        for i in range(len(sub) + 1):
            if i < len(sub) and _is_char_class(sub[i]):
                continue
            if i == start + 1:
                out.append(sub[start])
            elif i > start + 1:
                most = start
                for j in range(start + 1, i):
                    a, b = sub[most], sub[j]
                    if a.op < b.op or a.op == b.op and len(a.runes) < len(b.runes):
                        most = j
                sub[start], sub[most] = sub[most], sub[start]
                for j in range(start + 1, i):
                    _merge_char_class(sub[start], sub[j])
                    self.reuse(sub[j])
                _clean_alt(sub[start])
                out.append(sub[start])
            if i < len(sub):
                out.append(sub[i])
            start = i + 1
        return out
