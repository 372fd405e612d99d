"""Count targets and workload names end to end: loader, CLI, certificates.

The realistic case is ``examples/loki-cluster.yaml``: a Loki StatefulSet
(required anti-affinity per host, zone spread maxSkew 1) with a replica
already on worker-b1, a node-exporter DaemonSet, and a busy worker-b2.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from symreach import semantics
from symreach.cli import cli
from symreach.errors import InputError
from symreach.frontends.dispatch import load_any
from symreach.loader import load_document, parse_query
from symreach.model import CountTarget, Query, daemonset_groups
from symreach.result import Step

ROOT = Path(__file__).resolve().parent.parent
LOKI = str(ROOT / "examples" / "loki-cluster.yaml")
ZONE_B = "topology.kubernetes.io/zone=eu-west-1b"


def run(*args):
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


def small(query=None):
    nodes = [{"name": f"n{i}", "labels": {"zone": z}, "capacity": {"cpu": "4"}}
             for i, z in enumerate("aab")]
    types = [{"name": "web", "labels": {"app": "web"}, "requests": {"cpu": "1"}},
             {"name": "db", "labels": {"app": "db"}, "requests": {"cpu": "1"}}]
    d = {"version": 1, "nodes": nodes, "podTypes": types, "initial": [{"pod": "web", "node": "n0", "count": 2}]}
    if query is not None:
        d["query"] = query
    return load_document(d)


# ---- the model and the loader ------------------------------------------------------

def test_query_holds_reads_counts():
    inst = small()
    q = Query((frozenset(),), "", (CountTarget(frozenset({(0, 0), (0, 1)}), 3),))
    sigma = list(inst.initial_config())
    assert not semantics.query_holds(inst, q, tuple(sigma))
    sigma[inst.pair(0, 1)] = 1
    assert semantics.query_holds(inst, q, tuple(sigma))
    assert q.count_cap((0, 1)) == 3 and q.count_cap((1, 1)) == 0


def test_v1_count_more_and_domain():
    q = small({"pod": "web", "node": "n0", "count": 3}).query
    assert q.counts == (CountTarget(frozenset({(0, 0)}), 3),) and q.alternatives == (frozenset(),)
    q = small({"pod": "web", "node": "n0", "more": True}).query
    assert q.counts == (CountTarget(frozenset({(0, 0)}), 3),)
    assert "one more than the 2 initially there" in q.description
    q = small({"pod": "web", "domain": {"zone": "a"}, "count": 4}).query
    assert q.counts == (CountTarget(frozenset({(0, 0), (0, 1)}), 4),)
    q = small({"pod": "web", "nodeSelector": {"zone": "b"}, "more": True}).query
    assert q.counts == () and q.alternatives == (frozenset({(0, 2)}),)  # 0 there: one pod is presence
    q = small({"pod": "db", "node": "n1", "count": 2, "with": [{"pod": "web", "node": "n0"}]}).query
    assert q.alternatives == (frozenset({(0, 0)}),) and q.counts[0].at_least == 2


@pytest.mark.parametrize("query,fragment", [
    ({"pod": "web", "node": "n0", "count": 0}, "query.count: must be at least 1"),
    ({"pod": "web", "node": "n0", "count": 2, "more": True}, "query.more: give a count or 'more'"),
    ({"pod": "web", "domain": {"zone": "a", "x": "y"}}, "query.domain: give exactly one"),
    ({"pod": "web", "domain": {"zone": "q"}, "count": 2}, "query.domain: no node matches zone=q"),
    ({"pod": "web", "node": "n0", "domain": {"zone": "a"}}, "query.domain: give either a node or a domain"),
    ({"node": "n0", "count": 2}, "query.pod:"),
])
def test_v1_count_errors(query, fragment):
    with pytest.raises(InputError) as err:
        small(query)
    assert fragment in str(err.value)


# ---- engines: exact counts where saturation would be wrong ---------------------------

@pytest.mark.parametrize("engine", ["explicit", "bdd", "ic3", "bmc", "abc-pdr", "auto"])
def test_count_needs_capacity_for_k_pods(engine):
    """4 cpu on n0: four web pods fit, five never do; saturation would see one."""
    from symreach.solvers.base import Limits
    from symreach.solvers.registry import make_engine

    if engine == "abc-pdr":
        import shutil
        if shutil.which("berkeley-abc") is None:
            pytest.skip("berkeley-abc not installed")
    for k, deployable in ((4, True), (5, False)):
        inst = small({"pod": "web", "node": "n0", "count": k})
        limits = Limits(timeout_s=300, max_depth=k if engine == "bmc" else None)
        result = make_engine(engine).check(inst, inst.query, limits)
        if engine == "bmc" and not deployable:
            assert result.verdict.value == "unknown"
            continue
        assert result.verdict.value == ("deployable" if deployable else "not-deployable"), (k, result.reason)
        if deployable:
            semantics.replay(inst, result.trace, inst.query)
            assert sum(1 for s in result.trace if s.op == "deploy") == 2


def test_count_pair_without_any_other_bound_is_capped_by_k():
    """No capacity, no maxPerNode: the count target's K is the counter's bound."""
    d = {"version": 1, "semantics": "paper", "nodes": [{"name": "n"}],
         "podTypes": [{"name": "free", "labels": {"app": "f"}}], "query": {"pod": "free", "node": "n", "count": 5}}
    from symreach.solvers.ic3 import Ic3Engine

    inst = load_document(d)
    result = Ic3Engine(fast_paths=False).check(inst)
    assert result.verdict.value == "deployable" and len(result.trace) == 5


# ---- the realistic cluster: must-show -----------------------------------------------------

def test_loki_one_more_on_worker_b1_is_not_deployable_and_certified(tmp_path):
    for engine, name in (("ic3", "inv.txt"), ("bdd", "inv.json")):
        cert = tmp_path / name
        out = run("check", LOKI, "--pod", "monitoring/loki", "--node", "worker-b1", "--more",
                  "--engine", engine, "--quiet", "--cert-out", str(cert))
        assert out.exit_code == 1, out.output
        assert "2 pods of monitoring/loki on worker-b1 at once (one more than the 1 initially there)" in out.output
        target = ("--pod", "monitoring/loki", "--node", "worker-b1", "--more")
        ok = run("certify", LOKI, str(cert), *target)
        assert ok.exit_code == 0 and ok.output.startswith("VALID"), ok.output
        # tampered: claim the certificate is about K = 1 (already true initially)
        text = cert.read_text()
        bad = tmp_path / ("bad-" + name)
        bad.write_text(text.replace('"atLeast": 2', '"atLeast": 1'))
        assert bad.read_text() != text
        out = run("certify", LOKI, str(bad), *target)
        assert out.exit_code == 1 and out.output.startswith("INVALID"), out.output


def test_loki_two_in_zone_b_is_deployable_with_trace(tmp_path):
    out = run("check", LOKI, "--pod", "monitoring/loki", "--count", "2", "--domain", ZONE_B, "--json",
              "--trace-out", str(tmp_path / "t.json"))
    assert out.exit_code == 0, out.output
    data = json.loads(out.output)
    assert data["verdict"] == "deployable"
    trace = data["trace"]
    assert trace[-1] == {"op": "deploy", "pod": "monitoring/loki", "node": "worker-b2", "binds": None, "holding": None}
    assert any(s["op"] == "delete" and s["pod"] == "shop/checkout" for s in trace)
    inst = load_any(Path(LOKI))
    query = parse_query(inst, "monitoring/loki", count=2, domain=("topology.kubernetes.io/zone", "eu-west-1b"))
    semantics.replay(inst, [Step(s["op"], s["pod"], s["node"]) for s in trace], query)


def test_loki_three_in_zone_b_never():
    out = run("check", LOKI, "--pod", "monitoring/loki", "--count", "3", "--domain", ZONE_B, "--quiet")
    assert out.exit_code == 1, out.output


def test_count_option_errors():
    out = CliRunner().invoke(cli, ["check", LOKI, "--pod", "monitoring/loki", "--count", "2", "--more"])
    assert out.exit_code == 2 and "--count or --more" in out.output
    out = CliRunner().invoke(cli, ["check", LOKI, "--pod", "monitoring/loki", "--domain", "zone"])
    assert out.exit_code == 2 and "KEY=VALUE" in out.output
    out = CliRunner().invoke(cli, ["check", LOKI, "--pod", "monitoring/loki", "--node", "worker-b1",
                                   "--domain", ZONE_B])
    assert out.exit_code == 2
    out = CliRunner().invoke(cli, ["check", LOKI, "--count", "2"])
    assert out.exit_code == 2 and "need --pod" in out.output


# ---- workload names -------------------------------------------------------------------------

def test_daemonset_groups_from_the_front_end():
    inst = load_any(Path(LOKI))
    groups = daemonset_groups(inst)
    assert set(groups) == {"monitoring/node-exporter"}
    members = groups["monitoring/node-exporter"]
    assert {inst.nodes[n].name for n in members} == {n.name for n in inst.nodes}
    for n, t in members.items():
        assert inst.pod_types[t].name == f"monitoring/node-exporter@{inst.nodes[n].name}"


def test_daemonset_by_name_with_and_without_node():
    inst = load_any(Path(LOKI))
    members = daemonset_groups(inst)["monitoring/node-exporter"]
    b2 = inst.node_index("worker-b2")
    q = parse_query(inst, "monitoring/node-exporter", "worker-b2")
    assert q.alternatives == (frozenset({(members[b2], b2)}),)
    q = parse_query(inst, "monitoring/node-exporter")
    assert set(q.alternatives) == {frozenset({(t, n)}) for n, t in members.items()}
    q = parse_query(inst, "monitoring/node-exporter", count=3)
    assert q.counts == (CountTarget(frozenset((t, n) for n, t in members.items()), 3),)


def test_daemonset_name_on_the_command_line():
    out = run("check", LOKI, "--pod", "monitoring/node-exporter", "--node", "worker-b1", "--quiet")
    assert out.exit_code == 0 and "initially present" in out.output, out.output
    # a second exporter on the same node: the host port 9100 is taken
    out = run("check", LOKI, "--pod", "monitoring/node-exporter", "--node", "worker-b1", "--more", "--quiet")
    assert out.exit_code == 1, out.output
    out = CliRunner().invoke(cli, ["check", LOKI, "--pod", "monitoring/nope", "--node", "worker-b1"])
    assert out.exit_code == 2 and "unknown pod type" in out.output


def test_explain_groups_daemonset_rows_and_asks_for_one_more():
    out = run("explain", LOKI)
    assert out.exit_code == 0
    assert out.output.count("pod monitoring/node-exporter") == 1
    assert "@worker" not in out.output
    out = run("explain", LOKI, "--pod", "monitoring/node-exporter", "--json")
    rows = json.loads(out.output)["pods"]
    assert [r["pod"] for r in rows] == ["monitoring/node-exporter"] and len(rows[0]["nodes"]) == 5
    out = run("explain", LOKI, "--pod", "monitoring/loki", "--node", "worker-b1", "--json")
    reach = json.loads(out.output)["pods"][0]["reachability"]
    assert reach["verdict"] == "deployable" and reach["more"]["verdict"] == "not-deployable"
    assert reach["more"]["at_least"] == 2


def test_matrix_groups_daemonset_rows():
    from symreach.solvers.matrix import matrix_table, render_csv, render_text

    inst = load_any(Path(LOKI))
    m = matrix_table(inst)
    text = render_text(m)
    lines = [line for line in text.splitlines() if line.startswith("monitoring/node-exporter")]
    assert len(lines) == 1 and lines[0].split()[1:] == ["Y"] * 5
    rows = [r for r in render_csv(m).splitlines() if r.startswith("monitoring/node-exporter,")]
    assert len(rows) == 5
    dump = load_any(ROOT / "examples" / "cluster-dump.yaml")
    groups = daemonset_groups(dump)
    assert groups, "the cluster dump has DaemonSets"
    m = matrix_table(dump)
    assert len(m.row_subjects()) == len(dump.pod_types) - sum(len(g) - 1 for g in groups.values())


def test_with_names_a_daemonset_pod_too():
    inst = load_any(Path(LOKI))
    members = daemonset_groups(inst)["monitoring/node-exporter"]
    b1 = inst.node_index("worker-b1")
    q = parse_query(inst, "monitoring/loki", "worker-b1", with_pairs=[("monitoring/node-exporter", "worker-b1")])
    assert q.alternatives == (frozenset({(inst.type_index("monitoring/loki"), b1), (members[b1], b1)}),)


def test_loki_more_in_zone_b_explicit_shortest_and_more_anywhere():
    out = run("check", LOKI, "--pod", "monitoring/loki", "--domain", ZONE_B, "--more", "--engine", "explicit",
              "--json")
    data = json.loads(out.output)
    assert out.exit_code == 0 and data["trace"] == [
        {"op": "delete", "pod": "shop/checkout", "node": "worker-b2", "binds": None, "holding": None},
        {"op": "deploy", "pod": "monitoring/loki", "node": "worker-b2", "binds": None, "holding": None}]
    out = run("check", LOKI, "--pod", "monitoring/loki", "--more", "--json")
    data = json.loads(out.output)
    # whichever engine wins the auto race, one deployment of loki suffices (and is minimal)
    assert out.exit_code == 0 and [s["op"] for s in data["trace"] if s["op"] == "deploy"] == ["deploy"]
    assert data["trace"][-1]["pod"] == "monitoring/loki"


def test_checkers_reject_count_certificates_with_a_wrong_abstraction():
    """web@n0 can hold 4 pods (4 cpu), the target is 5: a counter capped below
    K, or a saturated bit, would let a wrong invariant through; both are refused."""
    from symreach.certify.clause_invariant import InvariantCertificate, check_certificate
    from symreach.solvers.ic3 import Ic3Engine

    inst = small({"pod": "web", "node": "n0", "count": 5})
    result = Ic3Engine(fast_paths=False).check(inst)
    assert result.verdict.value == "not-deployable"
    text = result.certificate.dumps()
    assert check_certificate(inst, text)[0]
    cert = InvariantCertificate.loads(text)
    web = next(p for p in cert.pairs if p["pod"] == "web" and p["node"] == "n0")
    assert web["bits"] >= 3 and web["bound"] >= 4
    for change in ({"bound": 3}, {"bits": 0, "bound": 1}):
        bad = InvariantCertificate.loads(text)
        next(p for p in bad.pairs if p["pod"] == "web" and p["node"] == "n0").update(change)
        ok, why = check_certificate(inst, bad.dumps())
        assert not ok, change
    other = small({"pod": "web", "node": "n0", "count": 4})
    ok, why = check_certificate(other, text, other.query)
    assert not ok and "another query" in why


def test_every_certificate_kind_carries_and_checks_count_targets(tmp_path):
    """The may-be-present fixpoint and the explicit reachable set certify count targets too."""
    from symreach.certify.dispatch import check_text
    from symreach.solvers.explicit import ExplicitEngine

    cert = tmp_path / "may.json"
    out = run("check", LOKI, "--pod", "monitoring/node-exporter@worker-b1", "--node", "worker-a1", "--count", "2",
              "--quiet", "--cert-out", str(cert))
    assert out.exit_code == 1 and "may-be-present" in out.output, out.output
    data = json.loads(cert.read_text())
    assert data["counts"] == [{"pairs": [["monitoring/node-exporter@worker-b1", "worker-a1"]], "atLeast": 2}]
    target = ("--pod", "monitoring/node-exporter@worker-b1", "--node", "worker-a1", "--count", "2")
    assert run("certify", LOKI, str(cert), *target).exit_code == 0
    inst = load_any(Path(LOKI))
    data["counts"] = []
    assert not check_text(inst, json.dumps(data))[0]
    data["counts"] = [{"pairs": [["monitoring/loki", "worker-a1"]], "atLeast": 2}]  # a pair that can be present
    assert not check_text(inst, json.dumps(data))[0]

    inst = small({"pod": "web", "node": "n0", "count": 5})
    result = ExplicitEngine().check(inst)
    assert result.verdict.value == "not-deployable"
    text = result.certificate.dumps()
    assert check_text(inst, text)[0]
    assert not check_text(inst, text.replace('"atLeast": 5', '"atLeast": 4'))[0]
