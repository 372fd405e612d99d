"""The portfolio's workers: an engine in a process of its own, or one *resident*
engine in a thread of ``auto``'s own process.

Both kinds answer the same calls, so ``portfolio`` schedules them alike:
``pause`` and ``resume`` (the rotation of the cores), ``alive``, ``sentinel``
(a descriptor that becomes readable when the worker is done, for
``multiprocessing.connection.wait``), ``outcome`` (its result or error, once
done) and ``stop``.

Why a resident. A forked worker costs time before it answers (the fork,
its copy-on-write faults, the result's round trip through a file), as much
as the whole run of the best engine on the small instances of the suite,
and an engine that ran in ``auto``'s process before the race (the lazy
search) would have to start again from scratch in a worker: IBM703's deep
goal was lost at a limit the lazy search alone meets that way (figures:
benchmarks/results/design_measurements.md). The resident keeps running
in this process while the workers fork, so it never restarts.

Pausing the resident. Signals stop processes, not threads: the resident runs
under a ``Gate`` that the engine consults at its deadline checks
(``RunContext.past``), between two steps, and waits there while the gate is
closed (the gate is the cancel token of the resident's ``RunContext``). So it never stops in the middle of a CUDD or SAT call, and nothing
is half-done when ``park`` returns: forking a worker then copies no thread
in the middle of anything. A resident that waits for its program (ABC's pdr,
``CancelToken.wait_child``) counts as parked while it waits; the gate stops
the program while closed and kills it when cancelled (``solvers.child``).
"""

from __future__ import annotations

import os
import pickle
import resource
import select
import signal
import sys
import threading
import time
from typing import Optional

from symreach.model import Instance, Query
from symreach.result import Result
from symreach.run import CancelToken, Child, RunContext

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


class Gate(CancelToken):
    """The resident engine's cancel token, where it also waits while its core
    belongs to another worker (module docstring). Engines call ``pause`` at
    every deadline check (``RunContext.past``)."""

    def __init__(self) -> None:
        super().__init__()
        self._cond = threading.Condition()
        self._open = True
        self._parked = False  # the engine is waiting at a check
        self._finished = False  # the engine returned (or raised)

    @property
    def finished(self) -> bool:
        return self._finished

    def pause(self) -> bool:
        """At an engine's check: wait while the gate is closed. True: the run was
        cancelled (the engine returns unknown)."""
        if self._open or self._cancelled:
            return self._cancelled
        with self._cond:
            self._parked = True
            self._cond.notify_all()
            while not self._open and not self._cancelled:
                self._cond.wait()
            self._parked = False
        return self._cancelled

    def close(self) -> None:
        """The engine waits at its next check (returns at once); its program stops now."""
        with self._cond:
            self._open = False
            if self._child is not None:
                self._child.stop()

    def open(self) -> None:
        with self._cond:
            self._open = True
            if self._child is not None:
                self._child.resume()
            self._cond.notify_all()

    def park(self) -> None:
        """Close the gate and return once the engine waits at a check (or is done)."""
        with self._cond:
            self._open = False
            while not (self._parked or self._finished or self._cancelled):
                self._cond.wait()

    def cancel(self) -> None:
        """End the run: the engine's next check returns True; its program is killed."""
        with self._cond:
            self._cancelled = True
            if self._child is not None:
                self._child.kill()
            self._cond.notify_all()

    def wait_child(self, child: Child, timeout_s: Optional[float]) -> bool:
        """``CancelToken.wait_child`` behind the gate: the program is stopped while the
        gate is closed, and the engine waiting for it counts as parked (a thread
        blocked in a wait copies nothing half-done into a fork); once it ended,
        the engine goes on only through an open gate."""
        with self._cond:
            self._child = child
            self._parked = True
            self._cond.notify_all()
            if self._cancelled:
                child.kill()
            elif not self._open:
                child.stop()
        try:
            return child.wait(timeout_s)
        finally:
            with self._cond:
                self._child = None
                while not self._open and not self._cancelled:
                    self._cond.wait()
                self._parked = False

    def child_cpu_s(self) -> float:
        """CPU seconds of the program the engine waits for now (0 without one)."""
        child = self._child
        return 0.0 if child is None else child.live_cpu_s()

    def finish(self) -> None:
        """Called by the engine's thread when it is done."""
        with self._cond:
            self._finished = True
            self._cond.notify_all()


