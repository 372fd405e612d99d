"""Witness traces exported as JSON, YAML streams, kubectl scripts and text, and parsed back."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from symreach import semantics
from symreach.export import FORMATS, export_trace, parse_exported_trace, plan_trace, pod_manifest
from symreach.export.traces import PAUSE_IMAGE, TYPE_ANNOTATION, pinned_node
from symreach.frontends.kubernetes import kubernetes_to_v1, load_kubernetes_with_report
from symreach.loader import load_instance, load_text
from symreach.result import DELETE, DEPLOY, Step
from symreach.solvers.explicit import ExplicitEngine

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"

CLUSTER_WITNESS = (
    Step(DELETE, "shop/checkout-web", "general-c"),
    Step(DELETE, "shop/recommendations", "general-c"),
    Step(DEPLOY, "payments/payments-db", "general-c"),
    Step(DEPLOY, "payments/payments-db-proxy", "general-c"),
    Step(DELETE, "payments/payments-db", "general-c"),
    Step(DEPLOY, "payments/payments-cache", "general-c"),
    Step(DEPLOY, "payments/payments-api", "public-c"),
)


@pytest.fixture(scope="module")
def paper():
    instance = load_instance(EXAMPLES / "paper-2.6.yaml")
    result = ExplicitEngine().check(instance)
    return instance, result.trace


@pytest.fixture(scope="module")
def cluster():
    instance, report = load_kubernetes_with_report(EXAMPLES / "cluster-dump.yaml")
    return instance, report


def test_paper_examples_answers(paper):
    instance, trace = paper
    assert list(trace) == [Step(DEPLOY, "a", "n1"), Step(DEPLOY, "b", "n1"), Step(DELETE, "a", "n1"),
                           Step(DEPLOY, "c", "n1")]
    blocked = load_instance(EXAMPLES / "paper-2.6-capacity1.yaml")
    assert ExplicitEngine().check(blocked).verdict.value == "not-deployable"


@pytest.mark.parametrize("fmt", ["json", "yaml", "kubectl"])
def test_round_trip_paper(paper, fmt):
    instance, trace = paper
    text = export_trace(trace, instance, fmt)
    assert parse_exported_trace(text, fmt) == list(trace)


@pytest.mark.parametrize("fmt", ["json", "yaml", "kubectl"])
@pytest.mark.parametrize("named", [True, False])
def test_round_trip_cluster(cluster, fmt, named):
    instance, report = cluster
    names = report.initial_pod_names if named else None
    text = export_trace(CLUSTER_WITNESS, instance, fmt, initial_pod_names=names)
    assert parse_exported_trace(text, fmt) == list(CLUSTER_WITNESS)


def test_json_format_is_the_cli_trace(paper):
    instance, trace = paper
    exported = json.loads(export_trace(trace, instance, "json"))
    assert [{k: v for k, v in item.items() if k != "name"} for item in exported] == [s.to_json() for s in trace]
    assert [item["name"] for item in exported] == ["default/a-1", "default/b-1", "default/a-1", "default/c-1"]


def test_kubectl_script_commands(cluster):
    instance, report = cluster
    script = export_trace(CLUSTER_WITNESS, instance, "kubectl", initial_pod_names=report.initial_pod_names)
    lines = script.splitlines()
    assert lines[0] == "#!/usr/bin/env bash" and "set -euo pipefail" in lines
    deletes = [line for line in lines if line.startswith("kubectl delete")]
    checkout = report.initial_pod_names[("shop/checkout-web", "general-c")][0]
    assert deletes == [f"kubectl delete pod -n shop {checkout} --wait=true",
                       "kubectl delete pod -n shop " + report.initial_pod_names[("shop/recommendations", "general-c")][0]
                       + " --wait=true",
                       "kubectl delete pod -n payments payments-db-1 --wait=true"]  # created in step 3
    assert script.count("kubectl apply -f - <<'EOF'") == 4
    assert "kubectl wait --for=condition=PodScheduled --timeout=120s -n payments pod/payments-api-1" in script


def test_kubectl_script_deletes_unnamed_initial_pods_by_node_and_labels(cluster):
    instance, _ = cluster
    script = export_trace(CLUSTER_WITNESS[:1], instance, "kubectl")
    assert ('kubectl delete -n shop --wait=true "$(kubectl get pods -n shop --field-selector '
            "spec.nodeName=general-c -l app=checkout-web -o name | head -n 1)\"") in script


def test_kubectl_script_is_valid_bash(tmp_path, cluster):
    import shutil
    import subprocess

    if shutil.which("bash") is None:
        pytest.skip("no bash")
    instance, report = cluster
    path = tmp_path / "replay.sh"
    path.write_text(export_trace(CLUSTER_WITNESS, instance, "kubectl", initial_pod_names=report.initial_pod_names))
    subprocess.run(["bash", "-n", str(path)], check=True)


def test_yaml_stream_documents(cluster):
    instance, report = cluster
    text = export_trace(CLUSTER_WITNESS, instance, "yaml", initial_pod_names=report.initial_pod_names)
    docs = list(yaml.safe_load_all(text))
    # kubectl apply -f accepts it: only Pods, deletions are comment-only (empty) documents
    assert [d and d["kind"] for d in docs] == [None, None, "Pod", "Pod", None, "Pod", "Pod"]
    assert "&id" not in text and "*id" not in text  # no YAML anchors
    chunks = text.split("\n---\n")[1:]
    assert "# step 5: delete payments/payments-db on general-c (pod payments/payments-db-1)" in chunks[4]
    assert "kubectl delete pod -n payments payments-db-1 --wait=true" in chunks[4]
    assert "(running from the start)" in chunks[0] and "(running from the start)" not in chunks[4]
    assert [d["metadata"]["name"] for d in docs if d and d["kind"] == "Pod"] == [
        "payments-db-1", "payments-db-proxy-1", "payments-cache-1", "payments-api-1"]


def test_manifest_rebuilds_the_pod_spec(cluster):
    instance, _ = cluster
    api = instance.pod_types[instance.type_index("payments/payments-api")]
    manifest = pod_manifest(api, "payments-api-1", "public-c")
    assert manifest["metadata"]["namespace"] == "payments"
    assert manifest["metadata"]["labels"] == dict(api.labels)
    assert manifest["metadata"]["annotations"][TYPE_ANNOTATION] == "payments/payments-api"
    (container,) = manifest["spec"]["containers"]
    assert container["name"] == "main" and container["image"] == PAUSE_IMAGE
    assert container["resources"] == {"requests": {"cpu": "500m", "memory": "512Mi"}}
    assert manifest["spec"]["tolerations"] == [{"effect": "NoSchedule", "key": "pool", "operator": "Equal",
                                                "value": "public"}]
    affinity = manifest["spec"]["affinity"]
    assert affinity["podAffinity"] == _plain(api.manifest["affinity"]["podAffinity"])
    assert affinity["podAntiAffinity"] == _plain(api.manifest["affinity"]["podAntiAffinity"])
    assert pinned_node(manifest) == "public-c"
    assert "nodeName" not in manifest["spec"]
    pinned = pod_manifest(api, "payments-api-1", "public-c", pin="nodeName")
    assert pinned["spec"]["nodeName"] == "public-c" and "nodeAffinity" not in pinned["spec"]["affinity"]


def test_pin_is_anded_into_existing_node_affinity(cluster):
    instance, _ = cluster
    cache = instance.pod_types[instance.type_index("payments/payments-cache")]
    terms = pod_manifest(cache, "c-1", "general-c")["spec"]["affinity"]["nodeAffinity"][
        "requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"]
    assert terms == [{"matchExpressions": [{"key": "pool", "operator": "In", "values": ["general"]}],
                      "matchFields": [{"key": "metadata.name", "operator": "In", "values": ["general-c"]}]}]


def test_extended_resources_ports_and_spread():
    instance = load_text("""
