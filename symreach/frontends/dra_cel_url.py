"""Kubernetes' CEL URL library (k8s.io/apiserver/pkg/cel/library/urls.go) over Go's ``net/url``.

``url(s)`` accepts what both ``url.ParseRequestURI`` and ``url.Parse`` accept (an absolute
URI or an absolute path), ``isURL(s)`` what ``ParseRequestURI`` accepts; the getters read
the parsed ``url.URL`` as Go does (``Host`` keeps the port, ``Hostname``/``Port`` split a
numeric port off, ``EscapedPath`` keeps a valid original encoding, ``Query`` drops
malformed pairs). The parse below follows Go 1.25's ``net/url`` step by step on the UTF-8
bytes (held one byte per character), with its error texts. The strfmt ``uri`` format of the
format library is ``ParseRequestURI`` too (``request_uri_problem``).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from symreach.frontends.dra_cel_netip import NetipError, parse_addr
from symreach.frontends.dra_cel_values import CelFailure, Unsupported, go_quote_text

__all__ = ["Url", "URL_GLOBALS", "request_uri_problem", "url_method"]

_PATH, _HOST, _ZONE, _USER, _QUERY, _FRAGMENT = range(6)
_HEX = "0123456789abcdefABCDEF"


class _ParseError(Exception):
    pass


@dataclass(frozen=True)
class Url:
    """A parsed ``url.URL`` (the fields the getters read; text held as Latin-1 bytes)."""

    scheme: str = ""
    host: str = ""
    path: str = ""
    raw_path: str = ""
    raw_query: str = ""
    opaque: str = field(default="", compare=False)


def _should_escape(c: str, mode: int) -> bool:
    if c.isascii() and c.isalnum():
        return False
    if mode in (_HOST, _ZONE) and c in "!$&'()*+,;=:[]<>\"":
        return False
    if c in "-_.~":
        return False
    if c in "$&+,/:;=?@":
        return {_PATH: c == "?", _USER: c in "@/?:", _QUERY: True, _FRAGMENT: False}.get(mode, True)
    if mode == _FRAGMENT and c in "!()*":
        return False
    return True


def _unescape(s: str, mode: int) -> str:
    i, n, plus = 0, 0, False
    while i < len(s):
        c = s[i]
        if c == "%":
            n += 1
            if i + 2 >= len(s) or s[i + 1] not in _HEX or s[i + 2] not in _HEX:
                raise _ParseError("invalid URL escape " + _quote(s[i:i + 3]))
            if mode == _HOST and int(s[i + 1], 16) < 8 and s[i:i + 3] != "%25":
                raise _ParseError("invalid URL escape " + _quote(s[i:i + 3]))
            if mode == _ZONE:
                v = chr(int(s[i + 1:i + 3], 16))
                if s[i:i + 3] != "%25" and v != " " and _should_escape(v, _HOST):
                    raise _ParseError("invalid URL escape " + _quote(s[i:i + 3]))
            i += 3
            continue
        if c == "+":
            plus = mode == _QUERY
        elif mode in (_HOST, _ZONE) and ord(c) < 0x80 and _should_escape(c, mode):
            raise _ParseError(f"invalid character {_quote(c)} in host name")
        i += 1
    if n == 0 and not plus:
        return s
    out, i = [], 0
    while i < len(s):
        if s[i] == "%":
            out.append(chr(int(s[i + 1:i + 3], 16)))
            i += 3
            continue
        out.append(" " if s[i] == "+" and mode == _QUERY else s[i])
        i += 1
    return "".join(out)


def _escape(s: str, mode: int) -> str:
    return "".join(("+" if c == " " and mode == _QUERY else f"%{ord(c):02X}") if _should_escape(c, mode) else c
                   for c in s)


def _scheme(raw: str) -> tuple[str, str]:
    for i, c in enumerate(raw):
        if c.isascii() and c.isalpha():
            continue
        if c.isascii() and c.isdigit() or c in "+-.":
            if i == 0:
                return "", raw
            continue
        if c == ":":
            if i == 0:
                raise _ParseError("missing protocol scheme")
            return raw[:i], raw[i + 1:]
        return "", raw
    return "", raw


def _valid_port(port: str) -> bool:
    return port == "" or port[0] == ":" and all("0" <= c <= "9" for c in port[1:])


def _parse_host(host: str) -> str:
    open_at = host.rfind("[")
    if open_at > 0:
        raise _ParseError("invalid IP-literal")
    if open_at == 0:
        close_at = host.rfind("]")
        if close_at < 0:
            raise _ParseError("missing ']' in host")
        port = host[close_at + 1:]
        if not _valid_port(port):
            raise _ParseError(f"invalid port {_quote(port)} after host")
        port = _unescape(port, _HOST)
        name = host[1:close_at]
        zone_at = name.find("%25")
        name = _unescape(name[:zone_at], _HOST) + _unescape(name[zone_at:], _ZONE) if zone_at >= 0 \
            else _unescape(name, _HOST)
        try:
            ip, _ = parse_addr(_text(name))
        except NetipError as err:
            raise _ParseError(f"invalid host: {err}") from None
        if ip.version == 4:
            raise _ParseError("invalid IP-literal")
        return "[" + name + "]" + port
    colon = host.rfind(":")
    if colon != -1 and not _valid_port(host[colon:]):
        raise _ParseError(f"invalid port {_quote(host[colon:])} after host")
    return _unescape(host, _HOST)


_USERINFO = set("-._:~!$&'()*+,;=%@")


def _parse_authority(authority: str) -> str:
    at = authority.rfind("@")
    host = _parse_host(authority[at + 1:])
    if at < 0:
        return host
    info = authority[:at]
    if not all(c.isascii() and c.isalnum() or c in _USERINFO for c in info):
        raise _ParseError("net/url: invalid userinfo")
    for part in info.split(":", 1):
        _unescape(part, _USER)
    return host


def _parse(raw: str, request: bool) -> Url:
    if any(ord(c) < 0x20 or ord(c) == 0x7F for c in raw):
        raise _ParseError("net/url: invalid control character in URL")
    if raw == "" and request:
        raise _ParseError("empty url")
    if raw == "*":
        return Url(path="*")
    scheme, rest = _scheme(raw)
    scheme = scheme.lower()
    if rest.endswith("?") and rest.count("?") == 1:
        rest, query = rest[:-1], ""
    else:
        rest, _, query = rest.partition("?")
    if not rest.startswith("/"):
        if scheme:
            return Url(scheme=scheme, raw_query=query, opaque=rest)
        if request:
            raise _ParseError("invalid URI for request")
        if ":" in rest.partition("/")[0]:
            raise _ParseError("first path segment in URL cannot contain colon")
    host = ""
    if (scheme or not request and not rest.startswith("///")) and rest.startswith("//"):
        authority, slash, tail = rest[2:].partition("/")
        rest = slash + tail
        host = _parse_authority(authority)
    path = _unescape(rest, _PATH)
    return Url(scheme, host, path, "" if _escape(path, _PATH) == rest else rest, query)


def _quote(latin: str) -> str:
    return go_quote_text(_text(latin))


def _text(latin: str) -> str:
    """Bytes held as Latin-1 characters back to text (``Unsupported`` when they are not UTF-8)."""
    try:
        return latin.encode("latin-1").decode("utf-8")
    except UnicodeDecodeError:
        raise Unsupported("a URL part that is not UTF-8") from None


def _go(raw: str, request: bool) -> Url:
    """``url.ParseRequestURI`` (request) or ``url.Parse``; errors as ``*url.Error`` prints them."""
    latin = raw.encode("utf-8").decode("latin-1")
    target, _, fragment = latin.partition("#") if not request else (latin, "", "")
    try:
        parsed = _parse(target, request)
    except _ParseError as err:
        raise _ParseError(f"parse {_quote(target)}: {err}") from None
    if fragment:
        try:
            _unescape(fragment, _FRAGMENT)
        except _ParseError as err:
            raise _ParseError(f"parse {_quote(latin)}: {err}") from None
    return parsed


def request_uri_problem(raw: str) -> str | None:
    """``url.ParseRequestURI``'s error text, None when it parses."""
    try:
        _go(raw, True)
    except _ParseError as err:
        return str(err)
    return None


