"""Where the external benchmark data lives: ``shared/`` beside the repository.

CI clones the repository next to a copy of ``shared/``; developers have it at
``/work/shared``. ``SYMREACH_SHARED`` overrides both.
"""

from __future__ import annotations

import os
from pathlib import Path

_ROOT = Path(__file__).resolve().parent.parent


def shared_dir() -> Path:
    candidates = [Path(os.environ["SYMREACH_SHARED"])] if os.environ.get("SYMREACH_SHARED") else []
    candidates += [_ROOT.parent / "shared", Path("/work/shared")]
    for path in candidates:
        if (path / "data").is_dir():
            return path
    return candidates[0]


SHARED = shared_dir()
PETRI_DIR = SHARED / "data" / "petri"
K8S_DIR = SHARED / "data" / "k8s"
