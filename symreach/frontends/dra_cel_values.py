"""The values and functions of DRA's CEL environment (``dra_cel`` parses and evaluates).

Kubernetes quantities (exact fractions) and semantic versions, a device's
attributes and capacities as CEL sees them, CEL's equality and ordering across
types, integer arithmetic with its overflow errors, and the functions and
methods the environment provides (strings, quantities, semvers, conversions).
``CelFailure`` is a runtime error with cel-go's message; ``Unsupported`` a
construct this module does not evaluate.
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass
from typing import Any, Callable

from symreach.frontends import go_unicode
from symreach.frontends.dra_cel_re2 import Pattern, Re2Error, Re2Unsupported, translate


@dataclass(frozen=True)
class CelError:
    """A CEL runtime error, with cel-go's message; where Go's random map order or a pointer picks
    the message (the error itself is certain), ``pattern``: a regular expression every message
    Go can give fully matches, ``message`` one of them."""

    message: str
    pattern: str = ""

    def admits(self, message: str) -> bool:
        """Whether Go can report this error with ``message``."""
        return message == self.message or bool(self.pattern) and re.fullmatch(self.pattern, message) is not None


class CelFailure(Exception):
    def __init__(self, message: str, pattern: str = "") -> None:
        super().__init__(message)
        self.message = message
        self.pattern = pattern


class Unsupported(Exception):
    pass


class GoPanic(Exception):
    """A Go runtime panic that cel-go's ``Eval`` recovers: the whole evaluation's error
    (``internal error: ...``), which no ``||``, ``&&`` or macro absorbs."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


INT_MIN, INT_MAX = -(1 << 63), (1 << 63) - 1


class Uint(int):
    """A CEL uint (only literals and ``uint()`` make one)."""


class ConcatList(list):
    """cel-go's ``*types.concatList``: ``a + b`` of two non-empty lists (every other list is a
    ``*types.baseList``); an index by it names that Go type."""


@dataclass(frozen=True)
class Quantity:
    """A Kubernetes quantity, held exactly as a fraction; ``whole``: written without a fraction or a
    sub-unit suffix (Kubernetes then holds it at scale >= 0, which ``isInteger`` and ``asInteger`` read)."""

    value: Any   # fractions.Fraction
    whole: bool = True


@dataclass(frozen=True)
class Semver:
    major: int
    minor: int
    patch: int
    pre: tuple

    def key(self) -> tuple:
        pre = tuple((0, int(p), "") if p.isdigit() else (1, 0, p) for p in self.pre)
        return (self.major, self.minor, self.patch, 0 if self.pre else 1, pre)


# ---- values of a device -------------------------------------------------------------

def attribute_values(driver: str, attributes: dict) -> dict[tuple[str, str], object]:
    """A device's attributes as (domain, name) -> value; a name without a domain is the driver's.

    A version attribute becomes a ``Semver`` (a ``CelError`` when it does not parse)."""
    out: dict[tuple[str, str], object] = {}
    for key, raw in (attributes or {}).items():
        domain, _, name = str(key).partition("/") if "/" in str(key) else ("", "", str(key))
        value: object = None
        if isinstance(raw, dict):
            if "version" in raw:
                parsed = parse_semver(str(raw["version"]))
                value = parsed if parsed is not None else _unparsed_version(str(key), str(raw["version"]))
            else:
                value = raw.get("string", raw.get("int", raw.get("bool")))
        out[(domain or driver, name)] = value
    return out


def _unparsed_version(key: str, text: str) -> object:
    """compile.go ``getAttributeValue``'s error (the API server refuses such a slice, so only a hand-made
    state has one)."""
    try:
        return CelError(f"attribute {key}: parse semantic version: {semver_problem(text)}")
    except Unsupported:
        return CelError(f"attribute {key}: parse semantic version")


def capacity_values(driver: str, capacity: dict) -> dict[tuple[str, str], object]:
    """A device's capacities as (domain, name) -> ``Quantity`` (None when unreadable)."""
    out: dict[tuple[str, str], object] = {}
    for key, raw in (capacity or {}).items():
        domain, _, name = str(key).partition("/") if "/" in str(key) else ("", "", str(key))
        value = raw.get("value") if isinstance(raw, dict) else None
        out[(domain or driver, name)] = parse_quantity(str(value)) if value is not None else None
    return out


