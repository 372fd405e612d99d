"""``-o`` is the output format on every command (issue 30 item 1); the file a command writes is ``--out``
(``generate``, ``encode``) or ``--*-out``; ``-o FILE`` still works on generate/encode, with a warning."""

from __future__ import annotations

import json
import re
from pathlib import Path

import yaml
from click.testing import CliRunner

from symreach.cli import cli

REPO = Path(__file__).resolve().parent.parent
EXAMPLE = str(REPO / "examples" / "paper-2.6.yaml")
COMMANDS = [["check"], ["explain"], ["matrix"], ["where"], ["certify"], ["export"], ["bench"],
            ["generate", "pebbling"], ["generate", "net"], ["generate", "cluster"], ["encode", "petri"],
            ["encode", "pebbling"]]
PEBBLING = ["generate", "pebbling", "--shape", "pyramid", "--height", "2", "-k", "3"]


def run(*args: str):
    return CliRunner().invoke(cli, list(args))


def test_every_command_has_o_as_its_format_and_one_vocabulary_for_limits():
    for command in COMMANDS:
        text = run(*command, "--help").output
        formats = re.search(r"-o, --output \[([\w|]+)\]", text)
        assert formats and formats.group(1) in ("text|wide|json|yaml|csv", "yaml|json"), command
        if "--timeout" in text:
            assert "--timeout SECONDS" in text, command
        if "--memory" in text:
            assert re.search(r"--memory(, --memory-mb)? MB", text), command
        assert "--json FILE" not in text and "--csv FILE" not in text, command
    assert len(COMMANDS) == 12


def test_generate_prints_yaml_or_json_and_writes_out(tmp_path, monkeypatch):
    assert yaml.safe_load(run(*PEBBLING).output)["version"] == 1
    assert json.loads(run(*PEBBLING, "-o", "json").output)["version"] == 1
    monkeypatch.chdir(tmp_path)
    done = run(*PEBBLING, "-o", "json", "--out", "p.json")
    assert done.exit_code == 0 and done.output == "" and json.loads(Path("p.json").read_text())["version"] == 1
    done = run(*PEBBLING, "--out", "p.yaml")
    assert done.exit_code == 0 and yaml.safe_load(Path("p.yaml").read_text())["version"] == 1
    dag = run(*PEBBLING, "--dag-only", "-o", "yaml")
    assert yaml.safe_load(dag.output)["target"]


def test_o_file_is_deprecated_but_still_writes_the_file(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    done = CliRunner().invoke(cli, [*PEBBLING, "-o", "old.yaml"])
    assert done.exit_code == 0 and yaml.safe_load(Path("old.yaml").read_text())["version"] == 1
    assert "-o FILE is deprecated, use --out old.yaml" in done.output
    assert run(*PEBBLING, "-o", "old.yaml", "--out", "new.yaml").exit_code == 2   # the file twice
    dag = run("generate", "pebbling", "--shape", "path", "--height", "2", "-k", "2", "--dag-only", "-o", "d.json")
    assert dag.exit_code == 0
    encoded = run("encode", "pebbling", "d.json", "-k", "2", "-o", "json")
    assert encoded.exit_code == 0 and json.loads(encoded.output)["version"] == 1
    for other in ("wide", "csv", "text"):   # another command's format, never taken for a file name
        done = run(*PEBBLING, "-o", other)
        assert done.exit_code == 2 and "this command writes a document: -o yaml or -o json" in done.output


def test_bench_o_csv_prints_the_jobs():
    done = run("bench", EXAMPLE, "--engines", "explicit", "--no-progress", "-o", "csv")
    lines = done.stdout.splitlines()
    assert done.exit_code == 0 and lines[0].startswith("instance,family,size,engine") and len(lines) == 2


def test_certify_and_export_take_every_format(tmp_path):
    capacity1 = str(REPO / "examples" / "paper-2.6-capacity1.yaml")
    cert = tmp_path / "c.txt"
    assert run("check", capacity1, "--cert-out", str(cert)).exit_code == 1
    rows = run("certify", capacity1, str(cert), "-o", "csv").stdout.splitlines()
    assert rows[0] == "valid,kind,format,target,message,time_s" and rows[1].startswith("True,") and len(rows) == 2
    assert run("certify", capacity1, str(cert), "-o", "wide").stdout.startswith("VALID: ")
    rows = run("export", EXAMPLE, "--aiger", str(tmp_path / "m.aig"), "-o", "csv").stdout.splitlines()
    assert rows[0] == "wrote,format,target,inputs,latches,ands,outputs" and len(rows) == 2
