"""The library functions of Kubernetes' CEL base environment beyond the core (``dra_cel`` calls them).

``environment.MustBaseEnvSet`` (k8s.io/apiserver/pkg/cel/environment/base.go), which the DRA
compiler extends, adds to standard CEL: Kubernetes' lists library (``isSorted sum min max indexOf
lastIndexOf``), regex (``find findAll``), IP and CIDR addresses, cel-go's ``ext.Lists`` v3
(``slice flatten distinct reverse sort first last lists.range``), ``ext.Sets`` and the v2 string
functions ``join`` and ``strings.quote``. Each function here takes evaluated CEL values and
returns one, raises ``CelFailure`` with cel-go's message, or ``Unsupported`` where this module
cannot give the scheduler's exact answer (the selector then stays marked).
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass
from typing import Callable

from symreach.frontends.dra_cel_netip import NetipError, parse_addr, parse_prefix
from symreach.frontends.dra_cel_re2 import find_all
from symreach.frontends.dra_cel_values import (CelFailure, Unsupported, arith, compare, equal, go_quote_text, kind,
                                               parse_semver, semver_problem,
                                               regex)

__all__ = ["Address", "CelType", "Network", "Optional", "GLOBALS", "address_method", "address_text", "list_method",
           "regex_method",
           "optional_method", "semver_normalized", "sort_list"]


@dataclass(frozen=True)
class Optional:
    """A CEL ``optional_type`` value (``first()``/``last()`` return one)."""

    present: bool
    value: object = None


@dataclass(frozen=True)
class CelType:
    """A CEL type as a value (``type(x) == int``)."""

    name: str


@dataclass(frozen=True)
class Address:
    """``net.IP``: an IPv4 or IPv6 address (never IPv4-mapped, never with a zone)."""

    ip: object   # ipaddress.IPv4Address | IPv6Address


@dataclass(frozen=True)
class Network:
    """``net.CIDR``: an address with a prefix length (the address bits are kept as written)."""

    ip: object
    prefix: int


def _overload() -> CelFailure:
    return CelFailure("no such overload")


# ---- lists ----------------------------------------------------------------------------

def _numbers_or_strings(items: list) -> None:
    kinds = {kind(x) for x in items}
    if len(kinds) > 1 or kinds - {"num", "string", "bool"}:
        raise _overload()


def _sum(items: list) -> object:
    if not items:
        return 0
    total = items[0]
    if kind(total) != "num":
        raise _overload()
    for x in items[1:]:
        total = arith("+", total, x)
    return total


def _extreme(name: str, items: list) -> object:
    if not items:
        raise CelFailure(f"{name} called on empty list")
    best = items[0]
    for x in items[1:]:
        c = compare(x, best)
        if (c < 0) if name == "min" else (c > 0):
            best = x
    return best


def _index_of(items: list, value: object, last: bool) -> int:
    positions = [i for i, x in enumerate(items) if equal(x, value)]
    return (positions[-1] if last else positions[0]) if positions else -1


def _slice(items: list, start: object, end: object) -> list:
    if not isinstance(start, int) or not isinstance(end, int) or isinstance(start, bool):
        raise _overload()
    if start < 0 or end < 0:
        raise CelFailure(f"cannot slice(%d, %d), negative indexes not supported" % (start, end))
    if start > end:
        raise CelFailure(f"cannot slice({start}, {end}), start index must be less than or equal to end index")
    if end > len(items):
        raise CelFailure(f"cannot slice({start}, {end}), list is length {len(items)}")
    return items[start:end]


def _flatten(items: list, depth: object = 1) -> list:
    if not isinstance(depth, int) or isinstance(depth, bool):
        raise _overload()
    if depth < 0:
        raise CelFailure("level must be non-negative")
    out: list = []
    for x in items:
        if isinstance(x, list) and depth > 0:
            out.extend(_flatten(x, depth - 1))
        else:
            out.append(x)
    return out


def _distinct(items: list) -> list:
    out: list = []
    for x in items:
        if not any(equal(x, y) for y in out):
            out.append(x)
    return out


def sort_list(items: list) -> list:
    _numbers_or_strings(items)
    out = list(items)
    for i in range(1, len(out)):   # stable insertion with CEL's ordering
        j = i
        while j > 0 and compare(out[j - 1], out[j]) > 0:
            out[j - 1], out[j] = out[j], out[j - 1]
            j -= 1
    return out


def _is_sorted(items: list) -> bool:
    return all(compare(a, b) <= 0 for a, b in zip(items, items[1:]))


def list_method(name: str, items: list, args: list[object]) -> object:
    """A list receiver's method from Kubernetes' lists library or ``ext.Lists``."""
    if name in ("isSorted", "sum", "min", "max", "distinct", "reverse", "sort", "first", "last", "flatten") \
            and not args:
        if name == "isSorted":
            return _is_sorted(items)
        if name == "sum":
            return _sum(items)
        if name in ("min", "max"):
            return _extreme(name, items)
        if name == "first" or name == "last":
            return Optional(bool(items), (items[0] if name == "first" else items[-1]) if items else None)
        reorder = {"distinct": _distinct, "reverse": lambda x: x[::-1], "sort": sort_list, "flatten": _flatten}
        return reorder[name](items)
    if name in ("indexOf", "lastIndexOf") and len(args) == 1:
        return _index_of(items, args[0], name == "lastIndexOf")
    if name == "slice" and len(args) == 2:
        return _slice(items, args[0], args[1])
    if name == "flatten" and len(args) == 1:
        return _flatten(items, args[0])
    if name == "join" and len(args) <= 1:
        if not all(isinstance(x, str) for x in items) or not all(isinstance(a, str) for a in args):
            raise _overload()
        return (args[0] if args else "").join(items)   # type: ignore[arg-type]
    raise Unsupported(name)


# ---- regex ----------------------------------------------------------------------------

def regex_method(name: str, s: str, args: list[object]) -> object:
    """``find`` and ``findAll`` (k8s.io/apiserver/pkg/cel/library/regex.go)."""
    if not args or not isinstance(args[0], str) or len(args) > (1 if name == "find" else 2):
        raise _overload()
    limit = args[1] if len(args) == 2 else -1
    if not isinstance(limit, int) or isinstance(limit, bool):
        raise _overload()
    try:
        pattern = regex(args[0], s)
    except CelFailure as err:
        raise CelFailure(f"Illegal regex: {err.message}") from None
    if name == "find":
        m = pattern.search(s)
        return m.group(0) if m else ""
    return find_all(pattern, s, limit)


# ---- sets -----------------------------------------------------------------------------

def _set_args(args: list[object]) -> tuple[list, list]:
    if len(args) != 2 or not all(isinstance(a, list) for a in args):
        raise _overload()
    return args[0], args[1]   # type: ignore[return-value]


def _contains(a: list, b: list) -> bool:
    return all(any(equal(x, y) for y in a) for x in b)


# ---- addresses ------------------------------------------------------------------------

def _address(raw: object) -> Address:
    """``ip()`` (library/ip.go ``parseIPAddr``): Go's parse, no zone, no IPv4-mapped IPv6."""
    if not isinstance(raw, str):
        raise _overload()
    try:
        ip, zone = parse_addr(raw)
    except NetipError as err:
        raise CelFailure(f"IP Address {go_quote_text(raw)} parse error during conversion from string: {err}") from None
    if zone:
        raise CelFailure(f"IP address {go_quote_text(raw)} with zone value is not allowed")
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        raise CelFailure(f"IPv4-mapped IPv6 address {go_quote_text(raw)} is not allowed")
    return Address(ip)