_QUANTITY = re.compile(r"^([+-]?(?:\d+\.?\d*|\.\d+))(Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE]|[eE][+-]?\d+)?$")
_BINARY = {"Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50, "Ei": 60}
_DECIMAL = {"n": -9, "u": -6, "m": -3, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}


def parse_quantity(text: str):
    """``resource.ParseQuantity``: the exact value, or None when the text is not a quantity."""
    from fractions import Fraction

    m = _QUANTITY.match(text.strip())
    if not m:
        return None
    number, suffix = Fraction(m.group(1)), m.group(2) or ""
    if suffix in _BINARY:
        return Quantity(number * (1 << _BINARY[suffix]), "." not in m.group(1))
    exponent = _DECIMAL[suffix] if suffix in _DECIMAL else int(suffix[1:]) if suffix else 0
    return Quantity(number * Fraction(10) ** exponent, "." not in m.group(1) and exponent >= 0)


def _number_problem(part: str, what: str) -> str | None:
    if not re.fullmatch(r"[0-9]*", part):
        return f"Invalid character(s) found in {what} number {go_quote_text(part)}"
    if len(part) > 1 and part[0] == "0":
        return f"{what.capitalize()} number must not contain leading zeroes {go_quote_text(part)}"
    if not part or int(part) >= 1 << 64:
        why = "invalid syntax" if not part else "value out of range"
        return f"strconv.ParseUint: parsing {go_quote_text(part)}: {why}"
    return None


def _prerelease_problem(p: str) -> str | None:
    if not p:
        return "Prerelease is empty"
    if re.fullmatch(r"[0-9]+", p):
        if len(p) > 1 and p[0] == "0":
            return f"Numeric PreRelease version must not contain leading zeroes {go_quote_text(p)}"
        return None if int(p) < 1 << 64 else f"strconv.ParseUint: parsing {go_quote_text(p)}: value out of range"
    return None if re.fullmatch(r"[0-9A-Za-z-]+", p) else f"Invalid character(s) found in prerelease {go_quote_text(p)}"


def semver_problem(text: str) -> str | None:
    """Why blang/semver's ``Parse`` (which Kubernetes uses) refuses ``text``; None when it parses."""
    if not text:
        return "Version string empty"
    parts = text.split(".", 2)
    if len(parts) != 3:
        return "No Major.Minor.Patch elements found"
    patch, _, build = parts[2].partition("+")
    patch, dash, pre = patch.partition("-")
    for part, what in ((parts[0], "major"), (parts[1], "minor"), (patch, "patch")):
        problem = _number_problem(part, what)
        if problem:
            return problem
    for p in pre.split(".") if dash else []:
        problem = _prerelease_problem(p)
        if problem:
            return problem
    for b in build.split(".") if "+" in parts[2] else []:
        if not b:
            return "Build meta data is empty"
        if not re.fullmatch(r"[0-9A-Za-z-]+", b):
            return f"Invalid character(s) found in build meta data {go_quote_text(b)}"
    return None


def parse_semver(text: str):
    """blang/semver's ``Parse``: the version, or None."""
    try:
        if semver_problem(text) is not None:
            return None
    except Unsupported:
        return None
    parts = text.split(".", 2)
    core, dash, pre = parts[2].partition("+")[0].partition("-")
    return Semver(int(parts[0]), int(parts[1]), int(core), tuple(pre.split(".")) if dash else ())


# ---- parsing --------------------------------------------------------------------------

def type_name(value: object) -> str:
    for t, name in ((bool, "bool"), (Uint, "uint"), (int, "int"), (float, "double"), (str, "string"),
                    (list, "list"), (dict, "map"), (bytes, "bytes"), (Quantity, "kubernetes.Quantity"),
                    (Semver, "kubernetes.Semver")):
        if isinstance(value, t):
            return name
    return "null_type" if value is None else "object"


def kind(value: object) -> str:
    """The CEL type family for ordering and arithmetic."""
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, (int, float)):
        return "num"
    return type_name(value)


