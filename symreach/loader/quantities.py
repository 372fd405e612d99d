"""Kubernetes resource quantities ("500m", "1.5Gi", "1e3") to integers.

Why integers: capacity checks must be exact, and engines encode them as
pseudo-Boolean constraints. Like the API server, fractional results round up
(``0.1m`` cpu is 1 millicore, ``0.5`` bytes is 1 byte).

Whole numbers with an integral multiplier (``2``, ``500m``, ``4Gi``, an int)
are computed with integers; everything else exactly with ``decimal``,
imported then (start-up: a small ``check`` needs no ``decimal``).
"""

from __future__ import annotations

import functools
import math
import re
from typing import TYPE_CHECKING, Any, Optional

if TYPE_CHECKING:
    from decimal import Decimal

CPU = "cpu"
# Largest value we accept, as int64 like resource.Quantity.Value().
MAX_VALUE = 2**63 - 1
# Longer strings are certainly garbage; bounding them keeps Decimal cheap.
MAX_LENGTH = 64

_BINARY = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60}
_DECIMAL_EXP = {"n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}
_QUANTITY = re.compile(
    r"(?P<sign>[+-]?)(?P<number>[0-9]+(?:\.[0-9]*)?|\.[0-9]+)"
    r"(?P<suffix>Ki|Mi|Gi|Ti|Pi|Ei|[eE][+-]?[0-9]+|[numkMGTPE]?)"
)
_WHOLE = re.compile(r"([0-9]+)(Ki|Mi|Gi|Ti|Pi|Ei|[mkMGTPE]?)")
_WHOLE_FACTOR = dict(_BINARY, **{s: 10 ** e for s, e in _DECIMAL_EXP.items() if e >= 0})


@functools.cache
def _ctx() -> Any:
    from decimal import Context

    return Context(prec=200)


class QuantityError(ValueError):
    """The value is not a valid non-negative quantity; the message says why."""


def parse_quantity(value: object, resource: str = "") -> int:
    """The integer amount of ``value`` for ``resource``: millicores for cpu, base units otherwise."""
    whole = _whole(value, resource == CPU, milli_suffix=True)
    if whole is not None:
        return whole
    from decimal import ROUND_CEILING, Decimal

    amount = _to_decimal(value)
    if resource == CPU:
        amount = _ctx().multiply(amount, Decimal(1000))
    result = int(amount.to_integral_value(rounding=ROUND_CEILING, context=_ctx()))
    if result > MAX_VALUE:
        raise QuantityError(f"quantity {_show(value)} is too large")
    return result


def parse_count(value: object) -> int:
    """A quantity that must be a whole number (e.g. the ``pods`` capacity)."""
    whole = _whole(value, False)
    if whole is not None:
        return whole
    amount = _to_decimal(value)
    if amount != amount.to_integral_value(context=_ctx()):
        raise QuantityError(f"{_show(value)} must be a whole number")
    result = int(amount)
    if result > MAX_VALUE:
        raise QuantityError(f"quantity {_show(value)} is too large")
    return result


def _whole(value: object, millis: bool, milli_suffix: bool = False) -> Optional[int]:
    """The amount of a non-negative whole number times an integral multiplier (or ``m``, rounded
    up, with ``milli_suffix``), in thousandths if ``millis``; None for anything else (``decimal``
    decides, and words the errors)."""
    if type(value) is int:
        number, suffix = value, ""
    elif type(value) is str and len(value) <= MAX_LENGTH:
        match = _WHOLE.fullmatch(value)
        if match is None:
            return None
        number, suffix = int(match[1]), match[2]
    else:
        return None
    if suffix == "m":
        if not milli_suffix:
            return None
        result = number if millis else -(-number // 1000)
    else:
        result = number * _WHOLE_FACTOR[suffix] * (1000 if millis else 1)
    return result if 0 <= result <= MAX_VALUE else None


def _to_decimal(value: object) -> Decimal:
    """Exact decimal value of a YAML scalar (string, int or float); rejects negatives."""
    from decimal import Decimal

    if isinstance(value, bool) or value is None:
        raise QuantityError(f"invalid quantity {_show(value)}: expected a number or a string like '500m' or '1Gi'")
    if isinstance(value, int):
        amount = Decimal(value)
    elif isinstance(value, float):
        if not math.isfinite(value):
            raise QuantityError(f"invalid quantity {_show(value)}")
        amount = Decimal(repr(value))
    elif isinstance(value, str):
        amount = _parse_string(value)
    else:
        raise QuantityError(f"invalid quantity {_show(value)}: expected a number or a string")
    if amount < 0:
        raise QuantityError(f"quantity {_show(value)} must not be negative")
    return amount


def _parse_string(text: str) -> Decimal:
    from decimal import Decimal, InvalidOperation

    if len(text) > MAX_LENGTH:
        raise QuantityError(f"invalid quantity {_show(text)}: too long")
    match = _QUANTITY.fullmatch(text)
    if match is None:
        raise QuantityError(f"invalid quantity {_show(text)}")
    try:
        number = Decimal(match["number"])
    except InvalidOperation:  # pragma: no cover - the regex admits only digits
        raise QuantityError(f"invalid quantity {_show(text)}") from None
    if match["sign"] == "-" and number != 0:
        raise QuantityError(f"quantity {_show(text)} must not be negative")
    suffix = match["suffix"]
    if suffix in _BINARY:
        return _ctx().multiply(number, Decimal(_BINARY[suffix]))
    if suffix in _DECIMAL_EXP:
        exponent = _DECIMAL_EXP[suffix]
    else:
        exponent = int(suffix[1:])
        if abs(exponent) > 30:
            raise QuantityError(f"quantity {_show(text)} is out of range")
    return number.scaleb(exponent, context=_ctx())


def _show(value: object) -> str:
    text = repr(value) if not isinstance(value, str) else f"'{value}'"
    return text if len(text) <= 40 else text[:37] + "..."
