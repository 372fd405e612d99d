"""Traces name pods (issue 26 item 5): every step names the pod it creates or deletes,
the same way in every export format and in ``check``'s text."""

from __future__ import annotations

import json
import re
from pathlib import Path

from click.testing import CliRunner

from symreach.cli.main import cli
from symreach.export import export_trace, parse_exported_trace, plan_trace
from symreach.export.traces import step_names
from symreach.frontends.kubernetes import load_kubernetes_with_report
from symreach.loader import load_text
from symreach.report.narrate import narrate
from symreach.result import DELETE, DEPLOY, Step

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
UNNAMED = """
version: 1
nodes: [{name: n1, capacity: {cpu: "4"}}, {name: n2, capacity: {cpu: "4"}}]
podTypes:
  - {name: web, requests: {cpu: "1"}}
  - {name: db, requests: {cpu: "1"}}
initial: [{pod: web, node: n1, count: 2}, {pod: db, node: n2}]
"""
TRACE = [Step(DELETE, "web", "n1"), Step(DEPLOY, "web", "n2"), Step(DELETE, "web", "n1"),
         Step(DELETE, "web", "n2"), Step(DELETE, "db", "n2")]
NAMES = ["default/web-initial-2", "default/web-1", "default/web-initial-1", "default/web-1",
         "default/db-initial-1"]


def _names_in(text: str, fmt: str) -> list[str]:
    if fmt == "json":
        return [item["name"] for item in json.loads(text)]
    if fmt == "text":
        return re.findall(r"^\s*\d+\. (?:delete (\S+) \(|deploy \S+ on \S+ as (\S+))", text, re.M)
    return re.findall(r"^# step \d+: \S+ \S+ on \S+ \(pod (\S+)\)$", text, re.M)


def test_unnamed_initial_pods_get_deterministic_stand_ins_in_every_format():
    inst = load_text(UNNAMED)
    assert step_names(TRACE, inst) == NAMES
    for fmt in ("json", "yaml", "kubectl", "text"):
        found = _names_in(export_trace(TRACE, inst, fmt), fmt)
        flat = ["".join(x) if isinstance(x, tuple) else x for x in found]
        assert flat == NAMES, fmt
    # a stand-in is never used as a real name: kubectl still deletes it by node and labels
    script = export_trace(TRACE, inst, "kubectl")
    assert "kubectl delete pod -n default web-initial" not in script
    assert parse_exported_trace(script, "kubectl") == TRACE
    assert parse_exported_trace(export_trace(TRACE, inst, "yaml"), "yaml") == TRACE


def test_dump_pods_keep_their_real_names_everywhere(tmp_path):
    inst, report = load_kubernetes_with_report(EXAMPLES / "cluster-dump.yaml")
    trace = [Step(DELETE, "shop/checkout-web", "general-c"), Step(DEPLOY, "payments/payments-db", "general-c"),
             Step(DELETE, "payments/payments-db", "general-c")]
    real = report.initial_pod_names[("shop/checkout-web", "general-c")][0]
    want = [f"shop/{real}", "payments/payments-db-1", "payments/payments-db-1"]
    assert [p.qualified for p in plan_trace(trace, inst, initial_pod_names=report.initial_pod_names)] == want
    for fmt in ("json", "yaml", "kubectl", "text"):
        text = export_trace(trace, inst, fmt, initial_pod_names=report.initial_pod_names)
        flat = ["".join(x) if isinstance(x, tuple) else x for x in _names_in(text, fmt)]
        assert flat == want, fmt


def test_check_text_names_the_pods_as_the_trace_file_does(tmp_path):
    path = tmp_path / "in.yaml"
    path.write_text(UNNAMED + "query: {pod: web, node: n2}\n")
    out = CliRunner().invoke(cli, ["check", str(path), "--engine", "explicit", "--trace-out",
                                   str(tmp_path / "t.json")])
    assert out.exit_code == 0, out.output
    shown = re.findall(r"^\s+\d+\. .* \(pod (\S+)\)$", out.output, re.M)
    stored = [item["name"] for item in json.loads((tmp_path / "t.json").read_text())]
    assert shown == stored and len(shown) >= 1


def test_explain_narration_names_the_pods_check_names():
    """``explain --node`` narrates the same steps as ``check`` with the same pod names: the dump's
    real names for the pods it deletes, the trace files' names for the pods it creates."""
    dump = str(EXAMPLES / "cluster-dump.yaml")
    target = ["--pod", "payments/payments-db-proxy", "--node", "general-c"]
    checked = CliRunner().invoke(cli, ["check", dump, *target])
    assert checked.exit_code == 0, checked.output
    in_check = [(op, pod, node, name) for op, pod, node, name in
                re.findall(r"^\s+\d+\. (delete|deploy) (\S+) on (\S+) \(pod (\S+)\)$", checked.output, re.M)]
    explained = CliRunner().invoke(cli, ["explain", dump, *target])
    assert explained.exit_code == 0, explained.output
    in_explain = []
    for line in re.findall(r"^\s+\d+\. ((?:delete|deploy) .*)$", explained.output, re.M):
        gone = re.fullmatch(r"delete (\S+) \((\S+)\) on (\S+)", line)
        made = re.fullmatch(r"deploy (\S+) on (\S+) as (\S+)(?:: .*)?", line)
        assert gone or made, line
        in_explain.append(("delete", gone[2], gone[3], gone[1]) if gone else ("deploy", *made.groups()))
    assert in_explain == in_check and len(in_check) == 4
    deleted = [name for op, _, _, name in in_check if op == "delete"]
    assert deleted == ["shop/checkout-web-475f98d8c6-9f520", "shop/recommendations-4f176d4854-7070d"]
    assert "payments/payments-db-proxy-1" in [name for op, _, _, name in in_check if op == "deploy"]


def test_narrate_without_names_names_pod_types():
    inst = load_text(UNNAMED)
    assert narrate(inst, TRACE[:2]) == ["delete web on n1", "deploy web on n2"]
    assert narrate(inst, TRACE[:2], NAMES[:2]) == ["delete default/web-initial-2 (web) on n1",
                                                    "deploy web on n2 as default/web-1"]
