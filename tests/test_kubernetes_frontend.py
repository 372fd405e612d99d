"""The Kubernetes front end: objects and dumps -> v1 document -> Instance."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest

from symreach import semantics
from symreach.errors import InputError
from symreach.frontends.kubernetes import is_kubernetes_document, kubernetes_to_v1, load_kubernetes
from symreach.frontends.k8s_requests import format_amount, host_ports, pod_requests
from symreach.frontends.k8s_controllers import DAEMONSET_TOLERATIONS
from symreach.frontends.kubernetes import (
    load_kubernetes_documents,
    load_kubernetes_with_report,
    read_documents,
    read_documents_text,
)
from symreach.loader import parse_query
from symreach.loader.quantities import parse_quantity
from symreach.loader.yaml_source import InputTooLarge
from symreach.result import Verdict
from symreach.solvers.explicit import ExplicitEngine
from benchmarks.shared_data import K8S_DIR
from tests.test_trace_export import CLUSTER_WITNESS

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"
_CANDIDATES = [K8S_DIR]
K8S_DATA = next((p for p in _CANDIDATES if p.is_dir()), None)
needs_data = pytest.mark.skipif(K8S_DATA is None, reason="shared Kubernetes fixtures not available")
GiB = 2**30
MiB = 2**20


# ---- helpers --------------------------------------------------------------------

def node(name, cpu="4", memory="8Gi", pods="110", labels=None, taints=None, unschedulable=False,
         allocatable=True):
    status = {"capacity": {"cpu": "8", "memory": "16Gi", "pods": "250"}}
    if allocatable:
        status["allocatable"] = {"cpu": cpu, "memory": memory, "pods": pods}
    spec = {}
    if taints:
        spec["taints"] = taints
    if unschedulable:
        spec["unschedulable"] = True
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name, **(labels or {})}},
            "spec": spec, "status": status}


def pod_spec(cpu="100m", memory="64Mi", **extra):
    spec = {"containers": [{"name": "c", "image": "pause",
                            "resources": {"requests": {"cpu": cpu, "memory": memory}}}]}
    spec.update(extra)
    return spec


def template(labels, **spec_extra):
    return {"metadata": {"labels": dict(labels)}, "spec": pod_spec(**spec_extra)}


def workload(kind, name, labels, namespace="default", replicas=1, **spec_extra):
    spec = {"replicas": replicas, "selector": {"matchLabels": dict(labels)}, "template": template(labels, **spec_extra)}
    if kind == "CronJob":
        spec = {"schedule": "*/5 * * * *", "jobTemplate": {"spec": {"template": template(labels, **spec_extra)}}}
    if kind == "DaemonSet":
        spec.pop("replicas")
    return {"apiVersion": "apps/v1", "kind": kind,
            "metadata": {"name": name, "namespace": namespace, "uid": f"uid-{kind}-{name}"}, "spec": spec}


def pod(name, labels, node_name=None, namespace="default", owner=None, phase="Running", spec=None):
    meta = {"name": name, "namespace": namespace, "labels": dict(labels)}
    if owner is not None:
        meta["ownerReferences"] = [{"apiVersion": "apps/v1", "kind": owner[0], "name": owner[1],
                                    "controller": True, "uid": "x"}]
    body = copy.deepcopy(spec) if spec is not None else pod_spec()
    if node_name:
        body["nodeName"] = node_name
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": body, "status": {"phase": phase}}


def as_list(*items):
    return [{"apiVersion": "v1", "kind": "List", "items": list(items), "metadata": {"resourceVersion": ""}}]


def load(*items):
    return load_kubernetes_documents(as_list(*items), "mem.yaml")


def types_by_name(instance):
    return {t.name: t for t in instance.pod_types}


def initial_by_name(instance):
    return {(instance.pod_types[t].name, instance.nodes[n].name): c for (t, n), c in instance.initial.items()}


# ---- detection ------------------------------------------------------------------------

def test_is_kubernetes_document():
    assert is_kubernetes_document({"apiVersion": "v1", "kind": "Pod"})
    assert is_kubernetes_document(as_list(node("a")))
    assert is_kubernetes_document(as_list(node("a"))[0])
    assert is_kubernetes_document([node("a"), None, pod("p", {})])
    assert not is_kubernetes_document({"version": 1, "nodes": []})
    assert not is_kubernetes_document([])
    assert not is_kubernetes_document([node("a"), {"version": 1}])
    assert not is_kubernetes_document({"metadata": {"name": "n"}})  # a template without kind


# ---- the shared fixtures ------------------------------------------------------------

def _fixture_docs(name):
    docs, _ = read_documents(K8S_DATA / name)
    if name in ("ksim-node.yaml", "ksim-pod.yaml"):  # templates of the simulator UI: no kind
        kind = "Node" if "node" in name else "Pod"
        docs = [dict(d, apiVersion="v1", kind=kind) for d in docs]
    return docs


def _cluster_nodes(count=3, zone=None, hostname=False):
    """scheduler_perf's node template; ``hostname`` adds the label a kubelet would set."""
    nodes = []
    for i in range(count):
        doc = copy.deepcopy(_fixture_docs("k8s-perf-node-default.yaml")[0])
        labels = {}
        if zone:
            labels["topology.kubernetes.io/zone"] = zone
        if hostname:
            labels["kubernetes.io/hostname"] = f"{doc['metadata']['generateName']}{i + 1}"
        if labels:
            doc["metadata"]["labels"] = labels
        nodes.append(doc)
    return nodes