class ResidentWorker:
    """One engine in a thread of this process, behind a ``Gate``."""

    def __init__(self, name: str, instance: Instance, query: Query, run: RunContext,
                 options: Optional[dict] = None) -> None:
        """``options``: the engine's constructor arguments (``schedule.solo_options``)."""
        self.name = name
        self.options = dict(options or {})
        self.gate = Gate()
        self._read_end, self._write_end = os.pipe()
        self._result: Optional[Result] = None
        self._error: Optional[str] = None
        self._thread = threading.Thread(target=self._run, args=(instance, query, run.with_(cancel=self.gate)),
                                        name=f"auto-resident-{name}", daemon=True)
        self._thread.start()

    @property
    def sentinel(self) -> int:
        return self._read_end

    def _run(self, instance: Instance, query: Query, run: RunContext) -> None:
        from symreach.solvers.registry import make_engine

        try:
            self._result = make_engine(self.name, **self.options).check(instance, query, run)
        except Exception as exc:  # noqa: BLE001 - reported by ``outcome``, like a worker's
            self._error = f"{type(exc).__name__}: {exc}"
        finally:
            self.gate.finish()
            os.write(self._write_end, b".")

    def alive(self) -> bool:
        """False from the moment its answer is ready (the thread may still be ending)."""
        return not self.gate.finished

    def cpu_s(self) -> Optional[float]:
        """CPU seconds of this process, of the children it reaped, and of the program
        the resident waits for (ABC): the resident's while it runs alone here."""
        children = resource.getrusage(resource.RUSAGE_CHILDREN)
        return time.process_time() + children.ru_utime + children.ru_stime + self.gate.child_cpu_s()

    def pause(self) -> None:
        self.gate.close()

    def resume(self) -> None:
        self.gate.open()

    def park(self) -> None:
        """Return once the engine waits at a check or is done (before a fork)."""
        self.gate.park()

    def outcome(self) -> tuple[Optional[Result], Optional[str]]:
        self._thread.join()
        return self._result, self._error

    def stop(self) -> None:
        """Cancel the run and wait for the engine's next check."""
        self.gate.cancel()
        self._thread.join()
        for fd in (self._read_end, self._write_end):
            try:
                os.close(fd)
            except OSError:
                pass


def ready(sentinels: list[int], timeout_s: float) -> list[int]:
    """The sentinels that became readable within ``timeout_s`` seconds, as
    ``multiprocessing.connection.wait`` without importing ``multiprocessing``
    (12 ms of CPU): most checks end with the resident, before any fork."""
    poller = select.poll()
    for fd in sentinels:
        poller.register(fd, select.POLLIN)
    return [fd for fd, _ in poller.poll(max(0.0, timeout_s) * 1000)]


class ProcessWorker:
    """One engine in a forked process of its own session (``spawn``)."""

    def __init__(self, name: str, proc, detached, out: str) -> None:
        self.name = name
        self.proc = proc
        self.detached = detached  # set once the worker may be paused
        self.out = out
        self._paused = False

    @property
    def sentinel(self):
        return self.proc.sentinel

    def alive(self) -> bool:
        return self.proc.is_alive()

    def cpu_s(self) -> Optional[float]:
        """CPU seconds of the worker and its processes (ABC); None where not measurable."""
        from symreach.solvers.processes import process_tree_cpu_s

        return process_tree_cpu_s(self.proc.pid)

    def pause(self) -> None:
        """SIGSTOP to the worker's group (ABC runs as its child), once it is detached
        (else at a later slice: a worker paused before that would survive a killed
        parent, stopped forever)."""
        if not self._paused and self.detached.is_set() and self.proc.is_alive():
            _signal(self.proc, signal.SIGSTOP)
            self._paused = True

    def resume(self) -> None:
        if self._paused and self.proc.is_alive():
            _signal(self.proc, signal.SIGCONT)
        self._paused = False

    def outcome(self) -> tuple[Optional[Result], Optional[str]]:
        self.proc.join()
        try:
            with open(self.out, "rb") as fh:
                return pickle.load(fh)
        except FileNotFoundError:
            return None, f"process died with exit code {self.proc.exitcode}"

    def stop(self) -> None:
        """Terminate it if it still runs (a paused one is resumed so that it can die)."""
        if self.proc.is_alive():
            self.proc.terminate()
            _signal(self.proc, signal.SIGCONT)
        self.proc.join(timeout=2)
        if self.proc.is_alive():
            self.proc.kill()
            self.proc.join()  # SIGKILL cannot be ignored, even by a paused process


