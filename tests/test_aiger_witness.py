"""``check --aiger-witness``: the HWMCC/AIGER witness of every engine's deployable
answer, checked by ABC on the model ``symreach export --aiger`` writes.

ABC reads the witness as its own verification log (``read_status``) and
simulates it on the AIG (``testcex``); a witness with its last action dropped
must fail the same check, so the check is not vacuous. Skipped without
berkeley-abc (the format checks still run).
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import yaml
from click.testing import CliRunner

from symreach.cli.check import check
from symreach.cli.export import export_command
from symreach.frontends.reduction_pebbling import encode_pebbling

ROOT = Path(__file__).resolve().parents[1]
HAVE_ABC = shutil.which("berkeley-abc") is not None
ENGINES = ("explicit", "bdd", "ic3", "bmc", "abc-pdr", "abc-bmc", "auto")

# Capacity 3, full at the start: two pods of a (one presence bit: only the last deletion
# changes it) and one of z (outside the affinity cone: its steps are not in the model).
CROWDED = {
    "version": 1,
    "semantics": "paper",
    "nodes": [{"name": "n1", "capacity": {"cpu": "3"}}],
    "podTypes": [
        {"name": "a", "labels": {"app": "a"}, "requests": {"cpu": "1"}},
        {"name": "z", "labels": {"app": "z"}, "requests": {"cpu": "1"}},
        {"name": "b", "labels": {"app": "b"}, "requests": {"cpu": "1"},
         "affinity": {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
             {"labelSelector": {"matchLabels": {"app": "a"}}, "topologyKey": "kubernetes.io/hostname"}]}}},
        {"name": "c", "labels": {"app": "c"}, "requests": {"cpu": "2"},
         "affinity": {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
             {"labelSelector": {"matchLabels": {"app": "b"}}, "topologyKey": "kubernetes.io/hostname"}]}}},
    ],
    "initial": [{"pod": "a", "node": "n1", "count": 2}, {"pod": "z", "node": "n1"}],
    "query": {"pod": "c", "node": "n1"},
}


def _instances(tmp_path: Path) -> dict[str, Path]:
    pyramid = tmp_path / "pyramid.yaml"
    vertices = ["a", "b", "c", "d", "e", "f"]  # a pyramid of height 2: price 4
    edges = [["a", "d"], ["b", "d"], ["b", "e"], ["c", "e"], ["d", "f"], ["e", "f"]]
    pyramid.write_text(yaml.safe_dump(encode_pebbling(vertices, edges, "f", 4), sort_keys=False))
    crowded = tmp_path / "crowded.json"
    crowded.write_text(json.dumps(CROWDED))
    return {"paper-2.6": ROOT / "examples" / "paper-2.6.yaml", "pyramid": pyramid, "crowded": crowded}


def parse_witness(text: str, n_latches: int, n_inputs: int) -> tuple[str, list[str]]:
    """(initial latches, input vectors) of a well-formed witness of property b0."""
    lines = text.split("\n")
    assert lines[:2] == ["1", "b0"] and lines[-2:] == [".", ""], text
    latches, vectors = lines[2], lines[3:-2]
    assert len(latches) == n_latches and set(latches) <= {"0"}
    assert vectors and all(len(v) == n_inputs and set(v) <= {"0", "1"} for v in vectors), text
    return latches, vectors


def abc_accepts(model: Path, latches: str, vectors: list[str], work: Path) -> bool:
    """ABC's ``testcex`` of the witness, given as ABC's verification log."""
    frame = len(vectors) - 1
    log = work / "witness.log"
    log.write_text(f"snl_SAT {frame} symreach 0 {frame}\n{latches}\n{''.join(vectors)}\n")
    out = subprocess.run(["berkeley-abc", "-q", f"read_aiger {model}; read_status {log}; testcex -a"],
                         capture_output=True, text=True, timeout=60).stdout
    assert "cex" in out, out
    return "The cex is correct" in out


def _header(model: Path) -> tuple[int, int]:
    fields = model.read_bytes().split(b"\n", 1)[0].split()
    return int(fields[3]), int(fields[2])  # latches, inputs


def test_every_engines_witness_is_accepted_by_abc(tmp_path):
    checked = 0
    for name, path in _instances(tmp_path).items():
        model = tmp_path / f"{name}.aig"
        res = CliRunner().invoke(export_command, [str(path), "--aiger", str(model)], catch_exceptions=False)
        assert res.exit_code == 0, res.output
        n_latches, n_inputs = _header(model)
        for engine in ENGINES:
            if engine.startswith("abc-") and not HAVE_ABC:
                continue
            witness = tmp_path / f"{name}-{engine}.wit"
            res = CliRunner().invoke(check, [str(path), "--engine", engine, "--quiet", "--aiger-witness",
                                             str(witness)], catch_exceptions=False)
            assert res.exit_code == 0, (name, engine, res.output)
            latches, vectors = parse_witness(witness.read_text(), n_latches, n_inputs)
            assert len(vectors) >= 2  # none of these targets holds at the start
            if HAVE_ABC:
                assert abc_accepts(model, latches, vectors, tmp_path), (name, engine)
                # without its last action the same witness fails: the check is not vacuous
                assert not abc_accepts(model, latches, vectors[:-2] + vectors[-1:], tmp_path)
            checked += 1
    assert checked == 3 * (len(ENGINES) if HAVE_ABC else len(ENGINES) - 2)


def test_no_witness_for_a_not_deployable_answer(tmp_path):
    witness = tmp_path / "w.wit"
    res = CliRunner().invoke(check, [str(ROOT / "examples" / "paper-2.6-capacity1.yaml"), "--quiet",
                                     "--aiger-witness", str(witness)])
    assert res.exit_code == 1 and not witness.exists()
    assert "no AIGER witness (not-deployable)" in res.output
