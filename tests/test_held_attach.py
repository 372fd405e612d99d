"""A pod type that may hold a PV no CSI driver attaches (a local PV) instead of a provisioned one.

Its pods counted under the class's provisioner (``ebs.csi.aws.com``) move -1 there when they hold
the local PV, and nothing under any other driver. The front end wrote the local PV's count under
the driver name "" and the loader refused the state ("heldAttach.n3: must not be empty"): found by
``kso_agreement --states 5000 --seed 831`` (state 3118). kso's answer is written in.
"""

from __future__ import annotations

import yaml

from symreach import semantics
from symreach.frontends.kubernetes import load_kubernetes_documents
from symreach.model import Query
from symreach.result import Verdict
from symreach.solvers.explicit import ExplicitEngine

STATE = """
apiVersion: v1
kind: Node
metadata: {name: n3, labels: {kubernetes.io/hostname: n3, topology.kubernetes.io/zone: z3}}
status: {allocatable: {cpu: "4", memory: 8Gi, pods: "10"}}
---
apiVersion: storage.k8s.io/v1
kind: CSINode
metadata: {name: n3}
spec:
  drivers:
  - {name: ebs.csi.aws.com, nodeID: i-n3, allocatable: {count: 1}}
---
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: {name: zonal}
provisioner: ebs.csi.aws.com
volumeBindingMode: WaitForFirstConsumer
---
apiVersion: v1
kind: PersistentVolume
metadata: {name: pv1}
spec:
  accessModes: [ReadWriteOnce]
  capacity: {storage: 5Gi}
  local: {path: /mnt/pv1}
  nodeAffinity:
    required:
      nodeSelectorTerms:
      - matchExpressions: [{key: kubernetes.io/hostname, operator: In, values: [n3]}]
  storageClassName: zonal
status: {phase: Available}
---
apiVersion: v1
kind: Pod
metadata: {name: incoming, namespace: default, uid: uid-incoming}
spec:
  containers: [{name: c, image: registry.k8s.io/pause:3.10}]
  volumes:
  - name: scratch
    ephemeral:
      volumeClaimTemplate:
        spec:
          accessModes: [ReadWriteOnce]
          storageClassName: zonal
          resources: {requests: {storage: 1Gi}}
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata:
  name: incoming-scratch
  namespace: default
  ownerReferences: [{apiVersion: v1, kind: Pod, name: incoming, uid: uid-incoming, controller: true}]
spec:
  accessModes: [ReadWriteOnce]
  storageClassName: zonal
  resources: {requests: {storage: 1Gi}}
"""

# kso (/work/shared/tools/kso/kso) on STATE: {"pod": "default/incoming", "feasible": ["n3"], "reasons": {}}
KSO = {"n3": None}


def _loaded():
    return load_kubernetes_documents(list(yaml.safe_load_all(STATE)), "<state>")[0]


def test_a_local_pv_moves_no_attach_count_under_a_driver():
    """Holding pv1 (local) moves the pod's count off the provisioner's driver and under none."""
    inst = _loaded()
    [group] = inst.binding_groups
    moved = [dict(held) for held in group.held_attach if held]
    assert moved == [{(0, 0): {"ebs.csi.aws.com": -1}}]


def test_the_pending_pod_fits_where_kso_says_and_the_witness_replays():
    inst = _loaded()
    t = inst.type_index("default/incoming")
    sigma = inst.initial_config()
    verdicts = {}
    for n, node in enumerate(inst.nodes):
        failure = semantics.node_failure(inst, t, n, sigma)
        verdicts[node.name] = None if failure is None else (failure.plugin, failure.reasons)
    assert verdicts == KSO
    query = Query((frozenset({(t, 0)}),))
    result = ExplicitEngine().check(inst, query)
    assert result.verdict is Verdict.DEPLOYABLE
    semantics.replay(inst, result.trace, query)
