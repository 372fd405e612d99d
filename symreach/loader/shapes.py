"""Shape checks for plain data read from YAML/JSON, reporting a field path.

Parsers raise ``FieldError`` with an absolute path; the loader turns it into an
``InputError`` with the file name and line. Keeping the path separate from the
file lets the same checks serve in-memory documents and pure label logic.
A ``null`` optional field means "absent", as in the Kubernetes API.
"""

from __future__ import annotations

import copy
import marshal
import re
from typing import Collection, Iterable, Optional, Union

PathItem = Union[str, int]
Path = tuple[PathItem, ...]

_PLAIN_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_-]*")


class FieldError(Exception):
    """A problem at ``path`` in a document; converted to ``InputError`` by the loader."""

    def __init__(self, path: Path, problem: str) -> None:
        self.path = tuple(path)
        self.problem = problem
        super().__init__(f"{format_path(self.path)}: {problem}")


def format_path(path: Iterable[PathItem]) -> str:
    """``("podTypes", 1, "requests", "cpu")`` -> ``podTypes[1].requests.cpu``."""
    out = ""
    for item in path:
        if isinstance(item, int):
            out += f"[{item}]"
        elif _PLAIN_KEY.fullmatch(item):
            out += f".{item}" if out else item
        else:
            out += f'["{item}"]'
    return out


def type_name(raw: object) -> str:
    if raw is None:
        return "null"
    if isinstance(raw, bool):
        return "a boolean"
    if isinstance(raw, int):
        return "an integer"
    if isinstance(raw, float):
        return "a number"
    if isinstance(raw, str):
        return "a string"
    if isinstance(raw, dict):
        return "a mapping"
    if isinstance(raw, list):
        return "a list"
    return type(raw).__name__


def mapping(raw: object, path: Path, allowed: Collection[str], required: Collection[str] = ()) -> dict:
    """A dict with only ``allowed`` keys (all of ``required`` present and not null)."""
    if not isinstance(raw, dict):
        raise FieldError(path, f"expected a mapping, got {type_name(raw)}")
    for key in raw:
        if not isinstance(key, str):
            raise FieldError(path, f"field names must be strings, got {key!r}")
        if key not in allowed:
            raise FieldError(path + (key,), f"unknown field '{key}'{_suggest(key, allowed)}")
    for key in required:
        if raw.get(key) is None:
            raise FieldError(path + (key,), "required field is missing")
    return raw


def sequence(raw: object, path: Path) -> list:
    """A list; null means empty."""
    if raw is None:
        return []
    if not isinstance(raw, list):
        raise FieldError(path, f"expected a list, got {type_name(raw)}")
    return raw


def string(raw: object, path: Path, *, empty_ok: bool = False) -> str:
    if not isinstance(raw, str):
        hint = " (quote it)" if isinstance(raw, (bool, int, float)) else ""
        raise FieldError(path, f"expected a string, got {type_name(raw)}{hint}")
    if not raw and not empty_ok:
        raise FieldError(path, "must not be empty")
    return raw


def integer(raw: object, path: Path, *, minimum: Optional[int] = None, maximum: Optional[int] = None) -> int:
    if isinstance(raw, bool) or not isinstance(raw, int):
        raise FieldError(path, f"expected an integer, got {type_name(raw)}")
    if minimum is not None and raw < minimum:
        raise FieldError(path, f"must be at least {minimum}, got {raw}")
    if maximum is not None and raw > maximum:
        raise FieldError(path, f"must be at most {maximum}, got {raw}")
    return raw


def boolean(raw: object, path: Path, default: bool) -> bool:
    if raw is None:
        return default
    if not isinstance(raw, bool):
        raise FieldError(path, f"expected true or false, got {type_name(raw)}")
    return raw


def choice(raw: object, path: Path, choices: Collection[str], default: Optional[str] = None) -> str:
    """One of ``choices``; null or absent gives ``default`` (required when default is None)."""
    if raw is None and default is not None:
        return default
    if raw not in choices or not isinstance(raw, str):
        options = ", ".join(sorted(choices))
        shown = f"'{raw}'" if isinstance(raw, str) else type_name(raw)
        raise FieldError(path, f"must be one of {options}, got {shown}")
    return raw


def string_map(raw: object, path: Path, *, empty_values: bool = True) -> dict[str, str]:
    """A string-to-string mapping such as labels; null means empty."""
    if raw is None:
        return {}
    if not isinstance(raw, dict):
        raise FieldError(path, f"expected a mapping of strings, got {type_name(raw)}")
    for key, value in raw.items():
        if not isinstance(key, str) or not key:
            raise FieldError(path, f"keys must be non-empty strings, got {key!r}")
        string(value, path + (key,), empty_ok=empty_values)
    return raw


def string_list(raw: object, path: Path, *, empty_items: bool = False) -> list[str]:
    """A list of strings; null means empty."""
    items = sequence(raw, path)
    for i, item in enumerate(items):
        string(item, path + (i,), empty_ok=empty_items)
    return items


def _suggest(key: str, allowed: Collection[str]) -> str:
    """A 'did you mean' hint for near misses (case or one typo)."""
    lowered = key.lower()
    for name in sorted(allowed):
        if name.lower() == lowered or _close(name, key):
            return f" (did you mean '{name}'?)"
    options = ", ".join(sorted(allowed))
    return f" (allowed: {options})" if len(allowed) <= 12 else ""


def _close(a: str, b: str) -> bool:
    """Edit distance at most 1, cheaply."""
    if abs(len(a) - len(b)) > 1 or a == b:
        return a == b
    if len(a) > len(b):
        a, b = b, a
    i = 0
    while i < len(a) and a[i] == b[i]:
        i += 1
    return a[i:] == b[i + 1:] or (len(a) == len(b) and a[i + 1:] == b[i + 1:])


def copy_plain(value: object) -> object:
    """A deep copy of plain data (mappings, lists, strings, numbers, booleans, None).

    ``marshal`` copies such data in C, several times faster than ``copy.deepcopy`` (which keeps a memo
    per object): it matters when a 10,000-pod dump copies every pod's affinity and tolerations.
    Anything marshal cannot write goes through ``deepcopy``."""
    try:
        return marshal.loads(marshal.dumps(value))
    except ValueError:
        return copy.deepcopy(value)
