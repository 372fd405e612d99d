"""Whether this machine's time zone files are those the DRA CEL answers were recorded with.

CEL's timestamp getters take a zone name that Go's ``time.LoadLocation`` reads from the system's
zone files, so the scheduler's answer (and symreach's, ``dra_cel_zone``) depends on the machine's
tz database. ``tests/data/dra/cel_environment.json`` records the fingerprint of the files its
answers were taken with; on a machine whose files differ (another tzdata release, none at all)
the expressions that read a zone file are not comparable and are counted apart, not failed.
"""

from __future__ import annotations

import builtins
import hashlib
import os
from contextlib import contextmanager
from typing import Iterator

from symreach.frontends import dra_cel_zone


def zone_files_fingerprint() -> str:
    """sha256 over every file (path and content digest) of Go's zone directories, in walk order."""
    digest = hashlib.sha256()
    for directory in dra_cel_zone.GO_ZONE_DIRS:
        if not os.path.isdir(directory):
            digest.update(b"absent " + directory.encode())
            continue
        for root, dirs, files in os.walk(directory):
            dirs.sort()
            for name in sorted(files):
                path = os.path.join(root, name)
                try:
                    with open(path, "rb") as f:
                        content = hashlib.sha256(f.read()).digest()
                except OSError as err:
                    content = f"error {err.errno}".encode()
                digest.update(path.encode() + b"\0" + content)
    return digest.hexdigest()


@contextmanager
def zone_reads() -> Iterator[list[str]]:
    """Inside: the paths ``dra_cel_zone`` opens are appended to the list given."""
    seen: list[str] = []

    def recording_open(path, *args, **kwargs):
        seen.append(str(path))
        return builtins.open(path, *args, **kwargs)

    dra_cel_zone.open = recording_open   # type: ignore[attr-defined]   # module globals precede builtins
    try:
        yield seen
    finally:
        del dra_cel_zone.open   # type: ignore[attr-defined]
