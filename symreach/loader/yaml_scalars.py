"""Plain YAML scalars read the way ``kubectl`` reads them.

kubectl turns YAML into JSON with sigs.k8s.io/yaml, which decodes with its
fork of go-yaml v2 into untyped values. That is neither PyYAML's YAML 1.1
resolver nor strict YAML 1.2, so symreach resolves plain scalars with the
same rules (each has a test in ``tests/test_yaml_quirks.py``):

- null: empty, ``~``, ``null``/``Null``/``NULL``;
- booleans: ``true``/``false`` and the YAML 1.1 words ``y``, ``yes``, ``on``,
  ``n``, ``no``, ``off`` in their three spellings (so ``release: yes`` is a
  boolean, and Kubernetes refuses it as a label value, as symreach does);
- integers as Go's ``ParseInt(s, 0, 64)`` reads them after removing ``_``
  (``0x1F``, ``0o17``, ``0b101``, C-style octal ``017``), unsigned 64-bit too;
- floats: ``.inf``, ``.nan`` and ``[-+]?(.d+|d+(.d*)?)([eE][-+]?d+)?``;
- everything else is a string: dates (``2024-01-01`` stays a string in an
  untyped decode), a bare ``=`` (PyYAML's ``!!value`` tag), base-60 numbers
  (``1:20``, which PyYAML would make 80).
"""

from __future__ import annotations

import math
import re
from typing import Optional

STR = "tag:yaml.org,2002:str"
NULL = "tag:yaml.org,2002:null"
BOOL = "tag:yaml.org,2002:bool"
INT = "tag:yaml.org,2002:int"
FLOAT = "tag:yaml.org,2002:float"
MERGE = "tag:yaml.org,2002:merge"

_WORDS: dict[str, tuple[str, object]] = {}
for _words, _value in ((("y", "Y", "yes", "Yes", "YES", "true", "True", "TRUE", "on", "On", "ON"), True),
                       (("n", "N", "no", "No", "NO", "false", "False", "FALSE", "off", "Off", "OFF"), False)):
    for _word in _words:
        _WORDS[_word] = (BOOL, _value)
for _word in ("", "~", "null", "Null", "NULL"):
    _WORDS[_word] = (NULL, None)
for _word in (".nan", ".NaN", ".NAN"):
    _WORDS[_word] = (FLOAT, math.nan)
for _sign, _inf in (("", math.inf), ("+", math.inf), ("-", -math.inf)):
    for _word in (".inf", ".Inf", ".INF"):
        _WORDS[_sign + _word] = (FLOAT, _inf)
_WORDS["<<"] = (MERGE, "<<")

# First characters after which a plain scalar may be something other than a string.
MAYBE_TYPED = frozenset("yYnNtTfFoO~+-.0123456789<")
_GO_INT = re.compile(r"([-+]?)(0[xX][0-9a-fA-F]+|0[oO][0-7]+|0[bB][01]+|0[0-7]*|[1-9][0-9]*)\Z")
_YAML_FLOAT = re.compile(r"[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?\Z")
_DOT_FLOAT = re.compile(r"\.[0-9]+([eE][-+]?[0-9]+)?\Z")
_INT64 = (-(1 << 63), (1 << 63) - 1)
_UINT64_MAX = (1 << 64) - 1


def resolve_plain(value: str) -> tuple[str, object]:
    """The (tag, value) go-yaml v2 gives the plain (unquoted) scalar ``value``."""
    if not value:
        return NULL, None
    first = value[0]
    if first not in MAYBE_TYPED:
        return STR, value
    word = _WORDS.get(value)
    if word is not None:
        return word
    if first == ".":
        return (FLOAT, float(value)) if _DOT_FLOAT.match(value) else (STR, value)
    if first in "+-0123456789":
        number = _number(value.replace("_", ""))
        if number is not None:
            return number
    return STR, value


def _number(plain: str) -> Optional[tuple[str, object]]:
    match = _GO_INT.match(plain)
    if match:
        sign, digits = match.groups()
        prefix = digits[:2].lower()
        base = {"0x": 16, "0o": 8, "0b": 2}.get(prefix)
        if base is not None:
            magnitude = int(digits[2:], base)
        else:
            magnitude = int(digits, 8) if len(digits) > 1 and digits[0] == "0" else int(digits)
        number = -magnitude if sign == "-" else magnitude
        if _INT64[0] <= number <= _INT64[1] or (sign != "-" and number <= _UINT64_MAX):
            return INT, number
    if _YAML_FLOAT.match(plain):
        return FLOAT, float(plain)
    return None


def json_key(key: object) -> Optional[str]:
    """A mapping key as sigs.k8s.io/yaml writes it into JSON; None when JSON cannot hold it."""
    if isinstance(key, str):
        return key
    if isinstance(key, bool):
        return "true" if key else "false"
    if isinstance(key, int):
        return str(key)
    if isinstance(key, float):
        if math.isnan(key):
            return ".nan"
        if math.isinf(key):
            return ".inf" if key > 0 else "-.inf"
        return format(key, ".7g") if key != int(key) or abs(key) >= 1e21 else str(int(key))
    return None
