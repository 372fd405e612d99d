"""Certificates bound to their question (issue 26, item 1).

``symreach certify FILE CERT [target options]`` accepts a certificate only for
FILE's instance (its canonical digest) and for the target ``check`` would ask
with the same options; every checker refuses a vacuous target; a malformed
certificate is INVALID (exit 1) or unreadable (exit 2), never an internal
error (exit 4). Each forgery of the issue is a case here. The forgeries carry
the right digest: a forger can compute it, so the digest alone must not be
what refuses them.
"""

from __future__ import annotations

import copy
import json
from dataclasses import replace
from pathlib import Path

import pytest
from click.testing import CliRunner

from symreach.certify import explicit_states
from symreach.certify.digest import instance_digest
from symreach.certify.dispatch import Certificate, as_certificate, parse
from symreach.cli import cli
from symreach.loader import load_document, load_instance
from symreach.result import Verdict
from symreach.solvers.bdd import BddEngine
from symreach.solvers.explicit import ExplicitEngine
from symreach.solvers.ic3 import Ic3Engine
from symreach.solvers.registry import Checked

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
CAPACITY1 = EXAMPLES / "paper-2.6-capacity1.yaml"  # c on n1: not deployable
CAPACITY2 = EXAMPLES / "paper-2.6.yaml"            # c on n1: deployable


def run(*args: str):
    return CliRunner().invoke(cli, list(args))


def proof(engine) -> Certificate:
    """A not-deployable certificate of c on n1 (capacity 1), bound to that instance."""
    inst = load_instance(str(CAPACITY1))
    result = Checked(engine).check(inst)
    assert result.verdict is Verdict.NOT_DEPLOYABLE and isinstance(result.certificate, Certificate)
    return result.certificate.bind(inst)


@pytest.fixture(scope="module")
def proofs() -> dict[str, Certificate]:
    return {"bdd": proof(BddEngine(fast_paths=False)), "ic3": proof(Ic3Engine(fast_paths=False)),
            "explicit": proof(ExplicitEngine())}


def write(tmp_path: Path, name: str, text: str) -> str:
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def refused(out, why: str) -> None:
    assert out.exit_code == 1, out.output
    assert out.output.startswith("INVALID") and why in out.output, out.output
    assert len(out.output.strip().splitlines()) == 1, out.output


@pytest.mark.parametrize("kind", ["bdd", "ic3", "explicit"])
def test_each_proof_is_valid_for_its_own_question(proofs, tmp_path, kind):
    out = run("certify", str(CAPACITY1), write(tmp_path, "c", proofs[kind].dumps()))
    assert out.exit_code == 0 and out.output.startswith("VALID"), out.output


def test_bdd_with_no_target_and_root_true_is_refused(proofs, tmp_path):
    data = dict(copy.deepcopy(proofs["bdd"].content), query=[], counts=[], root=1,
                digest=instance_digest(load_instance(str(CAPACITY2))))
    refused(run("certify", str(CAPACITY2), write(tmp_path, "f.json", json.dumps(data))), "vacuous")


def test_ic3_with_no_target_and_no_clause_is_refused(tmp_path):
    digest = instance_digest(load_instance(str(CAPACITY2)))
    text = f'# symreach-sat-invariant/1\n# query: []\n# cone: []\n# pairs: []\n# digest: "{digest}"\n'
    refused(run("certify", str(CAPACITY2), write(tmp_path, "f.txt", text)), "vacuous")


@pytest.mark.parametrize("kind", ["ic3", "explicit"])
def test_a_count_target_over_no_pair_is_refused(proofs, tmp_path, kind):
    """``counts: [{"pairs": [], "atLeast": 1}]`` on a deployable instance."""
    inst = load_instance(str(CAPACITY2))
    if kind == "ic3":
        text = ('# symreach-sat-invariant/1\n# query: [[]]\n# cone: []\n# pairs: []\n'
                f'# counts: [{{"pairs": [], "atLeast": 1}}]\n# digest: "{instance_digest(inst)}"\n')
    else:
        data = dict(copy.deepcopy(proofs["explicit"].content), query=[[]],
                    counts=[{"pairs": [], "atLeast": 1}], digest=instance_digest(inst))
        text = json.dumps(data)
        # the checker refuses it on its own too, not only the dispatch
        assert not explicit_states.check_certificate(inst, data)[0]
    refused(run("certify", str(CAPACITY2), write(tmp_path, "f", text)), "vacuous")


@pytest.mark.parametrize("kind", ["bdd", "ic3", "explicit"])
def test_a_proof_for_c_is_refused_for_a_file_asking_for_a(proofs, tmp_path, kind):
    """Same instance (same digest), another target: a on n1, which is deployable."""
    asks_a = write(tmp_path, "a.yaml", CAPACITY1.read_text().replace("  pod: c\n", "  pod: a\n"))
    out = run("certify", asks_a, write(tmp_path, "c", proofs[kind].dumps()))
    refused(out, "refused: the certificate is for c@n1, not a@n1")
    # the target options rebuild the question as check would: asked for c, it is valid again
    assert run("certify", asks_a, str(tmp_path / "c"), "--pod", "c", "--node", "n1").exit_code == 0


