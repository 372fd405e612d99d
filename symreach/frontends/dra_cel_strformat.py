"""``<string>.format(<list>)`` of cel-go's ext.Strings v2 (ext/formatting.go), as DRA runs it.

Kubernetes' base environment adds ``ext.Strings(ext.StringsVersion(2))``, whose ``format``
is the first formatter with the ``en_US`` locale: ``%s %d %x %X %o %b`` as Go's ``fmt``
prints them (``%s`` of a list or map writes its elements as CEL literals: strings with
Go's ``%q``, doubles with six decimals, map entries sorted), while ``%f`` and ``%e`` go
through golang.org/x/text's locale printer: ``%f`` groups the integer digits with commas
(``1,234.50``, infinity ``∞``), and ``%e`` is printed as ``%<precision>e`` (cel-go passes
the precision as the width, so six significant decimals always) in the locale's
superscript form ``1.234500×10⁰³``, padded with spaces to that width (x/text keeps a precision
as int16 digits to round to and uint8 digits to pad to, a width as uint16, and gives up at
``%!(NOVERB)`` on a number its parser reads past 1e6: every size is modelled). Errors carry
cel-go's texts (measured against the kso DRA variant, ``tests/test_dra_cel_environment.py``).
"""

from __future__ import annotations

import math
from decimal import Decimal

from symreach.frontends.dra_cel_library import CelType
from symreach.frontends.dra_cel_time import Duration, Timestamp, time_text
from symreach.frontends.dra_cel_types import type_of
from symreach.frontends.dra_cel_values import CelFailure, Unsupported, go_quote_text, key_value, to_string

__all__ = ["string_format"]

_SUPERSCRIPT = "⁰¹²³⁴⁵⁶⁷⁸⁹"
_MAX_NUMBER = 10 ** 6   # x/text's parsenum stops reading a width or precision past this (tooLarge)


class _FormatError(Exception):
    pass


def _is_int(v: object) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _text(v: object) -> str:
    """``FormatString``: a value's ``%s`` text."""
    _known(v)
    if isinstance(v, list):
        return "[" + ", ".join(_literal(x) for x in v) + "]"
    if isinstance(v, dict):
        return _map_text(v)
    if isinstance(v, (bool, int, float, str, bytes)):
        try:
            return str(to_string(v))
        except CelFailure as err:
            raise _FormatError(f"could not convert argument {go_quote_text(err.message)} to string") from None
    if isinstance(v, (Timestamp, Duration)):
        return time_text(v)
    if isinstance(v, CelType):
        return v.name
    if v is None:
        return "null"
    raise _FormatError("string clause can only be used on strings, bools, bytes, ints, doubles, maps, lists, "
                       f"types, durations, and timestamps, was given {type_of(v)}")


def _known(v: object) -> None:
    """``device`` and its maps arrive as plain maps (``dra_cel``); any other object is not printed."""
    if type_of(v) == "object":
        raise Unsupported("formatting a value of the device itself")


def _literal(v: object) -> str:
    """An element of a list or a map value (``clauseForType`` then ``quoteForCEL``)."""
    _known(v)
    if isinstance(v, float):
        text = "NaN" if v != v else ("+Inf" if v > 0 else "-Inf") if math.isinf(v) else format(v, ".6f")
        return f'"{text}"' if math.isinf(v) or v != v else text
    if isinstance(v, (Timestamp, Duration)):
        return ("timestamp(" if isinstance(v, Timestamp) else "duration(") + go_quote_text(time_text(v)) + ")"
    if isinstance(v, (list, dict, bool, int, CelType)) or v is None:
        return _text(v)
    if isinstance(v, str):
        return go_quote_text(v)
    if isinstance(v, bytes):
        return "b" + go_quote_text(_text(v))
    raise _FormatError(f"no formatting function for {type_of(v)}")


def _map_text(m: dict) -> str:
    pairs = []
    for held, value in m.items():
        key = key_value(held)
        if isinstance(key, (str, bool)) or _is_int(key):
            pairs.append((_literal(key), _literal(value)))
        else:
            raise _FormatError(f"no formatting function for map key of type {type_of(key)}")
    pairs.sort(key=lambda p: p[0].encode("utf-8"))
    return "{" + ", ".join(f"{k}:{v}" for k, v in pairs) + "}"


def _double(v: object, clause: str) -> float:
    if isinstance(v, str) and v in ("NaN", "Infinity", "-Infinity"):
        return float(v.replace("Infinity", "inf"))
    if not isinstance(v, float):
        raise _FormatError(f"{clause} clause can only be used on doubles, was given {type_of(v)}")
    return v


