"""The CEL device selectors of DynamicResources, evaluated as the scheduler's CEL environment does.

A DeviceClass or a claim's request selects devices with CEL expressions over
``device.driver``, ``device.attributes["<domain>"].<name>`` and
``device.capacity["<domain>"].<name>``. The v1.35 allocator compiles them in
``k8s.io/dynamic-resource-allocation/cel/compile.go`` (``newCompiler``):
Kubernetes' base environment (``k8s.io/apiserver/pkg/cel/environment/base.go``,
the StoredExpressions set) plus ``ext.Bindings``. Evaluated here, with cel-go's
runtime errors and messages (checked construct by construct against the kso DRA
variant, ``tests/test_dra_cel_environment.py``):

- literals (int, uint, double, string, bytes, bool, null, lists, maps, with
  ``?`` optional entries), ``!``, unary ``-``, ``* / % + -``, ``== != < <= > >=``,
  ``in``, ``&&``, ``||``, ``? :``, parentheses, ``.f`` / ``[k]`` / ``.?f`` /
  ``[?k]``; CEL's heterogeneous ``==`` (false, not an error), cross-type numeric
  ordering, commutative ``&&``/``||`` (a decided operand wins over an error);
- ``has``, ``size``, ``int uint double string bytes dyn type`` and the type names;
  the macros ``all exists exists_one map filter`` and the two-variable
  ``all exists existsOne transformList transformMap transformMapEntry``;
  ``cel.bind``;
- strings: ``startsWith endsWith contains matches`` (RE2 parsed as Go's
  ``regexp/syntax`` does, with its error texts, and translated for the subject,
  ``dra_cel_re2``), ext.Strings v2 ``charAt indexOf lastIndexOf lowerAscii
  upperAscii replace split substring trim join strings.quote format``
  (``dra_cel_strformat``: Go's verbs, x/text's en_US ``%f``/``%e``), regex ``find
  findAll`` (Go's ``FindAllString``);
- lists: ``isSorted sum min max indexOf lastIndexOf`` (Kubernetes), ext.Lists v3
  ``slice flatten distinct reverse sort sortBy first last lists.range``;
  ext.Sets ``sets.contains sets.equivalent sets.intersects``;
- ``quantity isQuantity`` with ``compareTo isGreaterThan isLessThan add sub
  asInteger asApproximateFloat isInteger``; ``semver isSemver`` (with
  ``normalize``) with ``compareTo isGreaterThan isLessThan major minor patch``;
- ``ip isIP ip.isCanonical`` with ``family isUnspecified isLoopback
  isLinkLocalMulticast isLinkLocalUnicast isGlobalUnicast``, ``cidr isCIDR`` with
  ``containsIP containsCIDR ip masked prefixLength``, ``string()`` of both;
- ``timestamp duration`` (RFC 3339, Go durations) with ``+ -``, ordering, ``int``,
  ``string`` and the getters ``getFullYear getMonth getDate getDayOfMonth
  getDayOfWeek getDayOfYear getHours getMinutes getSeconds getMilliseconds``
  (with a time zone);
- the format library's name formats ``format.dns1123Label dns1123Subdomain
  dns1035Label qualifiedName labelValue`` (and the ``...Prefix`` ones),
  ``format.named``, ``validate`` with apimachinery's messages, and the strfmt
  formats ``uri uuid byte date datetime``;
- the URL library ``url isURL`` with ``getScheme getHost getHostname getPort
  getEscapedPath getQuery`` (Go's ``net/url``, ``dra_cel_url``);
- type names, dotted ones included (``google.protobuf.Duration``, ``net.IP``,
  ``.int``; ``dra_cel_types``);
- ``optional.of optional.none optional.ofNonZeroValue`` with ``hasValue value
  orValue or``; ``device.allowMultipleAllocations`` (false: the field the API
  server drops while DRAConsumableCapacity is off).

A compile error cannot reach the scheduler: the API server compiles every
selector with this same compiler and refuses the claim or class
(``pkg/apis/resource/validation/validation.go`` ``validateCELSelector``), so an
expression that does not type-check (``authorizer``, ``math.*``, ``sign()`` on a
quantity, ``1 == 1.0`` literals, a non-bool result, ...) has no answer to give;
such an expression may evaluate to anything here. The same check bounds the
estimated cost, so the runtime cost limit is not modelled.

Unicode is Go's (15.0 in go1.25, ``go_unicode``), not Python's older tables: RE2's
categories, scripts and folding, ``%s``'s quoting (``strconv.IsPrint``), ``trim``
(White_Space), and the quoting in Go's parser messages (an address, a prefix, a semver).
Map keys are kept apart by type as in cel-go's Go map (``true``, ``1u``, ``1.0`` and
``1`` are four keys; a later equal key replaces an earlier one, an absent optional entry
removes it), and looked up as cel-go's ``Find`` does (a double or uint finds the same
number's int key, an int its uint key); durations, addresses, prefixes and types are keys
by value, lists, maps, quantities, URLs and present optionals by identity (Go compares
their pointers: only the object ``cel.bind`` or a comprehension hands on finds its entry,
but a variable's optional is a new pointer at each read), ``optional.none()`` one key,
timestamps by instant and ``*time.Location`` (nil for ``Z``, Local for a zero offset, one per
whole hour from -12 to +14, else one per parse: ``dra_cel_time``), bytes, semvers and formats
an error (Go cannot hash them: cel-go recovers the panic), and an index of such a type is
``invalid qualifier type``. So are ``device`` (a new Go map at each read) and its
``attributes``/``capacity`` (the scheduler's ``cel.mapper``, one each) as keys; an index or ``[?k]``
by a list, a map, an optional, null or the device fails naming its Go type (``*types.baseList``,
``*types.concatList`` for ``a + b``, ``*types.baseMap``, ``cel.mapper``, ``map[string]interface {}``),
and of a scalar says ``no such key`` (``dra_cel_index``). ``insert failed`` prints its key with
Go's ``%v`` (``dra_cel_gotext``). The getters' time
zones follow Go's ``time`` (``dra_cel_zone``); ``%s`` prints ``device`` and its maps. Where Go's
random map order or a pointer picks an error's message (``%s`` of maps holding a semver and a
quantity, ``insert failed`` naming a map or the device), the error is certain and
``CelError.pattern`` admits every message Go can give.

Go's limits on a pattern's tree (1,000 high, 3.3M instructions, 33.5M class runes: ``expression
nests too deeply``, ``expression too large``) are decided exactly, as Go's parse stack reaches
them (``dra_cel_re2_limits``). ``UNKNOWN`` (the front end then takes the device as matching and
marks the answer with a caveat, never silently) is left for what no selector is known to hold:
a construct the evaluator does not know, or a pattern RE2 C++ cannot compile in 256 MB.

A domain with no attribute is an empty map (the scheduler's default, one map for
every such read; ``has`` finds every domain, ``in``, ``size`` and the macros see the
domains that hold something); a
missing name in it is the runtime error ``no such key: <name>``, as is an
ordering of mismatched types (``no such overload``). ``evaluate`` returns
True, False, a ``CelError`` (the scheduler then aborts the pod's cycle), or
``UNKNOWN``.
"""