def equal(a: object, b: object) -> bool:
    ka, kb = kind(a), kind(b)
    if ka != kb:
        return False
    if ka == "list":
        return len(a) == len(b) and all(equal(x, y) for x, y in zip(a, b))   # type: ignore[arg-type]
    if ka == "kubernetes.Semver":
        return a.key() == b.key()   # type: ignore[union-attr]
    if ka == "map":   # cel-go's baseMap.Equal: every key found in the other (numeric keys across types)
        return len(a) == len(b) and all(_holds(b, k, v) for k, v in a.items())   # type: ignore[union-attr,arg-type]
    return a == b


def _holds(m: dict, k: object, v: object) -> bool:
    found = map_find(m, key_value(k))
    return found is not _MISSING and equal(v, found)


# ---- map keys ---------------------------------------------------------------------------

@dataclass(frozen=True)
class MapKey:
    """A bool, uint, double, null, duration, address, prefix or type key of a CEL map. Python's dict would merge ``true``, ``1u``,
    ``1.0`` and ``1``; cel-go's Go map keeps them apart (a key is its type and value). A NaN key is
    never equal to another (``serial``), as in a Go map."""

    kind: str
    value: object
    serial: int = 0


_NAN_KEYS = itertools.count(1)
_MISSING = object()


def map_key(v: object, deleting: bool = False) -> object:
    """The dict key of a CEL value: strings and ints as they are, bools, uints, doubles and the values
    a Go map compares by value wrapped; cel-go's error for a key Go cannot hash."""
    if isinstance(v, str) or type(v) is int:
        return v
    if isinstance(v, bool):
        return MapKey("bool", v)
    if isinstance(v, Uint):
        return MapKey("uint", int(v))
    if isinstance(v, float):
        return MapKey("double", v, next(_NAN_KEYS) if v != v else 0)
    if v is None:
        return MapKey("null", None)
    held = type(v).__name__
    if held in _VALUE_KEYS:
        return MapKey(held, v)
    if held in _POINTER_KEYS:
        return IdentityKey(v)
    if held == "Timestamp":
        return TimeKey(v)
    if held == "Optional":   # optional.none() is one Go value; a present one a pointer
        return IdentityKey(v) if v.present else NoneKey(v)   # type: ignore[attr-defined]
    if held in _UNHASHABLE:   # Go panics hashing it; cel-go's Eval recovers the panic as an error
        if deleting:
            raise CelFailure(f"internal error: hash of unhashable type: {_GO_TYPES[held]}")
        raise CelFailure(f"internal error: runtime error: hash of unhashable type {_GO_TYPES[held]}")
    raise Unsupported("a map key of type " + type_name(v))


class IdentityKey:
    """A key cel-go's Go map compares by pointer (a list, a map, a quantity, a URL): only the same
    object finds it, as when ``cel.bind`` or a comprehension hands the one value on."""

    __slots__ = ("value",)

    def __init__(self, value: object) -> None:
        self.value = value

    def __eq__(self, other: object) -> bool:
        return isinstance(other, IdentityKey) and other.value is self.value

    def __hash__(self) -> int:
        return id(self.value)


class TimeKey(IdentityKey):
    """A timestamp as a Go map key: its instant and its ``*time.Location`` pointer."""

    __slots__ = ()

    def _held(self) -> tuple[object, object]:
        return self.value.nanos, self.value.zone   # type: ignore[attr-defined]

    def __eq__(self, other: object) -> bool:
        return isinstance(other, TimeKey) and other._held() == self._held()

    def __hash__(self) -> int:
        return hash(self._held())


class NoneKey(IdentityKey):
    """``optional.none()`` as a key: one Go value, however it was made."""

    __slots__ = ()

    def __eq__(self, other: object) -> bool:
        return isinstance(other, NoneKey)

    def __hash__(self) -> int:
        return 0


# The Go types of CEL values a map may be keyed by beyond the primitives: compared by value in a Go
# map (a duration, an address, a prefix as written, a type), unhashable (Go panics), the rest
# compared by identity (lists, maps, quantities, URLs, present optionals; a timestamp with its
# zone's pointer).
_GO_TYPES = {"bytes": "types.Bytes", "Semver": "cel.Semver", "Format": "cel.Format", "Duration": "types.Duration",
             "Address": "cel.IP", "Network": "cel.CIDR", "CelType": "*types.Type", "Quantity": "cel.Quantity",
             "Url": "cel.URL", "Optional": "*types.Optional", "Timestamp": "types.Timestamp"}
