"""The CEL type of a DRA selector value, and the type names a selector may write.

``type(x)`` and the messages of ``string.format`` name a value's type as cel-go does
(``net.IP``, ``google.protobuf.Duration``, ``kubernetes.URL``...). A selector names a type
with an identifier (``int``, ``optional_type``) or a dotted name the environment's type
provider knows (``google.protobuf.Duration``, ``net.IP``; measured against the kso DRA
variant, ``tests/test_dra_cel_environment.py``); a leading dot (``.int``) is the root scope.
"""

from __future__ import annotations

from symreach.frontends.dra_cel_format import Format
from symreach.frontends.dra_cel_library import Address, CelType, Network, Optional
from symreach.frontends.dra_cel_time import Duration, Timestamp
from symreach.frontends.dra_cel_url import Url
from symreach.frontends.dra_cel_values import type_name

__all__ = ["TYPE_NAMES", "type_of"]

# the names an expression can use as a type value (others are compile errors or undeclared)
TYPE_NAMES = frozenset({"int", "uint", "double", "bool", "string", "bytes", "list", "map", "null_type", "type",
                        "optional_type", "google.protobuf.Duration", "google.protobuf.Timestamp",
                        "google.protobuf.Empty", "net.IP", "net.CIDR"})

_CLASSES = ((Optional, "optional_type"), (Address, "net.IP"), (Network, "net.CIDR"), (CelType, "type"),
            (Timestamp, "google.protobuf.Timestamp"), (Duration, "google.protobuf.Duration"),
            (Format, "kubernetes.NamedFormat"), (Url, "kubernetes.URL"))


def type_of(value: object) -> str:
    """cel-go's type name of ``value``."""
    for cls, name in _CLASSES:
        if isinstance(value, cls):
            return name
    return type_name(value)