version: 1
nodes: [{name: n1, labels: {zone: a}, capacity: {cpu: "4", nvidia.com/gpu: 1, pods: 10}}]
podTypes:
  - name: trainer
    labels: {app: trainer}
    requests: {cpu: 250m, nvidia.com/gpu: 1}
    hostPorts: [{port: 9000}]
    topologySpreadConstraints:
      - {maxSkew: 1, topologyKey: zone, whenUnsatisfiable: DoNotSchedule, labelSelector: {matchLabels: {app: trainer}}}
""")
    manifest = pod_manifest(instance.pod_types[0], "trainer-1", "n1")
    (container,) = manifest["spec"]["containers"]
    assert container["resources"] == {"requests": {"cpu": "250m", "nvidia.com/gpu": 1},
                                      "limits": {"nvidia.com/gpu": 1}}
    assert container["ports"] == [{"containerPort": 9000, "hostPort": 9000, "protocol": "TCP"}]
    # Honor would shrink the spread's eligible nodes to the pinned node.
    assert manifest["spec"]["topologySpreadConstraints"][0]["nodeAffinityPolicy"] == "Ignore"
    assert instance.pod_types[0].manifest["topologySpreadConstraints"][0].get("nodeAffinityPolicy") is None


def test_exported_pods_read_back_as_the_same_types(cluster):
    """A manifest fed to the Kubernetes front end gives the type it was made from (plus the pin)."""
    instance, _ = cluster
    text = export_trace(CLUSTER_WITNESS, instance, "yaml", pin="nodeName")
    pods = [d for d in yaml.safe_load_all(text) if d and d["kind"] == "Pod"]
    doc, _ = kubernetes_to_v1(pods, "replay.yaml")
    for body in doc["podTypes"]:
        original = instance.pod_types[instance.type_index(f"{body['namespace']}/{body['name'].split('/')[1].rsplit('-', 1)[0]}")]
        fields = {k: v for k, v in body.items() if k != "name"}
        for key in ("labels", "requests", "tolerations", "affinity", "nodeSelector"):
            expected = original.manifest.get(key)
            got = fields.get(key)
            if key == "requests":
                assert {r: v for r, v in got.items()} == {r: v for r, v in original.manifest[key].items()}
            elif expected is None:
                assert got is None, key
            else:
                assert json.loads(json.dumps(got)) == json.loads(json.dumps(_plain(expected))), key


def _plain(value):
    from symreach.export.traces import plain

    return plain(value)


def test_names_are_unique_and_avoid_initial_names(paper):
    instance, _ = paper
    trace = [Step(DEPLOY, "a", "n1"), Step(DELETE, "a", "n1"), Step(DEPLOY, "a", "n1"), Step(DEPLOY, "b", "n1")]
    planned = plan_trace(trace, instance)
    assert [p.pod_name for p in planned] == ["a-1", "a-1", "a-2", "b-1"]
    instance = load_text("""
