"""Child processes of engines: they die with their parent and are known to
the command line's supervisor, so no signal or crash leaves one running.

The supervisor (``symreach.cli.process``) runs the work in a process group
of its own and kills that whole group when interrupted; processes that must
live in a group of their own (the benchmark runner's jobs) are registered
here so the supervisor kills their groups too. ``die_with_parent`` covers
the remaining case: the parent itself killed with SIGKILL.
"""

from __future__ import annotations

import ctypes
import json
import os
import resource
import signal
from typing import Any, Callable, Optional

SUPERVISOR_FD_ENV = "SYMREACH_SUPERVISOR_FD"
_PR_SET_PDEATHSIG = 1


def die_with_parent(sig: int = signal.SIGKILL, parent: Optional[int] = None) -> None:
    """Ask Linux to send ``sig`` to this process when its parent exits
    (no-op elsewhere). Call it first thing in a forked worker. ``parent``
    (its pid, read before the fork) closes the race of a parent that died
    before the request: then this process exits at once."""
    parent_death_hook(sig)()
    if parent is not None and os.getppid() != parent:
        os._exit(1)


def parent_death_hook(sig: int = signal.SIGKILL) -> Callable[[], None]:
    """``die_with_parent`` as a ``Popen`` ``preexec_fn`` that is safe in a process with
    threads (``auto``'s resident starts ABC): libc's ``prctl`` is looked up here, before
    the fork, so the child runs no dynamic loader between fork and exec (another thread
    may have held its lock at the fork). Linux sends ``sig`` when the *thread* that
    started the child ends: an engine's thread ends only after reaping it."""
    try:
        prctl = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):  # not Linux: the supervisor's group kill still applies
        prctl = None

    def hook() -> None:
        if prctl is not None:
            prctl(_PR_SET_PDEATHSIG, int(sig), 0, 0, 0)

    return hook


def supervised() -> bool:
    """True inside a run started by the command line's supervisor."""
    return _channel() is not None


def _channel() -> Optional[int]:
    """The pipe to the supervisor: ``FD:INODE`` in the environment, valid only
    where the descriptor was inherited (forked workers), not in programs
    started with a fresh set of descriptors that merely copied the variable."""
    fd_text, _, inode = os.environ.get(SUPERVISOR_FD_ENV, "").partition(":")
    if not fd_text.isdigit() or not inode.isdigit():
        return None
    try:
        if os.fstat(int(fd_text)).st_ino != int(inode):
            return None
    except OSError:
        return None
    return int(fd_text)


def tell_supervisor(message: dict[str, Any]) -> None:
    """One JSON line to the supervisor (ignored when not supervised). Lines
    are written with one ``write`` so concurrent writers never interleave."""
    fd = _channel()
    if fd is None:
        return
    try:
        os.write(fd, (json.dumps(message) + "\n").encode())
    except OSError:  # the supervisor is gone; we are about to be killed anyway
        pass


def register_group(pgid: int) -> None:
    """A process group the supervisor must kill with ours (e.g. a job started
    with ``start_new_session=True``)."""
    tell_supervisor({"group": pgid})


def set_memory_limit(megabytes: Optional[int]) -> None:
    """Cap this process's address space (``RLIMIT_AS``); children inherit it.
    Allocation past it raises ``MemoryError`` in Python code."""
    if megabytes is None:
        return
    limit = int(megabytes) * 1024 * 1024
    _, hard = resource.getrlimit(resource.RLIMIT_AS)
    if hard != resource.RLIM_INFINITY:
        limit = min(limit, hard)
    if limit >= _RLIM_MAX:  # beyond what rlim_t holds: no process can reach it, so no cap
        limit = hard
    resource.setrlimit(resource.RLIMIT_AS, (limit, hard))


_RLIM_MAX = 2**63 - 1  # setrlimit takes a signed 64-bit value


def physical_memory_mb() -> Optional[int]:
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") // (1024 * 1024)
    except (ValueError, OSError, AttributeError):
        return None


def proc_stat_fields(pid: int) -> list[str]:
    """The fields of ``/proc/PID/stat`` after the command name (state, ppid, pgrp, ...; utime,
    stime, cutime, cstime at 11-14); OSError where the process is gone (or no ``/proc``)."""
    with open(f"/proc/{pid}/stat") as handle:
        return handle.read().rsplit(")", 1)[1].split()


def process_tree_cpu_s(pid: int) -> Optional[float]:
    """CPU seconds (user + system) of process ``pid`` and its live descendants, and of
    the children they reaped, from ``/proc`` (Linux); None where it cannot be read.
    Follows ``/proc/PID/task/TID/children``, so it costs a few file reads per process,
    not a scan of every process on the machine."""
    tick = os.sysconf("SC_CLK_TCK")
    total, todo, seen = 0, [pid], 0
    while todo:
        current = todo.pop()
        try:
            total += sum(int(x) for x in proc_stat_fields(current)[11:15])  # utime, stime, cutime, cstime
            seen += 1
            for tid in os.listdir(f"/proc/{current}/task"):
                with open(f"/proc/{current}/task/{tid}/children") as handle:
                    todo += [int(child) for child in handle.read().split()]
        except (OSError, IndexError, ValueError):
            continue  # it ended meanwhile (or no /proc here)
    return total / tick if seen else None
