"""Inputs as a platform engineer gives them: several files, directories, standard input, pipes;
warnings for everything not modelled; ``--strict``; the size limit; pathological files refused fast."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from symreach.cli.main import cli
from symreach.errors import InputError
from symreach.frontends.dispatch import Source, load_inputs, source_kind
from benchmarks.shared_data import K8S_DIR

ROOT = Path(__file__).resolve().parents[1]
DUMP = ROOT / "examples" / "cluster-dump.yaml"
PAPER = ROOT / "examples" / "paper-2.6.yaml"
# Generous: only a safety net so that a regression cannot hang the suite; tests assert behaviour.
SAFETY_TIMEOUT_S = 300


def run(*args, stdin=None):
    return CliRunner().invoke(cli, [str(a) for a in args], input=stdin, catch_exceptions=False)


def node(name, zone="a"):
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name,
                                                  "topology.kubernetes.io/zone": zone}},
            "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}}}


def deployment(name, ns="default", **spec):
    template_spec = {"containers": [{"name": "c", "image": "i",
                                     "resources": {"requests": {"cpu": "100m"}}}], **spec}
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name, "namespace": ns},
            "spec": {"selector": {"matchLabels": {"app": name}},
                     "template": {"metadata": {"labels": {"app": name}}, "spec": template_spec}}}


def dump(*objects) -> str:
    return yaml.safe_dump_all(objects, sort_keys=False)


def cli_env():
    return {**os.environ, "PYTHONPATH": str(ROOT)}


CLI = [sys.executable, "-c", "from symreach.cli import main; main()"]


# ---- several inputs -----------------------------------------------------------------------------------

def test_directory_of_manifests_plus_a_nodes_file(tmp_path):
    manifests = tmp_path / "manifests"
    (manifests / "shop").mkdir(parents=True)
    (manifests / "web.yaml").write_text(dump(deployment("web")))
    (manifests / "shop" / "db.json").write_text(json.dumps(deployment("db", "shop")))
    (manifests / "README.md").write_text("not read")
    nodes = tmp_path / "nodes.yaml"
    nodes.write_text(dump(node("n1"), node("n2")))
    out = run("check", manifests, nodes, "--pod", "shop/db", "--node", "n2", "--quiet")
    assert out.exit_code == 0, out.output
    loaded = load_inputs([manifests, nodes])
    assert loaded.names == [str(manifests / "shop" / "db.json"), str(manifests / "web.yaml"), str(nodes)]
    assert {t.name for t in loaded.instance.pod_types} == {"default/web", "shop/db"}
    assert loaded.kind == "kubernetes" and len(loaded.instance.nodes) == 2


def test_errors_name_the_file_of_the_object(tmp_path):
    (tmp_path / "a.yaml").write_text(dump(node("n1")))
    bad = deployment("web")
    del bad["spec"]["template"]["spec"]["containers"]
    (tmp_path / "b.yaml").write_text(dump(bad))
    with pytest.raises(InputError) as err:
        load_inputs([tmp_path])
    assert str(err.value).startswith(f"{tmp_path / 'b.yaml'}:") and "document 1 (Deployment default/web)" in str(err.value)


def test_standard_input_like_kubectl_get(tmp_path):
    out = run("check", "-", "--pod", "payments/payments-api", "--node-selector", "pool=public", "--quiet",
              stdin=DUMP.read_text())
    assert out.exit_code == 0 and out.stdout.startswith("deployable"), out.output


def test_kubectl_get_piped_into_a_real_process():
    """``kubectl get ... -o yaml | symreach check - --pod NS/NAME --node N``, as the README shows it."""
    proc = subprocess.run(CLI + ["check", "-", "--pod", "payments/payments-api", "--node", "public-c",
                                 "--quiet", "--json"],
                          input=DUMP.read_bytes(), capture_output=True, env=cli_env(), timeout=SAFETY_TIMEOUT_S)
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert data["verdict"] == "deployable" and data["warnings"] == []


def test_named_pipe_is_read_once(tmp_path):
    """A FIFO is opened once: sniffing and loading share one read, so the writer's data is enough."""
    fifo = tmp_path / "dump.fifo"
    os.mkfifo(fifo)
    writer = threading.Thread(target=lambda: fifo.write_bytes(DUMP.read_bytes()), daemon=True)
    writer.start()
    proc = subprocess.run(CLI + ["check", str(fifo), "--pod", "payments/payments-api", "--node", "public-c",
                                 "--quiet"], capture_output=True, env=cli_env(), timeout=SAFETY_TIMEOUT_S)
    writer.join(timeout=SAFETY_TIMEOUT_S)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith(b"deployable")


def test_matrix_and_explain_take_several_inputs(tmp_path):
    (tmp_path / "nodes.yaml").write_text(dump(node("n1")))
    (tmp_path / "web.yaml").write_text(dump(deployment("web")))
    out = run("matrix", tmp_path / "nodes.yaml", tmp_path / "web.yaml", "--format", "json")
    assert out.exit_code == 0 and json.loads(out.stdout)["cells"][0]["verdict"] == "deployable"
    out = run("explain", tmp_path, "--pod", "web")
    assert out.exit_code == 0 and "n1" in out.stdout