FIXTURES_WITH_TYPES = {
    "cluster-capacity-pod.yaml": ["default/small-pod"],
    "elastic-elasticsearch-rendered-default-affinity.yaml": ["default/elasticsearch-master"],
    "k8s-perf-pod-anti-affinity-ns-selector.yaml": ["default/anti-affinity-pod"],
    "k8s-perf-pod-with-pod-affinity.yaml": ["default/affinity-pod"],
    "k8s-perf-pod-with-pod-anti-affinity-label.yaml": ["default/anti-affinity-matching-pod"],
    "k8s-perf-pod-with-pod-anti-affinity.yaml": ["default/anti-affinity-pod"],
    "k8s-perf-pod-with-topology-spreading.yaml": ["default/spreading-pod"],
    "k8s-perf-unschedulable-pod-interpod-affinity.yaml": ["default/unschedulable-pod-interpod-affinity"],
    "ksim-pod.yaml": ["default/pod"],
    "website-pod-with-affinity-anti-affinity.yaml": ["default/with-affinity-anti-affinity"],
    "website-pod-with-pod-affinity.yaml": ["default/with-pod-affinity"],
    "website-topology-spread-two-constraints.yaml": ["default/mypod"],
    "website-zookeeper-statefulset.yaml": ["default/zk"],
}


@needs_data
def test_every_fixture_is_covered():
    """Each YAML fixture is a node, a pod or workload file tested here, or the scheduler_perf config."""
    names = {p.name for p in K8S_DATA.glob("*.yaml")}
    nodes = {"k8s-perf-node-default.yaml", "ksim-node.yaml"}
    not_kubernetes = {"k8s-perf-affinity-performance-config.excerpt.yaml"}
    assert names == set(FIXTURES_WITH_TYPES) | nodes | not_kubernetes


@needs_data
@pytest.mark.parametrize("name", sorted(FIXTURES_WITH_TYPES))
def test_fixture_loads_with_nodes(name):
    docs = _fixture_docs(name) + _cluster_nodes(2) + _fixture_docs("ksim-node.yaml")
    instance, report = load_kubernetes_documents(docs, name)
    assert [t.name for t in instance.pod_types] == FIXTURES_WITH_TYPES[name]
    assert [n.name for n in instance.nodes] == ["scheduler-perf-1", "scheduler-perf-2", "node"]
    assert report.nodes == 3 and report.pod_types == len(FIXTURES_WITH_TYPES[name])
    assert not instance.initial  # none of these pods is bound to a node


@needs_data
def test_fixture_nodes_capacity():
    instance, report = load_kubernetes_documents(_cluster_nodes(1) + _fixture_docs("ksim-node.yaml"), "nodes")
    perf, ksim = instance.nodes
    # node-default has only status.capacity: it is the fallback for allocatable.
    assert dict(perf.capacity) == {"pods": 110, "cpu": 4000, "memory": 32 * GiB}
    assert dict(ksim.capacity) == {"cpu": 4000, "memory": 32 * GiB, "pods": 110}
    # A Node object has only the labels it carries (kube-scheduler: no hostname here).
    assert "kubernetes.io/hostname" not in perf.labels
    assert any("generateName" in w for w in report.warnings)


@needs_data
def test_fixture_requests_and_skipped_kinds():
    instance, report = load_kubernetes_documents(_fixture_docs("website-zookeeper-statefulset.yaml"), "zk")
    zk = types_by_name(instance)["default/zk"]
    assert dict(zk.requests) == {"cpu": 500, "memory": GiB}
    assert report.skipped == {"Service": 2}  # the PodDisruptionBudget is read (issue 29)
    (pdb,) = instance.budgets
    assert pdb.name == "default/zk-pdb" and pdb.counts == {instance.type_index("default/zk")}
    assert report.kinds == {"Service": 2, "PodDisruptionBudget": 1, "StatefulSet": 1}
    # limits only: requests default to limits (ksim pod has both, equal).
    instance, _ = load_kubernetes_documents(_fixture_docs("ksim-pod.yaml"), "ksim")
    assert dict(instance.pod_types[0].requests) == {"cpu": 100, "memory": 16 * GiB}


