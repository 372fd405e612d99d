"""The tz database behind the scheduler's ``time.LoadLocation``: which file answers a zone name.

Go 1.25 (``time/zoneinfo.go`` ``LoadLocation``, ``zoneinfo_read.go``, ``zoneinfo_unix.go``) reads
a name from ``$ZONEINFO`` first, then from the system directories in order; a source is a
directory, or for a path ending in ``.zip`` an uncompressed zip read through Go's own walk of
its central directory. A source without the file (ENOENT, a zip without the entry, a ZONEINFO
that does not exist) is passed over; the first other error (the errno's text, ``corrupt zip
file P``, ``unsupported compression for N in P``, ``time: file P is too large``, the parser's
``malformed time zone information``, except for a ZONEINFO file: Go forgets that one) answers
when no later source has the zone, else ``unknown time zone N``. A zip whose central directory
is cut short makes Go slice past its end: a runtime panic that ends the whole CEL evaluation
(``GoPanic``). kso (built with ``-trimpath``, as Kubernetes builds its binaries) links no
``time/tzdata``: nothing comes after these sources there.

``Database.host()`` is that lookup on this machine, the default: the process's ZONEINFO and
this machine's directories. ``Database.of(path)`` is ``--zoneinfo``: the scheduler's own
database, read as its container reads the image's ``/usr/share/zoneinfo`` (the messages name
that path), and nothing of this machine: a zone it lacks is ``unknown time zone`` there too;
a link out of it (Debian's ``localtime`` -> ``/etc/localtime``) reads the container's other
files, which are not an input: unsupported, so the selector is marked.
The database is per run (``use``); ``used`` names those a lookup has read since.
"""

from __future__ import annotations

import errno
import functools
import os
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Callable, Iterator, Optional, TypeVar

from symreach.frontends.dra_cel_values import CelFailure, GoPanic, Unsupported

__all__ = ["GO_ZONE_DIRS", "Database", "current", "use", "using", "used", "check_given"]

GO_ZONE_DIRS = ("/usr/share/zoneinfo/", "/usr/share/lib/zoneinfo/", "/usr/lib/locale/TZ/", "/etc/zoneinfo")
IMAGE_DIR = GO_ZONE_DIRS[0]   # where the scheduler's image holds its database (distroless: tzdata)
MAX_FILE = 10 << 20   # readFile's maxFileSize
_GO_ERRNO = {errno.EISDIR: "is a directory", errno.ENOTDIR: "not a directory", errno.EACCES: "permission denied",
             errno.ENAMETOOLONG: "file name too long", errno.ELOOP: "too many levels of symbolic links",
             errno.EINVAL: "invalid argument"}
T = TypeVar("T")


class _Missing(Exception):
    """ENOENT: the source does not have the file (Go passes over it)."""


def _errno_text(err: OSError) -> str:
    if err.errno not in _GO_ERRNO:
        raise Unsupported(f"time zone file error {err.errno}") from None
    return _GO_ERRNO[err.errno]


def _open(path: str, dir_fd: Optional[int] = None) -> int:
    """Go's ``syscall.Open(path, O_RDONLY)`` (a directory opens; reading it fails)."""
    if "\x00" in path:
        raise CelFailure("invalid argument")   # Go refuses a NUL before the system call
    try:
        return os.open(path, os.O_RDONLY, dir_fd=dir_fd)
    except FileNotFoundError:
        raise _Missing from None
    except OSError as err:
        raise CelFailure(_errno_text(err)) from None


def _read_file(path: str, shown: str, dir_fd: Optional[int] = None) -> bytes:
    """``readFile`` of ``shown`` (``path``, from ``dir_fd`` when given): the content, or Go's error
    (``time: file P is too large`` past 10 MiB)."""
    if len(shown.encode("utf-8", "surrogateescape")) >= 4096 and "\x00" not in shown:
        raise CelFailure("file name too long")   # the kernel's PATH_MAX on Go's whole path
    fd = _open(path, dir_fd)
    data = bytearray()
    try:
        while len(data) <= MAX_FILE:
            chunk = os.read(fd, 1 << 16)
            if not chunk:
                break
            data += chunk
    except OSError as err:
        raise CelFailure(_errno_text(err)) from None
    finally:
        os.close(fd)
    if len(data) > MAX_FILE:
        raise CelFailure(f"time: file {shown} is too large")
    return bytes(data)