def test_a_v1_instance_must_be_alone(tmp_path):
    (tmp_path / "nodes.yaml").write_text(dump(node("n1")))
    out = run("check", PAPER, tmp_path / "nodes.yaml")
    assert out.exit_code == 2 and "must be the only input" in out.output
    assert run("check", PAPER, "--quiet").exit_code == 0


def test_missing_input_and_empty_directory(tmp_path):
    assert run("check", tmp_path / "nope.yaml").exit_code == 2
    out = run("check", tmp_path)
    assert out.exit_code == 2 and "no .yaml, .yml, .json file" in out.output


# ---- size and pathological inputs ------------------------------------------------------------------------

def test_max_input_mb(tmp_path):
    big = tmp_path / "big.yaml"
    big.write_text(DUMP.read_text() + "#" * (1024 * 1024))
    out = run("check", big, "--pod", "payments/payments-api", "--node", "public-c", "--max-input-mb", "1")
    assert out.exit_code == 2 and "too large" in out.output and "--max-input-mb" in out.output
    assert run("check", big, "--pod", "payments/payments-api", "--node", "public-c", "--quiet").exit_code == 0


@pytest.mark.parametrize("text", [
    "[" * 10_000 + "]" * 10_000,
    "apiVersion: v1\nkind: ConfigMap\ndata: " + "{a: " * 10_000 + "1" + "}" * 10_000,
    '{"apiVersion": "v1", "x": ' + "[" * 10_000 + "]" * 10_000 + "}",
])
def test_deep_nesting_is_refused_without_a_pure_python_parse(tmp_path, text):
    """Sniffing scans lines (no YAML parser), so a 10,000-deep document reaches the real reader at once."""
    path = tmp_path / ("deep.json" if text.startswith("{\"") else "deep.yaml")
    path.write_text(text)
    out = run("check", path, "--pod", "a", "--node", "b")
    assert out.exit_code == 2 and "nested too deeply" in out.output


def test_sniffing_reads_only_top_level_lines():
    assert source_kind(Source("x.yaml", "# c\n---\nversion: 1\nnodes: []\n")) == "v1"
    assert source_kind(Source("x.yaml", "items:\n- a: 1\napiVersion: v1\n")) == "kubernetes"
    assert source_kind(Source("x.yaml", "'kind': Node\n")) == "kubernetes"
    assert source_kind(Source("x.yaml", "# nothing\n---\n")) == "empty"
    assert source_kind(Source("x.yaml", "---\n{\n  apiVersion: v1,\n  kind: Pod\n}\n")) == "kubernetes"
    assert source_kind(Source("x.yaml", "{version: 1}\n")) == "v1"
    assert source_kind(Source("<stdin>", '{"version": 1}')) == "v1"
    assert source_kind(Source("<stdin>", '{"kind": "List", "items": []}')) == "kubernetes"
    assert source_kind(Source("x.yaml", "a: 1\rapiVersion: v1\r")) == "kubernetes"  # lone CR line breaks
    assert source_kind(Source("x.yaml", "a: 1\r\nversion: 1\r\n")) == "v1"


def test_json_sniffing_stops_at_api_version_and_agrees_with_a_full_parse():
    """kubectl writes ``apiVersion`` first: a big List is not parsed just to be sniffed."""
    from symreach.frontends import dispatch

    # Everything after apiVersion is unparseable: a full parse would give up and call it "v1".
    assert source_kind(Source("x.json", '{"apiVersion": "v1", "items": [' + "{" * 5)) == "kubernetes"
    for text in ('{"version": 1, "nodes": [{"a": {"b": [1, 2]}}], "kind": "x"}', '{"kind": "Pod", "version": 1}',
                 ' {\n "a" : "x\\"y", "b": {"apiVersion": 1}}', "{}", '{"a": 1', "[1]", '{"a" 1}', '{"a": 1,}'):
        try:
            parsed = json.loads(text)
            expected = set(parsed) if isinstance(parsed, dict) else set()
        except ValueError:
            expected = set()
        assert dispatch._json_top_keys(text) == expected, text


# ---- shared fixtures ---------------------------------------------------------------------------------

@pytest.mark.skipif(not K8S_DIR.is_dir(), reason="shared Kubernetes fixtures not available")
def test_every_shared_kubernetes_object_file_loads():
    """Every file of ../shared/data/k8s that is a Kubernetes object loads; the two kube-scheduler-simulator
    templates carry no ``kind`` (kubectl refuses them too), and the scheduler_perf config is no object."""
    refused = {"ksim-node.yaml", "ksim-pod.yaml", "k8s-perf-affinity-performance-config.excerpt.yaml"}
    files = sorted(p for p in K8S_DIR.iterdir() if p.suffix == ".yaml")
    for path in files:
        if path.name in refused:
            with pytest.raises(InputError):
                load_inputs([path])
        else:
            instance = load_inputs([path]).instance
            assert instance.pod_types or instance.nodes, path.name
    nodes = K8S_DIR / "k8s-perf-node-default.yaml"
    loaded = load_inputs([p for p in files if p.name not in refused])  # the whole folder with its node, at once
    assert len(loaded.instance.nodes) == 1 and len(loaded.instance.pod_types) == len(files) - len(refused) - 1
    assert str(nodes) in loaded.names