@needs_data
def test_fixture_unschedulable_interpod_affinity_is_never_deployable():
    docs = _fixture_docs("k8s-perf-unschedulable-pod-interpod-affinity.yaml") + _cluster_nodes(2)
    instance, _ = load_kubernetes_documents(docs, "unsched")
    query = parse_query(instance, "default/unschedulable-pod-interpod-affinity", "scheduler-perf-1")
    assert ExplicitEngine().check(instance, query).verdict is Verdict.NOT_DEPLOYABLE


@needs_data
def test_fixture_self_affinity_needs_the_zone_label():
    """scheduler_perf labels its nodes zone1 for SchedulingPodAffinity: without the label no node qualifies."""
    docs = [copy.deepcopy(d) for d in _fixture_docs("k8s-perf-pod-with-pod-affinity.yaml")]
    docs[0]["metadata"]["namespace"] = "sched-test"  # one of the namespaces its term looks at
    labelled, _ = load_kubernetes_documents(docs + _cluster_nodes(2, zone="zone1"), "aff")
    bare, _ = load_kubernetes_documents(docs + _cluster_nodes(2), "aff")
    name = "sched-test/affinity-pod"
    result = ExplicitEngine().check(labelled, parse_query(labelled, name, "scheduler-perf-2"))
    assert result.verdict is Verdict.DEPLOYABLE and len(result.trace) == 1
    assert ExplicitEngine().check(bare, parse_query(bare, name, "scheduler-perf-2")).verdict is Verdict.NOT_DEPLOYABLE


@needs_data
def test_fixture_anti_affinity_five_nodes():
    """SchedulingPodAntiAffinity/5Nodes: one green pod per node; with four placed, the fifth node still works."""
    docs = _fixture_docs("k8s-perf-pod-with-pod-anti-affinity.yaml")
    docs[0] = copy.deepcopy(docs[0])
    docs[0]["metadata"]["namespace"] = "sched-test"
    running = []
    for k in range(1, 5):
        p = copy.deepcopy(docs[0])
        p["metadata"]["name"] = f"anti-affinity-pod-{k}"
        p["spec"]["nodeName"] = f"scheduler-perf-{k}"
        running.append(p)
    instance, report = load_kubernetes_documents(docs + running + _cluster_nodes(5, hostname=True), "anti")
    assert report.pods_attached == 4
    # generateName template and the named pods have the same spec, but named pods are their own types.
    t = instance.type_index("sched-test/anti-affinity-pod")
    sigma = instance.initial_config()
    assert semantics.hard(instance, t, instance.node_index("scheduler-perf-5"), sigma)
    assert not semantics.hard(instance, t, instance.node_index("scheduler-perf-1"), sigma)
    # Without hostname labels the hostname-keyed anti-affinity constrains nothing (kso agrees).
    bare, _ = load_kubernetes_documents(docs + running + _cluster_nodes(5), "anti")
    assert semantics.hard(bare, t, bare.node_index("scheduler-perf-1"), bare.initial_config())


# ---- effective requests (resource.PodRequests) -------------------------------------------

def c(cpu=None, memory=None, limits=None, restart=None, **other):
    requests = {k: v for k, v in (("cpu", cpu), ("memory", memory)) if v is not None}
    requests.update(other)
    body = {"name": "x", "resources": {}}
    if requests:
        body["resources"]["requests"] = requests
    if limits:
        body["resources"]["limits"] = limits
    if restart:
        body["restartPolicy"] = restart
    return body


def test_requests_sum_over_containers():
    assert pod_requests({"containers": [c("100m", "64Mi"), c("250m", "1Gi")]}) == {"cpu": 350, "memory": 64 * MiB + GiB}


def test_requests_default_to_limits():
    spec = {"containers": [c(limits={"cpu": "1", "memory": "1Gi"}), c(cpu="200m", limits={"cpu": "2", "memory": "512Mi"})]}
    assert pod_requests(spec) == {"cpu": 1200, "memory": GiB + 512 * MiB}


def test_init_containers_take_the_max():
    spec = {"containers": [c("500m", "1Gi")], "initContainers": [c("2", "100Mi"), c("100m", "3Gi")]}
    assert pod_requests(spec) == {"cpu": 2000, "memory": 3 * GiB}


def test_sidecars_add_and_run_beside_later_init_containers():
    # KEP-753: init use(i) = sidecars declared before i + init container i.
    spec = {"containers": [c("1")],
            "initContainers": [c("500m", restart="Always"), c("2"), c("300m", restart="Always"), c("100m")]}
    # long-running: 1 + 0.5 + 0.3 = 1.8; init steps: 0.5, 2 + 0.5 = 2.5, 0.8, 0.1 + 0.8 = 0.9
    assert pod_requests(spec) == {"cpu": 2500}
    spec["initContainers"][1] = c("1")  # 1 + 0.5 = 1.5 < 1.8
    assert pod_requests(spec) == {"cpu": 1800}


