"""The ``device`` variable and an index ``x[k]`` / ``x[?k]`` as cel-go's ``refQualify`` does it.

``device`` is a Go ``map[string]any`` cel-go wraps anew at each read; ``device.attributes`` and
``device.capacity`` are the scheduler's ``cel.mapper``, whose ``Find`` answers the one empty map
for a domain with nothing (and for a key of any other type). An index by a value that is no
string, number or bool fails before any lookup (``dra_cel_values.check_qualifier``); then a map
finds the key or says ``no such key``, a list takes an int, a uint or an integral double (else
``unsupported index type/value ... in list``, ``index out of bounds``), and anything else has
no key at all (``no such key``). With ``[?k]`` (or inside an optional) what is absent is
``optional.none()`` instead of an error (measured against the kso DRA variant,
``tests/test_dra_cel_tail.py``).
"""

from __future__ import annotations

from symreach.frontends.dra_cel_values import INT_MAX, INT_MIN, CelFailure, Uint, go_float_text, key_text, map_find, \
    map_has

__all__ = ["ABSENT", "Device", "Domains", "lookup"]

ABSENT = object()   # what an index with a presence test finds where nothing is


class Device:
    """The ``device`` variable: a new object per read, as cel-go wraps the Go map anew."""

    def __init__(self, fields: dict) -> None:
        self._fields = fields

    def fields(self) -> dict:
        """The scheduler's map, in the order its entries were written (``DeviceMatches``)."""
        return self._fields


class Domains:
    """``device.attributes`` or ``device.capacity``: a domain with nothing is an empty map."""

    def __init__(self, values: dict[tuple[str, str], object], empty: dict) -> None:
        self.values = values
        self.empty = empty

    def get(self, domain: object) -> dict:
        """A new map per read, as cel-go wraps the Go map anew; a domain with nothing the one empty
        map both ``attributes`` and ``capacity`` hand out (a map key by identity tells them apart),
        also for a key of another type (the scheduler's ``mapper.Find`` answers the default then)."""
        if not isinstance(domain, str):
            return self.empty
        return {name: v for (d, name), v in self.values.items() if d == domain} or self.empty

    def present(self) -> dict:
        """The domains that hold something, as the Go map cel-go iterates, sizes and asks ``in``."""
        out: dict = {}
        for (domain, name), v in self.values.items():
            out.setdefault(domain, {})[name] = v
        return out


def lookup(target: object, key: object, presence: bool) -> object:
    """``target[key]``; with ``presence`` (``[?k]``) ``ABSENT`` where a plain index errs on a missing key."""
    if isinstance(target, Domains):
        return target.get(key)
    if isinstance(target, Device):
        target = target.fields()
    if isinstance(target, dict):
        if map_has(target, key):
            return map_find(target, key)
    elif isinstance(target, list):
        i = _list_index(key)
        if 0 <= i < len(target):
            return target[i]
        if not presence:
            raise CelFailure(f"index out of bounds: {key_text(key)}")
        return ABSENT
    if presence:
        return ABSENT
    raise CelFailure(f"no such key: {key_text(key)}")


def _list_index(key: object) -> int:
    """``types.IndexOrError``: an int, a uint or a double without a fraction."""
    if isinstance(key, bool) or isinstance(key, str):
        raise CelFailure(f"unsupported index type '{'bool' if isinstance(key, bool) else 'string'}' in list")
    if isinstance(key, float):
        if key == key and INT_MIN <= key < 2.0 ** 63 and key == int(key):
            return int(key)
        raise CelFailure(f"unsupported index value {go_float_text(key)} in list")
    if isinstance(key, Uint) and key > INT_MAX:
        raise CelFailure(f"unsupported index value {int(key)} in list")
    return int(key) if isinstance(key, int) else -1
