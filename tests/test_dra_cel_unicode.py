"""Go's Unicode tables (``go_unicode``, read from the generated ``go_unicode.txt``) against Python's.

Go 1.25 has Unicode 15.0, Python 3.11 Unicode 14: every character Python assigns must be in
the same category in Go's tables (Unicode never moves an assigned character between these),
and the characters only Go assigns are exactly Unicode 15's additions. The kso DRA variant's
answers on scripts, Unicode 15 characters and folding are in ``test_dra_cel_environment.py``.
"""

from __future__ import annotations

import unicodedata

import pytest

from symreach.frontends import go_unicode
from tests.go_tool import GO, REPO, generated


LEAVES = ("Cc Cf Co Cs Ll Lm Lo Lt Lu Mc Me Mn Nd Nl No Pc Pd Pe Pf Pi Po Ps Sc Sk Sm So Zl Zp Zs").split()


def _codes(table: go_unicode.Table) -> set[int]:
    return {x for lo, hi, stride in table.ranges for x in range(lo, hi + 1, stride)}


def test_every_character_python_assigns_has_its_category_in_go():
    go = {name: _codes(go_unicode.category(name)) for name in LEAVES}   # type: ignore[arg-type]
    by_code = {x: name for name, codes in go.items() for x in codes}
    assert sum(len(c) for c in go.values()) == len(by_code)   # the leaves are disjoint
    python_only, go_only, checked = [], 0, 0
    for code in range(0x110000):
        cat = unicodedata.category(chr(code))
        if cat == "Cn":
            go_only += code in by_code
            continue
        checked += 1
        if by_code.get(code) != cat:
            python_only.append(hex(code))
    assert not python_only
    assert checked > 280_000
    assert go_unicode.version() == "15.0.0"
    if unicodedata.unidata_version == "14.0.0":
        assert go_only == 4489   # Unicode 15.0's new characters
    cn = go_unicode.category("Cn")
    assert "\u0378" in cn and "\U0001e030" not in cn and "a" not in cn   # type: ignore[operator]
    assert "\u0378" in go_unicode.category("C")   # type: ignore[operator]   # Go 1.25's C holds Cn


def test_unions_scripts_and_fold_tables():
    letter, modifier = go_unicode.category("L"), go_unicode.category("Lm")
    assert "\U0001e030" in letter and "\U0001e030" in modifier   # type: ignore[operator]
    assert "A" in go_unicode.category("LC") and "\u01c5" in go_unicode.category("LC")   # type: ignore[operator]
    assert "\u03a9" in go_unicode.script("Greek") and "\u2126" in go_unicode.script("Greek")   # type: ignore[operator]
    assert "\U00011f00" in go_unicode.script("Kawi")   # type: ignore[operator]   # a Unicode 15 script
    assert go_unicode.script("Unknown") is None and go_unicode.script("greek") is None
    assert "\u00b5" in go_unicode.fold_table("Greek")   # type: ignore[operator]   # µ folds to Greek μ
    assert go_unicode.fold_table("Nd") is None
    assert go_unicode.aliases()["Letter"] == "L"
    assert len(go_unicode.script_names()) == 163


@pytest.mark.parametrize("c, orbit", [("k", "Kk\u212a"), ("\u00df", "\u00df\u1e9e"), ("x", "Xx"), ("1", "1"),
                                      ("\u0345", "\u0345\u0399\u03b9\u1fbe"), ("\u01c5", "\u01c4\u01c5\u01c6")])
def test_simple_folding_orbits(c, orbit):
    assert "".join(go_unicode.orbit(c)) == orbit
    assert all(go_unicode.orbit(y) == go_unicode.orbit(c) for y in orbit)


def test_print_and_space():
    assert go_unicode.is_print("\U0001f6dc") and go_unicode.is_print(" ")   # Unicode 15's wireless symbol
    assert not go_unicode.is_print("\u00a0") and not go_unicode.is_print("\u0378")
    assert go_unicode.is_space("\u0085") and go_unicode.is_space("\u3000")
    assert not go_unicode.is_space("\x1c") and not go_unicode.is_space("\u200b")   # Python's str.isspace differs


@pytest.mark.slow
@pytest.mark.skipif(not GO.exists(), reason="no Go toolchain here")
def test_the_data_file_is_what_the_generator_writes(tmp_path):
    """``go_unicode.txt`` is generated: rerunning the generator with go1.25 gives it byte for byte."""
    assert generated("tools/go_unicode_tables/main.go", tmp_path) == (REPO / "symreach" / "frontends" / "go_unicode.txt").read_text()
