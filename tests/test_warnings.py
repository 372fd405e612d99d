"""Nothing hidden: every skipped kind, dropped object and unmodelled feature is a warning line on
stderr and an entry under ``warnings`` in ``--json``; ``--strict`` refuses the input instead."""

from __future__ import annotations

import json

import pytest

from symreach.frontends.dispatch import Source, load_kubernetes_sources
from symreach.report.warnings import warning_groups
from tests.test_inputs import deployment, dump, node, run

ES = {"apiVersion": "elasticsearch.k8s.elastic.co/v1", "kind": "Elasticsearch",
      "metadata": {"name": "quickstart", "namespace": "logs"}, "spec": {"version": "8.1.0"}}
SERVICE = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "web"}, "spec": {"ports": [{"port": 80}]}}
LIMITS = {"apiVersion": "v1", "kind": "LimitRange", "metadata": {"name": "defaults", "namespace": "default"},
          "spec": {"limits": [{"type": "Container", "defaultRequest": {"cpu": "1"}}]}}


def bare_pod(name, node_name=None, **spec):
    body = {"containers": [{"name": "c", "image": "i"}], **spec}
    if node_name:
        body["nodeName"] = node_name
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default"}, "spec": body}


def groups_of(*objects):
    _, report = load_kubernetes_sources([Source("d.yaml", dump(*objects))])
    return {g.category: g for g in warning_groups(report)}


def write(tmp_path, *objects):
    path = tmp_path / "in.yaml"
    path.write_text(dump(node("n1"), *objects))
    return path


def test_skipped_kinds_are_counted():
    groups = groups_of(node("n1"), SERVICE, SERVICE | {"metadata": {"name": "db"}})
    assert groups["skipped kinds"].messages == ["2 Service (no effect on scheduling)"]


def test_custom_resource_is_named_and_a_query_about_its_pods_says_so(tmp_path):
    groups = groups_of(node("n1"), ES)
    (message,) = groups["custom resources not modelled"].messages
    assert message.startswith("Elasticsearch logs/quickstart (elasticsearch.k8s.elastic.co/v1)")
    path = write(tmp_path, ES, deployment("web"))
    out = run("check", path, "--pod", "logs/quickstart-es-default", "--node", "n1")
    assert out.exit_code == 2
    assert "would be created by the custom resource Elasticsearch logs/quickstart" in out.output
    assert "unknown pod type" in out.output


def test_unmodelled_kinds_say_what_is_not_applied():
    groups = groups_of(node("n1"), LIMITS)
    assert "default requests" in groups["kinds not modelled"].messages[0]


def test_pod_on_a_node_not_in_the_input():
    groups = groups_of(node("n1"), bare_pod("p", "gone"))
    assert "runs on node 'gone', which is not in the input" in groups["pods on nodes not in the input"].messages[0]


def test_template_pinned_to_a_missing_node_does_not_abort_the_load(tmp_path):
    path = write(tmp_path, deployment("pinned", nodeName="gone"), deployment("web"))
    out = run("check", path, "--pod", "default/web", "--node", "n1", "--quiet")
    assert out.exit_code == 0
    assert "pinned to nodes not in the input" in out.stderr and "'gone'" in out.stderr
    out = run("check", path, "--pod", "default/pinned", "--node", "n1")
    assert out.exit_code == 2 and "default/pinned gives no pod type" in out.output


def test_other_scheduler_is_mentioned():
    groups = groups_of(node("n1"), deployment("web", schedulerName="volcano"))
    assert "schedulerName 'volcano'" in groups["other schedulers"].messages[0]


def test_warnings_on_stderr_and_in_json_and_strict(tmp_path):
    path = write(tmp_path, SERVICE, deployment("web"))
    out = run("check", path, "--pod", "default/web", "--node", "n1", "--json")
    assert out.exit_code == 0
    assert "symreach: warning: skipped kinds: 1 Service (no effect on scheduling)" in out.stderr
    data = json.loads(out.stdout)
    assert data["warnings"] == [{"category": "skipped kinds", "count": 1,
                                 "messages": ["1 Service (no effect on scheduling)"]}]
    out = run("check", path, "--pod", "default/web", "--node", "n1", "--strict")
    assert out.exit_code == 2 and "--strict: the input raised 1 warning(s)" in out.output
    out = run("matrix", path, "--strict")
    assert out.exit_code == 2
    clean = tmp_path / "clean.yaml"
    clean.write_text(dump(node("n1"), deployment("web")))
    out = run("check", clean, "--pod", "default/web", "--node", "n1", "--strict", "--quiet")
    assert out.exit_code == 0 and out.stderr == ""


def test_many_warnings_of_one_kind_are_one_line(tmp_path):
    objects = (node("n1"), *[bare_pod(f"p{i}", "gone") for i in range(5)])
    group = groups_of(*objects)["pods on nodes not in the input"]
    assert group.count == 5 and group.line().endswith("and 2 more")
    out = run("matrix", write(tmp_path, *objects[1:]))
    assert "and 2 more (-o json lists all)" in out.stderr


@pytest.mark.parametrize("kind", ["Service", "ConfigMap"])
def test_builtin_kinds_are_not_custom_resources(kind):
    obj = {"apiVersion": "v1", "kind": kind, "metadata": {"name": "x"}}
    assert "custom resources not modelled" not in groups_of(node("n1"), obj)
