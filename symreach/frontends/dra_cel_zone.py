"""The time zone argument of CEL's timestamp getters, as cel-go resolves it (``common/types``
``timeZone``), and the calendar fields Go's ``time`` computes in it.

A text with a ``:`` is ``<hours>:<minutes>``: both parsed with ``strconv.Atoi`` (its messages),
the offset ``hours*60 ± minutes`` minutes with Go's int64 wrap-around, made seconds through
``time.Duration(...).Seconds()`` and used as a ``time.FixedZone`` of any size. Any other text
is Go's ``time.LoadLocation``: ``""`` and ``UTC`` are UTC, ``Local`` the process's zone (UTC,
as in the scheduler's container and the kso variant), a name with ``..`` or a leading ``/`` or
``\\`` refused, else the TZif file the run's tz database holds (``zoneinfo_db``: ZONEINFO and
Go's system directories, or ``--zoneinfo``), with Go's messages. The fields come from the
proleptic Gregorian calendar over the local seconds (years 0 and below included, which Python's
``datetime`` cannot hold).
"""

from __future__ import annotations

import datetime
import io
import zoneinfo

from symreach.frontends import zoneinfo_db
from symreach.frontends.dra_cel_values import CelFailure, go_quote_text

__all__ = ["zone_fields", "zone_offset"]

_EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc)


def _wrap(n: int) -> int:
    """Go's int64 arithmetic: ``n`` modulo 2^64 into [-2^63, 2^63)."""
    return (n + (1 << 63)) % (1 << 64) - (1 << 63)


def _atoi(text: str) -> int:
    """``strconv.Atoi`` on a 64-bit machine: the value, or its ``*NumError`` as a CEL error."""
    def fail(why: str) -> CelFailure:
        return CelFailure(f"strconv.Atoi: parsing {go_quote_text(text)}: {why}")
    digits = text[1:] if text[:1] in "+-" else text
    if not digits:
        raise fail("invalid syntax")
    value = 0
    for c in digits:
        if not "0" <= c <= "9":
            raise fail("invalid syntax")
        value = value * 10 + int(c)
        if value >= 1 << 64:   # ParseUint stops at the overflow, before any later bad byte
            raise fail("value out of range")
    value = -value if text[0] == "-" else value
    if not -(1 << 63) <= value < 1 << 63:
        raise fail("value out of range")
    return value


def _fixed_offset(name: str, colon: int) -> int:
    hours, minutes = _atoi(name[:colon]), _atoi(name[colon + 1:])
    offset = _wrap(_wrap(hours * 60) - minutes) if name[0] == "-" else _wrap(_wrap(hours * 60) + minutes)
    nanos = _wrap(offset * 60 * 10 ** 9)
    seconds = nanos // 10 ** 9 if nanos >= 0 else -(-nanos // 10 ** 9)   # Go's truncating d / Second
    rest = nanos - seconds * 10 ** 9
    return int(float(seconds) + float(rest) / 1e9)   # Duration.Seconds(), then int()


def _load(name: str) -> zoneinfo.ZoneInfo | None:
    """``time.LoadLocation`` for a name (None: UTC)."""
    if name in ("", "UTC", "Local"):
        return None
    if ".." in name or name[0] in "/\\":
        raise CelFailure("time: invalid location name")
    return zoneinfo_db.current().load(name, lambda data: zoneinfo.ZoneInfo.from_file(io.BytesIO(data), key=name))


def zone_offset(name: object, seconds: int) -> int:
    """The offset east of UTC, in seconds, of zone ``name`` at ``seconds`` after the Unix epoch."""
    if not isinstance(name, str):
        raise CelFailure("no such overload")
    colon = name.find(":")
    if colon >= 0:
        return _fixed_offset(name, colon)
    zone = _load(name)
    if zone is None:
        return 0
    try:
        local = (_EPOCH + datetime.timedelta(seconds=seconds)).astimezone(zone)
    except OverflowError:   # local time before year 1 or after 9999, out of datetime's range:
        inward = seconds + (2 * 86400 if seconds < 0 else -2 * 86400)   # no zone changes offset in
        local = (_EPOCH + datetime.timedelta(seconds=inward)).astimezone(zone)   # those years' first/last days
    return int(local.utcoffset().total_seconds())   # type: ignore[union-attr]


def zone_fields(local: int) -> dict[str, int]:
    """Go's calendar fields of ``local`` seconds after 1970-01-01T00:00 (proleptic Gregorian)."""
    days, second = divmod(local, 86400)
    shifted = days + 719468   # Howard Hinnant's days_from_civil, inverted: eras of 400 years from 0000-03-01
    era = shifted // 146097
    day_of_era = shifted - era * 146097
    year_of_era = (day_of_era - day_of_era // 1460 + day_of_era // 36524 - day_of_era // 146096) // 365
    day_of_year = day_of_era - (365 * year_of_era + year_of_era // 4 - year_of_era // 100)
    month_index = (5 * day_of_year + 2) // 153
    day = day_of_year - (153 * month_index + 2) // 5 + 1
    month = month_index + 3 if month_index < 10 else month_index - 9
    year = year_of_era + era * 400 + (1 if month <= 2 else 0)
    leap = year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)
    before = (0, 31, 59, 90, 120, 151, 181, 212, 243, 273, 304, 334)[month - 1] + (1 if leap and month > 2 else 0)
    return {"getFullYear": year, "getMonth": month - 1, "getDate": day, "getDayOfMonth": day - 1,
            "getDayOfYear": before + day - 1, "getDayOfWeek": (days + 4) % 7,
            "getHours": second // 3600, "getMinutes": second % 3600 // 60, "getSeconds": second % 60}