def _u(b: bytes, at: int, size: int) -> int:
    """``get2``/``get4``: little-endian, 0 when fewer bytes remain."""
    return int.from_bytes(b[at:at + size], "little") if len(b) >= at + size else 0


def _pread(f, size: int, offset: int, whence: int = os.SEEK_SET) -> Optional[bytes]:
    """``preadn``: exactly ``size`` bytes at ``offset``, or None (Go's caller then says corrupt)."""
    try:
        f.seek(offset, whence)
        data = f.read(size)
    except (OSError, ValueError):
        return None
    return data if len(data) == size else None


def _go_slice(buf: bytes, low: int, high: Optional[int] = None) -> bytes:
    """``buf[low:high]`` (``buf[low:]`` without ``high``) or Go's bounds panic (capacity = length),
    which leaves ``LoadLocation`` and the whole CEL evaluation (kso: ``[24:20]``, ``[:56] with
    capacity 46``, ``[61:56]`` for central directories cut short)."""
    if high is not None and high > len(buf):
        raise GoPanic(f"internal error: runtime error: slice bounds out of range [:{high}] with capacity {len(buf)}")
    if high is None and low > len(buf):
        raise GoPanic(f"internal error: runtime error: slice bounds out of range [{low}:{len(buf)}]")
    return buf[low:high]


def _read_zip(zipfile: str, name: str) -> bytes:
    """``loadTzinfoFromZip``: the stored entry ``name`` found through the central directory."""
    corrupt = CelFailure(f"corrupt zip file {zipfile}")
    if os.path.isdir(zipfile):   # Go opens it; its seek or read then fails
        raise corrupt
    with os.fdopen(_open(zipfile), "rb") as f:
        tail = _pread(f, 22, -22, os.SEEK_END)
        if tail is None or _u(tail, 0, 4) != 0x06054B50:
            raise corrupt
        count, size, offset = _u(tail, 10, 2), _u(tail, 12, 4), _u(tail, 16, 4)
        buf = _pread(f, size, offset)
        if buf is None:
            raise corrupt
        for _ in range(count):
            if _u(buf, 0, 4) != 0x02014B50:
                break
            for at in (10, 24, 28, 30, 32, 42):   # get2(buf[10:]), get4(buf[24:]), ...
                _go_slice(buf, at)
            method, size = _u(buf, 10, 2), _u(buf, 24, 4)
            namelen, xlen, fclen, offset = _u(buf, 28, 2), _u(buf, 30, 2), _u(buf, 32, 2), _u(buf, 42, 4)
            zname = _go_slice(buf, 46, 46 + namelen)
            buf = _go_slice(buf, 46 + namelen + xlen + fclen)
            if zname != name.encode("utf-8", "surrogateescape"):
                continue
            if method != 0:
                raise CelFailure(f"unsupported compression for {name} in {zipfile}")
            head = _pread(f, 30 + namelen, offset)
            if head is None or _u(head, 0, 4) != 0x04034B50 or _u(head, 8, 2) != method \
                    or _u(head, 26, 2) != namelen or head[30:] != zname:
                raise corrupt
            data = _pread(f, size, offset + 30 + namelen + _u(head, 28, 2))
            if data is None:
                raise corrupt
            return data
    raise _Missing


def _inside(root: str, name: str) -> None:
    """A link out of the scheduler's database (an image's ``localtime`` -> ``/etc/localtime``)
    leads to its container's other files, which are not an input: unsupported (a caveat)."""
    real, top = os.path.realpath(os.path.join(root, name)), os.path.realpath(root)
    if os.path.commonpath([real, top]) != top:
        raise Unsupported(f"time zone {name}: a link out of the scheduler's tz database")


def _read(source: str, name: str, image: bool) -> bytes:
    """``loadTzinfoFromDirOrZip``; ``image``: ``source`` is the scheduler's ``/usr/share/zoneinfo``."""
    if len(source) > 4 and source.endswith(".zip"):
        return _read_zip(source, name)
    if not image:
        return _read_file(source + "/" + name, source + "/" + name)
    if "\x00" not in name:
        _inside(source, name)
    try:
        base = os.open(source, os.O_RDONLY | os.O_DIRECTORY)
    except OSError:
        raise _Missing from None
    try:
        return _read_file(name, IMAGE_DIR + "/" + name, base)
    finally:
        os.close(base)


