"""Go's ``%v`` of a CEL value as cel-go prints a key in ``insert failed: key %v already exists``.

``baseList.String`` prints each element's ``%v`` in brackets, ``Optional.String``
``optional(%v)``, a duration Go's ``Duration.String``, null ``0`` (an enum without a ``String``); ``baseMap.String`` prints its entries
in Go's random map order, and the scheduler's ``cel.mapper`` (``device.attributes``,
``device.capacity``) prints as a Go struct: its map, then the default map's pointer, an
address that changes from run to run (a ``format.*`` value prints its validator's function
pointer, fixed in the scheduler's binary but unknown here). So a message may be one of many: ``key_pattern``
is a regular expression of every text Go can give (entries in any order, any address, a
quantity any quantity text: the exact spelling of ``resource.Quantity.String`` is not
modelled), ``key_text`` one text in that shape.
"""

from __future__ import annotations

import re
from typing import Any, Callable

from symreach.frontends.dra_cel_values import Unsupported, go_duration_text, go_float_text, key_value

__all__ = ["key_pattern", "key_text"]

_ADDRESS = "0x[0-9a-f]+"
_QUANTITY = r"[-+]?[0-9]+(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+|[KMGTPE]i|[numkMGTPE])?"


def key_text(key: object) -> str:
    """One text Go can print for ``key`` (the only one when ``key_pattern`` is its escape)."""
    return _print(key, lambda text: text, lambda entries: entries, "0xc000000000", "")


def key_pattern(key: object) -> str:
    """A regular expression every text Go can print for ``key`` fully matches."""
    return _print(key, re.escape, _any_order, _ADDRESS, _QUANTITY)


def _any_order(entries: list[str]) -> list[str]:
    """Each entry in any place (a pattern: any n of them, which also admits a repeated one)."""
    if len(entries) < 2:
        return entries
    one = "(?:" + "|".join(entries) + ")"
    return [one + f"(?:, {one}){{{len(entries) - 1}}}"]


def _print(v: object, lit: Callable[[str], str], order: Callable[[list[str]], list[str]], address: str,
           quantity: str) -> str:
    def go(x: object) -> str:
        return _print(x, lit, order, address, quantity)

    if v is None:   # types.Null, an int32 enum without a String method
        return lit("0")
    if isinstance(v, bool):
        return lit("true" if v else "false")
    if isinstance(v, float):
        return lit(go_float_text(v))
    if isinstance(v, (str, int)):
        return lit(str(v))
    if isinstance(v, list):   # baseList.String / concatList.String
        return lit("[") + lit(", ").join(go(x) for x in v) + lit("]")
    held = type(v).__name__
    if isinstance(v, dict) or held == "Device":
        items = v.items() if isinstance(v, dict) else v.fields().items()   # type: ignore[attr-defined]
        entries = [go(key_value(k)) + lit(": ") + go(x) for k, x in items]
        return lit("{") + lit(", ").join(order(entries)) + lit("}")
    if held == "Domains":   # the struct cel.mapper{Mapper, defaultValue}: {<map> <pointer>}
        return lit("{") + go(v.present()) + lit(" ") + address + lit("}")   # type: ignore[attr-defined]
    if held == "Optional":
        return lit("optional(") + go(v.value) + lit(")") if v.present else lit("optional.none()")   # type: ignore
    if held == "Duration":
        return lit(go_duration_text(v.nanos))   # type: ignore[attr-defined]
    if held == "Semver":
        return lit(_semver(v))
    if held == "Quantity":
        return quantity or _quantity(v.value)   # type: ignore[attr-defined]
    if held == "Format":   # the struct cel.Format{Name, ValidateFunc, MaxRegexSize}: a function pointer
        name, size = _FORMATS.get(v.name, (v.name, ""))   # type: ignore[attr-defined]
        return lit("{" + name + " ") + address + lit(" ") + (lit(size) if size else "[0-9]+") + lit("}")
    raise Unsupported("printing a value of type " + held)


# Kubernetes' ConstantFormats: the Go name and MaxRegexSize of each (the strfmt ones: a pattern's length)
_FORMATS = {"dns1123Label": ("DNS1123Label", "30"), "dns1123Subdomain": ("DNS1123Subdomain", "60"),
            "dns1035Label": ("DNS1035Label", "30"), "qualifiedName": ("QualifiedName", "60"),
            "dns1123LabelPrefix": ("DNS1123LabelPrefix", "30"), "dns1123SubdomainPrefix": ("DNS1123SubdomainPrefix", "60"),
            "dns1035LabelPrefix": ("DNS1035LabelPrefix", "30"), "labelValue": ("LabelValue", "40"),
            "uri": ("URI", "1103"), "byte": ("byte", "84")}


def _quantity(value: Any) -> str:
    """A quantity's text (the spelling Go's canonical form picks is not modelled)."""
    for suffix, power in (("Ei", 60), ("Pi", 50), ("Ti", 40), ("Gi", 30), ("Mi", 20), ("Ki", 10)):
        if value and value % (1 << power) == 0:
            return f"{value // (1 << power)}{suffix}"
    return str(value) if value.denominator == 1 else f"{value * 1000}m"


def _semver(v: Any) -> str:
    core = f"{v.major}.{v.minor}.{v.patch}"
    return core + ("-" + ".".join(v.pre) if v.pre else "")
