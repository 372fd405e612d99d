"""One minimal state per class of disagreement found between symreach and the real
kube-scheduler (kso), with kso's answer written down, so these run without kso.

Each expectation maps a node to None (the pending pod fits) or to kso's
``(plugin, reasons)``. ``test_expectations_are_kso_answers`` re-asks kso where
it is installed, so an expectation cannot drift from the scheduler's.
"""

from __future__ import annotations

import pytest
import yaml

from benchmarks.kso_harness import any_state, find_kso, kso_verdicts_single, normalized, symreach_verdicts

NODE = "apiVersion: v1\nkind: Node\nmetadata: {{name: {name}, labels: {labels}}}\n{spec}status: {status}\n"
FIT = "NodeResourcesFit"
AFF = "NodeAffinity"
SPREAD = "PodTopologySpread"
IPA = "InterPodAffinity"


def node(name: str, labels: str = "", status: str = "{allocatable: {cpu: '4', memory: 8Gi, pods: '110'}}",
         spec: str = "") -> str:
    labels = labels or f"{{kubernetes.io/hostname: {name}}}"
    return NODE.format(name=name, labels=labels, status=status, spec=f"spec: {spec}\n" if spec else "")


def pod(name: str, spec: str, meta: str = "", namespace: str = "default") -> str:
    return f"apiVersion: v1\nkind: Pod\nmetadata: {{name: {name}, namespace: {namespace}{meta}}}\nspec:\n{spec}"


C = "  containers: [{name: c, image: pause}]\n"