_VALUE_KEYS = ("Duration", "Address", "Network", "CelType")
_UNHASHABLE = ("bytes", "Semver", "Format")
_POINTER_KEYS = ("list", "ConcatList", "dict", "Quantity", "Url", "Device", "Domains")
# an index's Go type beyond those (``dra_cel``'s ``device`` is a map cel-go wraps anew at each read,
# its ``attributes`` and ``capacity`` the scheduler's ``cel.mapper`` struct)
_QUALIFIER_TYPES = {"NoneType": "types.Null", "list": "*types.baseList", "ConcatList": "*types.concatList",
                    "dict": "*types.baseMap", "Device": "*types.baseMap", "Domains": "cel.mapper"}


def check_qualifier(key: object, go_type: str | None = None) -> None:
    """cel-go's ``newQualifier``: an index (``[k]`` or ``[?k]``) that is not a string, number or
    bool is an error naming its Go type (``go_type`` where the caller knows better) before any
    lookup, whatever it indexes."""
    if isinstance(key, (str, int, float)):
        return
    held = type(key).__name__
    if go_type is None:
        go_type = _GO_TYPES.get(held) or _QUALIFIER_TYPES.get(held)
    if go_type is None:
        raise Unsupported("a map index of type " + type_name(key))
    raise CelFailure(f"invalid qualifier type: {go_type}")


def key_value(k: object) -> object:
    """The CEL value of a dict key (``map_key``'s inverse)."""
    if isinstance(k, IdentityKey):
        return k.value
    if not isinstance(k, MapKey):
        return k
    return Uint(k.value) if k.kind == "uint" else k.value   # type: ignore[call-overload]


def map_find(m: dict, key: object) -> object:
    """cel-go's ``Find``: the value under ``key``, else under the same number as an int or a uint
    (a double without loss, an int >= 0, a uint up to 2^63-1); ``_MISSING`` when none is."""
    k = map_key(key)
    if k in m:
        return m[k]
    twins: list[object] = []
    if isinstance(key, float):
        if key == key and -2.0 ** 63 < key < 2.0 ** 63 and key == int(key):
            twins.append(int(key))
        if key == key and 0 <= key < 2.0 ** 64 and key == int(key):
            twins.append(MapKey("uint", int(key)))
    elif isinstance(key, Uint):
        twins = [int(key)] if key <= INT_MAX else []
    elif type(key) is int:
        twins = [MapKey("uint", key)] if key >= 0 else []
    return next((m[t] for t in twins if t in m), _MISSING)


def map_has(m: dict, key: object) -> bool:
    return map_find(m, key) is not _MISSING


def key_text(key: object) -> str:
    """A key as Go's ``%v`` prints it in ``no such key: ...``."""
    if isinstance(key, bool):
        return "true" if key else "false"
    if isinstance(key, float):
        return go_float_text(key)
    if isinstance(key, (str, int)):
        return str(key)
    if type(key).__name__ == "Duration":
        return go_duration_text(key.nanos)   # type: ignore[attr-defined]
    raise Unsupported("a map key of type " + type_name(key))


def _fraction(value: int, digits: int) -> tuple[str, int]:
    """Go's ``fmtFrac``: the last ``digits`` decimal digits as ``.ddd`` without trailing zeros."""
    value, rest = divmod(value, 10 ** digits)
    text = f"{rest:0{digits}d}".rstrip("0") if digits else ""
    return ("." + text if text else ""), value


def go_duration_text(nanos: int) -> str:
    """Go's ``time.Duration.String``: ``1h2m0.5s``, ``1.5µs``, ``0s``."""
    u = abs(nanos)
    if u == 0:
        return "0s"
    if u < 10 ** 9:
        digits, unit = (0, "ns") if u < 10 ** 3 else (3, "\u00b5s") if u < 10 ** 6 else (6, "ms")
        fraction, whole = _fraction(u, digits)
        text = f"{whole}{fraction}{unit}"
    else:
        fraction, seconds = _fraction(u, 9)
        minutes, seconds = divmod(seconds, 60)
        hours, minutes = divmod(minutes, 60)
        text = f"{seconds}{fraction}s"
        if minutes or hours:
            text = f"{minutes}m" + text
        if hours:
            text = f"{hours}h" + text
    return ("-" if nanos < 0 else "") + text