def test_overhead_is_added_last_and_pod_level_requests_override():
    spec = {"containers": [c("1", "1Gi", **{"nvidia.com/gpu": "1"})], "overhead": {"cpu": "250m", "memory": "120Mi"}}
    assert pod_requests(spec) == {"cpu": 1250, "memory": GiB + 120 * MiB, "nvidia.com/gpu": 1}
    spec["resources"] = {"requests": {"cpu": "3"}}
    # cpu from the pod level; memory and gpu from the containers; overhead on top.
    assert pod_requests(spec) == {"cpu": 3250, "memory": GiB + 120 * MiB, "nvidia.com/gpu": 1}


def test_pod_level_requests_default_to_pod_level_limits():
    # defaultPodRequests: the containers' aggregate request first (kso: repro 11) ...
    spec = {"containers": [c("100m", "64Mi")], "resources": {"limits": {"cpu": "2", "memory": "1Gi"}}}
    assert pod_requests(spec) == {"cpu": 100, "memory": 64 * MiB}
    # ... the pod-level limit only where no container requests the resource.
    spec = {"containers": [c("100m")], "resources": {"limits": {"cpu": "2", "memory": "1Gi"}}}
    assert pod_requests(spec) == {"cpu": 100, "memory": GiB}
    spec = {"containers": [c(limits={"hugepages-2Mi": "4Mi", "memory": "1Gi"})],
            "resources": {"requests": {"memory": "2Gi"}, "limits": {"memory": "2Gi"}}}
    assert pod_requests(spec) == {"memory": 2 * GiB, "hugepages-2Mi": 4 * MiB}


def test_zero_requests_are_dropped_and_bad_quantities_named():
    assert pod_requests({"containers": [c("0", "0")]}) == {}
    with pytest.raises(Exception) as err:
        pod_requests({"containers": [c("lots")]}, ("spec",))
    assert "spec.containers[0].resources.requests.cpu" in str(err.value)


def test_format_amount_round_trips():
    for resource, amount in [("cpu", 1500), ("cpu", 2000), ("memory", 3 * GiB), ("memory", 1000),
                             ("hugepages-2Mi", 4 * MiB), ("nvidia.com/gpu", 2), ("ephemeral-storage", 77298068148)]:
        assert parse_quantity(format_amount(resource, amount), resource) == amount


def test_host_ports():
    spec = {"containers": [{"name": "a", "ports": [{"containerPort": 80, "hostPort": 8080},
                                                   {"containerPort": 53, "hostPort": 53, "protocol": "UDP"},
                                                   {"containerPort": 9090}]}],
            "initContainers": [{"name": "i", "ports": [{"containerPort": 1, "hostPort": 1}]}]}
    ports, warnings = host_ports(spec)
    assert ports == [{"port": 53, "protocol": "UDP"}, {"port": 8080, "protocol": "TCP"}]
    assert not warnings
    spec["hostNetwork"] = True  # the API server defaults hostPort to containerPort
    ports, _ = host_ports(spec)
    assert {"port": 9090, "protocol": "TCP"} in ports and len(ports) == 3


def test_requests_reach_the_model():
    spec = pod_spec(cpu="250m", memory="1Gi")
    spec["initContainers"] = [{"name": "init", "resources": {"requests": {"cpu": "2"}}}]
    spec["containers"][0]["ports"] = [{"containerPort": 80, "hostPort": 80}]
    instance, _ = load(node("n1"), pod("p", {"app": "p"}, spec=spec))
    t = instance.pod_types[0]
    assert dict(t.requests) == {"cpu": 2000, "memory": GiB}
    assert {(h.port, h.protocol) for h in t.host_ports} == {(80, "TCP")}


# ---- nodes, namespaces ------------------------------------------------------------------

def test_node_fields():
    taints = [{"key": "dedicated", "value": "gpu", "effect": "NoSchedule", "timeAdded": None},
              {"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule"}]
    instance, _ = load(node("n1", labels={"zone": "a"}, taints=taints, unschedulable=True),
                       node("n2", allocatable=False))
    n1, n2 = instance.nodes
    assert dict(n1.capacity) == {"cpu": 4000, "memory": 8 * GiB, "pods": 110}
    assert dict(n2.capacity) == {"cpu": 8000, "memory": 16 * GiB, "pods": 250}  # status.capacity fallback
    assert [(t.key, t.value, t.effect) for t in n1.taints] == [("dedicated", "gpu", "NoSchedule"),
                                                               ("node.kubernetes.io/unschedulable", "", "NoSchedule")]
    assert n1.unschedulable and not n2.unschedulable
    assert n1.labels["zone"] == "a"


def test_namespaces_get_labels():
    ns = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team-a", "labels": {"team": "devops"}}}
    instance, _ = load(ns, node("n1"), pod("p", {}, namespace="other"))
    assert dict(instance.namespaces["team-a"]) == {"team": "devops", "kubernetes.io/metadata.name": "team-a"}
    assert dict(instance.namespaces["other"]) == {"kubernetes.io/metadata.name": "other"}