# class name -> (documents, pending pod, kso's verdicts)
CLASSES: dict[str, tuple[list[str], str, dict]] = {
    # Node allocatable without `pods`: allowed pod number 0.
    "too_many_pods_without_pods_allocatable": (
        [node("n1", status="{allocatable: {cpu: '4', memory: 8Gi}}"), pod("incoming", C)],
        "default/incoming", {"n1": (FIT, ("Too many pods",))}),
    # NodeResourcesFit keeps every insufficient resource, pods first.
    "fit_reports_every_insufficient_resource": (
        [node("n1", status="{allocatable: {}, capacity: {cpu: '4', pods: '110'}}"),
         node("n2", status="{capacity: {cpu: '4', memory: 8Gi, pods: '110'}}"),
         pod("incoming", "  containers: [{name: c, image: pause, resources: {requests: {cpu: 100m}}}]\n")],
        "default/incoming", {"n1": (FIT, ("Too many pods", "Insufficient cpu")), "n2": None}),
    # A Node object without kubernetes.io/hostname has none.
    "no_default_hostname_node_affinity": (
        [node("n1"), node("n2", labels="{}"),
         pod("incoming", C + "  affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: "
             "{nodeSelectorTerms: [{matchExpressions: [{key: kubernetes.io/hostname, operator: Exists}]}]}}}\n")],
        "default/incoming", {"n1": None, "n2": (AFF, ("node(s) didn't match Pod's node affinity/selector",))}),
    "no_default_hostname_spread_missing_label": (
        [node("n1"), node("n2", labels="{}"),
         pod("incoming", C + "  topologySpreadConstraints: [{maxSkew: 1, topologyKey: kubernetes.io/hostname, "
             "whenUnsatisfiable: DoNotSchedule, labelSelector: {matchLabels: {app: web}}}]\n",
             meta=", labels: {app: web}")],
        "default/incoming",
        {"n1": None, "n2": (SPREAD, ("node(s) didn't match pod topology spread constraints (missing required label)",))}),
    # Host ports conflict per (hostIP, protocol, port); 0.0.0.0 overlaps every address.
    "host_ports_by_address": (
        [node("n1"), node("n2"),
         pod("a", "  nodeName: n1\n  containers: [{name: c, image: pause, ports: [{containerPort: 80, hostPort: 80, "
             "hostIP: 127.0.0.1}]}]\n"),
         pod("b", "  nodeName: n2\n  containers: [{name: c, image: pause, ports: [{containerPort: 80, hostPort: 80}]}]\n"),
         pod("incoming", "  containers: [{name: c, image: pause, ports: [{containerPort: 80, hostPort: 80, "
             "hostIP: 10.0.0.1}]}]\n")],
        "default/incoming", {"n1": None, "n2": ("NodePorts", ("node(s) didn't have free ports for the requested pod ports",))}),
    # Sidecars' (restartable init containers') host ports count.
    "sidecar_host_ports": (
        [node("n1"),
         pod("bound", "  nodeName: n1\n" + C + "  initContainers: [{name: p, image: pause, restartPolicy: Always, "
             "ports: [{containerPort: 9100, hostPort: 9100}]}]\n"),
         pod("incoming", "  containers: [{name: c, image: pause, ports: [{containerPort: 9100, hostPort: 9100}]}]\n")],
        "default/incoming", {"n1": ("NodePorts", ("node(s) didn't have free ports for the requested pod ports",))}),
    # A pending pod's namespaceSelector that matches an empty label set sees every namespace (v1.35).
    "pending_namespace_selector_matches_every_namespace": (
        ["apiVersion: v1\nkind: Namespace\nmetadata: {name: team-a, labels: {team: a}}\n", node("n1"), node("n2"),
         pod("db", "  nodeName: n1\n" + C, meta=", labels: {app: db}", namespace="team-a"),
         pod("anti", C + "  affinity: {podAntiAffinity: {requiredDuringSchedulingIgnoredDuringExecution: [{labelSelector: "
             "{matchLabels: {app: db}}, namespaceSelector: {matchExpressions: [{key: team, operator: NotIn, values: [a]}]}, "
             "topologyKey: kubernetes.io/hostname}]}}\n")],
        "default/anti", {"n1": (IPA, ("node(s) didn't match pod anti-affinity rules",)), "n2": None}),
    # ... while a running pod's term sees the real namespace labels.
    "running_namespace_selector_uses_namespace_labels": (
        ["apiVersion: v1\nkind: Namespace\nmetadata: {name: team-a, labels: {team: a}}\n", node("n1"),
         pod("anti", "  nodeName: n1\n" + C + "  affinity: {podAntiAffinity: {requiredDuringSchedulingIgnoredDuringExecution: "
             "[{labelSelector: {matchLabels: {app: db}}, namespaceSelector: {matchExpressions: [{key: team, operator: "
             "NotIn, values: [a]}]}, topologyKey: kubernetes.io/hostname}]}}\n"),
         pod("db", C, meta=", labels: {app: db}", namespace="team-a")],
        "team-a/db", {"n1": None}),
    # Gt/Lt parse like strconv.ParseInt: '1_0' and out-of-range values never match; an unparsable
    # value in the term (valid for the API server) makes the term match nothing.
    "gt_lt_parse_int64": (
        [node("n1", labels="{rank: '1_0'}"), node("n2", labels="{rank: '99999999999999999999'}"),
         node("n3", labels="{rank: '20'}"),
         pod("incoming", C + "  affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: "
             "{nodeSelectorTerms: [{matchExpressions: [{key: rank, operator: Gt, values: ['5']}]}]}}}\n")],
        "default/incoming", {"n1": (AFF, ("node(s) didn't match Pod's node affinity/selector",)),
                             "n2": (AFF, ("node(s) didn't match Pod's node affinity/selector",)), "n3": None}),
    "gt_non_integer_value_loads_and_matches_nothing": (
        [node("n1", labels="{rank: '3'}"),
         pod("incoming", C + "  affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: "
             "{nodeSelectorTerms: [{matchExpressions: [{key: rank, operator: Gt, values: [abc]}]}]}}}\n")],
        "default/incoming", {"n1": (AFF, ("node(s) didn't match Pod's node affinity/selector",))}),
    # PodTopologySpread walks constraints in order; a node lacking a later key fails there.
    "spread_missing_label_reason_order": (
        [node("n1", labels="{kubernetes.io/hostname: n1, topology.kubernetes.io/zone: z1}"), node("n2"),
         pod("incoming", C + "  topologySpreadConstraints:\n"
             "  - {maxSkew: 1, topologyKey: kubernetes.io/hostname, whenUnsatisfiable: DoNotSchedule, "
             "labelSelector: {matchLabels: {app: web}}}\n"
             "  - {maxSkew: 1, topologyKey: topology.kubernetes.io/zone, whenUnsatisfiable: DoNotSchedule, "
             "labelSelector: {matchLabels: {app: web}}}\n", meta=", labels: {app: web}")],
        "default/incoming",
        {"n1": None, "n2": (SPREAD, ("node(s) didn't match pod topology spread constraints (missing required label)",))}),
    # NodeAffinity's PreFilter (matchFields metadata.name In) wins over every Filter plugin.
    "node_affinity_prefilter_node_names": (
        [node("n1"), node("n2", spec="{taints: [{key: dedicated, value: infra, effect: NoSchedule}]}"),
         node("n3", spec="{unschedulable: true}"),
         pod("incoming", C + "  affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: "
             "{nodeSelectorTerms: [{matchFields: [{key: metadata.name, operator: In, values: [n1]}]}]}}}\n")],
        "default/incoming", {"n1": None, "n2": (AFF, ("node(s) didn't satisfy plugin(s) [NodeAffinity]",)),
                             "n3": (AFF, ("node(s) didn't satisfy plugin(s) [NodeAffinity]",))}),
    "node_affinity_prefilter_conflict": (
        [node("n1", spec="{unschedulable: true}"), node("n2"),
         pod("incoming", C + "  affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: "
             "{nodeSelectorTerms: [{matchFields: [{key: metadata.name, operator: In, values: [n1]}, "
             "{key: metadata.name, operator: In, values: [n2]}]}]}}}\n")],
        "default/incoming", {"n1": (AFF, ("pod affinity terms conflict",)), "n2": (AFF, ("pod affinity terms conflict",))}),
    # Pod-level requests default to the containers' aggregate before the pod-level limit.
    "pod_level_requests_default_from_containers": (
        [node("n1", status="{allocatable: {cpu: '2', memory: 8Gi, pods: '110'}}"),
         pod("incoming", "  resources: {limits: {cpu: '3'}}\n  containers: [{name: c, image: pause, "
             "resources: {requests: {cpu: 500m}}}]\n")],
        "default/incoming", {"n1": None}),
    # ... and an init container's explicit zero request counts as a request (cpu 0, not the limit).
    "pod_level_requests_default_from_explicit_zero": (
        [node("n1", status="{allocatable: {cpu: '4', memory: 8Gi, pods: '110'}}"),
         pod("bound", "  nodeName: n1\n  resources: {limits: {cpu: '4', memory: 4Gi}}\n" + C
             + "  initContainers: [{name: i, image: pause, resources: {requests: {cpu: '0', memory: 256Mi}}}]\n"),
         pod("incoming", "  containers: [{name: c, image: pause, resources: {requests: {cpu: 100m}}}]\n")],
        "default/incoming", {"n1": None}),
    # States the API server accepts and symreach used to refuse.
    "stored_spread_match_label_keys_loads": (
        [node("n1"),
         pod("web-1", "  nodeName: n1\n" + C + "  topologySpreadConstraints: [{maxSkew: 1, topologyKey: "
             "kubernetes.io/hostname, whenUnsatisfiable: DoNotSchedule, labelSelector: {matchLabels: {app: web}, "
             "matchExpressions: [{key: ver, operator: In, values: [v1]}]}, matchLabelKeys: [ver]}]\n",
             meta=", labels: {app: web, ver: v1}"),
         pod("incoming", C)],
        "default/incoming", {"n1": None}),
    "empty_toleration_operator_means_equal": (
        [node("n1", spec="{taints: [{key: dedicated, value: infra, effect: NoSchedule}]}"),
         pod("incoming", C + "  tolerations: [{key: dedicated, operator: '', value: infra, effect: NoSchedule}]\n")],
        "default/incoming", {"n1": None}),
    "counted_pods_on_pods_less_node_load": (
        [node("n1", status="{allocatable: {cpu: '4', memory: 8Gi}}"),
         pod("web", C + "  topologySpreadConstraints: [{maxSkew: 1, topologyKey: kubernetes.io/hostname, "
             "whenUnsatisfiable: DoNotSchedule, labelSelector: {matchLabels: {app: web}}}]\n", meta=", labels: {app: web}")],
        "default/web", {"n1": (FIT, ("Too many pods",))}),
}


