"""Pod groups read from Kubernetes objects, every API shape (issue 28 item 1)."""

from __future__ import annotations

import pytest

from symreach.errors import InputError
from symreach.frontends.kubernetes import load_kubernetes_documents
from symreach.frontends.k8s_source import read_documents_text
from symreach.solvers.gang_explicit import answer

NODES = """
- {apiVersion: v1, kind: Node, metadata: {name: n1, labels: {kubernetes.io/hostname: n1}}, status: {allocatable: {cpu: '4', pods: '110'}}}
- {apiVersion: v1, kind: Node, metadata: {name: n2, labels: {kubernetes.io/hostname: n2}}, status: {allocatable: {cpu: '4', pods: '110'}}}
"""


def pod(name: str, join: str, *, node: str = "", cpu: str = "1", scheduler: str = "", stamp: str = "") -> str:
    spec = [join, f"containers: [{{name: c, image: x, resources: {{requests: {{cpu: '{cpu}'}}}}}}]"]
    if node:
        spec.append(f"nodeName: {node}")
    if scheduler:
        spec.append(f"schedulerName: {scheduler}")
    meta = f"{{name: {name}, namespace: ml" + (f", creationTimestamp: '{stamp}'" if stamp else "") + "}"
    return f"- {{apiVersion: v1, kind: Pod, metadata: {meta}, spec: {{{', '.join(spec)}}}}}\n"


def load(items: str):
    text = "apiVersion: v1\nkind: List\nitems:\n" + NODES + items
    docs, lines = read_documents_text(text, "<test>")
    return load_kubernetes_documents(docs, "<test>", lines)


PODGROUP = ("- {apiVersion: scheduling.k8s.io/v1beta1, kind: PodGroup, metadata: {name: train, namespace: ml}, "
            "spec: {schedulingPolicy: {gang: {minCount: MIN}}}}\n")
JOIN = "schedulingGroup: {podGroupName: train}"


def test_podgroup_v1beta1_members_in_queue_order_and_running_members():
    items = PODGROUP.replace("MIN", "3") + pod("w-1", JOIN, stamp="2026-01-01T00:00:02Z") + \
        pod("w-0", JOIN, stamp="2026-01-01T00:00:01Z") + pod("w-2", JOIN, node="n1")
    inst, report = load(items)
    (group,) = inst.groups
    assert group.name == "ml/train" and group.min_count == 3 and group.policy == "gang"
    assert [(inst.pod_types[t].name, c) for t, c in group.members] == [("ml/train/w", 2)]
    assert not inst.pod_types[group.members[0][0]].creatable   # a gang pod is never placed alone
    assert sum(inst.initial.values()) == 1                       # w-2 runs: one of the three
    assert not [w for w in report.warnings if "no effect" in w]
    assert answer(inst, "ml/train").result.verdict.value == "deployable"


def test_workload_v1alpha1_replica_keys_are_independent_gangs():
    items = ("- {apiVersion: scheduling.k8s.io/v1alpha1, kind: Workload, metadata: {name: job, namespace: ml}, "
             "spec: {podGroups: [{name: workers, policy: {gang: {minCount: 2}}}]}}\n")
    for key in ("0", "1"):
        for i in range(2):
            ref = f"workloadRef: {{name: job, podGroup: workers, podGroupReplicaKey: '{key}'}}"
            items += pod(f"w{key}-{i}", ref)
    inst, _ = load(items)
    assert sorted(g.name for g in inst.groups) == ["ml/job/workers#0", "ml/job/workers#1"]
    assert all(sum(c for _, c in g.members) == 2 for g in inst.groups)


def test_job_parallelism_gives_pending_members():
    items = PODGROUP.replace("MIN", "3") + (
        "- {apiVersion: batch/v1, kind: Job, metadata: {name: train, namespace: ml}, spec: {parallelism: 3, "
        "template: {spec: {schedulingGroup: {podGroupName: train}, restartPolicy: Never, "
        "containers: [{name: c, image: x, resources: {requests: {cpu: '1'}}}]}}}}\n")
    inst, _ = load(items)
    (group,) = inst.groups
    assert [(inst.pod_types[t].name, c) for t, c in group.members] == [("ml/train", 3)]


