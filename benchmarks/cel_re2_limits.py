"""Time of symreach's exact decision of Go's regexp limits on the largest recorded patterns.

For the 10 longest patterns of ``tests/data/dra/cel_re2_limits.json.gz`` (and a few built here:
3,000 non-capturing groups, a 34,500-character factoring alternation, a 28,000-character rune
count near Go's limit, two accepted of 3.3M and 5M instructions), the time of the parse with Go's parse stack replayed and the RE2
translation (``emit``, first time) and of the whole selector after it (RE2 compile and match), in one run:
``PYTHONPATH=. python3 benchmarks/cel_re2_limits.py``.
"""

from __future__ import annotations

import time

from symreach.frontends import dra_cel, dra_cel_re2
from tests import test_dra_cel_re2_limits as limits
from tests.test_dra_cel_environment import DATA as DEVICE


def _built() -> list[tuple[str, str]]:
    return [("(?:" * 3000 + "a" + ")" * 3000, "ab"),
            ("|".join("a" * 10 + format(i, "04d") for i in range(2300)), "ab"),
            ("(?:" * 7000 + "\\pC" + ")" * 7000, "ab"),
            ("(?:" + "x" * 3300 + "){1000}", "ab"),   # 3.3M of Go's instructions: accepted, RE2 compiles it
            ("a{1000}b{1000}c{1000}(?:y+" + "x" * 5000 + "){999}", "ab")]   # 5M by size, Go's cached count 3


def main() -> None:
    rows = sorted(((p, s) for p, s, a in limits.DATA["answers"]), key=lambda r: -len(r[0]))[:10] + _built()
    print("| length | Go's answer | parse + limits + translation s | selector, parse cached s |")
    print("|---:|---|---:|---:|")
    for pattern, subject in rows:
        start = time.perf_counter()
        try:
            dra_cel_re2.emit(pattern, subject)
            verdict = "accepted"
        except dra_cel_re2.Re2Error as err:
            verdict = err.message.split(":")[1].strip()
        parse = time.perf_counter() - start
        start = time.perf_counter()
        got = dra_cel.evaluate(limits.expression(pattern, subject), DEVICE["driver"],
                               dra_cel.attribute_values(DEVICE["driver"], DEVICE["attributes"]),
                               dra_cel.capacity_values(DEVICE["driver"], DEVICE["capacity"]))
        whole = time.perf_counter() - start
        assert got != dra_cel.UNKNOWN
        print(f"| {len(pattern):,} | {verdict} | {parse:.2f} | {whole:.2f} |")


if __name__ == "__main__":
    main()
