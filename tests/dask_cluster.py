"""Real ``dask scheduler`` and ``dask worker`` processes on 127.0.0.1 for the fault tests,
and task functions the workers import (this package is on their PYTHONPATH)."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Iterator, Optional

ROOT = Path(__file__).resolve().parents[1]
START_S = 60.0


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Cluster:
    """A scheduler and workers started as processes; every one killed by its pid."""

    def __init__(self) -> None:
        self.port = free_port()
        self.address = f"tcp://127.0.0.1:{self.port}"
        self.env = dict(os.environ, PYTHONPATH=str(ROOT), DASK_DISTRIBUTED__WORKER__PROFILE__ENABLED="False")
        self.scheduler = self._start(["scheduler", "--host", "127.0.0.1", "--port", str(self.port),
                                      "--dashboard-address", ":0", "--no-show"])
        self.workers: list[subprocess.Popen] = []
        if not wait_until(self._listening):
            self.close()
            raise RuntimeError("dask scheduler did not start")

    def _listening(self) -> bool:
        with socket.socket() as s:
            return s.connect_ex(("127.0.0.1", self.port)) == 0

    def _start(self, args: list[str], env: Optional[dict] = None) -> subprocess.Popen:
        exe = str(Path(sys.executable).with_name("dask"))
        cmd = [exe] if os.path.exists(exe) else ["dask"]
        return subprocess.Popen(cmd + args, env={**self.env, **(env or {})}, stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL, cwd=str(ROOT))

    def add_workers(self, n: int, env: Optional[dict] = None) -> list[subprocess.Popen]:
        new = [self._start(["worker", self.address, "--nthreads", "1", "--no-nanny",
                            "--dashboard-address", ":0", "--name", f"w{len(self.workers) + i}"], env)
               for i in range(n)]
        self.workers += new
        return new

    def wait_for(self, workers: int, client) -> None:
        client.wait_for_workers(workers, timeout=START_S)

    def live(self) -> list[subprocess.Popen]:
        return [w for w in self.workers if w.poll() is None]

    def kill_pid(self, pid: int) -> None:
        self.kill(next(w for w in self.workers if w.pid == pid))

    @staticmethod
    def kill(proc: subprocess.Popen) -> None:
        if proc.poll() is None:
            os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=10)

    def close(self) -> None:
        for proc in self.workers + [self.scheduler]:
            self.kill(proc)


@contextlib.contextmanager
def running() -> Iterator[Cluster]:
    """A new cluster (a scheduler, no worker yet), every process killed at the end."""
    c = Cluster()
    try:
        yield c
    finally:
        c.close()


def add(shared: int, item: int) -> int:
    return shared + item


def die_once(shared: str, item: int) -> int:
    """Kills its own worker the first time item 0 runs (``shared`` names a marker file)."""
    if item == 0 and not os.path.exists(shared):
        Path(shared).write_text("died")
        os.kill(os.getpid(), signal.SIGKILL)
    time.sleep(0.05)
    return item


def wait_until(cond, timeout_s: float = START_S) -> Optional[bool]:
    end = time.monotonic() + timeout_s
    while time.monotonic() < end:
        if cond():
            return True
        time.sleep(0.05)
    return None


def slow(shared: float, item: int) -> int:
    time.sleep(shared)
    return item


def gated_build(payload: bytes) -> int:
    """A shared object whose build waits: ``payload`` is ``b"DIR|VALUE"``; the worker writes
    ``DIR/building-PID`` and waits for ``DIR/go`` (so a test kills a worker mid-build)."""
    folder, value = payload.decode().split("|")
    Path(folder, f"building-{os.getpid()}").write_text("")
    end = time.monotonic() + START_S
    while not Path(folder, "go").exists() and time.monotonic() < end:
        time.sleep(0.02)
    return int(value)


GATE_ENV = "SYMREACH_TEST_GATE"   # a marker file the gate engine writes its worker's pid to


class GateEngine:
    """The explicit engine, except that its first run (no marker file yet) writes its
    worker's pid to the marker and waits to be killed: a worker lost mid-race."""

    name = "gate"

    def check(self, instance, query=None, run=None):
        from symreach.solvers.explicit import ExplicitEngine

        marker = Path(os.environ[GATE_ENV])
        if not marker.exists():
            marker.write_text(str(os.getpid()))
            time.sleep(START_S)
        result = ExplicitEngine().check(instance, query, run)
        result.engine = self.name
        return result