def state_of(classes: dict, name: str):
    docs, pending, _ = classes[name]
    return any_state([yaml.safe_load(d) for d in docs], pending)


def _state(name: str):
    return state_of(CLASSES, name)


def kso_answer(state) -> dict:
    """kso's verdicts for a state, normalized for comparison."""
    return {n: normalized(v) for n, v in kso_verdicts_single(state, KSO).items()}


@pytest.mark.parametrize("name", sorted(CLASSES))
def test_symreach_gives_kso_answer(name):
    expected = CLASSES[name][2]
    assert symreach_verdicts(_state(name)) == expected


KSO = find_kso()


@pytest.mark.skipif(KSO is None, reason="kso (shared/tools/kso) not available")
@pytest.mark.parametrize("name", sorted(CLASSES))
def test_expectations_are_kso_answers(name):
    assert kso_answer(_state(name)) == {n: normalized(v) for n, v in CLASSES[name][2].items()}


def test_failed_scheduling_counts_every_reason():
    """kube-scheduler's FitError counts each reason of each node, as ``kubectl describe`` shows."""
    from symreach.frontends.kubernetes import load_kubernetes_documents
    from symreach.report.explain import explain

    state = _state("fit_reports_every_insufficient_resource")
    inst, _ = load_kubernetes_documents(state.objects, "<state>")
    summary = explain(inst, inst.type_index(state.pending)).failed_scheduling()
    assert summary == "1/2 nodes are available: 1 Insufficient cpu, 1 Too many pods."