@pytest.mark.parametrize("items, warning", [
    (pod("w-0", "schedulingGroup: {podGroupName: nope}"), "not in the input; the scheduler keeps it pending"),
    (PODGROUP.replace("MIN", "2"), "no pod of the input belongs to it"),
    (PODGROUP.replace("MIN", "3") + pod("w-0", JOIN), "minCount 3 but only 1 pods"),
    (PODGROUP.replace("MIN", "2") + pod("w-0", JOIN) + pod("w-1", JOIN, scheduler="volcano"),
     "the scheduler rejects the group"),
    ("- {apiVersion: scheduling.k8s.io/v1beta1, kind: PodGroup, metadata: {name: train, namespace: ml}, spec: "
     "{schedulingPolicy: {gang: {minCount: 1}}, schedulingConstraints: {topology: [{key: zone}]}}}\n"
     + pod("w-0", JOIN), "topology-aware placement (schedulingConstraints) is not modelled"),
])
def test_visible_warnings(items, warning):
    inst, report = load(items)
    assert any(warning in w for w in report.warnings), report.warnings


def test_mixed_schedulers_make_the_group_never():
    inst, _ = load(PODGROUP.replace("MIN", "2") + pod("w-0", JOIN) + pod("w-1", JOIN, scheduler="volcano"))
    ans = answer(inst, "ml/train")
    assert ans.result.verdict.value == "not-deployable" and "rejects" in ans.result.reason


@pytest.mark.parametrize("policy, problem", [
    ("{}", "exactly one of basic and gang"),
    ("{basic: {}, gang: {minCount: 1}}", "exactly one of basic and gang"),
    ("{gang: {minCount: 0}}", "must be greater than 0"),
    ("{gang: {}}", "required field is missing"),
])
def test_bad_policies_are_input_errors(policy, problem):
    items = ("- {apiVersion: scheduling.k8s.io/v1beta1, kind: PodGroup, metadata: {name: g, namespace: ml}, "
             f"spec: {{schedulingPolicy: {policy}}}}}\n")
    with pytest.raises(InputError) as err:
        load(items)
    assert problem in err.value.problem and "PodGroup" in (err.value.field_path or "")


def test_composite_hierarchy_v1alpha3():
    items = ("- {apiVersion: scheduling.k8s.io/v1alpha3, kind: CompositePodGroup, metadata: {name: root, namespace: ml}, "
             "spec: {schedulingPolicy: {gang: {minGroupCount: 2}}}}\n"
             "- {apiVersion: scheduling.k8s.io/v1alpha3, kind: PodGroup, metadata: {name: a, namespace: ml}, "
             "spec: {parentCompositePodGroupName: root, schedulingPolicy: {gang: {minCount: 1}}}}\n"
             "- {apiVersion: scheduling.k8s.io/v1alpha3, kind: PodGroup, metadata: {name: b, namespace: ml}, "
             "spec: {parentCompositePodGroupName: root, schedulingPolicy: {gang: {minCount: 2}}}}\n"
             + pod("a-0", "schedulingGroup: {podGroupName: a}")
             + pod("b-0", "schedulingGroup: {podGroupName: b}", cpu="3")
             + pod("b-1", "schedulingGroup: {podGroupName: b}", cpu="3"))
    inst, _ = load(items)
    assert {g.name: g.parent for g in inst.groups} == {"ml/root": None, "ml/a": "ml/root", "ml/b": "ml/root"}
    ans = answer(inst, "ml/b")
    assert ans.root == "ml/root" and ans.result.verdict.value == "deployable"
    assert ans.cycle.outcome == "succeeds"
    assert len(ans.placement) == 3


def test_composite_children_sorted_by_creation_timestamp():
    # KEP-6012: the scheduler takes a composite's children sorted by creation time, not input order
    def group(name, stamp):
        return ("- {apiVersion: scheduling.k8s.io/v1alpha3, kind: PodGroup, metadata: "
                f"{{name: {name}, namespace: ml, creationTimestamp: '{stamp}'}}, "
                "spec: {parentCompositePodGroupName: root, schedulingPolicy: {gang: {minCount: 1}}}}\n")
    items = ("- {apiVersion: scheduling.k8s.io/v1alpha3, kind: CompositePodGroup, metadata: {name: root, namespace: ml}, "
             "spec: {schedulingPolicy: {basic: {}}}}\n"
             + group("late", "2026-01-02T00:00:00Z") + group("early", "2026-01-01T00:00:00Z")
             + pod("late-0", "schedulingGroup: {podGroupName: late}")
             + pod("early-0", "schedulingGroup: {podGroupName: early}"))
    inst, _ = load(items)
    assert [g.name for g in inst.groups if g.parent] == ["ml/early", "ml/late"]


