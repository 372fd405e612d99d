"""CEL's timestamps and durations as cel-go has them (``dra_cel`` evaluates with these).

A ``Timestamp`` is an instant (nanoseconds since the Unix epoch, within years 1 to 9999),
a ``Duration`` Go's ``time.Duration`` (int64 nanoseconds). Parsing follows Go's
``time.Parse(time.RFC3339, ...)`` and ``time.ParseDuration``; arithmetic, ordering, the
conversions and the getters (with an optional time zone) follow ``common/types`` of cel-go,
with its messages (``timestamp overflow``, ``integer overflow``, ``type conversion error``).
"""

from __future__ import annotations

import datetime
import re
from dataclasses import dataclass, field

from symreach.frontends.dra_cel_values import INT_MAX, INT_MIN, CelFailure, go_float_text
from symreach.frontends.dra_cel_zone import zone_fields, zone_offset

__all__ = ["Duration", "Timestamp", "duration_of", "time_arith", "time_compare", "time_method", "timestamp_of",
           "time_text"]

_SECOND = 10 ** 9
_MIN_UNIX, _MAX_UNIX = -62135596800, 253402300799
_EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc)


@dataclass(frozen=True)
class Timestamp:
    """An instant; ``offset``: the zone it was written in (seconds east of UTC), which ``string()``
    keeps and equality ignores."""

    nanos: int
    offset: int = field(default=0, compare=False)
    zone: object = field(default=None, compare=False)   # Go's *Location, which a map key compares