def compare(a: object, b: object) -> int:
    ka, kb = kind(a), kind(b)
    if ka != kb or ka not in ("num", "string", "bool", "bytes"):
        raise CelFailure("no such overload")
    return (a > b) - (a < b)   # type: ignore[operator]


def check_int(value: object) -> object:
    if isinstance(value, int) and not isinstance(value, bool) and not INT_MIN <= value <= INT_MAX:
        raise CelFailure("integer overflow")
    return value


def arith(op: str, a: object, b: object) -> object:
    if op == "+" and isinstance(a, str) and isinstance(b, str):
        return a + b
    if op == "+" and isinstance(a, list) and isinstance(b, list):
        return b if not a else a if not b else ConcatList(a + b)   # Add hands an empty side's partner on
    if op == "+" and isinstance(a, bytes) and isinstance(b, bytes):
        return a + b
    if kind(a) != "num" or kind(b) != "num" or type(a) is not type(b):
        raise CelFailure("no such overload")
    if isinstance(a, float):
        if op == "%":
            raise CelFailure("no such overload")
        if op == "/":
            return a / b if b else (float("nan") if a == 0 else float("inf") * (1 if a > 0 else -1))
        return {"+": a + b, "-": a - b, "*": a * b}[op]
    if op in "/%" and b == 0:
        raise CelFailure("division by zero" if op == "/" else "modulus by zero")
    if op in "/%":   # truncated towards zero, as Go
        quotient = abs(a) // abs(b) * (1 if (a >= 0) == (b >= 0) else -1)   # type: ignore[operator]
        value = quotient if op == "/" else a - b * quotient   # type: ignore[operator]
    else:
        value = {"+": a + b, "-": a - b, "*": a * b}[op]   # type: ignore[operator]
    return check_int(Uint(value) if isinstance(a, Uint) else value)


_PARSERS: dict[str, tuple[Callable[[str], object], str, str]] = {
    "quantity": (lambda t: parse_quantity(t), "isQuantity",
                 "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"),
    "semver": (lambda t: parse_semver(t), "isSemver", "Could not parse semver: {}"),
}
_CHECKS = {is_name: name for name, (_, is_name, _) in _PARSERS.items()}


def call_global(name: str, args: list[object]) -> object:
    one = args[0] if len(args) == 1 else None
    if name == "size" and len(args) == 1:
        return call_method("size", one, [])
    if name in _PARSERS and isinstance(one, str):
        parse, is_name, problem = _PARSERS[name]
        value = parse(one)
        if value is None:
            raise CelFailure(problem.format(one))
        return value
    if name in _CHECKS and isinstance(one, str):
        return _PARSERS[_CHECKS[name]][0](one) is not None
    if name == "matches" and len(args) == 2:
        return call_method("matches", args[0], args[1:])
    if name in _CONVERSIONS and len(args) == 1:
        return _CONVERSIONS[name](one)
    raise Unsupported(name)


def _to_int(v: object) -> object:
    if isinstance(v, bool):
        raise CelFailure("no such overload")
    if isinstance(v, (int, float)):
        if isinstance(v, float) and not (-9.223372036854776e18 < v < 9.223372036854776e18):
            raise CelFailure("integer overflow")
        return check_int(int(v))
    if isinstance(v, str):   # strconv.ParseInt: a sign and decimal digits, in range
        if not re.fullmatch(r"[+-]?[0-9]+", v) or not INT_MIN <= int(v) <= INT_MAX:
            raise CelFailure("type conversion error from 'string' to 'int'")
        return int(v)
    raise CelFailure("no such overload")