from __future__ import annotations

import re
from typing import Union

from symreach.frontends.dra_cel_library import (GLOBALS, Address, CelType, Network, Optional, address_method,
                                                address_text,
                                                list_method, optional_method, regex_method, semver_normalized,
                                                sort_list)
from symreach.frontends.dra_cel_index import ABSENT, Device, Domains, lookup
from symreach.frontends.dra_cel_gotext import key_pattern as go_key_pattern, key_text as go_key_text
from symreach.frontends.dra_cel_format import FORMAT_GLOBALS, Format, format_method
from symreach.frontends.dra_cel_strformat import string_format
from symreach.frontends.dra_cel_time import (Duration, Timestamp, duration_of, time_arith, time_compare, time_method,
                                             time_text, timestamp_of)
from symreach.frontends.dra_cel_types import TYPE_NAMES, type_of
from symreach.frontends.dra_cel_url import URL_GLOBALS, Url, url_method
from symreach.frontends.dra_cel_values import (INT_MAX, CelError, CelFailure, GoPanic, Uint, Unsupported, arith,
                                               attribute_values, call_global, call_method, capacity_values,
                                               check_int, check_qualifier, compare, equal, key_value, kind,
                                               map_find, map_has, map_key, type_name)

__all__ = ["UNKNOWN", "CelError", "Outcome", "attribute_values", "capacity_values", "evaluate"]
UNKNOWN = "unknown"
Outcome = Union[bool, str, CelError]   # True, False, UNKNOWN or a CelError


