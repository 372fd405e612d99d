"""Every command's ``-o json`` output against the tables of docs/json.md (issue 30 item 5)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from symreach.cli import cli
from symreach.report.schema import SCHEMA_VERSION

REPO = Path(__file__).resolve().parent.parent
DOC = REPO / "docs" / "json.md"
EXAMPLE = str(REPO / "examples" / "paper-2.6.yaml")
CAPACITY1 = str(REPO / "examples" / "paper-2.6-capacity1.yaml")
DUMP = str(REPO / "examples" / "cluster-dump.yaml")


def documented() -> dict[str, list[str]]:
    """``### name`` -> the backticked keys of the first column of its table."""
    out: dict[str, list[str]] = {}
    section = None
    for line in DOC.read_text().splitlines():
        heading = re.match(r"### (\w+)", line)
        if heading:
            section = heading.group(1)
            out[section] = []
        key = re.match(r"\| `([^`]+)` \|", line)
        if section and key:
            out[section].append(key.group(1))
    return out


def validate(doc: dict, keys: list[str]) -> int:
    """Top-level keys and list items' keys exactly as documented, objects' documented keys present.
    Returns how many values were checked."""
    checked = 0
    top = [k for k in keys if "." not in k and "[" not in k]
    assert list(doc)[:2] == ["schema_version", "command"] and doc["schema_version"] == SCHEMA_VERSION
    assert set(doc) == set(top), (sorted(set(doc) - set(top)), sorted(set(top) - set(doc)))
    checked += len(top)
    for key in keys:
        if "[]." in key:
            parent, child = key.rsplit("[].", 1)
            siblings = {k.rsplit("[].", 1)[1] for k in keys if k.startswith(parent + "[].") and
                        "." not in k[len(parent) + 3:] and "[" not in k[len(parent) + 3:]}
            for item in _values(doc, parent):
                assert isinstance(item, dict) and set(item) == siblings, (key, sorted(item))
                checked += 1
        elif "." in key:
            parent, child = key.rsplit(".", 1)
            for value in _values(doc, parent, many=False):
                assert isinstance(value, dict) and child in value, key
                checked += 1
    return checked


def _values(doc: dict, path: str, many: bool = True) -> list:
    """The values at ``a[].b`` (every item of a list, then key b)."""
    current = [doc]
    for part in path.split("[]."):
        nxt = []
        for value in current:
            for name in part.split("."):
                value = value.get(name) if isinstance(value, dict) else None
            if value is not None:
                nxt.append(value)
        current = nxt
        if many or "[]." in path:
            current = [x for v in current for x in (v if isinstance(v, list) else [v])]
    if many:
        return current
    return [v for v in current if v is not None]


def run_json(*args: str) -> tuple[int, dict]:
    out = CliRunner().invoke(cli, [*args, "-o", "json"], catch_exceptions=False)
    return out.exit_code, json.loads(out.stdout)


CASES = [
    ("check", ["check", EXAMPLE]),
    ("check", ["check", CAPACITY1, "--engine", "ic3"]),
    ("check", ["check", DUMP, "--pod", "deploy/payments-api", "--node", "public-c"]),
    ("explain", ["explain", EXAMPLE, "--pod", "c", "--node", "n1"]),
    ("explain", ["explain", DUMP]),
    ("matrix", ["matrix", DUMP]),
    ("where", ["where", DUMP, "--pod", "payments-api"]),
    ("targets", ["check", DUMP, "--list-targets"]),
    ("error", ["check", DUMP, "--pod", "no-such-pod"]),
    ("error", ["matrix", DUMP, "--method", "nope"]),
    ("error", ["check", "/no/such/file.yaml"]),
    ("error", ["matrix"]),                          # no input: refused before -o is read
]


@pytest.mark.parametrize("section, args", CASES)
def test_outputs_match_the_documented_keys(section, args):
    code, doc = run_json(*args)
    keys = documented()[section]
    assert validate(doc, keys) >= len([k for k in keys if "." not in k and "[" not in k])
    if section == "error":
        assert code == 2 and doc["exit_code"] == 2


def test_certify_and_export(tmp_path):
    cert = tmp_path / "c.json"
    assert CliRunner().invoke(cli, ["check", CAPACITY1, "--cert-out", str(cert)]).exit_code == 1
    code, doc = run_json("certify", CAPACITY1, str(cert))
    assert code == 0 and doc["valid"] is True and validate(doc, documented()["certify"]) == 8
    code, doc = run_json("export", EXAMPLE, "--dimacs", str(tmp_path / "x.cnf"), "--depth", "2")
    assert code == 0 and validate(doc, documented()["export"]) == 6


@pytest.mark.parametrize("engine", ["explicit", "lazy", "bdd", "bmc", "ic3", "auto"])
def test_same_keys_whatever_the_engine(engine):
    keys = documented()["check"]
    for instance in (EXAMPLE, CAPACITY1):
        _, doc = run_json("check", instance, "--engine", engine)
        validate(doc, keys)


def test_an_unknown_forced_by_a_limit_has_the_same_keys(tmp_path):
    pyramid = tmp_path / "pyramid.yaml"
    made = CliRunner().invoke(cli, ["generate", "pebbling", "--shape", "pyramid", "--height", "9", "-k", "10",
                                    "--out", str(pyramid)])
    assert made.exit_code == 0
    for engine in ("bmc", "explicit"):
        code, doc = run_json("check", str(pyramid), "--engine", engine, "--timeout", "0.3")
        assert code == 3 and doc["verdict"] == "unknown" and doc["times"]["total_s"] > 0
        validate(doc, documented()["check"])


def test_bench_document():
    code, doc = run_json("bench", EXAMPLE, "--engines", "explicit", "--no-progress")
    assert code == 0 and validate(doc, documented()["bench"]) == 5 and len(doc["results"]) == 1


PHASES = {"start_s", "load_s", "decide_s", "minimise_s", "total_s"}


def test_every_deciding_command_splits_its_time(tmp_path):
    """The same ``times`` keys in check, check --group, explain, matrix, where and certify (text: a time line)."""
    cert = tmp_path / "c.json"
    assert CliRunner().invoke(cli, ["check", CAPACITY1, "--cert-out", str(cert)]).exit_code == 1
    gang = str(REPO / "examples" / "gang-training.yaml")
    commands = [["check", EXAMPLE], ["check", gang], ["explain", gang, "--group", "ml/train"],
                ["explain", EXAMPLE, "--pod", "c", "--node", "n1"], ["matrix", EXAMPLE],
                ["matrix", EXAMPLE, "--pods", "c"], ["where", EXAMPLE, "--pod", "c"], ["certify", CAPACITY1, str(cert)]]
    for args in commands:
        _, doc = run_json(*args)
        assert set(doc["times"]) == PHASES, args
        assert doc["times"]["total_s"] >= doc["times"]["load_s"] > 0, args
        text = CliRunner().invoke(cli, args).stdout
        assert re.search(r"time: +[0-9.]+ s \(start [0-9.]+, load [0-9.]+, decide [0-9.]+, minimise [0-9.]+\)", text), (args, text)
    assert len(commands) == 8


def test_every_section_was_exercised():
    assert set(documented()) == {s for s, _ in CASES} | {"certify", "export", "bench"}
