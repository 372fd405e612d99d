"""States whose VolumeBinding verdict depends on the scheduler's informer order, judged against kso's runs.

``volume.FindMatchingVolume`` takes the first smallest PV that ``PVAssumeCache.ListPVs`` lists, in
Go map order: where a pod's claims compete for equal-size PVs, one attempt of the real scheduler
fits or refuses at random, and kso (the real plugins) answers differently from run to run. symreach
answers existentially (``k8s_volume_matching``: fits iff some run fits). Such a state's nodes
(``order_nodes``: where symreach's runs differ) are asked of kso ``RUNS`` times and judged against
the set of outcomes (``judge``): symreach fits iff some kso run fitted, and its refusal is one kso
gave with no run fitting.

The random states rarely hold such a pod (two unbound claims of one pod competing for equal-size
PVs), so ``contest`` adds one to a volume-dense state: a WaitForFirstConsumer class, two claims of
the pending pod of one size, two or three Available PVs of that size whose access modes, labels
(a claim may select them) and node affinity vary.
"""

from __future__ import annotations

import copy
import random
from pathlib import Path
from typing import Optional

from benchmarks.kso_harness import Verdict, kso_verdicts_single, normalized
from symreach.frontends.k8s_volume_filters import pod_volumes
from symreach.frontends.k8s_volumes import VOLUME_KINDS, VolumeIndex
from symreach.generators.k8s_states import State

RUNS = 48   # kso runs per order-dependent state: a 1-in-8 outcome is missed with probability 0.2 %
_MODES = (["ReadWriteOnce"], ["ReadWriteMany"], ["ReadWriteOnce", "ReadWriteMany"])
HOSTNAME = "kubernetes.io/hostname"


def order_nodes(state: State) -> list[str]:
    """The nodes where the pending pod's VolumeBinding verdict differs between the informer's orders."""
    index = VolumeIndex()
    for obj in copy.deepcopy(state.objects):
        if obj["kind"] in VOLUME_KINDS:
            meta = obj.get("metadata") or {}
            index.add(obj["kind"], obj, meta.get("namespace") or "default", meta.get("name") or "")
    index.settle()
    nodes = [{"name": o["metadata"]["name"], "labels": o["metadata"].get("labels") or {}}
             for o in state.objects if o["kind"] == "Node"]
    ns, name = state.pending.split("/")
    pod = next(o for o in state.objects if o["kind"] == "Pod" and o["metadata"]["name"] == name
               and (o["metadata"].get("namespace") or "default") == ns)
    uid = pod["metadata"].get("uid")
    return pod_volumes(index, pod["spec"], ns, name, nodes, uid if isinstance(uid, str) else None).order_dependent


def outcome_sets(state: State, kso: Path, runs: int = RUNS) -> dict[str, set[Verdict]]:
    """Per node, every verdict kso gave for the pending pod over ``runs`` runs."""
    out: dict[str, set[Verdict]] = {}
    for _ in range(runs):
        for node, verdict in kso_verdicts_single(state, kso).items():
            out.setdefault(node, set()).add(normalized(verdict))
    return out


def judge(ours: Verdict | set[Verdict], theirs: set[Verdict]) -> bool:
    """symreach's existential verdict against kso's outcomes on one node: a fit iff some run fitted;
    a refusal's set of reasons (``symreach_runs``; a single verdict: that one alone) must hold every
    verdict kso gave (``seen`` counts how many of the set it gave)."""
    ours = ours if isinstance(ours, set) else {ours}
    if None in ours:
        return None in theirs
    return None not in theirs and theirs <= {normalized(v) for v in ours}


def seen(ours: set[Verdict], theirs: set[Verdict]) -> int:
    """How many of symreach's verdicts for a node kso was seen to give."""
    return len({normalized(v) for v in ours} & theirs)


def symreach_runs(state: State) -> dict[str, set[Verdict]]:
    """Per node, what symreach says the scheduler's runs report for the pending pod: {None} where
    some run fits, else every (plugin, reasons) a run may give (``semantics.Failure.alternatives``)."""
    from symreach import semantics
    from symreach.frontends.kubernetes import load_kubernetes_documents

    inst, report = load_kubernetes_documents(copy.deepcopy(state.objects), "<state>")
    t, sigma = inst.type_index(report.pending.get(state.pending, state.pending)), inst.initial_config()
    out: dict[str, set[Verdict]] = {}
    for node in state.nodes:
        failure = semantics.node_failure(inst, t, inst.node_index(node), sigma)
        out[node] = {None} if failure is None else set(failure.alternatives)
    return out


def contest(state: State, rng: random.Random) -> Optional[State]:
    """The state with two claims competing for equal-size PVs added to its pending pod (a bare pod
    only: a controller's pod type comes from its template), or None."""
    ns, name = state.pending.split("/")
    objects = copy.deepcopy(state.objects)
    pod = next(o for o in objects if o["kind"] == "Pod" and o["metadata"]["name"] == name
               and (o["metadata"].get("namespace") or "default") == ns)
    if pod["metadata"].get("ownerReferences"):
        return None
    nodes = [o["metadata"]["name"] for o in objects if o["kind"] == "Node"]
    provisioner = rng.choice(("kubernetes.io/no-provisioner", "kubernetes.io/no-provisioner", "cap.csi.example.com"))
    objects.append({"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": {"name": "contest"},
                    "provisioner": provisioner, "volumeBindingMode": "WaitForFirstConsumer"})
    size = rng.choice(("5Gi", "10Gi"))
    for k in range(rng.choice((2, 2, 3))):
        meta: dict = {"name": f"contest-pv{k}"}
        if rng.random() < 0.4:
            meta["labels"] = {"tier": rng.choice(("fast", "slow"))}
        spec: dict = {"capacity": {"storage": size}, "accessModes": rng.choice(_MODES), "storageClassName": "contest",
                      "local": {"path": f"/mnt/contest-{k}"}}
        if rng.random() < 0.6:
            spec["nodeAffinity"] = {"required": {"nodeSelectorTerms": [{"matchExpressions": [
                {"key": HOSTNAME, "operator": "In", "values": rng.sample(nodes, rng.choice((1, len(nodes))))}]}]}}
        objects.append({"apiVersion": "v1", "kind": "PersistentVolume", "metadata": meta, "spec": spec,
                        "status": {"phase": "Available"}})
    volumes = pod["spec"].setdefault("volumes", [])
    for k in range(2):
        spec = {"accessModes": rng.choice(_MODES), "storageClassName": "contest",
                "resources": {"requests": {"storage": size}}}
        if rng.random() < 0.3:
            spec["selector"] = {"matchLabels": {"tier": rng.choice(("fast", "slow"))}}
        objects.append({"apiVersion": "v1", "kind": "PersistentVolumeClaim",
                        "metadata": {"name": f"contest-{k}", "namespace": ns}, "spec": spec})
        volumes.append({"name": f"contest-{k}", "persistentVolumeClaim": {"claimName": f"contest-{k}"}})
    return State(objects, state.pending, list(state.nodes))
