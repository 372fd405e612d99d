"""Kubernetes' CEL format library (k8s.io/apiserver/pkg/cel/library/format.go).

``format.dns1123Label()`` and its siblings are named validators; ``validate(s)`` gives
``optional.none()`` for a valid string, else the list of apimachinery's messages. The
name formats are evaluated with apimachinery's rules and texts (``util/validation`` for
the DNS names, ``api/validate/content`` for qualified names and label values); the
strfmt ones as kube-openapi's strfmt checks them (``uri``: Go's ``url.ParseRequestURI``
and its error text; ``uuid``, ``byte``: strfmt's RE2 patterns; ``date``: Go's
``time.Parse("2006-01-02")``; ``datetime``: strfmt's ``IsDateTime``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable

from symreach.frontends.dra_cel_library import Optional
from symreach.frontends.dra_cel_url import request_uri_problem
from symreach.frontends.dra_cel_values import CelFailure

__all__ = ["Format", "FORMAT_GLOBALS", "format_method"]

_LABEL = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_SUBDOMAIN = _LABEL + "(\\." + _LABEL + ")*"
_DNS1035 = "[a-z]([-a-z0-9]*[a-z0-9])?"
_KEY = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
_VALUE = "(" + _KEY + ")?"
_LABEL_MSG = ("a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must "
              "start and end with an alphanumeric character")
_SUBDOMAIN_MSG = ("a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', "
                  "and must start and end with an alphanumeric character")
_DNS1035_MSG = ("a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an "
                "alphabetic character, and end with an alphanumeric character")
_KEY_MSG = ("must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric "
            "character")
_VALUE_MSG = ("a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and "
              "must start and end with an alphanumeric character")


@dataclass(frozen=True)
class Format:
    """A named validator (``kubernetes.NamedFormat``)."""

    name: str


def _regex_error(msg: str, pattern: str, *examples: str) -> str:
    if not examples:
        return f"{msg} (regex used for validation is '{pattern}')"
    shown = " or ".join(f"'{e}', " for e in examples)
    return f"{msg} (e.g. {shown}regex used for validation is '{pattern}')"


def _size(s: str) -> int:
    return len(s.encode("utf-8"))   # Go's len: bytes


def _matches(pattern: str, s: str) -> bool:
    return re.fullmatch(pattern, s) is not None


def _dns1123_label(s: str) -> list[str]:
    errs = [f"must be no more than 63 characters"] if _size(s) > 63 else []
    if not _matches(_LABEL, s):
        errs.append("must not contain dots" if _matches(_SUBDOMAIN, s) else
                    _regex_error(_LABEL_MSG, _LABEL, "my-name", "123-abc"))
    return errs


def _dns1123_subdomain(s: str, unit: str = "characters") -> list[str]:
    errs = [f"must be no more than 253 {unit}"] if _size(s) > 253 else []
    if not _matches(_SUBDOMAIN, s):
        errs.append(_regex_error(_SUBDOMAIN_MSG, _SUBDOMAIN, "example.com"))
    return errs


def _dns1035_label(s: str) -> list[str]:
    errs = ["must be no more than 63 characters"] if _size(s) > 63 else []
    if not _matches(_DNS1035, s):
        errs.append(_regex_error(_DNS1035_MSG, _DNS1035, "my-name", "abc-123"))
    return errs


def _qualified_name(s: str) -> list[str]:
    """``content.IsLabelKey``."""
    parts = s.split("/")
    errs: list[str] = []
    if len(parts) > 2:
        return ["a valid label key " + _regex_error(_KEY_MSG, _KEY, "MyName", "my.name", "123-abc")
                + " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"]
    name = parts[-1]
    if len(parts) == 2:
        if not parts[0]:
            errs.append("prefix part must be non-empty")
        else:
            errs.extend("prefix part " + m for m in _dns1123_subdomain(parts[0], "bytes"))
    if not name:
        errs.append("name part must be non-empty")
    elif _size(name) > 63:
        errs.append("name part must be no more than 63 bytes")
    if not _matches(_KEY, name):
        errs.append("name part " + _regex_error(_KEY_MSG, _KEY, "MyName", "my.name", "123-abc"))
    return errs


def _label_value(s: str) -> list[str]:
    errs = ["must be no more than 63 bytes"] if _size(s) > 63 else []
    if not _matches(_VALUE, s):
        errs.append(_regex_error(_VALUE_MSG, _VALUE, "MyValue", "my_value", "12345"))
    return errs


def _mask_trailing_dash(s: str) -> str:
    """apimachinery's ``maskTrailingDash`` (a generateName prefix may end with ``-``)."""
    return s[:-2] + "a" if len(s) > 1 and s.endswith("-") else s


