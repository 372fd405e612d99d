"""Volumes that decide placement: what VolumeBinding, VolumeZone and VolumeRestrictions decide
from the volume objects is a static verdict with the scheduler's plugin and reason; what the input
cannot decide, or a later step could change, is a caveat warning, never silence."""

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
    assert "skipped kinds" not in groups
    # settled as the PV controller would (kso does the same); b binds when its first pod is scheduled,
    # which is modelled (Instance.bindings), so the one warning is the provisioned volume's topology
    # (the CSI driver decides it)
    from symreach.frontends.k8s_volume_bindings import PROVISIONED_TOPOLOGY

    assert "claim default/a is bound to PersistentVolume 'nfs-1'" in groups["volume objects settled"].messages
    assert [b.claim for b in instance.bindings] == ["default/b"]
    assert [PROVISIONED_TOPOLOGY in m for m in groups["volumes"].messages] == [True]


def reasons_of(instance, type_name):
    from symreach import semantics

    t = instance.type_index(type_name)
    sigma = instance.initial_config()
    return {(f.plugin, f.reasons) for f in (semantics.node_failure(instance, t, n, sigma)
                                            for n in range(len(instance.nodes)))}


def test_unbound_immediate_claim_missing_claim_and_missing_volume_block_every_node():
    instance, _ = load(IMMEDIATE, LOCAL_PV, claim("a", storage_class="fast"), claim("c", "gone"),
                       with_claim("wx", "a"), with_claim("wy", "nope"), with_claim("wz", "c"))
    immediate = {("VolumeBinding", ("pod has unbound immediate PersistentVolumeClaims",))}
    assert reasons_of(instance, "default/wx") == immediate == reasons_of(instance, "default/wz")
    assert reasons_of(instance, "default/wy") == {("VolumeRestrictions", ('persistentvolumeclaim "nope" not found',))}


def test_a_dump_without_volume_objects_takes_claims_as_missing_with_a_caveat():
    instance, groups = load(with_claim("wy", "nope"))
    assert allowed(instance, "default/wy") == []
    assert "the input has no volume objects" in groups["volumes"].messages[0]


def test_statefulset_claim_templates_are_caveats():
    sts = {"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": "zk", "namespace": "default"},
           "spec": {"selector": {"matchLabels": {"app": "zk"}}, "serviceName": "zk",
                    "template": {"metadata": {"labels": {"app": "zk"}},
                                 "spec": {"containers": [{"name": "c", "image": "i"}]}},
                    "volumeClaimTemplates": [{"metadata": {"name": "datadir"},
                                              "spec": {"accessModes": ["ReadWriteOnce"]}}]}}
    _, groups = load(sts)
    assert "volumeClaimTemplate 'datadir': the claim of a replica not in the input yet" in groups["volumes"].messages[0]
    pod = {"apiVersion": "v1", "kind": "Pod",
           "metadata": {"name": "zk-0", "namespace": "default", "labels": {"app": "zk"},
                        "ownerReferences": [{"kind": "StatefulSet", "name": "zk", "controller": True,
                                             "apiVersion": "apps/v1", "uid": "u"}]},
           "spec": {"nodeName": "n2", "containers": [{"name": "c", "image": "i"}],
                    "volumes": [{"name": "datadir", "persistentVolumeClaim": {"claimName": "datadir-zk-0"}}]}}
    instance, groups = load(sts, WFFC, LOCAL_PV, claim("datadir-zk-0", "local-1"), pod)
    # the replica is no older revision: its own type, with its own claim's verdicts
    assert [t.name for t in instance.pod_types] == ["default/zk", "default/zk-0"]
    assert "pods of older revisions" not in groups
    assert instance.pod_types[1].creatable and instance.initial == {(1, instance.node_index("n2")): 1}


def test_the_shared_zookeeper_example_gets_its_caveat():
    from benchmarks.shared_data import K8S_DIR
    from symreach.frontends.dispatch import load_inputs

    path = K8S_DIR / "website-zookeeper-statefulset.yaml"
    if path.exists():
        groups = {g.category: g for g in warning_groups(load_inputs([path]).report)}
        assert "volumeClaimTemplate 'datadir'" in groups["volumes"].messages[0]


ZONAL = {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": {"name": "gp3"},
         "provisioner": "ebs.csi.aws.com", "volumeBindingMode": "WaitForFirstConsumer",
         "allowedTopologies": [{"matchLabelExpressions": [{"key": "kubernetes.io/hostname", "values": ["n2"]}]}]}


def test_answers_that_depend_on_a_claim_binding_later_carry_a_caveat_mark(tmp_path):
    """Issue 27 item 3: the mark is on the cell and on the verdict, not only in a file-level warning.
    The claim has no PV and is provisioned by the deployment: the new volume's topology is the CSI
    driver's to decide, so what later pods see is not modelled (``k8s_volume_bindings``)."""
    import json

    from click.testing import CliRunner

    from symreach.cli import cli

    path = tmp_path / "zonal.yaml"
    unconstrained = {k: v for k, v in ZONAL.items() if k != "allowedTopologies"}
    path.write_text(dump(node("n1"), node("n2"), unconstrained, claim("data", storage_class="gp3"),
                         with_claim("db", "data"), deployment("web")))
    run = CliRunner().invoke
    matrix = run(cli, ["matrix", str(path), "-o", "wide"]).stdout.splitlines()  # one column per node
    assert [line.split() for line in matrix if line.startswith("default/")] == [
        ["default/db", "Y*", "Y*"], ["default/web", "Y", "Y"]]
    assert any(line.startswith("* default/db: claim(s) default/data may be provisioned by a deployment")
               for line in matrix)
    cells = json.loads(run(cli, ["matrix", str(path), "--format", "json"]).stdout)["cells"]
    assert [bool(c.get("caveats")) for c in cells] == [True, True, False, False]
    text = run(cli, ["check", str(path), "--pod", "default/db", "--node", "n2"]).stdout
    assert text.splitlines()[0] == "deployable*" and "caveats (* depends on what is not modelled)" in text
    data = json.loads(run(cli, ["check", str(path), "--pod", "default/web", "--node", "n1", "--json"]).stdout)
    assert data["verdict"] == "deployable" and data["caveats"] == []  # docs/json.md: always present
    data = json.loads(run(cli, ["check", str(path), "--pod", "default/db", "--node", "n1", "--json"]).stdout)
    assert data["verdict"] == "deployable" and data["caveats"][0].startswith("default/db: claim(s)")