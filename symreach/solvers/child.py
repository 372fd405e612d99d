"""An engine's external program (ABC) as a child process that another thread can
pause, resume and kill, and whose CPU is known.

``auto`` runs ABC's pdr in a thread of its own process (``workers.ResidentWorker``)
instead of a forked worker (the fork, its copy-on-write faults and the result's round
trip cost CPU that ABC alone does not pay). The resident's ``Gate`` must then stop
the program when the core goes to another worker and kill it when the run is
cancelled, from the scheduling thread, while the engine's thread waits for it
(``RunContext.cancel.wait_child``). So the program is started with ``Popen``, not
``subprocess.run``, and addressed through a pidfd (``pidfd_open``): a signal can
never reach another process that reused its pid after it was reaped. The engine's
thread reaps it with ``wait4``, which gives its CPU (``cpu_s``), counted in this
process's ``RUSAGE_CHILDREN`` as any reaped child: no zombie is left, even when killed.
"""

from __future__ import annotations

import os
import select
import signal
import subprocess
import time
from typing import IO, Optional, Sequence

from symreach.solvers.processes import parent_death_hook, proc_stat_fields

_POLL_S = 0.02  # where pidfds are missing: how often the wait looks at the child


class Child:
    """One running external program (module docstring)."""

    def __init__(self, argv: Sequence[str], cwd: str, stdout: IO) -> None:
        self.proc = subprocess.Popen(list(argv), cwd=cwd, stdin=subprocess.DEVNULL, stdout=stdout,
                                     stderr=subprocess.DEVNULL, preexec_fn=parent_death_hook())
        self.pid = self.proc.pid
        self.cpu_s: Optional[float] = None  # user + system CPU, once reaped
        self.returncode: Optional[int] = None
        try:
            self._pidfd: Optional[int] = os.pidfd_open(self.pid)
        except (AttributeError, OSError):  # not Linux >= 5.3: signals by pid until reaped
            self._pidfd = None

    def _signal(self, sig: int) -> None:
        if self.returncode is not None:
            return
        try:
            if self._pidfd is not None:
                signal.pidfd_send_signal(self._pidfd, sig)
            else:
                os.kill(self.pid, sig)
        except (ProcessLookupError, OSError):
            pass  # it ended meanwhile

    def kill(self) -> None:
        self._signal(signal.SIGKILL)  # ends a stopped process too

    def stop(self) -> None:
        self._signal(signal.SIGSTOP)

    def resume(self) -> None:
        self._signal(signal.SIGCONT)

    def live_cpu_s(self) -> float:
        """CPU seconds used so far (0 once reaped: then it is in ``cpu_s``)."""
        if self.returncode is not None:
            return 0.0
        try:
            fields = proc_stat_fields(self.pid)
            return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
        except (OSError, IndexError, ValueError):
            return 0.0

    def wait(self, timeout_s: Optional[float]) -> bool:
        """True once the program ended (reaped, ``cpu_s`` set); False after ``timeout_s``."""
        if self.returncode is not None:
            return True
        end = None if timeout_s is None else time.monotonic() + timeout_s
        while True:
            left = None if end is None else max(0.0, end - time.monotonic())
            if self._pidfd is not None:
                ready, _, _ = select.select([self._pidfd], [], [], left)
                if ready and self._reap(0):
                    return True
            elif self._reap(os.WNOHANG):
                return True
            else:
                time.sleep(_POLL_S if left is None else min(_POLL_S, left))
            if end is not None and time.monotonic() >= end:
                return False

    def _reap(self, flags: int) -> bool:
        pid, status, usage = os.wait4(self.pid, flags)
        if pid == 0:
            return False
        self.cpu_s = usage.ru_utime + usage.ru_stime
        self.returncode = os.waitstatus_to_exitcode(status)
        self.proc.returncode = self.returncode  # Popen must not wait for it again
        return True

    def close(self) -> None:
        """Kill it if it still runs, reap it, release the pidfd (once no other thread
        signals it: after ``wait_child``)."""
        if self.returncode is None:
            self.kill()
            self.wait(None)
        if self._pidfd is not None:
            os.close(self._pidfd)
            self._pidfd = None

    def __enter__(self) -> "Child":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
