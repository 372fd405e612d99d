"""Kubernetes quantity parsing: units, rounding up, and rejection of bad values."""

import math

import pytest

from symreach.loader.quantities import QuantityError, parse_count, parse_quantity

GOOD = [
    # (value, resource, expected)
    ("500m", "cpu", 500),
    ("2", "cpu", 2000),
    (2, "cpu", 2000),
    (0.5, "cpu", 500),
    ("0.5", "cpu", 500),
    ("0.1m", "cpu", 1),  # rounds up like the API server
    ("1n", "cpu", 1),
    ("1500u", "cpu", 2),
    ("1.5", "cpu", 1500),
    ("0", "cpu", 0),
    ("1Gi", "memory", 2**30),
    ("1G", "memory", 10**9),
    ("1k", "memory", 1000),
    ("1Ki", "memory", 1024),
    ("1M", "memory", 10**6),
    ("1Mi", "memory", 2**20),
    ("1T", "memory", 10**12),
    ("1Ti", "memory", 2**40),
    ("1P", "memory", 10**15),
    ("1Pi", "memory", 2**50),
    ("1E", "memory", 10**18),
    ("1Ei", "memory", 2**60),
    ("1e3", "memory", 1000),
    ("1E3", "memory", 1000),
    ("1.5Gi", "memory", 3 * 2**29),
    ("128974848", "memory", 128974848),
    ("129e6", "memory", 129000000),
    ("123Mi", "memory", 123 * 2**20),
    (".5", "memory", 1),
    ("5.", "memory", 5),
    ("+1k", "memory", 1000),
    ("100m", "memory", 1),  # 0.1 byte rounds up to 1
    (4, "nvidia.com/gpu", 4),
    (1e3, "memory", 1000),
    ("1e-3", "cpu", 1),
    ("-0", "memory", 0),
]

BAD = ["5x", "-1", "-500m", "", " 1", "1 ", "1 Gi", "nan", "NaN", "inf", "1Ki5", "Gi", "m", "1.2.3",
       "1ki", "1e", "e3", "0x10", "1e99", "9" * 80, "9Ei" * 3]
BAD_TYPES = [True, False, None, [], {}, float("nan"), float("inf"), -1, -0.5]


@pytest.mark.parametrize("value,resource,expected", GOOD)
def test_good_quantities(value, resource, expected):
    assert parse_quantity(value, resource) == expected


@pytest.mark.parametrize("value", BAD + BAD_TYPES)
def test_bad_quantities(value):
    with pytest.raises(QuantityError):
        parse_quantity(value, "memory")


def test_too_large_is_refused():
    with pytest.raises(QuantityError, match="too large"):
        parse_quantity("100Ei", "memory")
    assert parse_quantity("7Ei", "memory") == 7 * 2**60


def test_message_names_the_value():
    with pytest.raises(QuantityError, match="'5x'"):
        parse_quantity("5x", "cpu")


def test_count_requires_whole_numbers():
    assert parse_count(110) == 110
    assert parse_count("110") == 110
    assert parse_count("1k") == 1000
    for bad in ("1.5", 0.5, "500m", "-1", True):
        with pytest.raises(QuantityError):
            parse_count(bad)


def test_rounding_is_ceiling_not_nearest():
    assert parse_quantity("1001u", "cpu") == 2
    assert parse_quantity("1.0001", "memory") == 2
    assert not math.isnan(parse_quantity(0.25, "cpu"))


def test_whole_numbers_take_the_integer_path_with_the_same_results(monkeypatch) -> None:
    """Whole numbers skip ``decimal`` (start-up); on every input both paths agree, errors included."""
    import random

    from symreach.loader import quantities

    def outcome(fn, *args):
        try:
            return ("ok", fn(*args))
        except QuantityError as err:
            return ("error", str(err))

    rnd = random.Random(7)
    suffixes = ["", "m", "k", "M", "G", "T", "P", "E", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei", "n", "u", "e3", "x"]
    values: list = [0, 1, 999, 1000, 1001, 2**63 - 1, 2**63, 9223372036854775, 9223372036854776, -1, True, None,
                    1.5, "9" * 70]
    for _ in range(1500):
        digits = str(rnd.choice([0, 1, 500, 999, 1001, 10 ** rnd.randint(0, 20), rnd.randint(0, 10 ** rnd.randint(1, 20))]))
        values.append(rnd.choice(["", "", "", "0", "+", "-"]) + digits + rnd.choice(suffixes))
    fast = [outcome(parse_quantity, v, r) for v in values for r in ("cpu", "memory")] + \
        [outcome(parse_count, v) for v in values]
    monkeypatch.setattr(quantities, "_whole", lambda *args, **kwargs: None)
    slow = [outcome(parse_quantity, v, r) for v in values for r in ("cpu", "memory")] + \
        [outcome(parse_count, v) for v in values]
    assert len(fast) == 3 * len(values) > 4000 and fast == slow
    assert sum(kind == "ok" for kind, _ in fast) > 1000
