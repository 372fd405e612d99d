"""A stop (SIGTERM from the supervisor) that Python delivers inside code that
cannot propagate an exception must still end the supervised child, quietly.

CI once saw the child's ``SystemExit`` land in logging's at-fork hook while
``auto`` forked a worker: "Exception ignored" on stderr, and the child ran on
until SIGKILL. Here the signal is sent from inside such places on purpose, so
the test is deterministic."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
SAFETY_S = 120  # a hang, not a slow machine, is what exceeds this

PRELUDE = """
import os, signal, sys, time
from symreach.cli.process import install_stop_handlers
install_stop_handlers()

def wait_for_the_stop():
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        time.sleep(0.005)
    os.write(2, b"not stopped\\n")
    os._exit(0)
"""

PLACES = {
    "at-fork hook": """
def hook():
    os.kill(os.getpid(), signal.SIGTERM)
    os.write(2, b"hook went on\\n")
os.register_at_fork(after_in_parent=hook)
pid = os.fork()
if pid == 0:
    os._exit(0)
os.waitpid(pid, 0)
wait_for_the_stop()
""",
    "finalizer": """
class Dropped:
    def __del__(self):
        os.kill(os.getpid(), signal.SIGINT)
        os.write(2, b"finalizer went on\\n")
Dropped()
wait_for_the_stop()
""",
    "ordinary code": """
os.kill(os.getpid(), signal.SIGHUP)
wait_for_the_stop()
""",
}
EXPECTED = {"at-fork hook": 143, "finalizer": 130, "ordinary code": 129}


@pytest.mark.parametrize("place", sorted(PLACES))
def test_a_stop_where_exceptions_are_ignored_still_ends_the_child(place: str) -> None:
    script = PRELUDE + "try:\n" + textwrap.indent(PLACES[place], "    ") + \
        "except SystemExit as stop:\n    os._exit(stop.code)\n"
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=REPO,
                          env={**os.environ, "PYTHONPATH": str(REPO)}, timeout=SAFETY_S)
    assert done.stderr == "" and done.returncode == EXPECTED[place], (done.returncode, done.stderr)