def to_string(v: object) -> object:
    """``string(v)`` of a bool, an int, a uint, a double, a string or bytes."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, str)):
        return str(int(v)) if isinstance(v, int) else v
    if isinstance(v, float):
        return go_float_text(v)
    if isinstance(v, bytes):
        try:
            return v.decode("utf-8")
        except UnicodeDecodeError:
            raise CelFailure("invalid UTF-8 in bytes, cannot convert to string") from None
    raise Unsupported("string")


def go_float_text(f: float) -> str:
    """Go's ``fmt.Sprintf("%g", f)`` (cel-go's ``string(double)``): shortest digits, an exponent
    from 1e-5 down or 1e6 up (``1e+08``)."""
    from decimal import Decimal

    if f != f:
        return "NaN"
    if f in (float("inf"), float("-inf")):
        return "+Inf" if f > 0 else "-Inf"
    sign = "-" if str(f).startswith("-") else ""
    if f == 0:
        return sign + "0"
    d = Decimal(repr(abs(f))).normalize()
    exponent = d.adjusted()
    digits = "".join(map(str, d.as_tuple().digits))
    if exponent < -4 or exponent >= 6:
        mantissa = digits[0] + ("." + digits[1:] if len(digits) > 1 else "")
        return f"{sign}{mantissa}e{'-' if exponent < 0 else '+'}{abs(exponent):02d}"
    return sign + format(d, "f")


def _to_double(v: object) -> object:
    if isinstance(v, bool) or not isinstance(v, (int, float, str)):
        raise CelFailure("no such overload")
    value = go_parse_float(v) if isinstance(v, str) else float(v)
    if value is None:
        raise CelFailure("type conversion error from 'string' to 'double'")
    return value


_GO_FLOAT = re.compile(r"[+-]?(?:(?P<dec>[0-9_]+\.?[0-9_]*|\.[0-9_]+)(?:[eE][+-]?[0-9_]+)?"
                       r"|0[xX](?P<hex>[0-9a-fA-F_]+\.?[0-9a-fA-F_]*|\.[0-9a-fA-F_]+)[pP][+-]?[0-9_]+)")
_GO_SPECIAL = {"inf": "inf", "+inf": "inf", "-inf": "-inf", "infinity": "inf", "+infinity": "inf",
               "-infinity": "-inf", "nan": "nan"}


def go_parse_float(text: str) -> float | None:
    """``strconv.ParseFloat(text, 64)``: Go's decimal and hex float syntax with ``_`` between digits,
    ``inf``/``infinity`` (signed) and ``nan`` in any case, ASCII digits only; None where Go
    errs (an overflow to infinity included)."""
    special = _GO_SPECIAL.get(text.lower()) if text.isascii() else None
    if special:
        return float(special)
    m = _GO_FLOAT.fullmatch(text)
    if not m or not _underscores_ok(text) or not re.search("[0-9a-fA-F]", m.group("hex") or m.group("dec")):
        return None   # a mantissa of underscores and a point only
    plain = text.replace("_", "")
    try:
        value = float.fromhex(plain) if m.group("hex") else float(plain)
    except OverflowError:
        return None
    return None if value in (float("inf"), float("-inf")) else value


def _underscores_ok(text: str) -> bool:
    """``strconv.underscoreOK``: each ``_`` between two digits (or a base prefix and a digit)."""
    body = text[1:] if text[:1] in "+-" else text
    saw, i = "^", 0
    hexa = body[:2].lower() == "0x"
    if hexa:
        saw, i = "0", 2
    for c in body[i:]:
        if c.isdigit() and c.isascii() or hexa and c in "abcdefABCDEF":
            saw = "0"
        elif c == "_":
            if saw != "0":
                return False
            saw = "_"
        else:
            if saw == "_":
                return False
            saw = "!"
    return saw != "_"


def _to_bool(v: object) -> object:
    if isinstance(v, bool):
        return v
    if not isinstance(v, str):
        raise CelFailure("no such overload")
    if v in ("1", "t", "T", "TRUE", "true", "True", "0", "f", "F", "FALSE", "false", "False"):
        return v in ("1", "t", "T", "TRUE", "true", "True")
    raise CelFailure("type conversion error from 'string' to 'bool'")


def _to_uint(v: object) -> object:
    if isinstance(v, str):
        if not re.fullmatch(r"[0-9]+", v) or int(v) >= 1 << 64:
            raise CelFailure("type conversion error from 'string' to 'uint'")
        return Uint(int(v))
    if isinstance(v, float):
        if not 0 <= v < 1.8446744073709552e19:
            raise CelFailure("unsigned integer overflow")
        return Uint(int(v))
    value = _to_int(v)
    if value < 0:   # type: ignore[operator]
        raise CelFailure("unsigned integer overflow")
    return Uint(value)   # type: ignore[call-overload]


def _to_bytes(v: object) -> object:
    if isinstance(v, (bytes, str)):
        return v.encode("utf-8") if isinstance(v, str) else v
    raise CelFailure("no such overload")


_CONVERSIONS: dict[str, Callable[[object], object]] = {"int": _to_int, "uint": _to_uint, "string": to_string,
                                                       "double": _to_double, "bytes": _to_bytes, "bool": _to_bool}


def call_method(name: str, receiver: object, args: list[object]) -> object:
    if isinstance(receiver, str):
        return _string_method(name, receiver, args)
    if isinstance(receiver, (list, dict, bytes)) and name == "size" and not args:
        return len(receiver)
    if isinstance(receiver, list) and name == "join" and len(args) <= 1 and all(isinstance(x, str) for x in receiver):
        return "".join(receiver) if not args else _strings(args, 1)[0].join(receiver)   # type: ignore[arg-type]
    if isinstance(receiver, Quantity):
        return _quantity_method(name, receiver, args)
    if isinstance(receiver, Semver):
        return _semver_method(name, receiver, args)
    raise CelFailure("no such overload")


def _string_method(name: str, s: str, args: list[object]) -> object:
    if name == "size" and not args:
        return len(s)
    if name in ("lowerAscii", "upperAscii", "trim") and not args:
        if name == "trim":   # strings.TrimSpace: Go's White_Space, not Python's whitespace (U+001C..U+001F)
            return _trim_space(s)
        return "".join((c.lower() if name == "lowerAscii" else c.upper()) if c.isascii() else c for c in s)
    if name in _EXT_STRINGS:
        return _EXT_STRINGS[name](s, args)
    if len(args) != 1 or not isinstance(args[0], str):
        raise CelFailure("no such overload") if name in ("startsWith", "endsWith", "contains", "matches") else Unsupported(name)
    arg = args[0]
    if name == "startsWith":
        return s.startswith(arg)
    if name == "endsWith":
        return s.endswith(arg)
    if name == "contains":
        return arg in s
    if name == "matches":
        return regex(arg, s).search(s) is not None
    raise Unsupported(name)


def _trim_space(s: str) -> str:
    start, end = 0, len(s)
    while start < end and go_unicode.is_space(s[start]):
        start += 1
    while end > start and go_unicode.is_space(s[end - 1]):
        end -= 1
    return s[start:end]


def regex(pattern: str, subject: str) -> Pattern:
    """An RE2 pattern compiled by RE2 for ``subject`` (``dra_cel_re2``); Go's parse error as a
    ``CelFailure``, ``Unsupported`` near Go's size limits."""
    try:
        return translate(pattern, subject)
    except Re2Error as err:
        raise CelFailure(err.message) from None
    except Re2Unsupported as err:
        raise Unsupported(str(err)) from None


