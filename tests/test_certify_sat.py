"""The independent certificate checker: accepts IC3's invariants, rejects
corrupted ones, agrees with a brute-force check, and its command line."""

from __future__ import annotations

import itertools
import json

import pytest
from click.testing import CliRunner

from symreach import semantics
from symreach.certify.clause_invariant import InvariantCertificate, check_certificate
from symreach.cli.certify import certify_command
from symreach.solvers.ic3 import Ic3Engine
from tests.sat_helpers import pyramid_instance


@pytest.fixture(scope="module")
def proved():
    inst = pyramid_instance(3, 4)
    res = Ic3Engine().check(inst)
    return inst, res.certificate


def _brute_force(inst, cert: InvariantCertificate) -> bool:
    """Inductive invariant check by enumerating every configuration of the
    (saturated, single-node) pebbling instance with the executable semantics."""
    names = [(p["pod"], p["node"]) for p in cert.pairs]
    idx = {nm: inst.pair(inst.type_index(nm[0]), inst.node_index(nm[1])) for nm in names}

    def inv(sigma) -> bool:
        return all(any((sigma[idx[(nm[1], nm[2])]] > 0) == val for nm, val in cl) for cl in cert.clauses)
    target = inst.query
    init = inst.initial_config()
    if not inv(init):
        return False
    for bits in itertools.product([0, 1], repeat=len(names)):
        sigma = [0] * inst.num_pairs
        for nm, b in zip(names, bits):
            sigma[idx[nm]] = b
        sigma = tuple(sigma)
        if not inv(sigma):
            continue
        if semantics.query_holds(inst, target, sigma):
            return False
        for nm in names:
            t, n = inst.type_index(nm[0]), inst.node_index(nm[1])
            p = idx[nm]
            nxt = None
            if sigma[p] == 0 and semantics.deploy_failure(inst, t, n, sigma) is None:
                nxt = semantics.deploy(inst, sigma, t, n)
            elif sigma[p] == 1:
                nxt = semantics.delete(inst, sigma, t, n)
            if nxt is not None and not inv(nxt):
                return False
    return True


def test_accepts_ic3_invariant(proved):
    inst, cert = proved
    ok, msg = check_certificate(inst, cert.dumps())
    assert ok, msg
    assert _brute_force(inst, cert)


def test_round_trip(proved):
    _, cert = proved
    again = InvariantCertificate.loads(cert.dumps())
    assert again.clauses == cert.clauses and again.pairs == cert.pairs and again.query == cert.query


def test_corruptions_agree_with_brute_force(proved):
    inst, cert = proved
    rejected = 0
    variants = []
    for i in range(len(cert.clauses)):
        variants.append(cert.clauses[:i] + cert.clauses[i + 1:])
        for j in range(len(cert.clauses[i])):
            cl = list(cert.clauses[i])
            nm, val = cl[j]
            cl[j] = (nm, not val)
            variants.append(cert.clauses[:i] + [cl] + cert.clauses[i + 1:])
    for clauses in variants:
        bad = InvariantCertificate(cert.instance, cert.profile, cert.query, cert.cone, cert.pairs, clauses)
        ok, msg = check_certificate(inst, bad.dumps())
        assert ok == _brute_force(inst, bad), msg
        rejected += not ok
    assert rejected >= len(cert.clauses)  # most corruptions break the invariant


def test_dropping_the_target_clause_is_rejected(proved):
    inst, cert = proved
    clauses = [cl for cl in cert.clauses if cl != [(("present", "P-v3_0", "n"), False)]]
    assert len(clauses) == len(cert.clauses) - 1
    bad = InvariantCertificate(cert.instance, cert.profile, cert.query, cert.cone, cert.pairs, clauses)
    ok, msg = check_certificate(inst, bad)
    assert not ok and "target" in msg


def test_unlisted_pair_must_be_undeployable(proved):
    inst, cert = proved
    pairs = [p for p in cert.pairs if p["pod"] != "P-v0_0"]
    bad = InvariantCertificate(cert.instance, cert.profile, cert.query, cert.cone, pairs,
                               [cl for cl in cert.clauses if all(nm[1] != "P-v0_0" for nm, _ in cl)])
    ok, msg = check_certificate(inst, bad)
    assert not ok and "P-v0_0" in msg


def test_open_cone_is_rejected(proved):
    inst, cert = proved
    bad = InvariantCertificate(cert.instance, cert.profile, cert.query, [c for c in cert.cone if c != "P-v0_1"],
                               cert.pairs, cert.clauses)
    ok, msg = check_certificate(inst, bad)
    assert not ok


def test_cli_exit_codes(proved, tmp_path):
    inst, cert = proved
    from symreach.certify.dispatch import as_certificate
    from symreach.frontends.reduction_pebbling import encode_pebbling
    from symreach.generators.dags import pyramid

    d = pyramid(3)
    inst_file = tmp_path / "pyr.json"
    inst_file.write_text(json.dumps(encode_pebbling(d.vertices, d.edges, d.target, 4)))
    good = tmp_path / "good.cert"
    bound = as_certificate(cert).bind(inst)  # certify refuses a certificate bound to no instance
    good.write_text(bound.dumps())
    runner = CliRunner()
    res = runner.invoke(certify_command, [str(inst_file), str(good)])
    assert res.exit_code == 0, res.output
    assert res.output.startswith("VALID")
    lines = bound.dumps().splitlines()
    body = [i for i, ln in enumerate(lines) if not ln.startswith("#")]
    broken = tmp_path / "broken.cert"
    broken.write_text("\n".join(ln for i, ln in enumerate(lines) if "P-v3_0@n]" not in ln or i not in body) + "\n")
    res = runner.invoke(certify_command, [str(inst_file), str(broken)])
    assert res.exit_code == 1 and "INVALID" in res.output
    garbage = tmp_path / "garbage.cert"
    garbage.write_text("# symreach-sat-invariant/1\nhello world\n")
    assert runner.invoke(certify_command, [str(inst_file), str(garbage)]).exit_code == 2
    assert runner.invoke(certify_command, [str(tmp_path / "missing.yaml"), str(good)]).exit_code == 2


def test_readable_rendering(proved):
    _, cert = proved
    text = cert.render()
    assert "never: P-v3_0 on n" in text
    assert any(line.startswith("never:") and "together" in line for line in text.splitlines())