@pytest.mark.parametrize("kind", ["bdd", "ic3", "explicit"])
def test_a_proof_is_refused_for_another_instance_and_unbound(proofs, tmp_path, kind):
    refused(run("certify", str(CAPACITY2), write(tmp_path, "c", proofs[kind].dumps())), "another instance")
    content = proofs[kind].content
    unbound = dict(content, digest="") if isinstance(content, dict) else replace(content, digest="")
    text = Certificate(proofs[kind].format, unbound).dumps()
    refused(run("certify", str(CAPACITY1), write(tmp_path, "u", text)), "bound to no instance")


def _bdd_mutations(content: dict):
    """(name, mutated content): a key removed, absurd indices, negative widths."""
    for key in content:
        if key not in ("format", "digest", "counts"):  # counts: optional
            yield f"no {key}", {k: v for k, v in content.items() if k != key}
    yield "root 10^30", dict(content, root=10 ** 30)
    yield "root -1", dict(content, root=-1)
    yield "negative bits", dict(content, pairs=[dict(p, bits=-1) for p in content["pairs"]])
    yield "huge bits", dict(content, pairs=[dict(p, bits=10 ** 6) for p in content["pairs"]])
    yield "node out of range", dict(content, nodes=[[0, 5, 10 ** 30]], root=2)
    yield "variable of bad shape", dict(content, variables=[["present"]])
    yield "query of numbers", dict(content, query=[[[1, 2]]])


def test_malformed_bdd_certificates_are_invalid_never_an_internal_error(proofs, tmp_path):
    checked = 0
    for name, data in _bdd_mutations(proofs["bdd"].content):
        out = run("certify", str(CAPACITY1), write(tmp_path, "m.json", json.dumps(data)))
        assert out.exit_code in (1, 2), (name, out.exit_code, out.output)
        checked += 1
    assert checked >= 12


def test_malformed_ic3_certificates_are_invalid_or_unreadable(proofs, tmp_path):
    text = proofs["ic3"].dumps()
    lines = text.splitlines()
    mutations = [[ln for ln in lines if not ln.startswith(f"# {key}:")] for key in ("query", "cone", "pairs")]
    mutations += [lines + ["present[c@n1#99999999999999999999]"], lines + ["count[c@n1#-1]"],
                  [ln.replace('"bits": 0', '"bits": -1') for ln in lines],
                  [ln.replace('"bound": 1', '"bound": 1e400') for ln in lines]]
    for mutated in mutations:
        out = run("certify", str(CAPACITY1), write(tmp_path, "m.txt", "\n".join(mutated) + "\n"))
        assert out.exit_code in (1, 2), (mutated, out.output)
    assert len(mutations) == 7


def test_why_keeps_the_verdict_with_a_lazy_closure_certificate():
    """The lazy search's own certificate has lemmas (it used to end in exit 4)."""
    from symreach.cli.evidence import not_deployable_evidence
    from symreach.solvers.lazy_search import LazySearchEngine
    from tests.test_lazy_search import _witness_also_blocker

    inst = load_document(_witness_also_blocker())
    result = Checked(LazySearchEngine(fast_paths=False)).check(inst)
    assert result.verdict is Verdict.NOT_DEPLOYABLE and result.certificate.format == "symreach-lazy-closure/1"
    text = not_deployable_evidence(inst, inst.query, result, None, True, None)
    assert text.startswith("why (downward-closed lazy-deletion states") and "never" in text, text


def test_a_certificate_survives_pickling_with_its_type(proofs):
    import pickle

    for cert in proofs.values():
        again = pickle.loads(pickle.dumps(cert))
        assert type(again) is Certificate and again.dumps() == cert.dumps()
    assert as_certificate(parse(proofs["ic3"].dumps())).format == proofs["ic3"].format


def test_the_digest_survives_reordering_and_hash_seeds_but_not_a_change():
    import os
    import subprocess
    import sys

    import yaml

    doc = yaml.safe_load(CAPACITY1.read_text())
    digest = instance_digest(load_document(doc))
    reordered = dict(doc, podTypes=list(reversed(doc["podTypes"])))
    assert instance_digest(load_document(reordered)) == digest
    changed = copy.deepcopy(doc)
    changed["nodes"][0]["capacity"]["cpu"] = "2"
    assert instance_digest(load_document(changed)) != digest
    code = ("from symreach.frontends.dispatch import load_inputs; from symreach.certify.digest import "
            f"instance_digest; print(instance_digest(load_inputs([{str(EXAMPLES / 'loki-cluster.yaml')!r}]).instance))")
    seen = {subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                           env=dict(os.environ, PYTHONHASHSEED=seed)).stdout for seed in ("1", "2")}
    assert len(seen) == 1 and next(iter(seen)).startswith("sha256:")
