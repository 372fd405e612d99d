"""Go's ``net/netip`` address and prefix parsing, with its error messages.

Kubernetes' ``ip()`` and ``cidr()`` (library/ip.go, library/cidr.go) parse with
``netip.ParseAddr`` / ``netip.ParsePrefix`` and put Go's message in the CEL runtime
error, which the scheduler shows; Python's ``ipaddress`` accepts other strings and
says other things. ``parse_addr`` and ``parse_prefix`` return the address (and the
prefix length) or raise ``NetipError`` with Go's text. Go parses byte by byte, but every
message cuts the text at an ASCII byte or at the first byte of the character it refuses, so
the quoted parts are whole characters (``strconv.Quote``, Go's ``IsPrint``).
"""

from __future__ import annotations

import ipaddress

from symreach.frontends.dra_cel_values import go_quote_text

__all__ = ["NetipError", "parse_addr", "parse_prefix"]


class NetipError(Exception):
    pass


def _fail(text: str, msg: str, at: str = "") -> NetipError:
    suffix = f" (at {go_quote_text(at)})" if at else ""
    return NetipError(f"ParseAddr({go_quote_text(text)}): {msg}{suffix}")


def _ipv4_fields(text: str, s: str) -> bytes:
    fields, value, digits = [], 0, 0
    for i, c in enumerate(s):
        if "0" <= c <= "9":
            if digits == 1 and value == 0:
                raise _fail(text, "IPv4 field has octet with leading zero")
            value, digits = value * 10 + int(c), digits + 1
            if value > 255:
                raise _fail(text, "IPv4 field has value >255")
        elif c == ".":
            if i == 0 or i == len(s) - 1 or s[i - 1] == ".":
                raise _fail(text, "IPv4 field must have at least one digit", s[i:])
            if len(fields) == 3:
                raise _fail(text, "IPv4 address too long")
            fields.append(value)
            value, digits = 0, 0
        else:
            raise _fail(text, "unexpected character", s[i:])
    if len(fields) < 3:
        raise _fail(text, "IPv4 address too short")
    return bytes(fields + [value])


def _ipv6(text: str) -> tuple[bytes, str]:
    s, zone = text, ""
    if "%" in s:
        s, zone = s.split("%", 1)
        if not zone:
            raise _fail(text, "zone must be a non-empty string")
    ip = bytearray(16)
    ellipsis = -1
    if s.startswith("::"):
        ellipsis, s = 0, s[2:]
        if not s:
            return bytes(ip), zone
    i = 0
    while i < 16:
        off, acc = 0, 0
        while off < len(s) and s[off] in "0123456789abcdefABCDEF":
            acc = (acc << 4) + int(s[off], 16)
            if off > 3:
                raise _fail(text, "each group must have 4 or less digits", s)
            if acc > 0xFFFF:
                raise _fail(text, "IPv6 field has value >=2^16", s)
            off += 1
        if off == 0:
            raise _fail(text, "each colon-separated field must have at least one digit", s)
        if off < len(s) and s[off] == ".":
            if ellipsis < 0 and i != 12:
                raise _fail(text, "embedded IPv4 address must replace the final 2 fields of the address", s)
            if i + 4 > 16:
                raise _fail(text, "too many hex fields to fit an embedded IPv4 at the end of the address", s)
            ip[i:i + 4] = _ipv4_fields(text, s)
            s, i = "", i + 4
            break
        ip[i], ip[i + 1] = acc >> 8, acc & 0xFF
        i += 2
        s = s[off:]
        if not s:
            break
        if s[0] != ":":
            raise _fail(text, "unexpected character, want colon", s)
        if len(s) == 1:
            raise _fail(text, "colon must be followed by more characters", s)
        s = s[1:]
        if s[0] == ":":
            if ellipsis >= 0:
                raise _fail(text, "multiple :: in address", s)
            ellipsis, s = i, s[1:]
            if not s:
                break
    if s:
        raise _fail(text, "trailing garbage after address", s)
    if i < 16:
        if ellipsis < 0:
            raise _fail(text, "address string too short")
        n = 16 - i
        ip[ellipsis + n:16] = ip[ellipsis:i]
        ip[ellipsis:ellipsis + n] = bytes(n)
    elif ellipsis >= 0:
        raise _fail(text, "the :: must expand to at least one field of zeros")
    return bytes(ip), zone


def parse_addr(text: str) -> tuple[object, str]:
    """``netip.ParseAddr``: (the address, its zone)."""
    for c in text:
        if c == ".":
            return ipaddress.IPv4Address(_ipv4_fields(text, text)), ""
        if c == ":":
            packed, zone = _ipv6(text)
            return ipaddress.IPv6Address(packed), zone
        if c == "%":
            raise _fail(text, "missing IPv6 address")
    raise _fail(text, "unable to parse IP")


def parse_prefix(text: str) -> tuple[object, int]:
    """``netip.ParsePrefix``: (the address as written, the prefix length)."""
    quoted = go_quote_text(text)
    if "/" not in text:
        raise NetipError(f"netip.ParsePrefix({quoted}): no '/'")
    address, bits = text.rsplit("/", 1)
    try:
        ip, zone = parse_addr(address)
        if zone:
            raise NetipError("IPv6 zones cannot be present in a prefix")
    except NetipError as err:
        raise NetipError(f"netip.ParsePrefix({quoted}): {err}") from None
    bad = NetipError(f"netip.ParsePrefix({quoted}): bad bits after slash: {go_quote_text(bits)}")
    if len(bits) > 1 and not "1" <= bits[0] <= "9":
        raise bad
    try:
        length = int(bits, 10) if bits.lstrip("+-").isdigit() and bits.isascii() else None
    except ValueError:
        length = None
    if length is None:
        raise bad
    if not 0 <= length <= ip.max_prefixlen:   # type: ignore[attr-defined]
        raise NetipError(f"netip.ParsePrefix({quoted}): prefix length out of range")
    return ip, length