# ---- workloads and owner references --------------------------------------------------------

def test_all_workload_kinds_define_types():
    items = [node("n1")] + [workload(kind, kind.lower(), {"app": kind.lower()}, replicas=0)
                            for kind in ("Deployment", "StatefulSet", "ReplicaSet", "ReplicationController",
                                         "Job", "CronJob")]
    items[1]["apiVersion"] = "apps/v1"
    instance, report = load(*items)
    assert sorted(t.name for t in instance.pod_types) == sorted(
        f"default/{k}" for k in ("deployment", "statefulset", "replicaset", "replicationcontroller", "job", "cronjob"))
    assert all(t.creatable for t in instance.pod_types)
    assert report.skipped == {}


def test_pods_attach_through_replicaset_to_deployment():
    dep = workload("Deployment", "web", {"app": "web"}, namespace="shop")
    rs = workload("ReplicaSet", "web-5d8f9c", {"app": "web", "pod-template-hash": "5d8f9c"}, namespace="shop")
    rs["metadata"]["ownerReferences"] = [{"kind": "Deployment", "name": "web", "controller": True}]
    labels = {"app": "web", "pod-template-hash": "5d8f9c"}
    pods = [pod(f"web-5d8f9c-{k}", labels, f"n{k % 2 + 1}", namespace="shop", owner=("ReplicaSet", "web-5d8f9c"))
            for k in range(3)]
    instance, report = load(node("n1"), node("n2"), dep, rs, *pods)
    assert [t.name for t in instance.pod_types] == ["shop/web"]  # the RS is the same workload
    assert initial_by_name(instance) == {("shop/web", "n1"): 2, ("shop/web", "n2"): 1}
    assert report.pods_attached == 3 and report.attachments["shop/web-5d8f9c-0"] == "shop/web"
    assert sorted(report.initial_pod_names[("shop/web", "n1")]) == ["web-5d8f9c-0", "web-5d8f9c-2"]


def test_replicaset_missing_from_the_dump_is_implied_by_the_hash():
    dep = workload("Deployment", "web", {"app": "web"})
    p = pod("web-7c9d-abcde", {"app": "web", "pod-template-hash": "7c9d"}, "n1", owner=("ReplicaSet", "web-7c9d"))
    instance, report = load(node("n1"), dep, p)
    assert initial_by_name(instance) == {("default/web", "n1"): 1}
    assert not report.warnings


def test_job_and_cronjob_attachment():
    cron = workload("CronJob", "backup", {"app": "backup"})
    job = workload("Job", "backup-28945", {"app": "backup"})
    job["metadata"]["ownerReferences"] = [{"kind": "CronJob", "name": "backup", "controller": True}]
    labels = {"app": "backup", "batch.kubernetes.io/job-name": "backup-28945", "job-name": "backup-28945"}
    running = pod("backup-28945-x", labels, "n1", owner=("Job", "backup-28945"))
    orphan_job = pod("backup-28950-y", dict(labels, **{"job-name": "backup-28950"}), "n1",
                     owner=("Job", "backup-28950"))  # its Job is not in the dump: implied by the name
    done = pod("backup-28940-z", labels, "n1", owner=("Job", "backup-28940"), phase="Succeeded")
    instance, report = load(node("n1"), cron, job, running, orphan_job, done)
    assert [t.name for t in instance.pod_types] == ["default/backup"]
    assert initial_by_name(instance) == {("default/backup", "n1"): 2}
    assert report.pods_not_counted == {"finished (Succeeded) controller pods": 1}


def test_statefulset_pods_ignore_controller_labels():
    sts = workload("StatefulSet", "db", {"app": "db"})
    labels = {"app": "db", "controller-revision-hash": "db-6b7", "statefulset.kubernetes.io/pod-name": "db-0",
              "apps.kubernetes.io/pod-index": "0"}
    instance, report = load(node("n1"), sts, pod("db-0", labels, "n1", owner=("StatefulSet", "db")))
    assert initial_by_name(instance) == {("default/db", "n1"): 1}
    assert dict(instance.pod_types[0].labels) == {"app": "db"}


def test_admission_tolerations_do_not_break_attachment():
    dep = workload("Deployment", "web", {"app": "web"})
    spec = pod_spec()
    spec["tolerations"] = [{"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute",
                            "tolerationSeconds": 300}]
    p = pod("web-1-a", {"app": "web", "pod-template-hash": "1"}, "n1", owner=("ReplicaSet", "web-1"), spec=spec)
    instance, report = load(node("n1"), dep, p)
    assert [t.name for t in instance.pod_types] == ["default/web"] and not report.warnings