def _fixed(v: object, precision: int) -> str:
    """x/text's en_US ``%.<precision>f``: grouped integer digits, the sign of a negative value.
    x/text holds the precision as ``int16`` digits to round to (a negative one: Go's shortest
    digits) and ``uint8`` digits to pad to, so both wrap."""
    x = _double(v, "fixed-point")
    if x != x or math.isinf(x):
        return "NaN" if x != x else "∞" if x > 0 else "-∞"
    rounded, padded = (precision + 2 ** 15) % 2 ** 16 - 2 ** 15, precision % 256
    if rounded >= 0:
        whole, _, fraction = format(abs(x), f".{rounded}f").partition(".")
    else:
        whole, _, fraction = format(Decimal(repr(abs(x))), "f").partition(".")
        fraction = fraction.rstrip("0").ljust(padded, "0")
    while len(fraction) > padded and fraction.endswith("0"):   # x/text keeps uint8(precision) digits
        fraction = fraction[:-1]
    grouped = f"{int(whole):,}"
    return ("-" if x < 0 else "") + grouped + ("." + fraction if fraction else "")


def _scientific(v: object, width: int) -> str:
    """x/text's en_US ``%<width>e``: seven significant digits, ``×10`` and a superscript exponent."""
    x = _double(v, "scientific")
    if x != x or math.isinf(x):
        text = "NaN" if x != x else "∞" if x > 0 else "-∞"
    else:
        mantissa, _, exponent = format(abs(x), ".6e").partition("e")
        power = int(exponent)
        text = ("-" if x < 0 else "") + mantissa + "×10" + ("⁻" if power < 0 else "") + "".join(
            _SUPERSCRIPT[int(d)] for d in f"{abs(power):02d}")
    return text.rjust(width)


def _integer(v: object, clause: str, base: str) -> str:
    """``%d %o %b %x %X`` of an int or a uint (Go writes a sign, then the magnitude)."""
    if clause == "binary" and isinstance(v, bool):
        return "1" if v else "0"
    if clause == "hex" and isinstance(v, (str, bytes)):
        data = v.encode("utf-8") if isinstance(v, str) else v
        return data.hex().upper() if base == "X" else data.hex()
    if not _is_int(v):
        raise _FormatError({
            "decimal": "decimal clause can only be used on integers",
            "octal": "octal clause can only be used on integers",
            "binary": "only integers and bools can be formatted as binary",
            "hex": "only integers, byte buffers, and strings can be formatted as hex"}[clause]
            + f", was given {type_of(v)}")
    return ("-" if v < 0 else "") + format(abs(v), base)   # type: ignore[operator]


_CLAUSES = {"d": ("decimal", "d"), "o": ("octal", "o"), "b": ("binary", "b"), "x": ("hex", "x"), "X": ("hex", "X")}


def _precision(spec: bytes, i: int) -> tuple[int, int | None]:
    """``parsePrecision``: where the verb is, and the precision after a ``.`` (None without)."""
    if spec[i:i + 1] != b".":
        return i, None
    j = i + 1
    while j < len(spec) and spec[j:j + 1].isdigit():
        j += 1
    if j >= len(spec):
        raise _FormatError("could not parse formatting clause: error while parsing precision: could not find end "
                           "of precision specifier")
    digits = spec[i + 1:j].decode()
    if not digits or int(digits) > (1 << 63) - 1:
        why = "invalid syntax" if not digits else "value out of range"
        raise _FormatError("could not parse formatting clause: error while parsing precision: error while "
                           f'converting precision to integer: strconv.Atoi: parsing "{digits}": {why}')
    return j, int(digits)


def _clause(verb: str, precision: int | None, arg: object) -> str:
    if verb == "s":
        return _text(arg)
    if verb in _CLAUSES:
        return _integer(arg, *_CLAUSES[verb])
    p = 6 if precision is None else precision
    if len(str(p)) > 1 and int(str(p)[:-1]) > _MAX_NUMBER:   # x/text's parser gives up before the verb
        return "%!(NOVERB)"
    return _fixed(arg, p) if verb == "f" else _scientific(arg, p % 2 ** 16)   # the width is a uint16


def string_format(template: object, args: list[object]) -> str:
    """``template.format(args)`` (``parseFormatString``, byte by byte as Go walks it)."""
    if not isinstance(template, str) or len(args) != 1 or not isinstance(args[0], list):
        raise CelFailure("no such overload")
    values: list = args[0]
    spec = template.encode("utf-8")
    out, i, index = bytearray(), 0, 0
    try:
        while i < len(spec):
            if spec[i] != ord("%"):
                out.append(spec[i])
                i += 1
                continue
            if spec[i + 1:i + 2] == b"%":
                out.append(ord("%"))
                i += 2
                continue
            if index >= len(values):
                raise _FormatError(f"index {index} out of range")
            if i + 1 >= len(spec):
                raise _FormatError("unexpected end of string")
            j, precision = _precision(spec, i + 1)
            verb = chr(spec[j])
            if verb not in "sdfebxXo":
                raise _FormatError(f'could not parse formatting clause: unrecognized formatting clause "{verb}"')
            try:
                out += _clause(verb, precision, values[index]).encode("utf-8")
            except _FormatError as err:
                raise _FormatError(f"error during formatting: {err}") from None
            i, index = j + 1, index + 1
    except _FormatError as err:
        raise CelFailure(str(err)) from None
    return out.decode("utf-8")