def spawn(ctx, name: str, instance: Instance, query: Query, run: RunContext, out: str) -> ProcessWorker:
    """Start one engine's worker process (the only place workers are created).

    A stop signal in the middle of a fork would run the command's handler
    inside an at-fork hook ("Exception ignored"): such signals are held until
    the worker exists (it unblocks them first thing, in ``_detach``)."""
    detached = ctx.Event()
    held = signal.pthread_sigmask(signal.SIG_BLOCK, STOP_SIGNALS)
    try:
        proc = ctx.Process(target=_run_engine,
                           args=(name, instance, query, run, out, os.getpid(), detached),
                           daemon=True)
        proc.start()
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, held)
    return ProcessWorker(name, proc, detached, out)


def _detach(parent: int) -> None:
    """Give the worker its own session, and make it die with its parent.

    Linux shares the CPU fairly between *sessions* (autogroup) before it
    shares it between a session's processes: workers left in ``auto``'s
    session would split one share between them, and on a loaded machine
    each engine of the portfolio would run several times slower than the
    same engine run alone (measured on BMC as one of two workers with no
    pausing at all; design_measurements.md). In its own session
    each worker competes like a separate engine run. A new session also
    leaves the parent's process group: ``die_with_parent`` (PR_SET_PDEATHSIG)
    kills the worker when the parent dies (even by SIGKILL, even while
    paused), the worker's group is registered with the command line's
    supervisor (``symreach.solvers.processes``), and the parent stops it in
    every other case.
    """
    from symreach.solvers.processes import die_with_parent, register_group

    signal.pthread_sigmask(signal.SIG_UNBLOCK, STOP_SIGNALS)  # held by the parent while forking
    die_with_parent()  # never outlive the command, whatever kills it
    if os.getppid() != parent:  # the parent died before prctl took effect
        os._exit(1)
    if not sys.platform.startswith("linux"):
        return
    try:
        os.setsid()
    except OSError:
        return
    register_group(os.getpgid(0))  # the CLI supervisor kills this group with its own


def _run_engine(name: str, instance: Instance, query: Query, run: RunContext, out: str,
                parent: int, detached) -> None:
    """Worker body: run one engine (under a cancel token of its own: it is stopped
    by signals); pickle ``(result, error)`` to ``out``. The certificate travels
    as it is (a ``certify.dispatch.Certificate`` pickles unchanged). The parent
    reads the file only after the process is gone, so a paused worker can
    never leave a half-written message behind."""
    from symreach.solvers.registry import make_engine

    _detach(parent)
    detached.set()  # from now on the parent may pause this worker
    try:
        result = make_engine(name).check(instance, query, run.with_(cancel=CancelToken()))
        payload = (result, None)
    except Exception as exc:  # reported to the parent, which decides
        payload = (None, f"{type(exc).__name__}: {exc}")
    tmp = out + ".tmp"
    with open(tmp, "wb") as fh:
        pickle.dump(payload, fh)
    os.replace(tmp, out)


def _signal(proc, sig: int) -> None:
    """``sig`` to the worker's process group (ABC runs as the worker's child), or to
    the worker alone when it could not get a group of its own."""
    try:
        if os.getpgid(proc.pid) == proc.pid:
            os.killpg(proc.pid, sig)
        else:
            os.kill(proc.pid, sig)
    except ProcessLookupError:
        pass