def test_pod_of_an_older_revision_gets_its_own_type():
    dep = workload("Deployment", "web", {"app": "web"}, cpu="500m")
    old = pod("web-old-a", {"app": "web", "pod-template-hash": "old"}, "n1", owner=("ReplicaSet", "web-old"),
              spec=pod_spec(cpu="250m"))
    instance, report = load(node("n1"), dep, old)
    types = types_by_name(instance)
    assert set(types) == {"default/web", "default/web-old"}
    assert types["default/web-old"].creatable is False
    assert dict(types["default/web-old"].requests)["cpu"] == 250
    assert initial_by_name(instance) == {("default/web-old", "n1"): 1}
    assert any("older revision" in w for w in report.warnings)


def test_pods_of_a_controller_not_in_the_input():
    labels = {"app": "api", "pod-template-hash": "abc"}
    pods = [pod(f"api-abc-{k}", labels, "n1", owner=("ReplicaSet", "api-abc")) for k in range(2)]
    rollout = pod("roll-1", {"app": "x"}, "n1", owner=("Rollout", "canary"))
    instance, report = load(node("n1"), *pods, rollout)
    types = types_by_name(instance)
    assert set(types) == {"default/api", "default/canary"}
    assert types["default/api"].creatable and dict(types["default/api"].labels) == {"app": "api"}
    assert initial_by_name(instance) == {("default/api", "n1"): 2, ("default/canary", "n1"): 1}
    assert sum("not in the input" in w for w in report.warnings) == 2


def test_unowned_pod_with_identical_spec_joins_the_workload():
    dep = workload("Deployment", "web", {"app": "web"})
    stray = pod("web-adopted", {"app": "web"}, "n1", owner=("ReplicaSet", "gone-rs"))
    instance, _ = load(node("n1"), dep, stray)
    assert initial_by_name(instance) == {("default/web", "n1"): 1}


def test_bare_pods_mirror_pods_and_phases():
    mirror = pod("kube-apiserver-n1", {"component": "kube-apiserver"}, "n1", namespace="kube-system",
                 owner=("Node", "n1"))
    items = [node("n1"), pod("debug", {"run": "debug"}, "n1"), mirror,
             pod("done", {}, "n1", phase="Succeeded"), pod("waiting", {}, None, phase="Pending"),
             pod("lost", {}, "n9")]
    instance, report = load(*items)
    types = types_by_name(instance)
    assert types["default/debug"].creatable
    assert types["kube-system/kube-apiserver-n1"].creatable is False
    assert {"default/done", "default/waiting", "default/lost"} <= set(types)  # re-applicable pods
    assert initial_by_name(instance) == {("default/debug", "n1"): 1, ("kube-system/kube-apiserver-n1", "n1"): 1}
    assert report.pods_not_counted == {"finished (Succeeded) pods": 1, "pending pods (no spec.nodeName)": 1,
                                       "pods on nodes not in the input": 1}
    # a bound pod's nodeName is its placement, not a pin on its type
    t = instance.type_index("default/debug")
    assert instance.static_block[t][0] is None


def test_generate_name_pods_with_the_same_spec_share_a_type():
    a = pod("x", {"color": "green"}, "n1")
    b = pod("x", {"color": "green"}, "n1")
    for p in (a, b):
        del p["metadata"]["name"]
        p["metadata"]["generateName"] = "green-"
    instance, _ = load(node("n1"), a, b)
    assert [t.name for t in instance.pod_types] == ["default/green"]
    assert initial_by_name(instance) == {("default/green", "n1"): 2}


def test_type_name_collisions_are_resolved():
    instance, _ = load(node("n1"), workload("Deployment", "web", {"app": "a"}),
                       workload("StatefulSet", "web", {"app": "b"}))
    assert [t.name for t in instance.pod_types] == ["default/web", "default/statefulset/web"]


# ---- DaemonSets ------------------------------------------------------------------------------

def test_daemonset_one_type_per_node_pinned():
    ds = workload("DaemonSet", "agent", {"app": "agent"}, namespace="mon")
    taint = [{"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}]
    items = [node("n1"), node("n2", taints=taint), node("n3", unschedulable=True), ds,
             pod("agent-x", {"app": "agent", "controller-revision-hash": "1", "pod-template-generation": "1"},
                 "n1", namespace="mon", owner=("DaemonSet", "agent"))]
    doc, _ = kubernetes_to_v1(as_list(*items), "mem")
    bodies = {t["name"]: t for t in doc["podTypes"]}
    assert set(bodies) == {"mon/agent@n1", "mon/agent@n2", "mon/agent@n3"}
    body = bodies["mon/agent@n3"]
    assert body["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"] == {
        "nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n3"]}]}]}
    for tol in DAEMONSET_TOLERATIONS:
        assert tol in body["tolerations"]
    instance, report = load(*items)
    for t, pod_type in enumerate(instance.pod_types):
        own = pod_type.name.split("@")[1]
        for n, nd in enumerate(instance.nodes):
            blocked = instance.static_block[t][n]
            # the own node is fine even when cordoned (the controller tolerates unschedulable);
            # n2's dedicated taint is not tolerated.
            assert (blocked is None) == (nd.name == own and own != "n2"), (pod_type.name, nd.name, blocked)
    assert initial_by_name(instance) == {("mon/agent@n1", "n1"): 1}


