"""``symreach export --kubectl``: the witness as a guarded script, run with a stand-in kubectl that records
its arguments (issue 29 item 2: context guard, --dry-run=server, Eviction API, kubectl scale, no adoption)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from symreach.cli import cli
from tests.kubectl_stand_in import make_recorder, recorded

REPO = Path(__file__).resolve().parent.parent
PDB_LONGER = str(REPO / "examples" / "pdb-longer.yaml")
DUMP = str(REPO / "examples" / "cluster-dump.yaml")

pytestmark = pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")


@pytest.fixture
def kubectl(tmp_path):
    return make_recorder(tmp_path)


def export(*args: str) -> tuple[int, str]:
    out = CliRunner().invoke(cli, ["export", *args], catch_exceptions=False)
    return out.exit_code, out.output


def run_script(script: Path, kubectl: Path, context: str, *args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, PATH=f"{kubectl}{os.pathsep}{os.environ['PATH']}", FAKE_CONTEXT=context)
    env.pop("DRY_RUN", None)
    return subprocess.run(["bash", str(script), *args], env=env, capture_output=True, text=True, timeout=60)


def replayed(tmp_path: Path, kubectl: Path, text: str, trace) -> list[list[str]]:
    """The script reads back as ``trace``, runs against context prod, and made these changes."""
    from symreach.export.traces import parse_exported_trace

    assert parse_exported_trace(text, "kubectl") == trace
    script = tmp_path / "w.sh"
    script.write_text(text)
    proc = run_script(script, kubectl, "prod")
    assert proc.returncode == 0, proc.stderr
    return mutating(recorded(kubectl))


def eviction(namespace: str, pod: str) -> list[str]:
    return ["--context", "prod", "create", "--raw", f"/api/v1/namespaces/{namespace}/pods/{pod}/eviction", "-f", "-"]


def mutating(calls: list[dict]) -> list[list[str]]:
    verbs = ("create", "delete", "scale", "apply", "annotate")
    return [c["args"] for c in calls if any(v in c["args"] for v in verbs)]


def test_operator_witness_evicts_through_the_eviction_api(tmp_path, kubectl):
    script = tmp_path / "w.sh"
    code, out = export(PDB_LONGER, "--kubectl", str(script), "--context", "prod", "--moves", "operator")
    assert code == 0 and "3 steps for context prod" in out, out
    proc = run_script(script, kubectl, "prod")
    assert proc.returncode == 0, proc.stderr
    calls = recorded(kubectl)
    assert calls[0]["args"] == ["config", "current-context"]
    changes = mutating(calls)
    assert all(c[:2] == ["--context", "prod"] for c in changes)          # every change names the context
    assert not any("delete" in c for c in changes)                      # no plain deletion under operator moves
    evictions = [c for c in calls if "--raw" in c["args"]]
    assert len(evictions) == 1
    raw = evictions[0]["args"]
    assert raw[raw.index("--raw") + 1] == "/api/v1/namespaces/default/pods/initial-pod-0/eviction"
    body = json.loads(evictions[0]["stdin"])
    assert body == {"apiVersion": "policy/v1", "kind": "Eviction",
                    "metadata": {"name": "initial-pod-0", "namespace": "default"}}
    pods = [yaml.safe_load(c["stdin"]) for c in calls if "create" in c["args"] and c["stdin"].startswith("apiVersion")]
    assert [p["metadata"]["annotations"]["symreach.io/step"] for p in pods] == ["1", "3"]
    for pod in pods:   # never a controller's name, and owned, so no controller adopts it
        assert "name" not in pod["metadata"] and pod["metadata"]["generateName"].endswith("-symreach-")
        assert pod["metadata"]["ownerReferences"] == [{"apiVersion": "v1", "kind": "ConfigMap",
                                                       "name": "symreach-witness", "uid": "uid-1234",
                                                       "controller": True}]
    waits = [c["args"] for c in calls if "wait" in c["args"]]
    assert "pod/web-symreach-x7k2p" in waits[0] and any("--for=delete" in w for w in waits)


def test_the_guard_refuses_another_context(tmp_path, kubectl):
    script = tmp_path / "w.sh"
    assert export(PDB_LONGER, "--kubectl", str(script), "--context", "prod", "--moves", "operator")[0] == 0
    proc = run_script(script, kubectl, "staging")
    assert proc.returncode == 1
    assert "refusing to run: the current kubectl context is 'staging'; this script was exported for 'prod'" \
        in proc.stderr
    assert [c["args"] for c in recorded(kubectl)] == [["config", "current-context"]]   # nothing changed


def test_dry_run_server_sends_every_change_as_a_dry_run(tmp_path, kubectl):
    script = tmp_path / "w.sh"
    assert export(PDB_LONGER, "--kubectl", str(script), "--context", "prod", "--moves", "operator")[0] == 0
    proc = run_script(script, kubectl, "prod", "--dry-run=server")
    assert proc.returncode == 0, proc.stderr
    calls = recorded(kubectl)
    creates = [c for c in calls if "create" in c["args"] and "--raw" not in c["args"]]
    assert len(creates) == 2 and all("--dry-run=server" in c["args"] for c in creates)
    (eviction,) = [c for c in calls if "--raw" in c["args"]]
    assert json.loads(eviction["stdin"])["deleteOptions"] == {"dryRun": ["All"]}
    assert not [c for c in calls if "wait" in c["args"] or "configmap" in c["args"]]   # nothing to wait for
    assert run_script(script, kubectl, "prod", "--bogus").returncode == 2


def test_a_controllers_pod_is_evicted_then_its_controller_scaled(tmp_path, kubectl):
    from symreach.export.kubectl_script import controllers_of, kubectl_script
    from symreach.export.traces import parse_exported_trace, plan_trace
    from symreach.frontends.dispatch import load_inputs
    from symreach.result import DELETE, Step

    loaded = load_inputs([DUMP])
    names = loaded.context["initial_pod_names"]
    (node, pod), = [(n, p[0]) for (t, n), p in names.items() if t == "payments/payments-api"][:1]
    trace = [Step(DELETE, "payments/payments-api", node)]
    controllers = controllers_of(loaded.report.workloads)
    assert controllers["payments/payments-api"] == "deployment/payments-api"
    assert controllers["payments/payments-db"] == "statefulset/payments-db"
    text = kubectl_script(plan_trace(trace, loaded.instance, initial_pod_names=names), loaded.instance,
                          "affinity", "prod", True, controllers)
    changes = replayed(tmp_path, kubectl, text, trace)
    assert changes[0] == eviction("payments", pod)
    assert changes[1] == ["--context", "prod", "-n", "payments", "scale", "deployment/payments-api",
                          "--current-replicas=3", "--replicas=2"]
    assert len(changes) == 2


def test_the_context_defaults_to_kubectls_and_is_required_without_it(tmp_path, kubectl, monkeypatch):
    script = tmp_path / "w.sh"
    monkeypatch.setenv("PATH", f"{kubectl}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("FAKE_CONTEXT", "kind-dev")
    code, out = export(PDB_LONGER, "--kubectl", str(script))
    assert code == 0 and "for context kind-dev" in out and "CONTEXT=kind-dev" in script.read_text()
    monkeypatch.setenv("PATH", str(Path(sys.executable).parent))   # python, no kubectl
    code, out = export(PDB_LONGER, "--kubectl", str(tmp_path / "x.sh"))
    assert code == 2 and "kubectl is not on PATH, so name the cluster's context: --context NAME" in out
    assert not (tmp_path / "x.sh").exists()


def test_paper_moves_delete_and_the_script_reads_back(tmp_path, kubectl):
    from symreach.export.traces import parse_exported_trace

    script = tmp_path / "w.sh"
    code, out = export(str(REPO / "examples" / "paper-2.6.yaml"), "--kubectl", str(script), "--context", "c",
                       "-o", "json")
    doc = json.loads(out)
    assert code == 0 and doc["format"] == "kubectl" and doc["sizes"]["steps"] == 4
    steps = parse_exported_trace(script.read_text(), "kubectl")
    assert [s.op for s in steps] == ["deploy", "deploy", "delete", "deploy"]
    proc = run_script(script, kubectl, "c")
    assert proc.returncode == 0, proc.stderr
    deletes = [c for c in mutating(recorded(kubectl)) if "delete" in c]
    assert deletes == [["--context", "c", "-n", "default", "delete", "pod", "a-symreach-x7k2p", "--wait=true"]]


def test_operator_actions_scale_and_replace_through_the_controller(tmp_path, kubectl):
    """The witness in operator terms: an eviction the controller replaces (no scale-down), a scale up
    whose pod must land on the step's node, and a scale back down that removes that pod."""
    from symreach.export.kubectl_script import kubectl_script
    from symreach.export.traces import parse_exported_trace, plan_trace
    from symreach.frontends.dispatch import load_inputs
    from symreach.result import DELETE, DEPLOY, Step

    loaded = load_inputs([DUMP])
    names = loaded.context["initial_pod_names"]
    api = "payments/payments-api"
    node, pod = next((n, p[0]) for (t, n), p in names.items() if t == api)
    trace = [Step(DELETE, api, node), Step(DEPLOY, api, node), Step(DEPLOY, api, "public-c"),
             Step(DELETE, api, "public-c")]
    planned = plan_trace(trace, loaded.instance, initial_pod_names=names)
    owner = "Deployment payments/payments-api"
    actions = [{"step": 1, "action": "evict", "pod": planned[0].qualified, "node": node, "controller": owner},
               {"step": 2, "action": "replace", "pod": planned[1].qualified, "node": node, "controller": owner,
                "replaces": planned[0].qualified},
               {"step": 3, "action": "scale", "pod": planned[2].qualified, "node": "public-c", "controller": owner,
                "replicas": {"from": 3, "to": 4}},
               {"step": 4, "action": "scale", "pod": planned[3].qualified, "node": "public-c", "controller": owner,
                "replicas": {"from": 4, "to": 3}}]
    text = kubectl_script(planned, loaded.instance, "affinity", "prod", True,
                          {api: "deployment/payments-api"}, actions)
    changes = replayed(tmp_path, kubectl, text, trace)
    assert changes[0] == eviction("payments", pod)
    assert changes[1] == ["--context", "prod", "-n", "payments", "scale", "deployment/payments-api",
                          "--current-replicas=3", "--replicas=4"]
    # the pod the scale-up made (the controller's newest on public-c) goes first when scaling back down
    assert changes[2] == ["--context", "prod", "-n", "payments", "annotate", "pod/new-pod-5",  # 6th look
                          "controller.kubernetes.io/pod-deletion-cost=-2147483647", "--overwrite"]
    assert changes[3] == ["--context", "prod", "-n", "payments", "scale", "deployment/payments-api",
                          "--current-replicas=4", "--replicas=3"]
    assert len(changes) == 4   # no pod created by hand, no scale-down after the replaced eviction


def test_keep_replicas_witness_scales_the_deployment_up_then_down(tmp_path, kubectl):
    """--keep-replicas (report.operator_steps): the web pod that must leave n1 goes by scaling web up by one
    (the new pod checked on n2) and back down with that pod's lowest deletion cost, then batch is created."""
    from tests.test_moves_replicas import doc

    instance = tmp_path / "keep.yaml"
    instance.write_text(yaml.safe_dump(doc()))
    script = tmp_path / "w.sh"
    code, out = export(str(instance), "--keep-replicas", "--kubectl", str(script), "--context", "prod")
    assert code == 0, out
    proc = run_script(script, kubectl, "prod")
    assert proc.returncode == 0, proc.stderr
    changes = mutating(recorded(kubectl))
    scale = ["--context", "prod", "-n", "shop", "scale", "deployment/web"]
    assert changes[0] == [*scale, "--current-replicas=2", "--replicas=3"]
    assert changes[1][4] == "annotate" and changes[2] == [*scale, "--current-replicas=3", "--replicas=2"]
    assert changes[3][2:6] == ["-n", "default", "create", "configmap"]   # batch's owner, then batch itself
    assert changes[4][:3] == ["--context", "prod", "create"] and len(changes) == 5