def _position(s: str, i: object) -> int:
    if not isinstance(i, int) or isinstance(i, bool):
        raise Unsupported("index")
    if not 0 <= i <= len(s):
        raise CelFailure(f"index out of range: {i}")
    return i


def _substring(s: str, args: list[object]) -> object:
    if len(args) not in (1, 2):
        raise Unsupported("substring")
    start = _position(s, args[0])
    end = _position(s, args[1]) if len(args) == 2 else len(s)
    if end < start:
        raise CelFailure(f"invalid substring range. start: {start}, end: {end}")
    return s[start:end]


def _strings(args: list[object], count: int) -> list[str]:
    if len(args) != count or not all(isinstance(a, str) for a in args):
        raise Unsupported("string arguments")
    return args   # type: ignore[return-value]


# the cel-go ``ext.Strings`` functions Kubernetes' environment adds (code-point positions)
_EXT_STRINGS: dict[str, Callable[[str, list[object]], object]] = {
    "charAt": lambda s, a: s[_position(s, a[0] if len(a) == 1 else None):][:1],
    "indexOf": lambda s, a: _find(s, a, False),
    "lastIndexOf": lambda s, a: _find(s, a, True),
    "substring": _substring,
    "replace": lambda s, a: s.replace(*_strings(a[:2], 2), *_limit(a[2:])),
    "split": lambda s, a: _split(s, _strings(a[:1], 1)[0], *_limit(a[1:])),
}