def test_group_names_on_the_command_line(tmp_path):
    from click.testing import CliRunner

    from symreach.cli import cli

    items = ("- {apiVersion: scheduling.k8s.io/v1alpha1, kind: Workload, metadata: {name: job, namespace: ml}, "
             "spec: {podGroups: [{name: workers, policy: {gang: {minCount: 1}}}]}}\n")
    for key in ("0", "1"):
        items += pod(f"w{key}-0", f"workloadRef: {{name: job, podGroup: workers, podGroupReplicaKey: '{key}'}}")
    path = tmp_path / "dump.yaml"
    path.write_text("apiVersion: v1\nkind: List\nitems:\n" + NODES + items)
    runner = CliRunner()
    split = runner.invoke(cli, ["check", str(path), "--group", "ml/job/workers"])
    assert split.exit_code == 2 and "split by podGroupReplicaKey into ml/job/workers#0, ml/job/workers#1" in split.output
    one = runner.invoke(cli, ["check", str(path), "--group", "job/workers#1"])   # namespace may be left out
    assert one.exit_code == 0 and "target:   group ml/job/workers#1" in one.output
    bare = runner.invoke(cli, ["check", str(path)])
    assert bare.exit_code == 2 and "give --group" in bare.output


def test_gang_added_to_the_cluster_dump_needs_deletions_first():
    """examples/cluster-dump.yaml plus a PodGroup of three pods, one per zone: only one fits now;
    two deletions make room, then the gang step places all three (trace and step replayed)."""
    from pathlib import Path

    from symreach.frontends.dispatch import load_inputs

    root = Path(__file__).resolve().parent.parent
    loaded = load_inputs([str(root / "examples" / "cluster-dump.yaml"), str(root / "tests" / "data" /
                                                                        "gang-batch-podgroup.yaml")])
    ans = answer(loaded.instance, "default/batch")
    assert ans.result.verdict.value == "deployable" and ans.placement_now is None
    assert [s.op for s in ans.result.trace] == ["delete", "delete"] and len(ans.placement) == 3
    assert ans.cycle.outcome == "fails"


def test_a_gang_workloads_template_type_is_not_creatable():
    items = PODGROUP.replace("MIN", "2") + (
        "- {apiVersion: apps/v1, kind: Deployment, metadata: {name: w, namespace: ml}, spec: {replicas: 2, "
        "selector: {matchLabels: {app: w}}, template: {metadata: {labels: {app: w}}, spec: {schedulingGroup: "
        "{podGroupName: train}, containers: [{name: c, image: x}]}}}}\n") + pod("w-0", JOIN) + pod("w-1", JOIN)
    inst, _ = load(items)
    assert not inst.pod_types[inst.type_index("ml/w")].creatable


def test_a_hierarchy_whose_leaves_name_different_schedulers_is_rejected():
    # validatePodGroup checks every pod of the hierarchy: leaves a and b agree within themselves
    # but not with each other, so the scheduler rejects the root (and the answer is never).
    items = ("- {apiVersion: scheduling.k8s.io/v1alpha3, kind: CompositePodGroup, metadata: {name: root, namespace: ml}, "
             "spec: {schedulingPolicy: {basic: {}}}}\n"
             "- {apiVersion: scheduling.k8s.io/v1alpha3, kind: PodGroup, metadata: {name: a, namespace: ml}, "
             "spec: {parentCompositePodGroupName: root, schedulingPolicy: {gang: {minCount: 1}}}}\n"
             "- {apiVersion: scheduling.k8s.io/v1alpha3, kind: PodGroup, metadata: {name: b, namespace: ml}, "
             "spec: {parentCompositePodGroupName: root, schedulingPolicy: {gang: {minCount: 1}}}}\n"
             + pod("a-0", "schedulingGroup: {podGroupName: a}")
             + pod("b-0", "schedulingGroup: {podGroupName: b}", scheduler="other"))
    inst, _ = load(items)
    (root,) = [g for g in inst.groups if g.name == "ml/root"]
    assert "different schedulers (default-scheduler, other)" in root.rejected
    assert not any(g.rejected for g in inst.groups if g.parent)
    ans = answer(inst, "ml/a")
    assert ans.result.verdict.value == "not-deployable" and "rejects the group" in ans.result.reason