_SPACE = re.compile(r"(?:\s|//[^\n]*)*")   # blanks and comments
_TOKEN = re.compile(r"""(?:
    (?P<num>0[xX][0-9a-fA-F]+[uU]?|\d+\.\d*(?:[eE][+-]?\d+)?|\.\d+(?:[eE][+-]?\d+)?|\d+[eE][+-]?\d+|\d+[uU]?)
  | (?P<str>(?:[bB][rR]?|[rR][bB]?)?(?:\"\"\"(?:[^\\]|\\.)*?\"\"\"|'''(?:[^\\]|\\.)*?'''|"(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*'))
  | (?P<id>[A-Za-z_][A-Za-z0-9_]*)
  | (?P<op>&&|\|\||==|!=|<=|>=|[-+*/%!<>?:.,()\[\]{}])
)""", re.VERBOSE | re.DOTALL)


def _tokens(text: str) -> list[tuple[str, str]]:
    out, pos = [], 0
    while True:
        pos = _SPACE.match(text, pos).end()   # type: ignore[union-attr]
        if pos == len(text):
            return out
        m = _TOKEN.match(text, pos)
        if not m or m.end() == pos:
            raise Unsupported(text[pos:])
        pos = m.end()
        kind = m.lastgroup
        out.append((kind, m.group(kind)))


_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "\\": "\\", '"': '"', "'": "'", "a": "\a", "b": "\b", "f": "\f",
            "v": "\v", "`": "`", "?": "?"}


_BYTE = 0xF0000   # an escaped byte of a bytes literal, until it is encoded


def _string(token: str) -> str | bytes:
    """A string or bytes literal's value (in bytes, ``\\xff`` is one byte, not U+00FF)."""
    prefix = token[:2 if token[:2].lower() in ("br", "rb") else 1 if token[0] in "rRbB" else 0].lower()
    body = token[len(prefix):]
    quote = 3 if body[:3] in ('"""', "'''") else 1
    body = body[quote:-quote]
    as_bytes = "b" in prefix
    if "r" not in prefix:
        body = re.sub(r"\\(x[0-9a-fA-F]{2}|u[0-9a-fA-F]{4}|U[0-9a-fA-F]{8}|[0-3][0-7]{2}|.)",
                      lambda m: _escape(m.group(1), as_bytes), body)
    if not as_bytes:
        return body
    return b"".join(bytes([ord(c) - _BYTE]) if _BYTE <= ord(c) < _BYTE + 256 else c.encode("utf-8") for c in body)


def _escape(e: str, as_bytes: bool) -> str:
    if e[0] in _ESCAPES:
        return _ESCAPES[e[0]]
    if e[0] in "uU":
        if as_bytes:
            raise Unsupported("\\u in bytes")
        return chr(int(e[1:], 16))
    code = int(e[1:], 16) if e[0] in "xX" else int(e, 8)
    return chr(_BYTE + code) if as_bytes else chr(code)


Node = tuple   # (kind, ...) a small AST