version: 1
nodes: [{name: n1, capacity: {cpu: "4"}}]
podTypes: [{name: shop/web, namespace: shop, requests: {cpu: "1"}}]
initial: [{pod: shop/web, node: n1, count: 2}]
""")
    planned = plan_trace([Step(DEPLOY, "shop/web", "n1"), Step(DELETE, "shop/web", "n1"),
                          Step(DELETE, "shop/web", "n1"), Step(DELETE, "shop/web", "n1")], instance,
                         initial_pod_names={("shop/web", "n1"): ["web-1"]})
    assert [(p.pod_name, p.from_initial) for p in planned] == [
        ("web-2", False), ("web-2", False), (None, True), ("web-1", True)]
    with pytest.raises(ValueError, match="none runs there"):
        plan_trace([Step(DELETE, "shop/web", "n1")] * 3, instance)


def test_text_narration(cluster):
    instance, report = cluster
    text = export_trace(CLUSTER_WITNESS, instance, "text", initial_pod_names=report.initial_pod_names)
    assert text.startswith("Witness: 7 steps")
    assert "deploy payments/payments-db-proxy on general-c as payments/payments-db-proxy-1; " \
           "its pod affinity is met by payments/payments-db on general-c" in text
    assert "general-c now uses cpu 1.5/1.93" in text
    assert text.rstrip().endswith("Target reached: payments/payments-api runs on public-c.")


def test_every_format_exports(paper):
    instance, trace = paper
    for fmt in FORMATS:
        assert export_trace(trace, instance, fmt).endswith("\n")
    with pytest.raises(ValueError):
        export_trace(trace, instance, "xml")
    with pytest.raises(ValueError):
        parse_exported_trace("", "text")


def test_parser_rejects_a_script_whose_comment_disagrees(paper):
    instance, trace = paper
    script = export_trace(trace, instance, "kubectl").replace("# step 1: deploy a on n1", "# step 1: deploy b on n1")
    with pytest.raises(ValueError, match="step comment says"):
        parse_exported_trace(script, "kubectl")


def test_unknown_names_in_a_trace_are_reported(paper):
    instance, _ = paper
    with pytest.raises(ValueError, match="pod type 'zz'"):
        export_trace([Step(DEPLOY, "zz", "n1")], instance, "yaml")
    with pytest.raises(ValueError, match="node 'n9'"):
        export_trace([Step(DEPLOY, "a", "n9")], instance, "kubectl")


def test_exported_trace_replays(cluster):
    instance, report = cluster
    for fmt in ("yaml", "kubectl"):
        steps = parse_exported_trace(export_trace(CLUSTER_WITNESS, instance, fmt), fmt)
        semantics.replay(instance, steps)
