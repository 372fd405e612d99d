"""End-to-end runs of the command line: verdicts, exit codes, JSON, errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from symreach.cli import cli

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = str(ROOT / "examples" / "paper-2.6.yaml")
EXAMPLE_CAP1 = str(ROOT / "examples" / "paper-2.6-capacity1.yaml")
DUMP = str(ROOT / "examples" / "cluster-dump.yaml")


def run(*args):
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


@pytest.mark.parametrize("engine", ["explicit", "bdd", "ic3", "bmc", "auto"])
def test_check_paper_example_deployable(engine):
    out = run("check", EXAMPLE, "--engine", engine, "--quiet")
    assert out.exit_code == 0, out.output
    assert out.output.startswith("deployable")
    if engine == "explicit":
        steps = [line.split(". ", 1)[1] for line in out.output.splitlines() if line.strip()[:2] in ("1.", "2.", "3.", "4.")]
        assert steps == ["deploy a on n1 (pod default/a-1)", "deploy b on n1 (pod default/b-1)",
                         "delete a on n1 (pod default/a-1)", "deploy c on n1 (pod default/c-1)"]


@pytest.mark.parametrize("engine", ["explicit", "bdd", "ic3", "auto"])
def test_check_capacity_one_not_deployable(engine):
    out = run("check", EXAMPLE_CAP1, "--engine", engine)
    assert out.exit_code == 1, out.output
    assert out.output.startswith("not-deployable")


def test_json_is_one_object_with_the_spec_fields():
    out = run("check", EXAMPLE, "--engine", "explicit", "--json")
    data = json.loads(out.output)
    assert {"verdict", "engine", "fragment", "time_s", "trace", "reason", "stats"} <= set(data)
    assert data["verdict"] == "deployable"
    assert data["trace"][0] == {"op": "deploy", "pod": "a", "node": "n1", "binds": None, "holding": None}


def test_unknown_exits_3():
    out = run("check", EXAMPLE, "--engine", "explicit", "--max-states", "2")
    assert out.exit_code == 3
    assert out.output.startswith("unknown")


def test_malformed_file_is_one_line_with_file_field_and_line(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text(Path(EXAMPLE).read_text().replace('cpu: "2"', 'cpu: "2x"'))
    result = CliRunner().invoke(cli, ["check", str(bad)])
    assert result.exit_code == 2
    lines = [line for line in result.output.splitlines() if line]
    assert len(lines) == 1
    assert "bad.yaml:" in lines[0] and "nodes[0].capacity.cpu" in lines[0] and "'2x'" in lines[0]
    assert "Traceback" not in result.output


def test_missing_file_and_unknown_names_exit_2(tmp_path):
    assert CliRunner().invoke(cli, ["check", str(tmp_path / "nope.yaml")]).exit_code == 2
    result = CliRunner().invoke(cli, ["check", EXAMPLE, "--pod", "zz", "--node", "n1"])
    assert result.exit_code == 2 and "--pod: unknown pod type 'zz'" in result.output
    assert CliRunner().invoke(cli, ["check", EXAMPLE, "--engine", "magic"]).exit_code == 2


def test_explain_summarises_like_failed_scheduling():
    out = run("explain", EXAMPLE, "--pod", "c")
    assert "0/1 nodes are available: 1 node(s) didn't match pod affinity rules." in out.output
    assert "dynamic" in out.output
    out = run("explain", EXAMPLE, "--pod", "c", "--node", "n1", "--engine", "explicit")
    assert "deploy b on n1 as default/b-1: affinity witness a on n1" in out.output
    assert "delete default/a-1 (a) on n1" in out.output


def test_explain_names_static_obstacles_on_the_dump():
    out = run("explain", DUMP, "--pod", "payments/payments-db", "--json")
    (data,) = json.loads(out.output)["pods"]
    reasons = {n["node"]: (n["reason"], n["static"]) for n in data["nodes"]}
    assert reasons["cp-1"] == ("node(s) had untolerated taint(s)", True)
    assert data["summary"].startswith("0/6 nodes are available") or data["summary"].startswith("1/6")


def test_check_dump_with_node_selector_and_every_trace_format(tmp_path):
    from symreach.export.traces import parse_exported_trace

    traces = {}
    for suffix, fmt in [(".json", "json"), (".yaml", "yaml"), (".sh", "kubectl"), (".txt", "text")]:
        target = tmp_path / f"trace{suffix}"
        out = run("check", DUMP, "--pod", "payments/payments-api", "--node-selector", "pool=public",
                  "--engine", "ic3", "--trace-out", str(target))
        assert out.exit_code == 0, out.output
        traces[fmt] = target.read_text()
    steps = [(s["op"], s["pod"], s["node"]) for s in json.loads(traces["json"])]
    assert steps[-1] == ("deploy", "payments/payments-api", "public-c")
    for fmt in ("yaml", "kubectl"):
        assert [(s.op, s.pod, s.node) for s in parse_exported_trace(traces[fmt], fmt)] == steps
    assert "Target reached" in traces["text"]


def test_matrix_on_the_bundled_example():
    out = run("matrix", EXAMPLE)
    assert out.exit_code == 0, out.output
    assert "a" in out.output and "n1" in out.output


@pytest.mark.parametrize("engine", ["ic3", "bdd", "auto"])
def test_cert_out_then_certify(tmp_path, engine):
    """The README's flow: a not-deployable proof written by check is accepted by certify."""
    from symreach.frontends.reduction_pebbling import encode_pebbling
    from symreach.generators.dags import pyramid
    import yaml

    dag = pyramid(3)
    inst = tmp_path / "p.yaml"
    inst.write_text(yaml.safe_dump(encode_pebbling(dag.vertices, dag.edges, dag.target, 4)))
    cert = tmp_path / "inv.txt"
    assert run("check", str(inst), "--engine", engine, "--cert-out", str(cert)).exit_code == 1
    out = run("certify", str(inst), str(cert))
    assert out.exit_code == 0, out.output
    assert out.output.startswith("VALID")