class _Parser:
    def __init__(self, text: str) -> None:
        self.toks = _tokens(text)
        self.i = 0

    def peek(self, value: str) -> bool:
        return self.i < len(self.toks) and self.toks[self.i][1] == value and self.toks[self.i][0] == "op"

    def take(self, value: str) -> None:
        if not self.peek(value):
            raise Unsupported(value)
        self.i += 1

    def whole(self) -> Node:
        node = self.expr()
        if self.i != len(self.toks):
            raise Unsupported("trailing input")
        return node

    def expr(self) -> Node:
        cond = self.binary(0)
        if self.peek("?"):
            self.i += 1
            yes = self.binary(0)
            self.take(":")
            return ("?", cond, yes, self.expr())
        return cond

    _LEVELS = (("||",), ("&&",), ("==", "!=", "<", "<=", ">", ">=", "in"), ("+", "-"), ("*", "/", "%"))

    def binary(self, level: int) -> Node:
        if level == len(self._LEVELS):
            return self.unary()
        left = self.binary(level + 1)
        while self.i < len(self.toks) and self.toks[self.i][1] in self._LEVELS[level] and (
                self.toks[self.i][0] == "op" or self.toks[self.i][1] == "in"):
            op = self.toks[self.i][1]
            self.i += 1
            left = ("op", op, left, self.binary(level + 1))
        return left

    def unary(self) -> Node:
        if self.peek("!") or self.peek("-"):
            op = self.toks[self.i][1]
            self.i += 1
            inner = self.unary()
            if op == "-" and inner[0] == "lit" and type(inner[1]) in (int, float):
                return ("lit", -inner[1])
            return ("neg" if op == "-" else "not", inner)
        return self.member()

    def member(self) -> Node:
        node = self.primary()
        while True:
            if self.peek("."):
                self.i += 1
                optional = self.peek("?")
                self.i += optional
                kind, name = self.toks[self.i] if self.i < len(self.toks) else ("", "")
                if kind != "id":
                    raise Unsupported(name)
                self.i += 1
                if optional:
                    node = ("optfield", node, name)
                elif self.peek("("):
                    node = ("call", name, node, self.args(")"))
                else:
                    node = ("field", node, name)
            elif self.peek("["):
                self.i += 1
                optional = self.peek("?")
                self.i += optional
                index = self.expr()
                self.take("]")
                node = ("optindex" if optional else "index", node, index)
            else:
                return node

    def args(self, close: str) -> list[Node]:
        self.i += 1
        out: list[Node] = []
        while not self.peek(close):
            if close == "]" and self.peek("?"):   # an optional element of a list literal
                self.i += 1
                out.append(("opt", self.expr()))
            else:
                out.append(self.expr())
            if not self.peek(close):
                self.take(",")
        self.i += 1
        return out

    def primary(self) -> Node:
        if self.i >= len(self.toks):
            raise Unsupported("end")
        kind, text = self.toks[self.i]
        if kind == "num":
            self.i += 1
            return ("lit", _number(text))
        if kind == "str":
            self.i += 1
            return ("lit", _string(text))
        if kind == "id":
            self.i += 1
            if text in ("true", "false"):
                return ("lit", text == "true")
            if text == "null":
                return ("lit", None)
            if self.peek("("):
                return ("call", text, None, self.args(")"))
            return ("id", text)
        if text == "." and self.i + 1 < len(self.toks) and self.toks[self.i + 1][0] == "id":
            self.i += 2   # a name in the root scope
            return ("id", "." + self.toks[self.i - 1][1])
        if text == "(":
            self.i += 1
            inner = self.expr()
            self.take(")")
            return inner
        if text == "[":
            return ("list", self.args("]"))
        if text == "{":
            return ("map", self.entries())
        raise Unsupported(text)

    def entries(self) -> list[tuple[Node, Node]]:
        self.i += 1
        out: list[tuple[Node, Node]] = []
        while not self.peek("}"):
            optional = self.peek("?")
            self.i += optional
            key = ("opt", self.expr()) if optional else self.expr()
            self.take(":")
            out.append((key, self.expr()))
            if not self.peek("}"):
                self.take(",")
        self.i += 1
        return out


def _number(text: str):
    if text[-1] in "uU":
        return Uint(int(text[:-1], 0))
    if any(c in text for c in ".eE") and not text.lower().startswith("0x"):
        return float(text)
    value = int(text, 0)
    if value > INT_MAX:
        raise Unsupported(text)
    return value


# ---- evaluation -----------------------------------------------------------------------

def evaluate(expression: str, driver: str, attributes: dict[tuple[str, str], object],
             capacity: dict[tuple[str, str], object] | None = None) -> Outcome:
    """The selector's value on one device (``attribute_values``, ``capacity_values``)."""
    try:
        tree = _parse(expression)
    except Exception:   # Unsupported, or a literal Python cannot hold: the API server's parser decides
        return UNKNOWN
    try:
        value = _Eval(driver, attributes, capacity or {}).run(tree)
    except (CelFailure, GoPanic) as err:
        return CelError(err.message, getattr(err, "pattern", ""))
    except Exception:
        return UNKNOWN   # Unsupported or an unforeseen case: never a traceback, a caveat
    if not isinstance(value, bool):
        return CelError(f"CEL result of type {type_name(value)} could not be converted to bool: unsupported type "
                        f"conversion from '{type_name(value)}' to bool")
    return value


_PARSED: dict[str, Node] = {}


def _parse(expression: str) -> Node:
    if expression not in _PARSED:
        _PARSED[expression] = _Parser(expression).whole()
    return _PARSED[expression]


_ATTRIBUTES = ("id", "field", "index", "optfield", "optindex")   # cel-go plans these as attributes
_HANDLERS = {"?": "cond", "op": "op", "not": "not_", "neg": "neg", "lit": "lit", "id": "ident", "field": "field",
             "index": "index", "call": "call", "list": "list_", "map": "map_", "optfield": "optional",
             "optindex": "optional"}


