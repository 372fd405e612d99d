"""The CEL device selectors symreach evaluates exactly (DynamicResources' structured allocator).

A DeviceClass or a claim's request selects devices with CEL expressions over
``device.driver`` and ``device.attributes["<domain>"].<name>``. This module
evaluates the common forms exactly, as the allocator's CEL environment does:

    device.driver == "gpu.example.com"            (also !=)
    device.attributes["gpu.example.com"].model == "a100"   (==, !=, <, <=, >, >= on ints)
    A && B && ...   or   A || B || ...            (one connective, no parentheses)
    true, false

Anything else (capacity, ``in``, functions, parentheses, mixed connectives)
is ``UNKNOWN``: the front end then takes the device as matching and marks the
answer with a caveat, never silently. A missing attribute or a comparison of
mismatched types is a CEL runtime error in the scheduler (it aborts the
pod's scheduling cycle); that is ``ERROR`` here, also a caveat.
"""

from __future__ import annotations

import re
from typing import Union

UNKNOWN = "unknown"
ERROR = "error"
Outcome = Union[bool, str]   # True, False, UNKNOWN or ERROR

_STRING = r'"((?:[^"\\]|\\.)*)"'
_VALUE = rf'(?:{_STRING}|(-?\d+)|(true|false))'
_DRIVER = re.compile(rf'^device\.driver\s*(==|!=)\s*{_STRING}$')
_ATTR = re.compile(rf'^device\.attributes\[{_STRING}\]\.([A-Za-z_][A-Za-z0-9_]*)\s*(==|!=|<=|>=|<|>)\s*{_VALUE}$')


def attribute_values(driver: str, attributes: dict) -> dict[tuple[str, str], object]:
    """A device's attributes as (domain, name) -> value; a name without a domain is the driver's."""
    out: dict[tuple[str, str], object] = {}
    for key, raw in (attributes or {}).items():
        domain, _, name = str(key).rpartition("/")
        value = raw.get("string", raw.get("int", raw.get("bool", raw.get("version")))) if isinstance(raw, dict) else None
        if isinstance(raw, dict) and "version" in raw:
            value = ("version", raw["version"])
        out[(domain or driver, name)] = value
    return out


def evaluate(expression: str, driver: str, attributes: dict[tuple[str, str], object]) -> Outcome:
    """The selector's value on one device (``attribute_values``), or UNKNOWN / ERROR."""
    text = expression.strip()
    if "(" in text or ")" in text:
        return UNKNOWN
    for connective, combine in (("&&", all), ("||", any)):
        if connective in text:
            other = "||" if connective == "&&" else "&&"
            if other in text:
                return UNKNOWN
            parts = [evaluate(p, driver, attributes) for p in text.split(connective)]
            return _combine(parts, connective == "&&")
    if text in ("true", "false"):
        return text == "true"
    m = _DRIVER.match(text)
    if m:
        return (driver == _unquote(m.group(2))) == (m.group(1) == "==")
    m = _ATTR.match(text)
    if not m:
        return UNKNOWN
    domain, name, op = _unquote(m.group(1)), m.group(2), m.group(3)
    if (domain, name) not in attributes:
        return ERROR
    have = attributes[(domain, name)]
    if isinstance(have, tuple):   # a semver attribute: only its own functions compare it
        return UNKNOWN
    want: object
    if m.group(4) is not None:
        want = _unquote(m.group(4))
    elif m.group(5) is not None:
        want = int(m.group(5))
    else:
        want = m.group(6) == "true"
    return _compare(have, op, want)


def _compare(have: object, op: str, want: object) -> Outcome:
    if type(have) is not type(want):   # CEL has no overload mixing string, int and bool
        return ERROR
    if op == "==":
        return have == want
    if op == "!=":
        return have != want
    if isinstance(have, bool) or not isinstance(have, int):
        return ERROR if not isinstance(have, str) else _ordered(have, op, want)
    return _ordered(have, op, want)


def _ordered(have, op: str, want) -> bool:
    return {"<": have < want, "<=": have <= want, ">": have > want, ">=": have >= want}[op]


def _combine(parts: list[Outcome], conjunction: bool) -> Outcome:
    """CEL's commutative && and ||: a decided operand that settles it wins over errors."""
    settle = not conjunction   # False settles &&, True settles ||
    if any(p is settle for p in parts):
        return settle
    if any(p == ERROR for p in parts):
        return ERROR
    if any(p == UNKNOWN for p in parts):
        return UNKNOWN
    return conjunction


def _unquote(text: str) -> str:
    return re.sub(r"\\(.)", r"\1", text)
