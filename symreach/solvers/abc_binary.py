"""Where ABC is: its binary's name and whether it is installed.

Apart from ``symreach.solvers.abc`` so that ``auto`` can list its engines
without importing the ABC engine and its encodings (start-up of small checks).
"""

from __future__ import annotations

import shutil

ABC_BINARY = "berkeley-abc"


def abc_available() -> bool:
    return shutil.which(ABC_BINARY) is not None