@dataclass(frozen=True)
class Database:
    """Where names are looked up: ``zoneinfo`` (Go's ZONEINFO, "" unset), then the system
    directories ``dirs``, or in their place ``image``, the scheduler's own (``--zoneinfo``)."""

    zoneinfo: str
    dirs: tuple[str, ...]
    image: str = ""

    @staticmethod
    def host() -> "Database":
        """Go's default lookup on this machine."""
        return Database(os.environ.get("ZONEINFO", ""), GO_ZONE_DIRS)

    @staticmethod
    def of(path: str) -> "Database":
        """The scheduler's database at ``path`` (``--zoneinfo``), as its ``/usr/share/zoneinfo``."""
        return Database("", (), image=path)

    def describe(self) -> str:
        """The database as the output names it (with the IANA release its ``tzdata.zi`` states)."""
        return _described(self)

    def _sources(self) -> list[tuple[str, str]]:
        zoneinfo = [(self.zoneinfo, "zoneinfo")] if self.zoneinfo else []
        return zoneinfo + [(d, "dir") for d in self.dirs] + ([(self.image, "image")] if self.image else [])

    def load(self, name: str, parse: Callable[[bytes], T]) -> T:
        """Go's ``LoadLocation`` past its name checks: ``parse`` of the first source's file that
        parses (``parse`` raises ValueError on bad data), else Go's error as a ``CelFailure``."""
        _USED[self.describe()] = None
        first: Optional[str] = None
        for source, kind in self._sources():
            try:
                data = _read(source, name, kind == "image")
            except _Missing:
                continue
            except CelFailure as err:
                first = first or err.message
                continue
            try:
                return parse(data)
            except ValueError:   # Go forgets a ZONEINFO file that does not parse (LoadLocation
                if kind != "zoneinfo":   # sets firstErr to the read's nil error: the parser's is scoped to its if)
                    first = first or "malformed time zone information"
        raise CelFailure(first or f"unknown time zone {name}")


@functools.lru_cache(maxsize=8)
def _described(database: Database) -> str:
    if database.image:
        return f"{database.image}{_release(database.image)}"
    present = [d.rstrip("/") + _release(d) for d in database.dirs if os.path.isdir(d)]
    first = f"ZONEINFO={database.zoneinfo}{_release(database.zoneinfo)}, then " if database.zoneinfo else ""
    return f"{first}this machine's {', '.join(present) or 'zone files (none)'} (Go's default lookup)"


def _release(directory: str) -> str:
    """``, IANA 2025b`` from the first line of a directory's ``tzdata.zi``, else nothing."""
    try:
        with open(os.path.join(directory, "tzdata.zi"), "rb") as f:
            first = f.readline(64).decode("ascii", "replace").split()
    except OSError:
        return ""
    return f", IANA {first[2]}" if first[:2] == ["#", "version"] and len(first) > 2 else ""


_USED: dict[str, None] = {}
_CURRENT: Optional[Database] = None


def current() -> Database:
    """The run's database: the one ``use`` set, else Go's default lookup on this machine."""
    return _CURRENT if _CURRENT is not None else Database.host()


def use(database: Optional[Database]) -> None:
    """Set the run's database (None: the default) and forget which ones were read."""
    global _CURRENT
    _CURRENT = database
    _USED.clear()


@contextmanager
def using(database: Optional[Database]) -> Iterator[None]:
    """Inside: ``database`` is the run's (``use``); the previous one after."""
    before = _CURRENT
    use(database)
    try:
        yield
    finally:
        use(before)


def used() -> list[str]:
    """The databases lookups read since the last ``use``, described for the output."""
    return list(_USED)


def check_given(path: str) -> Optional[str]:
    """Why ``path`` cannot be a ``--zoneinfo`` database (None: it can): Go reads a path ending in
    ``.zip`` as a zip and anything else as a directory."""
    if not os.path.exists(path):
        return "no such file or directory"
    if path.endswith(".zip") and len(path) > 4:
        return None if os.path.isfile(path) else "a name ending in .zip must be a zip file (Go reads it as one)"
    return None if os.path.isdir(path) else "not a directory (Go reads a file as a zip only when its name ends in .zip)"
