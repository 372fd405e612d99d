"""An engine's external program under the run's cancel token (``solvers.child``):
killed from another thread, reaped with its CPU, never left as a zombie. A
program that sleeps stands in for ABC (no berkeley-abc needed); no timing is
asserted, only what became of the process."""

from __future__ import annotations

import os
import shutil
import sys
import threading

import pytest

from symreach.run import CancelToken
from symreach.solvers.child import Child

SLEEP = shutil.which("sleep")
pytestmark = pytest.mark.skipif(SLEEP is None or not sys.platform.startswith("linux"),
                                reason="needs sleep(1) and /proc")


def _gone(pid: int) -> bool:
    return not os.path.exists(f"/proc/{pid}")


@pytest.fixture(params=["pidfd", "pid"], autouse=True)
def addressing(request, monkeypatch):
    """Both ways of addressing the program: by pidfd, and by pid where pidfds are missing."""
    if request.param == "pid":
        def missing(pid: int) -> int:
            raise OSError("no pidfd here")

        monkeypatch.setattr(os, "pidfd_open", missing)
    return request.param


def test_a_cancel_from_another_thread_kills_and_reaps_the_program(tmp_path):
    token = CancelToken()
    with open(tmp_path / "out", "w") as out, Child([SLEEP, "600"], str(tmp_path), out) as child:
        canceller = threading.Timer(0.05, token.cancel)  # before or during the wait: both kill
        canceller.start()
        assert token.wait_child(child, None)  # returns only because the program was killed
        canceller.join()
    assert child.returncode == -9 and child.cpu_s is not None
    assert _gone(child.pid)


def test_a_cancelled_token_kills_a_program_at_once_and_a_timeout_leaves_it_to_close(tmp_path):
    token = CancelToken()
    token.cancel()
    with open(tmp_path / "out", "w") as out, Child([SLEEP, "600"], str(tmp_path), out) as child:
        assert token.wait_child(child, None)
    assert child.returncode == -9 and _gone(child.pid)
    with open(tmp_path / "out", "w") as out, Child([SLEEP, "600"], str(tmp_path), out) as child:
        assert not CancelToken().wait_child(child, 0.01)   # still sleeping
        assert child.returncode is None
    assert child.returncode == -9 and _gone(child.pid)     # ``close`` killed and reaped it


def test_a_finished_program_reports_its_exit_code(tmp_path):
    with open(tmp_path / "out", "w") as out, Child([SLEEP, "0"], str(tmp_path), out) as child:
        assert CancelToken().wait_child(child, None)
    assert child.returncode == 0 and child.cpu_s is not None and child.live_cpu_s() == 0.0
