"""Reasons name the object (issue 26 item 4): beside each kube-scheduler reason, kept
verbatim, a detail names the taint, the key, the amounts, the port, the domain."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from symreach import reasons
from symreach.cli.main import cli
from symreach.loader import load_instance
from symreach.report.explain import explain

DATA = Path(__file__).parent / "data" / "reasons-named.yaml"

# (pod, node): (the verbatim reason, the detail)
EXPECTED = {
    ("big", "wk-1"): (reasons.TAINT_TOLERATION, "untolerated taint dedicated=gpu:NoSchedule on wk-1"),
    ("big", "wk-2"): ("Insufficient cpu", "requests 3500m, 500m free of 4000m on wk-2"),
    ("big", "wk-3"): (reasons.EXISTING_ANTI_AFFINITY, "loner on wk-3 has anti-affinity app=big"),
    ("big", "wk-4"): (reasons.TOO_MANY_PODS, "0 pods run on wk-4, which allows 0"),
    ("big", "wk-5"): (reasons.NODE_UNSCHEDULABLE, "wk-5 is cordoned (spec.unschedulable) and the pod does not "
                      "tolerate node.kubernetes.io/unschedulable:NoSchedule"),
    ("fat", "wk-1"): (reasons.NODE_AFFINITY, "nodeSelector disk=ssd: wk-1 has disk=hdd"),
    ("fat", "wk-2"): ("Insufficient cpu", "requests 1500m, 500m free of 4000m on wk-2"),
    ("edge", "wk-1"): (reasons.NODE_PORTS, "host port 8080/TCP is held by edge on wk-1"),
    ("zonal", "wk-2"): (reasons.SPREAD, "maxSkew 1 over topology.kubernetes.io/zone for app=zonal: "
                        "topology.kubernetes.io/zone=eu-west-1b would have 2 + this pod matching, the fewest "
                        "in a domain is 0 (eu-west-1a), so the skew would be 3"),
    ("zonal", "wk-3"): (reasons.SPREAD_MISSING_LABEL, "wk-3 has no topology.kubernetes.io/zone label (maxSkew 1 "
                        "over topology.kubernetes.io/zone for app=zonal)"),
    ("secure", "wk-2"): (reasons.POD_AFFINITY, "no pod matching security In [S1] runs in "
                         "topology.kubernetes.io/zone=eu-west-1b"),
    ("loner", "wk-2"): (reasons.POD_ANTI_AFFINITY, "term app=big: big runs on wk-2"),
    ("pinned", "wk-2"): (reasons.NODE_AFFINITY, "required node affinity: disk In [nvme] (wk-2 has disk=ssd)"),
}


@pytest.fixture(scope="module")
def inst():
    return load_instance(DATA)


def test_every_reason_keeps_its_words_and_names_its_object(inst):
    checked = 0
    for (pod, node), (reason, detail) in EXPECTED.items():
        verdict = next(v for v in explain(inst, inst.type_index(pod)).nodes if v.node == node)
        assert verdict.reason == reason, (pod, node)
        assert verdict.details == (detail,), (pod, node)
        checked += 1
    assert checked == len(EXPECTED) == 13


def test_every_failing_node_has_a_detail_unless_the_reason_says_it_all(inst):
    seen = 0
    for t, pod in enumerate(inst.pod_types):
        for v in explain(inst, t).nodes:
            if v.reason is None or not pod.creatable:
                continue
            assert len(v.details) == len(v.reason_list) and all(v.details), (pod.name, v.node)
            seen += 1
    assert seen >= 25


def test_json_keeps_the_reason_field_verbatim_and_adds_details():
    out = CliRunner().invoke(cli, ["explain", str(DATA), "--pod", "fat", "--json"])
    assert out.exit_code == 0, out.output
    data = json.loads(out.output)
    pods = data["pods"] if isinstance(data, dict) and "pods" in data else data
    rows = {r["node"]: r for r in (pods[0] if isinstance(pods, list) else pods)["nodes"]}
    assert rows["wk-2"]["reason"] == "Insufficient cpu"
    assert rows["wk-2"]["reasons"] == ["Insufficient cpu"]
    assert rows["wk-2"]["details"] == ["requests 1500m, 500m free of 4000m on wk-2"]


def test_text_prints_reason_then_detail():
    out = CliRunner().invoke(cli, ["explain", str(DATA), "--pod", "big"])
    assert "Insufficient cpu: requests 3500m, 500m free of 4000m on wk-2" in out.output
    assert "1 Insufficient cpu," in out.output  # the FailedScheduling summary is unchanged