_UUID = re.compile(r"[0-9a-fA-F]{8}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{12}\Z")
_BASE64 = re.compile(r"(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=|[A-Za-z0-9+/]{4})\Z")
_DATE = re.compile(r"([0-9]{4})-([0-9]{2})-([0-9]{2})\Z")
_CLOCK = re.compile(r"([0-9]{2}):([0-9]{2}):([0-9]{2})(?:[^\n][0-9]+)?(?:z|[+-][0-9]{2}:[0-9]{2})\Z")


def _is_date(s: str) -> bool:
    """``time.Parse("2006-01-02", s)``: four, two and two digits, a real day of the
    proleptic Gregorian calendar (year 0 included)."""
    m = _DATE.match(s)
    if not m:
        return False
    year, month, day = (int(g) for g in m.groups())
    leap = year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)
    days = (31, 29 if leap else 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)
    return 1 <= month <= 12 and 1 <= day <= days[month - 1]


def _is_datetime(s: str) -> bool:
    """strfmt's ``IsDateTime``: lower-cased, split at each ``t``; a date, then a clock matching
    ``DateTimePattern`` (the parts after a second ``t`` are not read)."""
    if len(s) < 4:
        return False
    parts = s.translate(_ASCII_LOWER).split("t")   # Go's ToLower: only ASCII letters can become t or z
    if len(parts) < 2 or not _is_date(parts[0]):
        return False
    m = _CLOCK.match(parts[1])
    return bool(m) and m.group(1) <= "23" and m.group(2) <= "59" and m.group(3) <= "59"


_ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")


def _strfmt(check: Callable[[str], bool], message: str) -> Callable[[str], list[str]]:
    return lambda s: [] if check(s) else [message]


def _uri(s: str) -> list[str]:
    problem = request_uri_problem(s)
    return [problem] if problem else []


_VALIDATORS: dict[str, Callable[[str], list[str]]] = {
    "dns1123Label": _dns1123_label, "dns1123Subdomain": _dns1123_subdomain, "dns1035Label": _dns1035_label,
    "qualifiedName": _qualified_name, "labelValue": _label_value,
    "dns1123LabelPrefix": lambda s: _dns1123_label(_mask_trailing_dash(s)),
    "dns1123SubdomainPrefix": lambda s: _dns1123_subdomain(_mask_trailing_dash(s)),
    "dns1035LabelPrefix": lambda s: _dns1035_label(_mask_trailing_dash(s)),
    "uri": _uri, "uuid": _strfmt(lambda s: bool(_UUID.match(s)), "does not match the UUID format"),
    "byte": _strfmt(lambda s: bool(_BASE64.match(s)), "invalid base64"), "date": _strfmt(_is_date, "invalid date"),
    "datetime": _strfmt(_is_datetime, "invalid datetime"),
}


def _named(name: object) -> Optional:
    if not isinstance(name, str):
        raise CelFailure("no such overload")
    return Optional(name in _VALIDATORS, Format(name) if name in _VALIDATORS else None)


FORMAT_GLOBALS: dict[str, Callable[..., object]] = {"format.named": _named}
FORMAT_GLOBALS.update({f"format.{name}": (lambda n=name: Format(n)) for name in _VALIDATORS})


def format_method(name: str, value: Format, args: list[object]) -> object:
    """``validate``: none when valid, else the messages."""
    if name != "validate" or len(args) != 1 or not isinstance(args[0], str):
        raise CelFailure("no such overload")
    errors = _VALIDATORS[value.name](args[0])
    return Optional(bool(errors), errors if errors else None)