def _location(text: str, offset: int) -> object:
    """The ``*time.Location`` ``time.Parse`` gives: nil for ``Z``, Local (UTC) for a zero offset,
    ``FixedZone``'s shared one for whole hours from -12 to +14, else a new one per parse."""
    if text.endswith("Z"):
        return None
    if offset == 0:
        return "Local"
    if offset % 3600 == 0 and -12 <= offset // 3600 <= 14:
        return ("fixed", offset // 3600)
    return object()


@dataclass(frozen=True)
class Duration:
    nanos: int


def _checked_time(nanos: int, offset: int = 0, zone: object = None) -> Timestamp:
    if not _MIN_UNIX <= nanos // _SECOND <= _MAX_UNIX:
        raise CelFailure("timestamp overflow")
    return Timestamp(nanos, offset, zone)


def _checked_int(value: int) -> int:
    if not INT_MIN <= value <= INT_MAX:
        raise CelFailure("integer overflow")
    return value


_RFC3339 = re.compile(r"^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:[.,](\d+))?(Z|[+-]\d{2}:\d{2})$")


def _parse_rfc3339(text: str) -> tuple[int, int] | None:
    m = _RFC3339.match(text)
    if not m:
        return None
    year, month, day, hour, minute, second = (int(g) for g in m.groups()[:6])
    zone = m.group(8)
    offset = 0
    if zone != "Z":
        zh, zm = int(zone[1:3]), int(zone[4:6])
        if zh > 24 or zm >= 60:
            return None
        offset = (zh * 60 + zm) * 60 * (-1 if zone[0] == "-" else 1)
    try:
        moment = datetime.datetime(year, month, day, hour, minute, second, tzinfo=datetime.timezone.utc)
    except ValueError:
        return None
    fraction = (m.group(7) or "")[:9].ljust(9, "0")
    seconds = (moment - _EPOCH) // datetime.timedelta(seconds=1) - offset
    return seconds * _SECOND + int(fraction), offset


_UNITS = {"ns": 1, "us": 10 ** 3, "µs": 10 ** 3, "μs": 10 ** 3, "ms": 10 ** 6, "s": _SECOND, "m": 60 * _SECOND,
          "h": 3600 * _SECOND}
_PART = re.compile(r"(\d*)(?:\.(\d*))?([^\d.]+)")


def _parse_duration(text: str) -> int | None:
    """Go's ``time.ParseDuration`` (a fraction scaled in float64 as Go does), or None."""
    s, sign = text, 1
    if s[:1] in "+-" and s:
        sign, s = (-1 if s[0] == "-" else 1), s[1:]
    if s == "0":
        return 0
    if not s:
        return None
    total, pos = 0, 0
    while pos < len(s):
        m = _PART.match(s, pos)
        if not m or (not m.group(1) and not m.group(2)) or m.group(3) not in _UNITS:
            return None
        unit, whole, frac = _UNITS[m.group(3)], int(m.group(1) or 0), m.group(2) or ""
        value = whole * unit
        if frac:
            digits = frac[:18]
            value += int(float(int(digits)) * (float(unit) / float(10 ** len(digits))))
        total += value
        if total > 1 << 63:
            return None
        pos = m.end()
    if total > INT_MAX and not (sign < 0 and total == 1 << 63):
        return None
    return sign * total


def timestamp_of(value: object) -> Timestamp:
    """``timestamp(string)`` or ``timestamp(int)`` (Unix seconds)."""
    if isinstance(value, Timestamp):
        return value
    if isinstance(value, int) and not isinstance(value, bool):
        return _checked_time(value * _SECOND)
    if not isinstance(value, str):
        raise CelFailure("no such overload")
    parsed = _parse_rfc3339(value)
    if parsed is None:
        raise CelFailure("type conversion error from 'string' to 'google.protobuf.Timestamp'")
    return _checked_time(*parsed, _location(value, parsed[1]))


def duration_of(value: object) -> Duration:
    if isinstance(value, Duration):
        return value
    if not isinstance(value, str):
        raise CelFailure("no such overload")
    nanos = _parse_duration(value)
    if nanos is None:
        raise CelFailure("type conversion error from 'string' to 'google.protobuf.Duration'")
    return Duration(nanos)


def time_text(value: Timestamp | Duration) -> str:
    """``string()``: RFC 3339 with the shortest fraction in UTC; seconds with ``s``."""
    if isinstance(value, Duration):
        seconds = value.nanos // _SECOND if value.nanos >= 0 else -(-value.nanos // _SECOND)
        return go_float_text_fixed(seconds + (value.nanos - seconds * _SECOND) / 1e9) + "s"
    seconds, nanos = divmod(value.nanos + value.offset * _SECOND, _SECOND)
    moment = _EPOCH + datetime.timedelta(seconds=seconds)
    fraction = f".{nanos:09d}".rstrip("0") if nanos else ""
    zone = "Z" if not value.offset else "%s%02d:%02d" % ("-" if value.offset < 0 else "+", *divmod(
        abs(value.offset) // 60, 60))
    return moment.strftime("%Y-%m-%dT%H:%M:%S").rjust(19, "0") + fraction + zone


def go_float_text_fixed(f: float) -> str:
    """Go's ``strconv.FormatFloat(f, 'f', -1, 64)``: the shortest digits, never an exponent."""
    from decimal import Decimal

    text = go_float_text(f)
    if "e" not in text:
        return text
    return format(Decimal(repr(f)).normalize(), "f")


def time_compare(a: object, b: object) -> int:
    if type(a) is not type(b) or not isinstance(a, (Timestamp, Duration)):
        raise CelFailure("no such overload")
    return (a.nanos > b.nanos) - (a.nanos < b.nanos)   # type: ignore[union-attr]


def time_arith(op: str, a: object, b: object) -> object:
    if op == "-" and isinstance(a, Timestamp) and isinstance(b, Timestamp):
        return Duration(_checked_int(a.nanos - b.nanos))
    if op in "+-" and isinstance(a, Timestamp) and isinstance(b, Duration):
        return _checked_time(a.nanos + (b.nanos if op == "+" else -_checked_int(-b.nanos)), a.offset, a.zone)
    if op == "+" and isinstance(a, Duration) and isinstance(b, Timestamp):
        return _checked_time(b.nanos + a.nanos, b.offset, b.zone)
    if op in "+-" and isinstance(a, Duration) and isinstance(b, Duration):
        return Duration(_checked_int(a.nanos + b.nanos if op == "+" else a.nanos - b.nanos))
    raise CelFailure("no such overload")


_TIMESTAMP_GETTERS = ("getFullYear", "getMonth", "getDayOfYear", "getDayOfMonth", "getDate", "getDayOfWeek",
                      "getHours", "getMinutes", "getSeconds", "getMilliseconds")
_DURATION_GETTERS = {"getHours": 3600 * _SECOND, "getMinutes": 60 * _SECOND, "getSeconds": _SECOND,
                     "getMilliseconds": 10 ** 6}


def time_method(name: str, value: Timestamp | Duration, args: list[object]) -> object:
    """The getters: a timestamp's fields in UTC or the given zone; a duration's whole units."""
    if isinstance(value, Duration):
        if args or name not in _DURATION_GETTERS:
            raise CelFailure("no such overload")
        unit = _DURATION_GETTERS[name]
        return value.nanos // unit if value.nanos >= 0 else -(-value.nanos // unit)
    if len(args) > 1 or name not in _TIMESTAMP_GETTERS:
        raise CelFailure("no such overload")
    seconds, nanos = divmod(value.nanos, _SECOND)
    offset = zone_offset(args[0], seconds) if args else 0
    if name == "getMilliseconds":
        return nanos // 10 ** 6
    return zone_fields(seconds + offset)[name]
