"""One process model for the command line: a supervisor owns the work.

``symreach`` forks once at start. The child runs the command in a process
group of its own; every engine worker, ``berkeley-abc`` and benchmark job
lives in that group (or in a group registered with the supervisor), and
dies with its parent (``die_with_parent``). The parent only waits, so its
signal handlers always run promptly, even while the child is deep inside
CUDD or a SAT solver:

- SIGINT, SIGTERM, SIGHUP: every group gets SIGTERM, then SIGKILL after
  ``KILL_AFTER_S``; ``interrupted`` on stderr; exit 130, 143, 129.
- ``--timeout``: the child polls the run's deadline (``symreach.run.RunContext.for_process``)
  and answers ``unknown`` itself; if it has not started printing a verdict
  ``GRACE_S`` after the deadline, the supervisor kills the group and prints
  the child's pre-rendered ``unknown`` verdict (reason: timeout).
- ``--memory``: the child sets ``RLIMIT_AS`` (inherited by its workers);
  ``MemoryError`` becomes ``unknown`` with reason ``memory limit``, and a
  child killed by the kernel under a memory limit gets the same verdict.

The child talks to the supervisor in JSON lines (``tell_supervisor``): the
deadline, the memory limit, the fallback verdict, "printing now" (after
which the verdict stands and only output files remain), extra groups.
Without ``fork`` (or under ``SYMREACH_NO_SUPERVISOR=1``, or when a command
is invoked in-process as the tests do) the command runs unsupervised with
the same cooperative limits.
"""

from __future__ import annotations

import json
import os
import select
import signal
import sys
import time
from typing import Callable, NoReturn, Optional

import click

from symreach.errors import clear_deadline, current_deadline, set_deadline
from symreach.solvers.processes import (SUPERVISOR_FD_ENV, die_with_parent, physical_memory_mb,
                                        set_memory_limit, supervised, tell_supervisor)

EXIT_UNKNOWN = 3
EXIT_INTERNAL = 4
SIGNAL_EXIT = {signal.SIGINT: 130, signal.SIGTERM: 143, signal.SIGHUP: 129}
GRACE_S = 0.75       # past the deadline before the supervisor kills the work (< 1 s in all)
KILL_AFTER_S = 0.3   # SIGTERM, then SIGKILL, when interrupted
POLL_S = 0.05
START_ENV = "SYMREACH_START"
REASON = "<<REASON>>"
MEMORY_REASON = "memory limit"


# --------------------------------------------------------------------------
# the command's side (runs in the child, or in-process without a supervisor)
# --------------------------------------------------------------------------

class _Run:
    """What this invocation has announced: its fallback verdict, whether printed."""

    def __init__(self) -> None:
        self.fallback: Optional[Callable[[str], str]] = None
        self.printed: Optional[int] = None
        self.memory_mb: Optional[int] = None
        self.refreshed = time.monotonic()
        self.pid = os.getpid()


_run = _Run()
# what the child prints when memory runs out outside a command's handler,
# prepared while there is memory (``begin``), written without allocating
_memory_line = {"bytes": f"symreach: error: {MEMORY_REASON}\n".encode()}


def reset() -> None:
    """Forget the previous command (commands invoked in-process, one after another)."""
    global _run
    _run = _Run()
    clear_deadline()


def default_memory_mb() -> Optional[int]:
    """Half of physical memory, per process: a runaway run fails cleanly long
    before the machine starts swapping or the OOM killer picks a victim."""
    total = physical_memory_mb()
    return None if total is None else total // 2


def begin(timeout_s: Optional[float], memory_mb: Optional[int] = None) -> None:
    """Start the budget: ``timeout_s`` counted from the start of the process,
    ``memory_mb`` (default ``default_memory_mb()``) as the address-space limit
    of the supervised child. Unsupervised (in-process) runs keep their
    memory: limiting the caller's process would outlive the command."""
    start = os.environ.get(START_ENV) if supervised() else None
    set_deadline(timeout_s, float(start) if start else None)
    if timeout_s is not None:
        tell_supervisor({"deadline": current_deadline(), "timeout": timeout_s})
    mb = memory_mb if memory_mb is not None else default_memory_mb()
    if supervised() and mb is not None:
        set_memory_limit(mb)
        _run.memory_mb = mb
        _memory_line["bytes"] = f"symreach: error: {memory_reason()}\n".encode()
        tell_supervisor({"memory": mb})