def test_daemonset_keeps_its_own_node_selection():
    ds = workload("DaemonSet", "gpu-plugin", {"app": "gpu-plugin"}, nodeSelector={"pool": "gpu"})
    ds["spec"]["template"]["spec"]["affinity"] = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
        "nodeSelectorTerms": [{"matchExpressions": [{"key": "arch", "operator": "In", "values": ["amd64"]}]},
                              {"matchExpressions": [{"key": "arch", "operator": "In", "values": ["arm64"]}]}]}}}
    ds["spec"]["template"]["spec"]["hostNetwork"] = True
    ds["spec"]["template"]["spec"]["containers"][0]["ports"] = [{"containerPort": 9400}]
    nodes = [node("g1", labels={"pool": "gpu", "arch": "amd64"}), node("g2", labels={"pool": "gpu", "arch": "riscv"}),
             node("w1", labels={"pool": "general", "arch": "amd64"})]
    instance, _ = load(*nodes, ds)
    feasible = {instance.pod_types[t].name: [instance.nodes[n].name for n in range(3) if instance.static_block[t][n] is None]
                for t in range(len(instance.pod_types))}
    assert feasible == {"default/gpu-plugin@g1": ["g1"], "default/gpu-plugin@g2": [], "default/gpu-plugin@w1": []}
    t = instance.pod_types[0]
    assert {(h.port, h.protocol) for h in t.host_ports} == {(9400, "TCP")}
    doc, _ = kubernetes_to_v1(as_list(*nodes, ds), "mem")
    assert {"key": "node.kubernetes.io/network-unavailable", "operator": "Exists", "effect": "NoSchedule"} in \
        doc["podTypes"][0]["tolerations"]


def test_daemonset_without_nodes_warns():
    doc, report = kubernetes_to_v1(as_list(workload("DaemonSet", "agent", {"app": "agent"})), "mem")
    assert doc["podTypes"] == [] and any("no nodes" in w for w in report.warnings)


# ---- report and errors -----------------------------------------------------------------------

def test_skipped_kinds_are_counted_not_errors():
    items = [node("n1"), {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "s"}},
             {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "t"}},
             {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}}, pod("p", {}, "n1")]
    _, report = kubernetes_to_v1(as_list(*items), "mem")
    assert report.skipped == {"Service": 2, "ConfigMap": 1}
    assert report.kinds == {"Node": 1, "Service": 2, "ConfigMap": 1, "Pod": 1}
    assert "skipped 1 ConfigMap, 2 Service" in report.summary()


def test_multi_document_stream_with_empty_documents(tmp_path):
    path = tmp_path / "multi.yaml"
    path.write_text("---\n" + "\n---\n".join([
        "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\nstatus: {allocatable: {cpu: '1', pods: '10'}}",
        "",
        "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  nodeName: n1\n  containers: [{name: c, image: i}]",
    ]))
    instance = load_kubernetes(path)
    assert [n.name for n in instance.nodes] == ["n1"] and initial_by_name(instance) == {("default/p", "n1"): 1}


def test_missing_node_name_names_file_line_object_and_field(tmp_path):
    path = tmp_path / "bad.yaml"
    path.write_text("apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: Node\n  metadata:\n"
                    "    labels: {a: b}\n")
    with pytest.raises(InputError) as err:
        load_kubernetes(path)
    message = str(err.value)
    assert message.startswith(f"{path}:6: document 1, items[0] (Node): metadata.name: ")
    assert "required field is missing" in message


def test_errors_for_missing_kind_and_containers():
    with pytest.raises(InputError, match=r"document 2: kind: required field is missing"):
        kubernetes_to_v1([node("n1"), {"apiVersion": "v1", "metadata": {"name": "x"}}], "f")
    bad = workload("Deployment", "web", {"app": "web"})
    del bad["spec"]["template"]["spec"]["containers"]
    with pytest.raises(InputError, match=r"\(Deployment default/web\): spec.template.spec.containers: required"):
        kubernetes_to_v1(as_list(bad), "f")
    with pytest.raises(InputError, match="duplicate Node 'n1'"):
        kubernetes_to_v1(as_list(node("n1"), node("n1")), "f")


def test_bad_quantity_is_located(tmp_path):
    path = tmp_path / "q.yaml"
    path.write_text("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n  - name: c\n"
                    "    resources:\n      requests:\n        cpu: lots\n")
    with pytest.raises(InputError) as err:
        load_kubernetes(path)
    assert str(err.value).startswith(f"{path}:9: document 1 (Pod default/p): spec.containers[0].resources.requests.cpu")