def _limit(rest: list[object]) -> list[int]:
    """The optional count argument of ``replace``/``split`` (negative: no limit)."""
    if len(rest) > 1 or rest and (not isinstance(rest[0], int) or isinstance(rest[0], bool)):
        raise CelFailure("no such overload")
    return [rest[0]] if rest and rest[0] >= 0 else []   # type: ignore[list-item]


def _split(s: str, sep: str, limit: int = -1) -> list[str]:
    if limit == 0:
        return []
    if sep == "":
        chars = list(s)
        return chars if limit < 0 or limit >= len(chars) else chars[:limit - 1] + ["".join(chars[limit - 1:])]
    return s.split(sep, limit - 1 if limit > 0 else -1)


def _find(s: str, args: list[object], last: bool) -> int:
    """``indexOf``/``lastIndexOf`` with cel-go's optional code-point offset (ext/strings.go)."""
    sub = _strings(args[:1], 1)[0]
    if len(args) == 1:
        return s.rfind(sub) if last else s.find(sub)
    if len(args) != 2 or not isinstance(args[1], int) or isinstance(args[1], bool):
        raise CelFailure("no such overload")
    offset = args[1]
    if sub == "":
        return offset
    if offset < 0:
        raise CelFailure(f"index out of range: {offset}")
    if offset >= len(s):
        return -1
    return s.rfind(sub, 0, min(offset, len(s) - len(sub)) + len(sub)) if last else s.find(sub, offset)


def _quantity_method(name: str, q: Quantity, args: list[object]) -> object:
    if not args:
        fits = q.value.denominator == 1 and INT_MIN <= q.value <= INT_MAX
        fits = fits and q.whole   # Kubernetes keeps ``2000m`` or ``1.0`` at a negative scale: not an integer
        if name == "isInteger":
            return fits
        if name == "asInteger":
            if not fits:
                raise CelFailure("cannot convert value to integer")
            return int(q.value)
        if name == "asApproximateFloat":
            return float(q.value)
        raise Unsupported(name)
    other = args[0]
    if len(args) != 1:
        raise Unsupported(name)
    if name in ("add", "sub") and isinstance(other, int) and not isinstance(other, bool):
        return Quantity(q.value + other if name == "add" else q.value - other, q.whole)
    if not isinstance(other, Quantity):
        raise CelFailure("no such overload")
    if name in ("add", "sub"):
        return Quantity(q.value + other.value if name == "add" else q.value - other.value, q.whole and other.whole)
    c = (q.value > other.value) - (q.value < other.value)
    return _ordering(name, c)


def _semver_method(name: str, v: Semver, args: list[object]) -> object:
    if not args and name in ("major", "minor", "patch"):
        return getattr(v, name)
    if len(args) != 1 or not isinstance(args[0], Semver):
        raise CelFailure("no such overload") if len(args) == 1 else Unsupported(name)
    a, b = v.key(), args[0].key()
    return _ordering(name, (a > b) - (a < b))


def _ordering(name: str, c: int) -> object:
    if name == "compareTo":
        return c
    if name == "isGreaterThan":
        return c > 0
    if name == "isLessThan":
        return c < 0
    raise Unsupported(name)


def go_quote_text(s: str) -> str:
    """Go's ``strconv.Quote`` (``%q``): printable runes (Go's ``IsPrint``, Unicode 15) as they are,
    the others escaped."""
    out = ['"']
    for c in s:
        code = ord(c)
        if c in '"\\':
            out.append("\\" + c)
        elif go_unicode.is_print(c):
            out.append(c)
        elif c in _GO_ESCAPES:
            out.append(_GO_ESCAPES[c])
        elif code < 0x20 or code == 0x7F:
            out.append(f"\\x{code:02x}")
        elif code < 0x10000:
            out.append(f"\\u{code:04x}")
        else:
            out.append(f"\\U{code:08x}")
    return "".join(out) + '"'


_GO_ESCAPES = {"\a": "\\a", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t", "\v": "\\v"}