def test_a_certificate_is_written_as_its_own_text(tmp_path):
    """``--cert-out`` writes ``Certificate.dumps()``, whatever form the engine returned."""
    from symreach.certify.dispatch import parse
    from symreach.cli.output import write_certificate
    from symreach.result import Result, Verdict

    text = '# symreach-sat-invariant/1\n# query: [[["a", "n"]]]\n# cone: ["a"]\n# pairs: []\n'
    target = tmp_path / "c.txt"
    write_certificate(target, Result(Verdict.NOT_DEPLOYABLE, "ic3", certificate=parse(text)))
    assert parse(target.read_text()).dumps() == parse(text).dumps()


def test_matrix_reads_kubernetes_dumps_and_agrees_with_check():
    out = run("matrix", DUMP, "--format", "json") if "--format" in run("matrix", "--help").output else None
    text = run("matrix", DUMP)
    assert text.exit_code == 0, text.output
    row = next(line for line in text.output.splitlines() if line.startswith("payments/payments-api"))
    assert row.split()[-1] == "Y"  # public-c, the last column: deployable, as `check` finds
    assert out is None or out.exit_code == 0


def test_manifest_without_kind_is_reported_as_such(tmp_path):
    """A Kubernetes object missing `kind` must not be read as a v1 instance."""
    node = tmp_path / "node.yaml"
    node.write_text("metadata:\n  name: n1\nstatus:\n  allocatable: {cpu: '1'}\n")
    result = CliRunner().invoke(cli, ["explain", str(node)])
    assert result.exit_code == 2
    assert "kind: required field is missing" in result.output


def test_pod_named_without_its_namespace_when_unambiguous():
    """``--pod payments-api`` is ``payments/payments-api``: one namespace has it."""
    short = run("check", DUMP, "--pod", "payments-api", "--node", "public-c", "--json")
    full = run("check", DUMP, "--pod", "payments/payments-api", "--node", "public-c", "--json")
    assert short.exit_code == full.exit_code == 0, short.output
    assert "payments/payments-api on public-c" in short.output
    assert run("check", DUMP, "--pod", "no-such-workload", "--node", "public-c").exit_code == 2
