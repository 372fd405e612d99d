"""Where and how a benchmark ran: version, commit, machine, load.

Recorded in every CSV row and JSON file of a run, so that a number read later
can be traced to the code and the machine that produced it, and a result
measured under load can be told from one measured on an idle machine.
"""

from __future__ import annotations

import os
import platform
import subprocess
from datetime import datetime, timezone
from pathlib import Path
from typing import Optional

PACKAGE = Path(__file__).resolve().parents[1]  # the symreach package's folder


def machine() -> dict:
    """Cores, CPU model, memory, Python and platform of this machine."""
    cpu = platform.processor() or ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    try:
        mem_gb = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2 ** 30
    except (ValueError, OSError):
        mem_gb = float("nan")
    return {"cpu": cpu, "cores": os.cpu_count(), "memory_gb": round(mem_gb, 1),
            "python": platform.python_version(), "platform": platform.platform()}


def version() -> str:
    from symreach import __version__

    return __version__


def commit(folder: Path = PACKAGE) -> Optional[str]:
    """The git commit of the checkout holding ``folder`` (``+dirty`` with local changes), or None."""
    try:
        head = subprocess.run(["git", "-C", str(folder), "rev-parse", "HEAD"], capture_output=True,
                              text=True, timeout=10)
        if head.returncode != 0:
            return None
        dirty = subprocess.run(["git", "-C", str(folder), "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return None
    return head.stdout.strip() + ("+dirty" if dirty.stdout.strip() else "")


def load() -> float:
    """The 1-minute load average."""
    return round(os.getloadavg()[0], 2)


def run_meta(**options) -> dict:
    """The metadata of a run starting now; ``options`` are the engine and limit options."""
    return {"date": datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
            "symreach_version": version(), "commit": commit(), "machine": machine(),
            "load_start": load(), **options}
