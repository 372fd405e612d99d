"""dra_cel_zone: Go's calendar fields and ``strconv.Atoi`` (the variant's answers on the getters'
zones are in ``test_dra_cel_environment``)."""

from __future__ import annotations

import datetime
import random

import pytest

from symreach.frontends.dra_cel_values import CelFailure
from symreach.frontends.dra_cel_zone import zone_fields, zone_offset


def test_fields_are_the_proleptic_gregorian_calendar():
    rng = random.Random(31)
    epoch = datetime.datetime(1970, 1, 1)
    low, high = -62135596800, 253402300799   # years 1 to 9999, where datetime can check
    checked = 0
    for seconds in [low, high, 0, -1, 951782400, 951868800] + [rng.randint(low, high) for _ in range(2000)]:
        t = epoch + datetime.timedelta(seconds=seconds)
        want = {"getFullYear": t.year, "getMonth": t.month - 1, "getDate": t.day, "getDayOfMonth": t.day - 1,
                "getDayOfYear": t.timetuple().tm_yday - 1, "getDayOfWeek": (t.weekday() + 1) % 7,
                "getHours": t.hour, "getMinutes": t.minute, "getSeconds": t.second}
        assert zone_fields(seconds) == want, seconds
        checked += 1
    assert checked == 2006


def test_year_zero_and_before():
    assert zone_fields(-62135596800 - 1)["getFullYear"] == 0   # 0000-12-31T23:59:59
    assert zone_fields(-62135596800 - 366 * 86400 - 1)["getFullYear"] == -1   # year 0 is a leap year


@pytest.mark.parametrize("zone, message", [
    ("+5:", 'strconv.Atoi: parsing "": invalid syntax'),
    ("+-1:00", 'strconv.Atoi: parsing "+-1": invalid syntax'),
    ("99999999999999999999x:00", 'strconv.Atoi: parsing "99999999999999999999x": value out of range'),
    ("9223372036854775808:00", 'strconv.Atoi: parsing "9223372036854775808": value out of range'),
    ("a..b", "time: invalid location name"),
    ("Nowhere/Land", "unknown time zone Nowhere/Land"),
])
def test_refused_zones(zone, message):
    with pytest.raises(CelFailure) as err:
        zone_offset(zone, 0)
    assert str(err.value) == message or err.value.args[0] == message


def test_offsets_wrap_as_go_int64():
    assert zone_offset("-9223372036854775808:00", 0) == 0   # hours*60 wraps to 0
    assert zone_offset("+05:30", 0) == 19800
    assert zone_offset("-05:30", 0) == -19800
    assert zone_offset("+153722867:00", 0) != 153722867 * 3600   # the nanoseconds wrap