def test_loader_errors_point_back_at_the_source_object(tmp_path):
    path = tmp_path / "taint.yaml"
    path.write_text("apiVersion: v1\nkind: Node\nmetadata: {name: n1}\nspec:\n  taints:\n"
                    "  - {key: k, effect: Sometimes}\n")
    with pytest.raises(InputError) as err:
        load_kubernetes(path)
    message = str(err.value)
    assert message.startswith(f"{path}:6: document 1 (Node n1): nodes[0].taints[0]")
    assert "Sometimes" in message


def test_alias_bombs_and_large_files_are_refused(tmp_path):
    bomb = "a: &a [x, x, x, x, x, x, x, x, x, x]\n"
    prev = "a"
    for i in range(1, 9):
        bomb += f"l{i}: &l{i} [*{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}]\n"
        prev = f"l{i}"
    with pytest.raises(InputError, match="alias bomb"):
        read_documents_text("apiVersion: v1\nkind: ConfigMap\n" + bomb, "bomb.yaml")
    big = tmp_path / "big.yaml"
    big.write_bytes(b"#" * (8 * 1024 * 1024 + 1))  # the old fixed 8 MiB cap is gone ...
    assert read_documents(big) == ([], [])
    with pytest.raises(InputTooLarge, match="too large"):  # ... for a limit the user sets
        read_documents(big, max_bytes=8 * 1024 * 1024)


# ---- the example dump ----------------------------------------------------------------------------

WITNESS = CLUSTER_WITNESS  # the documented 7-step answer of examples/README.md


def test_cluster_dump_example_loads_cleanly():
    instance, report = load_kubernetes_with_report(EXAMPLES / "cluster-dump.yaml")
    assert report.warnings == []
    assert len(instance.nodes) == 6 and report.pods_attached == 13
    assert report.pods_not_counted == {"pending pods (no spec.nodeName)": 1}
    relevant = {"payments/payments-db", "payments/payments-db-proxy", "payments/payments-cache",
                "payments/payments-api", "shop/checkout-web", "shop/recommendations", "edge/ingress-gateway"}
    assert relevant <= {t.name for t in instance.pod_types}
    # the DaemonSet runs only on the GPU node: its other per-node types are statically excluded
    for t, pod_type in enumerate(instance.pod_types):
        if pod_type.name.startswith("kube-system/nvidia-device-plugin@"):
            ok = [instance.nodes[n].name for n in range(6) if instance.static_block[t][n] is None]
            assert ok == (["gpu-b"] if pod_type.name.endswith("@gpu-b") else [])


def test_cluster_dump_witness_replays_and_the_scheduler_would_finish_the_job():
    instance, _ = load_kubernetes_with_report(EXAMPLES / "cluster-dump.yaml")
    query = parse_query(instance, "payments/payments-api", node_selector={"pool": "public"})
    assert not semantics.query_holds(instance, query, instance.initial_config())
    semantics.replay(instance, WITNESS, query)
    # After step 6 the Pending replica has exactly one feasible node: the public one.
    sigma = semantics.replay(instance, WITNESS[:-1])
    api = instance.type_index("payments/payments-api")
    feasible = [n.name for i, n in enumerate(instance.nodes) if semantics.hard(instance, api, i, sigma)]
    assert feasible == ["public-c"]


def test_cluster_dump_without_the_legacy_toleration_is_statically_safe():
    docs, lines = read_documents(EXAMPLES / "cluster-dump.yaml")
    for item in docs[0]["items"]:
        spec = item["spec"]["template"]["spec"] if item["kind"] == "Deployment" else item["spec"]
        if item["metadata"]["name"].startswith("payments-api"):
            spec["tolerations"] = [t for t in spec.get("tolerations", []) if t.get("key") != "pool"]
    instance, _ = load_kubernetes_documents(docs, "dump", lines)
    api = instance.type_index("payments/payments-api")
    assert instance.static_block[api][instance.node_index("public-c")] == "node(s) had untolerated taint(s)"


@pytest.mark.slow
def test_cluster_dump_explicit_bfs_finds_the_seven_step_witness():
    instance, _ = load_kubernetes_with_report(EXAMPLES / "cluster-dump.yaml")
    query = parse_query(instance, "payments/payments-api", node_selector={"pool": "public"})
    result = ExplicitEngine().check(instance, query)
    assert result.verdict is Verdict.DEPLOYABLE and len(result.trace) == len(WITNESS)


def test_kubectl_json_output_with_tabs(tmp_path):
    import json

    path = tmp_path / "dump.json"
    text = json.dumps({"apiVersion": "v1", "kind": "List", "items": [node("n1"), pod("p", {"a": "b"}, "n1")]},
                      indent="\t")
    path.write_text(text)
    instance = load_kubernetes(path)
    assert initial_by_name(instance) == {("default/p", "n1"): 1}