_CIDR_ERROR = "network address parse error during conversion from string: "


def _network(raw: object) -> Network:
    """``cidr()``: library/cidr.go ``parseCIDR`` (Go's parse, no IPv4-mapped IPv6), whose message
    ``stringToCIDR`` prefixes once more."""
    if not isinstance(raw, str):
        raise _overload()
    try:
        ip, length = parse_prefix(raw)
    except NetipError as err:
        raise CelFailure(f"{_CIDR_ERROR}{_CIDR_ERROR}{err}") from None
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        raise CelFailure(f"{_CIDR_ERROR}IPv4-mapped IPv6 address {go_quote_text(raw)} is not allowed")
    return Network(ip, length)


def _parses(parse: Callable[[object], object]) -> Callable[[object], bool]:
    def check(raw: object) -> bool:
        if not isinstance(raw, str):
            raise _overload()
        try:
            parse(raw)
        except (Unsupported, CelFailure):
            return False
        return True
    return check


def _global_unicast(ip) -> bool:
    """Go's ``netip.Addr.IsGlobalUnicast``."""
    if ip.version == 4 and ip == ipaddress.IPv4Address("255.255.255.255"):
        return False
    return not (ip.is_unspecified or ip.is_loopback or ip.is_multicast or _link_local(ip))


def _link_local(ip) -> bool:
    return ip in ipaddress.ip_network("169.254.0.0/16" if ip.version == 4 else "fe80::/10")


def _link_local_multicast(ip) -> bool:
    return ip in ipaddress.ip_network("224.0.0.0/24" if ip.version == 4 else "ff02::/16")


def _in_network(net: Network, other: object) -> bool:
    network = ipaddress.ip_network(f"{net.ip}/{net.prefix}", strict=False)
    if isinstance(other, str):
        other = _network(other) if "/" in other else _address(other)
    if isinstance(other, Address):
        return other.ip in network
    if isinstance(other, Network):
        return other.ip.version == net.ip.version and other.prefix >= net.prefix and \
            ipaddress.ip_network(f"{other.ip}/{other.prefix}", strict=False).subnet_of(network)   # type: ignore
    raise _overload()