class _Eval:
    def __init__(self, driver: str, attributes: dict, capacity: dict) -> None:
        self.driver = driver
        empty: dict = {}   # the compiled expression's emptyMapVal
        self.attributes = Domains(attributes, empty)
        self.capacity = Domains(capacity, empty)
        self.scope: dict[str, object] = {}

    def run(self, node: Node) -> object:
        value = getattr(self, "_" + _HANDLERS[node[0]])(node)
        if isinstance(value, CelError):   # an unreadable attribute surfaces when it is read
            raise CelFailure(value.message)
        return value

    def _lit(self, node: Node) -> object:
        return node[1]

    def _list_(self, node: Node) -> object:
        out = []
        for x in node[1]:
            if x[0] == "opt":
                value = self._present(x[1])
                if value.present:
                    out.append(value.value)
            else:
                out.append(self.run(x))
        return out

    def _present(self, node: Node) -> Optional:
        value = self.run(node)
        if not isinstance(value, Optional):
            raise CelFailure("no such overload")
        return value

    def _optional(self, node: Node) -> object:
        """``x.?f`` and ``x[?k]``: ``optional.none()`` where the key is absent, chained through optionals."""
        target = self.run(node[1])
        key = node[2] if node[0] == "optfield" else self.run(node[2])
        self._qualifier(node[2], key)
        if isinstance(target, Optional):
            if not target.present:
                return target
            target = target.value
        if node[0] == "optindex":
            found = lookup(target, key, presence=True)
            return Optional(found is not ABSENT, None if found is ABSENT else found)
        if isinstance(target, dict):
            found = map_find(target, key)
            return Optional(map_has(target, key), found)
        if isinstance(target, Domains):
            return Optional(True, target.get(key))
        if isinstance(target, Device) and node[0] == "optfield":
            return Optional(True, self._select(target, key))
        raise CelFailure("no such overload")

    def _map_(self, node: Node) -> object:
        out: dict = {}
        for key_node, value_node in node[1]:
            optional = key_node[0] == "opt"
            key = self.run(key_node[1] if optional else key_node)   # a later equal key replaces
            if optional:   # the value is evaluated before Go hashes the key (cel-go's evalMap)
                value = self._present(value_node)
                if value.present:
                    out[map_key(key)] = value.value
                else:   # an absent optional entry removes the key
                    out.pop(map_key(key, deleting=True), None)
            else:
                plain = self.run(value_node)
                out[map_key(key)] = plain
        return out

    def _ident(self, node: Node) -> object:
        if node[1] in self.scope:
            held = self.scope[node[1]]
            if isinstance(held, Optional) and held.present:   # cel-go hands a variable's optional
                return Optional(True, held.value)   # on as a new pointer each time it is read
            return held
        name = node[1].removeprefix(".")
        if name == "device":
            return Device({"driver": self.driver, "allowMultipleAllocations": False, "attributes": self.attributes,
                            "capacity": self.capacity})
        if name in TYPE_NAMES:
            return CelType(name)
        raise Unsupported(node[1])

    def _cond(self, node: Node) -> object:
        cond = self.run(node[1])
        if not isinstance(cond, bool):
            raise CelFailure("no such overload")
        return self.run(node[2] if cond else node[3])

    def _not_(self, node: Node) -> object:
        value = self.run(node[1])
        if not isinstance(value, bool):
            raise CelFailure("no such overload")
        return not value

    def _neg(self, node: Node) -> object:
        value = self.run(node[1])
        if kind(value) != "num" or isinstance(value, Uint):
            raise CelFailure("no such overload")
        return check_int(-value)   # type: ignore[operator]

    def _logic(self, op: str, left: Node, right: Node) -> object:
        settle = op == "||"
        outcomes = []
        for side in (left, right):
            try:
                value = self.run(side)
                if not isinstance(value, bool):
                    raise CelFailure("no such overload")
            except CelFailure as err:
                outcomes.append(err)
                continue
            if value is settle:
                return settle
            outcomes.append(value)
        for o in outcomes:
            if isinstance(o, CelFailure):
                raise o
        return not settle

    def _op(self, node: Node) -> object:
        op, left, right = node[1], node[2], node[3]
        if op in ("&&", "||"):
            return self._logic(op, left, right)
        a, b = self.run(left), self.run(right)
        if op == "==":
            return equal(a, b)
        if op == "!=":
            return not equal(a, b)
        if op == "in":
            if isinstance(b, Domains):
                b = b.present()
            if isinstance(b, list):
                return any(equal(a, x) for x in b)
            if isinstance(b, dict):
                return map_has(b, a)
            raise CelFailure("no such overload")
        timed = isinstance(a, (Timestamp, Duration)) or isinstance(b, (Timestamp, Duration))
        if op in ("<", "<=", ">", ">="):
            c = time_compare(a, b) if timed else compare(a, b)
            return {"<": c < 0, "<=": c <= 0, ">": c > 0, ">=": c >= 0}[op]
        return time_arith(op, a, b) if timed else arith(op, a, b)

    def _field(self, node: Node) -> object:
        qualified = self._qualified(node)
        if qualified is not None:
            return CelType(qualified)
        target = self.run(node[1])
        if isinstance(target, Optional):   # selecting into an optional stays optional
            return self._optional(("optfield",) + tuple(node[1:]))
        return self._select(target, node[2])

    def _qualified(self, node: Node) -> str | None:
        """A dotted type name (``google.protobuf.Duration``): a chain of fields on a name that is
        no variable; one the environment does not know is a compile error (``Unsupported``)."""
        parts = []
        while node[0] == "field":
            parts.append(node[2])
            node = node[1]
        if node[0] != "id" or node[1] in self.scope or node[1].removeprefix(".") == "device":
            return None
        name = ".".join([node[1].removeprefix(".")] + parts[::-1])
        if name not in TYPE_NAMES:
            raise Unsupported(name)
        return name

    def _select(self, target: object, name: str) -> object:
        if isinstance(target, Device):
            if name == "driver":
                return self.driver
            if name in ("attributes", "capacity"):
                return getattr(self, name)
            if name == "allowMultipleAllocations":
                return False   # the field the API server drops while DRAConsumableCapacity is off
            raise Unsupported(name)
        if isinstance(target, dict):
            if name not in target:
                raise CelFailure(f"no such key: {name}")
            return target[name]
        if isinstance(target, Domains):   # a field of the domains map is its index
            return target.get(name)
        raise CelFailure("no such overload")

    def _format(self, template: str, values: list[object]) -> object:
        """``template.format(values)``: cel-go iterates a Go map (``device``, its maps, any map) in
        random order and stops at the first value it cannot print, so with values of two such
        types (a semver and a quantity) either message can come: each type met first is tried,
        and a ``CelFailure`` whose pattern admits each message they give is raised."""
        kinds = sorted(_leaf_types(self._plain(values, "")))
        if "CelError" in kinds:
            raise Unsupported("formatting a device value that cannot be read")
        outcomes: list[tuple[bool, str]] = []
        for first in kinds if len(kinds) > 1 else [""]:
            try:
                outcomes.append((True, string_format(template, self._plain(values, first))))   # type: ignore[arg-type]
            except CelFailure as err:
                outcomes.append((False, err.message))
        if len(set(outcomes)) == 1:
            if outcomes[0][0]:
                return outcomes[0][1]
            raise CelFailure(outcomes[0][1])
        if any(ok for ok, _ in outcomes):   # a value Go cannot print errs in every order
            raise Unsupported("a format that Go's map order decides")
        messages = sorted({text for _, text in outcomes})
        raise CelFailure(outcomes[0][1], "|".join(re.escape(m) for m in messages))

    def _plain(self, value: object, first: str) -> object:
        """``device`` and its maps as the plain maps ``format`` prints; ``first``: the type whose
        values each map holds first (the run of Go's random map order that meets them first)."""
        if isinstance(value, list):
            return [self._plain(v, first) for v in value]
        if isinstance(value, dict):
            plain = {k: self._plain(v, first) for k, v in value.items()}
        elif isinstance(value, Device):
            plain = {"driver": self.driver, "allowMultipleAllocations": False,
                     "attributes": self._plain(self.attributes, first), "capacity": self._plain(self.capacity, first)}
        elif isinstance(value, Domains):
            plain = {}
            for (domain, name), v in value.values.items():
                plain.setdefault(domain, {})[name] = v
        else:
            return value
        holds = {k: _leaf_types([key_value(k), v]) for k, v in plain.items()}
        return dict(sorted(plain.items(), key=lambda kv: first not in holds[kv[0]]))

    def _qualifier(self, node: Node | str, key: object) -> None:
        """cel-go's ``newQualifier`` check of an index's value; ``device`` read directly (an attribute
        cel-go resolves without wrapping) is its Go map ``map[string]interface {}``."""
        raw = isinstance(key, Device) and not isinstance(node, str) and self._raw_device(node)
        check_qualifier(key, "map[string]interface {}" if raw else None)

    def _raw_device(self, node: Node) -> bool:
        if node[0] == "id":
            return node[1].removeprefix(".") == "device" and node[1] not in self.scope
        if node[0] == "?" and _attribute(node):
            return self._raw_device(node[2] if self.run(node[1]) is True else node[3])
        return False

    def _index(self, node: Node) -> object:
        target, key = self.run(node[1]), self.run(node[2])
        self._qualifier(node[2], key)
        if isinstance(target, Optional):   # an index into an optional is an optional one
            return self._optional(("optindex",) + tuple(node[1:]))
        return lookup(target, key, presence=False)

    def _call(self, node: Node) -> object:
        name, target, args = node[1], node[2], node[3]
        if name == "has" and target is None:
            return self._has(args)
        if name == "bind" and target == ("id", "cel") and "cel" not in self.scope:
            return self._bind(args)
        if name in _MACROS and target is not None and len(args) in _MACROS[name]:
            return self._macro(name, target, args)
        if target is not None and target[0] == "id" and target[1] in _NAMESPACES and target[1] not in self.scope:
            return self._library(f"{target[1]}.{name}", [self.run(a) for a in args])
        receiver = self.run(target) if target is not None else None
        values = [self.run(a) for a in args]
        if target is None:
            if name == "string" and len(values) == 1 and isinstance(values[0], (Address, Network)):
                return address_text(values[0])
            if len(values) == 1 and isinstance(values[0], (Timestamp, Duration)) and name in ("string", "int"):
                return time_text(values[0]) if name == "string" else _time_int(values[0])
            if name in ("timestamp", "duration") and len(values) == 1:
                return timestamp_of(values[0]) if name == "timestamp" else duration_of(values[0])
            if name == "dyn" and len(values) == 1:
                return values[0]
            if name == "type" and len(values) == 1:
                return CelType(type_of(values[0]))
            if name in ("semver", "isSemver") and len(values) in (1, 2):
                return semver_normalized(name, values[0], values[1] if len(values) == 2 else False)
            return self._library(name, values) if name in _GLOBALS else call_global(name, values)
        if isinstance(receiver, Domains):
            receiver = receiver.present()
        if name == "format" and isinstance(receiver, str):
            return self._format(receiver, values)
        return _method(name, receiver, values)

    def _library(self, name: str, values: list[object]) -> object:
        if name not in _GLOBALS:
            raise Unsupported(name)
        try:
            return _GLOBALS[name](*values)
        except TypeError:
            raise CelFailure("no such overload") from None

    def _bind(self, args: list[Node]) -> object:
        if len(args) != 3 or args[0][0] != "id":
            raise Unsupported("cel.bind")
        value, saved = self.run(args[1]), dict(self.scope)
        self.scope[args[0][1]] = value
        try:
            return self.run(args[2])
        finally:
            self.scope = saved

    def _has(self, args: list[Node]) -> object:
        if len(args) != 1 or args[0][0] != "field":
            raise Unsupported("has")
        target = self.run(args[0][1])
        if isinstance(target, dict):
            return args[0][2] in target
        if isinstance(target, Device):
            return args[0][2] in ("driver", "attributes", "capacity", "allowMultipleAllocations")
        if isinstance(target, Domains):   # cel-go's has() finds every domain (the default map)
            return True
        raise CelFailure("no such overload")

    def _macro(self, name: str, target: Node, args: list[Node]) -> object:
        count = _variables(name, len(args))
        if any(a[0] != "id" for a in args[:count]):
            raise Unsupported(name)
        ranged = self.run(target)
        pairs = _pairs(ranged.present() if isinstance(ranged, Domains) else ranged, name, count)
        names = [a[1] for a in args[:count]]
        body = args[len(names):]
        results: list[object] = []
        saved = dict(self.scope)
        try:
            for pair in pairs:
                self.scope.update(zip(names, pair))
                try:
                    results.append(self._step(name, body))
                except CelFailure as err:
                    if name not in ("exists", "all"):
                        raise
                    results.append(err)
        finally:
            self.scope = saved
        return _fold(name, pairs, results)

    def _step(self, name: str, body: list[Node]) -> object:
        """One element's value: a bool for the predicates, (keep, value) for the transforms."""
        if name in ("map", "transformList", "transformMap", "transformMapEntry"):
            if len(body) == 2:
                keep = self.run(body[0])
                if not isinstance(keep, bool):
                    raise CelFailure("no such overload")
                return (keep, self.run(body[1]) if keep else None)
            return (True, self.run(body[0]))
        if name == "sortBy":
            return self.run(body[0])
        value = self.run(body[0])
        if not isinstance(value, bool):
            raise CelFailure("no such overload")
        return value