def set_fallback(render: Callable[[str], str], supervisor_copy: Optional[Callable[[str], str]] = None) -> None:
    """``render(reason)`` is the text of an ``unknown`` verdict for this command:
    printed by ``limit_reached`` here, or by the supervisor if it has to kill us
    (``supervisor_copy(reason)`` when given: a copy made now that must still
    be true later, e.g. not listing rows a stream may have written by then)."""
    _run.fallback = render
    tell_supervisor({"fallback": (supervisor_copy or render)(REASON)})


def refresh_fallback(min_interval_s: float = 1.0) -> None:
    """Re-send the fallback (at most every ``min_interval_s``; supervised runs,
    this process only), so an ``unknown`` the supervisor prints after killing
    the work has the time and the engines' counters of its last refresh, not
    those of the moment the fallback was first set. Called from the engines'
    progress reports: no thread of its own, so forks see nothing new."""
    now = time.monotonic()
    if (not supervised() or _run.fallback is None or _run.printed is not None
            or now - _run.refreshed < min_interval_s or os.getpid() != _run.pid):
        return
    _run.refreshed = now
    tell_supervisor({"fallback": _run.fallback(REASON)})


def printing(exit_code: int) -> None:
    """Say that the verdict is being printed now: from here on it stands, and
    only output files remain to be written."""
    _run.printed = exit_code
    tell_supervisor({"printing": exit_code})


def limit_reached(reason: str) -> NoReturn:
    """A limit stopped the command: its ``unknown`` verdict (or one error line), exit 3."""
    if _run.printed is not None:
        click.echo(f"symreach: error: {reason} (after the verdict was printed)", err=True)
        sys.exit(_run.printed)
    if _run.fallback is not None:
        printing(EXIT_UNKNOWN)
        if sys.stderr.isatty():  # a progress line the limit interrupted
            sys.stderr.write("\r\x1b[K")
        click.echo(_run.fallback(reason))
    else:
        click.echo(f"symreach: error: {reason}", err=True)
    sys.exit(EXIT_UNKNOWN)


def memory_reason() -> str:
    return f"{MEMORY_REASON} ({_run.memory_mb} MB)" if _run.memory_mb else MEMORY_REASON


# --------------------------------------------------------------------------
# the supervisor's side
# --------------------------------------------------------------------------

class _Signalled(Exception):
    def __init__(self, signum: int) -> None:
        self.signum = signum


def _raise_signalled(signum: int, _frame: object) -> None:
    raise _Signalled(signum)


def run_supervised(entry: Callable[[], None]) -> NoReturn:
    """Run ``entry`` (the click group) in a supervised child; exit with its status."""
    if supervised() or not hasattr(os, "fork") or os.environ.get("SYMREACH_NO_SUPERVISOR"):
        entry()
        sys.exit(0)
    start = time.monotonic()
    read_fd, write_fd = os.pipe()
    sys.stdout.flush()
    sys.stderr.flush()
    parent = os.getpid()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - runs in the child; exercised by the subprocess tests
        _child(entry, read_fd, write_fd, start, parent)
    os.close(write_fd)
    try:
        os.setpgid(pid, pid)  # also done by the child; whichever runs first wins the race
    except OSError:
        pass
    code = _Supervisor(pid, read_fd).run()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    os._exit(code)  # nothing to clean up here; skip the interpreter's slow teardown


