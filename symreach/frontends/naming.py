"""Readable, unique names and label values for the generated instances.

Pod-type names keep the input's identifiers where they are safe
(``[A-Za-z0-9_.-]``) and get a numeric suffix when sanitizing makes two of
them collide. Label values must be valid Kubernetes label values
(at most 63 characters, alphanumeric at both ends, ``-_.`` inside); distinct
inputs always get distinct values.
"""

from __future__ import annotations

import hashlib
import re

_UNSAFE = re.compile(r"[^A-Za-z0-9_.-]")
_LABEL_MAX = 63


def sanitize(name: str) -> str:
    """Replace characters outside ``[A-Za-z0-9_.-]`` by ``_``."""
    return _UNSAFE.sub("_", name) or "_"


class UniqueNames:
    """Allocates unique sanitized names: ``name``, then ``name.2``, ``name.3``…"""

    def __init__(self) -> None:
        self._used: set[str] = set()

    def take(self, wanted: str) -> str:
        base = sanitize(wanted)
        name, i = base, 1
        while name in self._used:
            i += 1
            name = f"{base}.{i}"
        self._used.add(name)
        return name


class LabelValues:
    """Maps arbitrary identifiers to distinct valid Kubernetes label values."""

    def __init__(self) -> None:
        self._of: dict[str, str] = {}
        self._used: set[str] = set()

    def __call__(self, ident: str) -> str:
        if ident in self._of:
            return self._of[ident]
        value = sanitize(ident).strip("-_.")
        if not value or len(value) > _LABEL_MAX or value != ident or value in self._used:
            # Sanitizing changed the identifier: add a digest so that two
            # identifiers that sanitize alike stay apart.
            digest = hashlib.sha1(ident.encode()).hexdigest()[:8]
            value = f"{value[:_LABEL_MAX - 9]}-{digest}" if value else f"x{digest}"
            value = value.strip("-_.") or f"x{digest}"
        while value in self._used:  # astronomically unlikely hash clash
            value = value[:-1] + ("a" if value[-1] != "a" else "b")
        self._of[ident] = value
        self._used.add(value)
        return value
