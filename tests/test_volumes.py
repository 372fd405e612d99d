"""Volumes that decide placement: a bound claim's PersistentVolume node affinity is a static
constraint (VolumeBinding); anything else about volumes is a caveat warning, never silence."""

from __future__ import annotations

from symreach.frontends.dispatch import Source, load_kubernetes_sources
from symreach.report.warnings import warning_groups
from tests.test_inputs import deployment, dump, node

LOCAL_PV = {"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": "local-1"},
            "spec": {"capacity": {"storage": "10Gi"}, "accessModes": ["ReadWriteOnce"],
                     "storageClassName": "local", "local": {"path": "/mnt/disks/1"},
                     "nodeAffinity": {"required": {"nodeSelectorTerms": [{"matchExpressions": [
                         {"key": "kubernetes.io/hostname", "operator": "In", "values": ["n2"]}]}]}}}}
NETWORK_PV = {"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": "nfs-1"},
              "spec": {"capacity": {"storage": "10Gi"}, "nfs": {"server": "x", "path": "/"}}}
WFFC = {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass",
        "metadata": {"name": "standard", "annotations": {"storageclass.kubernetes.io/is-default-class": "true"}},
        "provisioner": "pd.csi.storage.gke.io", "volumeBindingMode": "WaitForFirstConsumer"}
IMMEDIATE = {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": {"name": "fast"},
             "provisioner": "pd.csi.storage.gke.io", "volumeBindingMode": "Immediate"}


def claim(name, volume=None, storage_class=None):
    spec: dict = {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}
    if volume:
        spec["volumeName"] = volume
    if storage_class is not None:
        spec["storageClassName"] = storage_class
    return {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": name, "namespace": "default"},
            "spec": spec}


def with_claim(name, claim_name):
    return deployment(name, volumes=[{"name": "data", "persistentVolumeClaim": {"claimName": claim_name}}])


def load(*objects):
    instance, report = load_kubernetes_sources([Source("v.yaml", dump(node("n1"), node("n2"), *objects))])
    return instance, {g.category: g for g in warning_groups(report)}


def allowed(instance, type_name):
    t = instance.type_index(type_name)
    return [n.name for i, n in enumerate(instance.nodes) if instance.static_block[t][i] is None]


def test_bound_local_volume_pins_the_pod_to_its_node():
    instance, groups = load(LOCAL_PV, claim("data", "local-1"), with_claim("db", "data"))
    assert allowed(instance, "default/db") == ["n2"] and "volumes" not in groups


def test_volume_affinity_is_anded_with_the_pods_own_node_affinity():
    own = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
        {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n1"]}]}]}}}
    db = with_claim("db", "data")
    db["spec"]["template"]["spec"]["affinity"] = own
    instance, _ = load(LOCAL_PV, claim("data", "local-1"), db)
    assert allowed(instance, "default/db") == []  # n1 by its own rule, n2 by its volume: nowhere


def test_network_volume_and_wait_for_first_consumer_bind_anywhere():
    instance, groups = load(NETWORK_PV, WFFC, claim("a", "nfs-1"), claim("b"), with_claim("wx", "a"),
                            with_claim("wy", "b"))
    assert allowed(instance, "default/wx") == ["n1", "n2"] == allowed(instance, "default/wy")
    assert "volumes" not in groups and "skipped kinds" not in groups


def test_unbound_immediate_claim_missing_claim_and_missing_volume_are_caveats():
    _, groups = load(IMMEDIATE, claim("a", storage_class="fast"), claim("c", "gone"), with_claim("wx", "a"),
                     with_claim("wy", "nope"), with_claim("wz", "c"))
    messages = " | ".join(groups["volumes"].messages)
    assert "claim default/a is not bound and StorageClass 'fast' binds immediately" in messages
    assert "claim default/nope is not in the input" in messages
    assert "bound to PersistentVolume 'gone', which is not in the input" in messages


def test_statefulset_claim_templates_are_caveats_unless_they_bind_anywhere():
    sts = {"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": "zk", "namespace": "default"},
           "spec": {"selector": {"matchLabels": {"app": "zk"}}, "serviceName": "zk",
                    "template": {"metadata": {"labels": {"app": "zk"}},
                                 "spec": {"containers": [{"name": "c", "image": "i"}]}},
                    "volumeClaimTemplates": [{"metadata": {"name": "datadir"},
                                              "spec": {"accessModes": ["ReadWriteOnce"]}}]}}
    _, groups = load(sts)
    assert "volumeClaimTemplate 'datadir': no StorageClass is named and no default" in groups["volumes"].messages[0]
    _, groups = load(sts, WFFC)
    assert "volumes" not in groups
    pod = {"apiVersion": "v1", "kind": "Pod",
           "metadata": {"name": "zk-0", "namespace": "default", "labels": {"app": "zk"},
                        "ownerReferences": [{"kind": "StatefulSet", "name": "zk", "controller": True,
                                             "apiVersion": "apps/v1", "uid": "u"}]},
           "spec": {"nodeName": "n2", "containers": [{"name": "c", "image": "i"}],
                    "volumes": [{"name": "datadir", "persistentVolumeClaim": {"claimName": "datadir-zk-0"}}]}}
    instance, groups = load(sts, WFFC, LOCAL_PV, claim("datadir-zk-0", "local-1"), pod)
    assert "replicas pinned one by one are not modelled" in groups["volumes"].messages[0]
    assert [t.name for t in instance.pod_types] == ["default/zk"]  # the replica is no older revision


def test_the_shared_zookeeper_example_gets_its_caveat():
    from benchmarks.shared_data import K8S_DIR
    from symreach.frontends.dispatch import load_inputs

    path = K8S_DIR / "website-zookeeper-statefulset.yaml"
    if path.exists():
        groups = {g.category: g for g in warning_groups(load_inputs([path]).report)}
        assert "volumeClaimTemplate 'datadir'" in groups["volumes"].messages[0]