def _child(entry: Callable[[], None], read_fd: int, write_fd: int, start: float, parent: int) -> NoReturn:
    os.close(read_fd)
    try:
        os.setpgid(0, 0)
    except OSError:
        pass
    die_with_parent(parent=parent)
    os.environ[SUPERVISOR_FD_ENV] = f"{write_fd}:{os.fstat(write_fd).st_ino}"
    os.environ[START_ENV] = repr(start)
    install_stop_handlers()
    # not the terminal's foreground group: keep writing to it even under `stty tostop`
    signal.signal(signal.SIGTTOU, signal.SIG_IGN)
    code = 0
    try:
        entry()
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        if isinstance(exc.code, str):
            print(exc.code, file=sys.stderr)
    except KeyboardInterrupt:
        code = 130
    except MemoryError:  # outside any command (click's own parsing): still one line
        code = EXIT_UNKNOWN
        _last_words(_memory_line["bytes"])  # prepared: memory has run out
    except BaseException as exc:  # pragma: no cover - a bug outside every command
        code = EXIT_INTERNAL
        _last_words(f"symreach: internal error: {type(exc).__name__}: {exc}\n".encode())
    finally:
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except (OSError, ValueError, MemoryError):
                pass
    os._exit(code)


def _last_words(line: bytes) -> None:
    try:
        os.write(2, line)
    except OSError:
        pass


def install_stop_handlers() -> None:
    """The supervised child's SIGINT, SIGTERM and SIGHUP: unwind and exit quietly."""
    for sig in SIGNAL_EXIT:
        signal.signal(sig, _child_stop)


_stop_code: dict[str, int] = {}
REDELIVER_S = 0.01


def _child_stop(signum: int, _frame: object) -> None:
    """The supervisor is stopping us: print nothing more, unwind (temporary
    directories are removed), exit.

    Python runs this handler between any two bytecodes, also inside code that
    cannot propagate an exception: an at-fork hook (logging's lock release
    while a worker is forked), a finalizer, a weakref callback. There the
    ``SystemExit`` would be printed as "Exception ignored" and dropped, and we
    would run on until SIGKILL. ``_redeliver_stop`` raises it again a moment
    later from SIGALRM; not at once (``os.kill`` or ``_thread.interrupt_main``
    run this handler before they return, still inside)."""
    code = _stop_code.setdefault("code", SIGNAL_EXIT.get(signal.Signals(signum), 1))
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 1)
    except OSError:
        pass
    sys.unraisablehook = _redeliver_stop
    raise SystemExit(code)


def _redeliver_stop(unraisable: "sys.UnraisableHookArgs") -> None:
    stop = unraisable.exc_value
    if isinstance(stop, SystemExit) and stop.code == _stop_code.get("code"):
        signal.signal(signal.SIGALRM, _child_stop)
        signal.setitimer(signal.ITIMER_REAL, REDELIVER_S)
        return
    sys.__unraisablehook__(unraisable)