def _attribute(node: Node) -> bool:
    """Whether cel-go plans ``node`` as an attribute (a conditional one when both branches are)."""
    return node[0] in _ATTRIBUTES or node[0] == "?" and _attribute(node[2]) and _attribute(node[3])


def _time_int(value: Timestamp | Duration) -> int:
    """``int(timestamp)``: Unix seconds; ``int(duration)``: nanoseconds."""
    return value.nanos // 10 ** 9 if isinstance(value, Timestamp) else value.nanos


def _leaf_types(tree: object) -> set[str]:
    """The type names of the values (and map keys) in lists and maps, at any depth."""
    if isinstance(tree, list):
        return set().union(*(_leaf_types(x) for x in tree))
    if isinstance(tree, dict):
        return set().union(*(_leaf_types(x) for kv in tree.items() for x in (key_value(kv[0]), kv[1])))
    return {type(tree).__name__}


def _method(name: str, receiver: object, values: list[object]) -> object:
    if isinstance(receiver, (Timestamp, Duration)):
        return time_method(name, receiver, values)
    if isinstance(receiver, Format):
        return format_method(name, receiver, values)
    if isinstance(receiver, Url):
        return url_method(name, receiver, values)
    if isinstance(receiver, str) and name == "format":
        return string_format(receiver, values)
    if isinstance(receiver, list) and name != "size":
        return list_method(name, receiver, values)
    if isinstance(receiver, (Address, Network)):
        return address_method(name, receiver, values)
    if isinstance(receiver, Optional):
        return optional_method(name, receiver, values)
    if isinstance(receiver, str) and name in ("find", "findAll"):
        return regex_method(name, receiver, values)
    return call_method(name, receiver, values)


