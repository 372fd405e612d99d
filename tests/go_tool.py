"""The Go toolchain the generated data files under ``tools/`` are made with (go1.25, as kube-scheduler
v1.35 and the kso DRA variant), for the slow tests that regenerate them byte for byte."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

GO = Path(os.environ.get("GO", "/work/wt/dra-kso/toolchain/usr/lib/go-1.25/bin/go"))
REPO = Path(__file__).resolve().parent.parent


def generated(program: str, scratch: Path) -> str:
    """What ``go run PROGRAM`` (a path under the repository) prints, with caches in ``scratch``."""
    env = {**os.environ, "GOFLAGS": "-mod=mod", "GOCACHE": str(scratch / "cache"), "GOPATH": str(scratch / "gopath")}
    out = subprocess.run([str(GO), "run", program], cwd=REPO, env=env, capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr
    return out.stdout
