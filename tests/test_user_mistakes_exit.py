"""No exit 4 on a user's mistake (issue 26 item 6): closed standard input, and
``--max-input-mb`` / ``--memory`` beyond what the machine can represent.

Each case is a real process (standard input closed by the parent, resource
limits set in the command's own child), so it runs ``python -m symreach``."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = str(ROOT / "examples" / "paper-2.6.yaml")
HUGE = "9" * 30


def symreach(*args: str, close_stdin: bool = False, stdin_file: str | None = None) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    handle = open(stdin_file, "rb") if stdin_file else subprocess.DEVNULL
    try:
        return subprocess.run([sys.executable, "-m", "symreach", *args], stdin=handle, capture_output=True,
                              text=True, env=env, timeout=120,
                              preexec_fn=(lambda: os.close(0)) if close_stdin else None)
    finally:
        if stdin_file:
            handle.close()


def test_closed_standard_input_is_an_input_error():
    out = symreach("check", "-", "--quiet", close_stdin=True)
    assert out.returncode == 2, out.stderr
    assert "standard input is closed" in out.stderr and "internal error" not in out.stderr
    assert len(out.stderr.strip().splitlines()) == 1


def test_limits_beyond_the_address_space_mean_no_limit():
    out = symreach("check", "-", "--max-input-mb", HUGE, "--memory", HUGE, "--quiet", stdin_file=EXAMPLE)
    assert out.returncode == 0 and out.stdout.startswith("deployable"), out.stderr


def test_in_process_readers_and_limits(tmp_path, monkeypatch):
    """The same cases without a process each: every reader and the memory cap."""
    import io

    from click.testing import CliRunner

    from symreach.cli import cli
    from symreach.errors import InputError
    from symreach.frontends.dispatch import read_sources
    from symreach.loader.yaml_source import read_capped, read_file_text
    from symreach.solvers import processes

    huge = int(HUGE) * 2**20
    assert read_file_text(EXAMPLE, huge).startswith("#")
    assert read_capped(io.BytesIO(b"abc"), huge) == b"abc"
    assert read_capped(io.BytesIO(b"abcdef"), 2) == b"abc"  # one past the limit: too large
    monkeypatch.setattr(sys, "stdin", None)
    with pytest.raises(InputError, match="standard input is closed"):
        read_sources(["-"])
    monkeypatch.undo()
    calls = []
    monkeypatch.setattr(processes.resource, "setrlimit", lambda what, limits: calls.append(limits))
    processes.set_memory_limit(int(HUGE))
    processes.set_memory_limit(9999999999999)
    _, hard = processes.resource.getrlimit(processes.resource.RLIMIT_AS)
    assert calls == [(hard, hard), (hard, hard)]
    for args in (["explain", EXAMPLE, "--max-input-mb", HUGE], ["certify", EXAMPLE, EXAMPLE, "--max-input-mb", HUGE]):
        out = CliRunner().invoke(cli, args)
        assert out.exit_code in (0, 2) and "internal error" not in out.output, out.output
