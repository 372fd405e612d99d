"""Every command of the READMEs runs as written on files that ship (issue 30 item 7).

The ``sh`` and ``console`` blocks of README.md are read; each command line
(``$ `` lines in console blocks, continuation lines joined) is run from a
scratch directory that has the repository's ``examples/``, and its exit
status is compared with the line's ``# exit N`` comment (0 without one).
``symreach`` commands run in this process; ``kubectl`` is a stand-in that
prints ``examples/cluster-dump.yaml`` (``kubectl symreach`` runs the plugin).
A block right after ``<!-- readme-test: skip (why) -->`` is not run.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.kubectl_stand_in import calls, make_stand_in

REPO = Path(__file__).resolve().parent.parent
README = REPO / "README.md"
DOCS = (README, REPO / "examples" / "README.md")
SKIP = "<!-- readme-test: skip"


def readme_commands(text: str) -> list[tuple[str, int]]:
    """(command line, expected exit status) of every runnable block."""
    out: list[tuple[str, int]] = []
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        fence = re.match(r"```(sh|console)\s*$", lines[i])
        if not fence:
            i += 1
            continue
        previous = next((ln for ln in reversed(lines[:i]) if ln.strip()), "")
        j = i + 1
        body = []
        while not lines[j].startswith("```"):
            body.append(lines[j])
            j += 1
        i = j + 1
        if previous.startswith(SKIP):
            continue
        out.extend(_commands(body, console=fence.group(1) == "console"))
    return out


def _commands(body: list[str], console: bool) -> list[tuple[str, int]]:
    out = []
    k = 0
    while k < len(body):
        line = body[k]
        k += 1
        if console and not line.startswith("$ "):
            continue
        line = line[2:] if console else line
        while line.rstrip().endswith("\\") and k < len(body):
            line = line.rstrip()[:-1] + " " + body[k].strip()
            k += 1
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        command, _, comment = line.partition(" # ")
        expected = re.search(r"exit (\d+)", comment)
        out.append((command.strip(), int(expected.group(1)) if expected else 0))
    return out


class Runner:
    """Runs one README command line in the scratch directory."""

    def __init__(self, stand_in: Path, capsys) -> None:
        self.stand_in = stand_in
        self.capsys = capsys

    def line(self, line: str) -> int:
        status = 0
        for part in re.split(r"\s*;\s+", line):
            for i, step in enumerate(part.split(" && ")):
                if i and status != 0:
                    break
                status = self.pipeline(step.strip())
        return status

    def pipeline(self, step: str) -> int:
        stdin = None
        if " | " in step:
            left, step = step.split(" | ", 1)
            assert left.startswith("kubectl get "), left
            stdin = subprocess.run(shlex.split(left), capture_output=True, check=True,
                                   env=dict(os.environ)).stdout.decode()
        argv = shlex.split(step)
        if argv[:2] == ["kubectl", "symreach"]:
            return self.plugin(argv[2:])
        assert argv[0] == "symreach", step
        from symreach.cli import cli

        result = CliRunner().invoke(cli, argv[1:], input=stdin)
        if result.exception and not isinstance(result.exception, SystemExit):
            raise result.exception
        return result.exit_code

    def plugin(self, args: list[str]) -> int:
        from symreach.cli.kubectl_plugin import main

        with pytest.raises(SystemExit) as done:
            main(args)
        self.capsys.readouterr()
        assert len(calls(self.stand_in)) == 1  # one kubectl get per answer
        return done.value.code or 0


def test_the_readme_has_runnable_blocks_and_skips_only_setup():
    text = README.read_text()
    commands = readme_commands(text)
    assert len(commands) >= 30
    assert text.count(SKIP) == 3  # pip install (twice) and the Dask machines
    assert all(c.startswith(("symreach ", "kubectl ")) for c, _ in commands)


def test_every_readme_command_runs_as_written(tmp_path, monkeypatch, capsys):
    stand_in = make_stand_in(tmp_path, REPO / "examples" / "cluster-dump.yaml")
    work = tmp_path / "work"
    work.mkdir()
    (work / "examples").symlink_to(REPO / "examples")
    monkeypatch.chdir(work)
    monkeypatch.setenv("PATH", f"{stand_in}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("SYMREACH_NO_SUPERVISOR", "1")
    monkeypatch.setattr(sys, "stdin", sys.stdin)
    runner = Runner(stand_in, capsys)
    failures = []
    commands = [c for doc in DOCS for c in readme_commands(doc.read_text())]
    for command, expected in commands:
        status = runner.line(command)
        if status != expected:
            failures.append(f"exit {status}, README says {expected}: {command}")
    assert not failures, "\n".join(failures)
    assert len(commands) >= 36