class _Supervisor:
    def __init__(self, pid: int, fd: int) -> None:
        self.pid = pid
        self.fd = fd
        self.groups = [pid]
        self.backstop: Optional[float] = None
        self.timeout: Optional[float] = None
        self.memory: Optional[int] = None
        self.fallback: Optional[str] = None
        self.printed: Optional[int] = None
        self.extended = False
        self.buffer = bytearray()

    def run(self) -> int:
        previous = {sig: signal.signal(sig, _raise_signalled) for sig in SIGNAL_EXIT}
        try:
            return self._loop()
        except _Signalled as sig:
            for s in SIGNAL_EXIT:
                signal.signal(s, signal.SIG_IGN)
            self._stop()
            click.echo("interrupted", err=True)
            return SIGNAL_EXIT[signal.Signals(sig.signum)]
        finally:
            for sig, handler in previous.items():
                signal.signal(sig, handler)

    def _loop(self) -> int:
        while True:
            wait = POLL_S if self.backstop is None else min(POLL_S, max(0.0, self.backstop - time.monotonic()))
            ready, _, _ = select.select([self.fd], [], [], wait)
            if ready:
                self._read()
            done, status = os.waitpid(self.pid, os.WNOHANG)
            if done:
                self._read_all()
                self._kill_groups(signal.SIGKILL)
                return self._finished(status)
            if self.backstop is not None and time.monotonic() >= self.backstop:
                code = self._expired()
                if code is not None:
                    return code

    def _read(self) -> bool:
        try:
            data = os.read(self.fd, 65536)
        except OSError:
            return False
        if not data:
            return False
        # Linear in the message: a fallback verdict can be tens of megabytes (a
        # large matrix), read 64 KiB at a time.
        self.buffer += data
        if b"\n" not in data:
            return True
        *lines, rest = self.buffer.split(b"\n")
        self.buffer = bytearray(rest)
        for line in lines:
            try:
                self._message(json.loads(line))
            except (ValueError, TypeError):
                continue
        return True

    def _read_all(self) -> None:
        while select.select([self.fd], [], [], 0)[0] and self._read():
            pass

    def _message(self, msg: dict) -> None:
        if "deadline" in msg:
            self.backstop = float(msg["deadline"]) + GRACE_S
            self.timeout = float(msg.get("timeout", 0))
        if "memory" in msg:
            self.memory = int(msg["memory"])
        if "fallback" in msg:
            self.fallback = str(msg["fallback"])
        if "printing" in msg:
            self.printed = int(msg["printing"])
        if "group" in msg and int(msg["group"]) not in self.groups:
            self.groups.append(int(msg["group"]))

    def _expired(self) -> Optional[int]:
        """The deadline and its grace are over: freeze the work, and unless the
        verdict is already being printed, kill it and print the fallback."""
        self._kill_groups(signal.SIGSTOP)
        time.sleep(0.02)
        self._read_all()
        if self.printed is not None and not self.extended:
            self.extended = True
            self.backstop = time.monotonic() + GRACE_S  # time to write the output files
            self._kill_groups(signal.SIGCONT)
            return None
        self._kill_groups(signal.SIGKILL)
        self._kill_groups(signal.SIGCONT)
        self._reap()
        if self.printed is not None:
            click.echo("symreach: error: output files were not written within the time limit", err=True)
            return self.printed
        reason = f"timeout: the time limit of {self.timeout:g} s was reached"
        self._print_fallback(reason)
        return EXIT_UNKNOWN

    def _finished(self, status: int) -> int:
        if os.WIFEXITED(status):
            return os.WEXITSTATUS(status)
        sig = os.WTERMSIG(status)
        name = signal.Signals(sig).name if sig in signal.Signals.__members__.values() else str(sig)
        if self.printed is not None:
            click.echo(f"symreach: error: the process died ({name}) while writing output files", err=True)
            return self.printed
        if self.memory is not None and sig in (signal.SIGKILL, signal.SIGSEGV, signal.SIGABRT, signal.SIGBUS):
            reason = f"{MEMORY_REASON} ({self.memory} MB; the process died with {name})"
            code = EXIT_UNKNOWN
        else:
            reason = f"the process died ({name})"
            code = EXIT_INTERNAL
        self._print_fallback(reason)
        return EXIT_UNKNOWN if self.fallback is not None else code

    def _print_fallback(self, reason: str) -> None:
        if sys.stderr.isatty():  # the killed child's progress line, if it drew one
            sys.stderr.write("\r\x1b[K")
            sys.stderr.flush()
        if self.fallback is not None:
            click.echo(self.fallback.replace(REASON, reason))
        else:
            click.echo(f"symreach: error: {reason}", err=True)

    def _stop(self) -> None:
        """SIGTERM every group, SIGKILL what is left after ``KILL_AFTER_S``."""
        self._kill_groups(signal.SIGTERM)
        self._kill_groups(signal.SIGCONT)
        end = time.monotonic() + KILL_AFTER_S
        while time.monotonic() < end:
            try:
                done, _ = os.waitpid(self.pid, os.WNOHANG)
            except ChildProcessError:
                break
            if done:
                break
            time.sleep(0.01)
        self._kill_groups(signal.SIGKILL)
        self._reap()

    def _kill_groups(self, sig: int) -> None:
        for group in self.groups:
            try:
                os.killpg(group, sig)
            except (ProcessLookupError, PermissionError):
                pass

    def _reap(self) -> None:
        try:
            os.waitpid(self.pid, 0)
        except ChildProcessError:
            pass