_MACROS = {"exists": (2, 3), "all": (2, 3), "exists_one": (2,), "existsOne": (3,), "map": (2, 3), "filter": (2,),
           "transformList": (3, 4), "transformMap": (3, 4), "transformMapEntry": (3, 4), "sortBy": (2,)}
_TWO_VARS = ("existsOne", "transformList", "transformMap", "transformMapEntry")


def _variables(name: str, n: int) -> int:
    """How many iteration variables the macro call with ``n`` arguments binds."""
    return 2 if name in _TWO_VARS or (name in ("exists", "all") and n == 3) else 1


_NAMESPACES = ("sets", "lists", "strings", "ip", "optional", "format")
_GLOBALS = {**GLOBALS, **FORMAT_GLOBALS, **URL_GLOBALS}


def _pairs(items: object, name: str, count: int) -> list[tuple]:
    """The comprehension's iteration: (element,) or (index, element) / (key, value)."""
    if isinstance(items, dict):
        if name == "sortBy":
            raise CelFailure("no such overload")
        return [(key_value(k), items[k]) if count == 2 else (key_value(k),) for k in items]
    if not isinstance(items, list):
        raise CelFailure("no such overload")
    return [(i, x) if count == 2 else (x,) for i, x in enumerate(items)]


def _fold(name: str, pairs: list[tuple], results: list[object]) -> object:
    if name in ("exists", "all"):
        settle = name == "exists"
        if any(r is settle for r in results):
            return settle
        errors = [r for r in results if isinstance(r, CelFailure)]
        if errors:
            raise errors[0]
        return not settle
    if name in ("exists_one", "existsOne"):
        return sum(1 for r in results if r is True) == 1
    if name == "filter":
        return [p[-1] for p, keep in zip(pairs, results) if keep]
    if name == "sortBy":
        keyed = list(zip(results, (p[-1] for p in pairs)))
        order = sort_list([k for k, _ in keyed])
        out, used = [], [False] * len(keyed)
        for key in order:
            i = next(j for j, (k, _) in enumerate(keyed) if not used[j] and equal(k, key))
            used[i] = True
            out.append(keyed[i][1])
        return out
    kept = [(p, r[1]) for p, r in zip(pairs, results) if r[0]]   # type: ignore[index]
    if name in ("map", "transformList"):
        return [v for _, v in kept]
    out: dict = {}
    if name == "transformMap":
        for p, v in kept:
            _insert(out, p[0], v)
        return out
    for _, entry in kept:
        if not isinstance(entry, dict):
            raise CelFailure("no such overload")
        for k, v in entry.items():
            _insert(out, key_value(k), v)
    return out


def _insert(out: dict, key: object, value: object) -> None:
    """cel-go's ``mapInsert``: a key ``Find`` finds already (``1u`` after ``1``) is an error."""
    if map_has(out, key):
        text, pattern = go_key_text(key), go_key_pattern(key)
        raise CelFailure(f"insert failed: key {text} already exists",
                         "" if pattern == re.escape(text) else f"insert failed: key {pattern} already exists")
    out[map_key(key)] = value
