"""``kubectl symreach``: a stand-in ``kubectl`` on PATH prints a recorded dump and records its arguments."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest
from tests.kubectl_stand_in import calls, make_stand_in

REPO = Path(__file__).resolve().parent.parent
DUMP = REPO / "examples" / "cluster-dump.yaml"
KINDS = ("nodes,namespaces,pods,deployments,replicasets,statefulsets,daemonsets,jobs,cronjobs,"
         "replicationcontrollers,persistentvolumes,persistentvolumeclaims,storageclasses,poddisruptionbudgets")


@pytest.fixture(scope="module")
def stand_in(tmp_path_factory):
    """A directory with ``kubectl`` (prints the dump as ``kubectl get -o json`` would) and its argument log."""
    return make_stand_in(tmp_path_factory.mktemp("kubectl"), DUMP)


@pytest.fixture
def plugin(stand_in, monkeypatch, capsys):
    """Run ``kubectl symreach ARGS`` in this process (no supervisor): (exit status, stdout, stderr, kubectl calls)."""
    monkeypatch.setenv("PATH", f"{stand_in}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("SYMREACH_NO_SUPERVISOR", "1")
    monkeypatch.setattr(sys, "stdin", sys.stdin)  # the plugin replaces it with kubectl's output

    def run(*args: str):
        from symreach.cli.kubectl_plugin import main

        calls(stand_in)
        capsys.readouterr()
        with pytest.raises(SystemExit) as done:
            main(list(args))
        out = capsys.readouterr()
        return Run(done.value.code or 0, out.out, out.err), calls(stand_in)
    return run


class Run:
    def __init__(self, returncode: int, stdout: str, stderr: str) -> None:
        self.returncode, self.stdout, self.stderr = returncode, stdout, stderr


def test_where_reads_the_cluster_once_with_the_users_context(plugin):
    proc, calls = plugin("where", "--pod", "deploy/payments-api", "--context", "prod",
                         "--kubeconfig", "/tmp/kc")
    assert proc.returncode == 0, proc.stderr
    assert calls == [["--context", "prod", "--kubeconfig", "/tmp/kc", "get", KINDS, "-A", "-o", "json"]]
    assert proc.stdout.splitlines()[0] == "payments/payments-api can ever run on 3 of 6 nodes"


def test_check_with_namespace_passes_it_to_kubectl_and_to_the_names(plugin):
    proc, calls = plugin("check", "-n", "payments", "--pod", "sts/payments-db", "--node", "general-c",
                         "-o", "json")
    assert calls == [["get", KINDS, "-n", "payments", "-o", "json"]]
    data = json.loads(proc.stdout)
    assert proc.returncode == 0 and data["target"] == "payments/payments-db on general-c"
    assert data["schema_version"] == 1 and "reading namespace payments only" in proc.stderr


def test_matrix_and_explain_answer_as_the_file_commands_do(plugin):
    from click.testing import CliRunner

    from symreach.cli import cli

    proc, calls = plugin("matrix", "-A", "--pods", "payments/*")
    expected = CliRunner().invoke(cli, ["matrix", str(DUMP), "--pods", "payments/*"]).stdout
    def untimed(text: str) -> list[str]:   # the last line is the run's own time split
        return [line for line in text.splitlines() if not line.startswith("time: ")]
    assert proc.returncode == 0 and untimed(proc.stdout) == untimed(expected) and len(calls) == 1
    proc, _ = plugin("explain", "--pod", "payments-api-3c0518f50c-0c13b", "--node", "public-c")
    assert proc.returncode == 0 and "ever deployable on public-c? deployable" in proc.stdout


def test_kubectl_failures_are_one_line_and_exit_2(plugin):
    proc, calls = plugin("check", "--context", "broken", "--pod", "x")
    assert proc.returncode == 2 and len(calls) == 1
    assert proc.stderr.strip().splitlines() == [
        f"kubectl-symreach: error: `kubectl --context broken get {KINDS} -A -o json` failed (exit 1): "
        'error: context "broken" does not exist']
    proc, _ = plugin("where", "--context", "broken", "--pod", "x", "-o", "json")
    doc = json.loads(proc.stdout)
    assert proc.returncode == 2 and doc["error"]["kind"] == "kubectl" and doc["command"] == "where"
    proc, calls = plugin("apply")
    assert proc.returncode == 2 and calls == [] and "choose from check, explain, matrix, where" in proc.stderr


def test_the_console_script_is_declared():
    text = (REPO / "pyproject.toml").read_text()
    assert 'kubectl-symreach = "symreach.cli.kubectl_plugin:main"' in text


def test_export_writes_a_script_guarded_for_the_context_it_read(plugin, tmp_path):
    script = tmp_path / "w.sh"
    proc, calls = plugin("export", "--context", "prod", "--pod", "deploy/payments-api", "--node", "public-c",
                         "--kubectl", str(script))
    assert proc.returncode == 0, proc.stderr
    assert calls == [["--context", "prod", "get", KINDS, "-A", "-o", "json"]]
    assert "\nCONTEXT=prod\n" in script.read_text() and "for context prod" in proc.stdout