def _url(raw: object) -> Url:
    if not isinstance(raw, str):
        raise CelFailure("no such overload")
    try:
        _go(raw, True)
        return _go(raw, False)
    except _ParseError as err:
        raise CelFailure(f"URL parse error during conversion from string: {err}") from None


def _is_url(raw: object) -> bool:
    if not isinstance(raw, str):
        raise CelFailure("no such overload")
    return request_uri_problem(raw) is None


URL_GLOBALS = {"url": _url, "isURL": _is_url}


def _split_host_port(host: str) -> tuple[str, str]:
    colon = host.rfind(":")
    port = ""
    if colon != -1 and _valid_port(host[colon:]):
        host, port = host[:colon], host[colon + 1:]
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    return host, port


def _escaped_path(u: Url) -> str:
    if u.raw_path and all(c in "!$&'()*+,;=:@[]%" or not _should_escape(c, _PATH) for c in u.raw_path):
        try:
            if _unescape(u.raw_path, _PATH) == u.path:
                return u.raw_path
        except _ParseError:
            pass
    return "*" if u.path == "*" else _escape(u.path, _PATH)


def _query(u: Url) -> dict:
    if u.raw_query.count("&") + 1 > 10000:
        return {}
    out: dict[str, list[str]] = {}
    for pair in u.raw_query.split("&") if u.raw_query else []:
        if ";" in pair or not pair:
            continue
        key, _, value = pair.partition("=")
        try:
            key, value = _unescape(key, _QUERY), _unescape(value, _QUERY)
        except _ParseError:
            continue
        out.setdefault(_text(key), []).append(_text(value))
    return out


_GETTERS = {
    "getScheme": lambda u: u.scheme, "getHost": lambda u: u.host,
    "getHostname": lambda u: _split_host_port(u.host)[0], "getPort": lambda u: _split_host_port(u.host)[1],
    "getEscapedPath": _escaped_path,
}


def url_method(name: str, u: Url, args: list[object]) -> object:
    """The getters of ``kubernetes.URL``."""
    if args or name not in _GETTERS and name != "getQuery":
        raise CelFailure("no such overload")
    if name == "getQuery":
        return _query(u)
    return _text(_GETTERS[name](u))
