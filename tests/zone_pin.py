"""The tz database the DRA CEL tests are pinned to: PyPI ``tzdata==2025.2`` (IANA 2025b).

CEL's timestamp getters take a zone name that Go's ``time.LoadLocation`` reads from the
scheduler's tz database; the tests give symreach this one as the scheduler's (``--zoneinfo``,
``zoneinfo_db.Database.of``), and the kso variant's answers in ``tests/data/dra/cel_environment.json``
were taken with it as kso's ``/usr/share/zoneinfo`` (``variant_command``), so every answer that
reads a zone file is compared on every machine. The package (a test extra in pyproject.toml)
ships the TZif files of IANA's zones and links (no ``right/``, ``posix/`` or ``posixrules``).
"""

from __future__ import annotations

import importlib.resources
import shutil
from pathlib import Path

import tzdata

from symreach.frontends import zoneinfo_db

assert (tzdata.__version__, tzdata.IANA_VERSION) == ("2025.2", "2025b"), "pyproject.toml pins tzdata==2025.2"
PINNED = Path(str(importlib.resources.files("tzdata") / "zoneinfo"))
DATABASE = zoneinfo_db.Database.of(str(PINNED))


UNSHARE = shutil.which("unshare")


def variant_command(variant: Path, state: Path) -> list[str]:
    """The kso variant run on ``state`` with the pinned database as its ``/usr/share/zoneinfo``
    (bound there in a mount namespace of its own, ``unshare -rm``)."""
    return ["unshare", "-rm", "sh", "-c", 'mount --bind "$0" /usr/share/zoneinfo && exec "$1" "$2"',
            str(PINNED), str(variant), str(state)]