_ADDRESS_TESTS: dict[str, Callable] = {
    "isUnspecified": lambda ip: ip.is_unspecified, "isLoopback": lambda ip: ip.is_loopback,
    "isLinkLocalMulticast": _link_local_multicast, "isLinkLocalUnicast": _link_local,
    "isGlobalUnicast": _global_unicast, "family": lambda ip: ip.version,
}


def address_method(name: str, receiver: object, args: list[object]) -> object:
    """The methods of ``net.IP`` and ``net.CIDR`` (library/ip.go, library/cidr.go)."""
    if isinstance(receiver, Address) and not args and name in _ADDRESS_TESTS:
        return _ADDRESS_TESTS[name](receiver.ip)
    if isinstance(receiver, Network):
        if name in ("containsIP", "containsCIDR") and len(args) == 1:
            arg = args[0]
            if name == "containsIP" and not isinstance(arg, (str, Address)) or \
                    name == "containsCIDR" and not isinstance(arg, (str, Network)):
                raise _overload()
            if isinstance(arg, str) and name == "containsCIDR":
                arg = _network(arg)
            elif isinstance(arg, str):
                try:
                    arg = _address(arg)
                except CelFailure:   # cidrContainsIP is handed the error and answers with the overload
                    raise _overload() from None
            return _in_network(receiver, arg)
        if not args and name == "ip":
            return Address(receiver.ip)
        if not args and name == "masked":
            return Network(ipaddress.ip_network(f"{receiver.ip}/{receiver.prefix}", strict=False).network_address,
                           receiver.prefix)
        if not args and name == "prefixLength":
            return receiver.prefix
    raise _overload()


def address_text(value: object) -> str:
    """``string(ip)`` / ``string(cidr)``: Go's canonical form."""
    if isinstance(value, Address):
        return str(value.ip)
    return f"{value.ip}/{value.prefix}"   # type: ignore[attr-defined]


def _canonical(raw: object) -> bool:
    address = _address(raw)
    return str(address.ip) == raw


def _quote(s: object) -> str:
    if not isinstance(s, str):
        raise _overload()
    escapes = {"\a": "\\a", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t", "\v": "\\v",
               "\\": "\\\\", '"': '\\"'}
    return '"' + "".join(escapes.get(c, c) for c in s) + '"'


def _range(n: object) -> list:
    if not isinstance(n, int) or isinstance(n, bool):
        raise _overload()
    return list(range(max(n, 0)))


GLOBALS: dict[str, Callable[..., object]] = {
    "sets.contains": lambda *a: _contains(*_set_args(list(a))),
    "sets.equivalent": lambda *a: _contains(*_set_args(list(a))) and _contains(*reversed(_set_args(list(a)))),
    "sets.intersects": lambda *a: any(any(equal(x, y) for y in _set_args(list(a))[1]) for x in a[0]),
    "lists.range": _range,
    "strings.quote": _quote,
    "ip": _address, "cidr": _network, "isIP": _parses(_address), "isCIDR": _parses(_network),
    "ip.isCanonical": _canonical,
    "optional.of": lambda v: Optional(True, v), "optional.none": lambda: Optional(False),
    "optional.ofNonZeroValue": lambda v: Optional(v not in (None, False) and not (
        not isinstance(v, bool) and isinstance(v, (int, float, str, bytes, list, dict)) and not v), v),
}


def optional_method(name: str, value: Optional, args: list[object]) -> object:
    """``hasValue``, ``value`` and ``orValue`` of an ``optional_type``."""
    if name == "hasValue" and not args:
        return value.present
    if name == "value" and not args:
        if not value.present:
            raise CelFailure("optional.none() dereference")
        return value.value
    if name == "orValue" and len(args) == 1:
        return value.value if value.present else args[0]
    if name == "or" and len(args) == 1 and isinstance(args[0], Optional):
        return value if value.present else args[0]
    raise _overload()


def semver_normalized(name: str, raw: object, normalize: object) -> object:
    """``semver(s, normalize)`` / ``isSemver(s, normalize)`` (library/semverlib.go ``normalizeAndParse``)."""
    if not isinstance(raw, str) or not isinstance(normalize, bool):
        raise _overload()
    text = raw
    if normalize:
        parts = raw.removeprefix("v").split(".", 2)
        for i, p in enumerate(parts):
            if len(p) > 1:
                p = p.lstrip("0")
                parts[i] = p if p and p[0].isdigit() else "0" + p
        if len(parts) < 3 and any(c in parts[-1] for c in "+-"):
            if name == "isSemver":
                return False
            raise CelFailure("short version cannot contain PreRelease/Build meta data")
        text = ".".join(parts + ["0"] * (3 - len(parts)))
    parsed = parse_semver(text)
    if name == "isSemver":
        return parsed is not None
    if parsed is None:
        raise CelFailure(semver_problem(text) or "")
    return parsed
