"""symreach agrees with the real kube-scheduler (kso), verdict for verdict.

Seeded, so the same states every run; nothing here depends on machine speed
(kso's answers are per state, the engine is bounded by a state count). Skips
where ``shared/tools/kso/kso`` is absent. ``python -m benchmarks.kso_agreement``
runs the same checks on thousands of states.
"""

from __future__ import annotations

import pytest

from benchmarks.kso_harness import (
    compare,
    find_kso,
    has_volume_objects,
    kso_verdicts,
    kso_verdicts_single,
    symreach_verdicts,
)
from benchmarks.kso_replay import replay, witnesses
from symreach.generators.k8s_states import random_states

KSO = find_kso()
needs_kso = pytest.mark.skipif(KSO is None, reason="kso (shared/tools/kso) not available")
STATES = 200
TRACES = 30


def test_generator_is_deterministic_and_dense():
    """Same seed, same states; the features the kubernetes profile reads all occur."""
    first, again = random_states(60, 5), random_states(60, 5)
    assert [s.objects for s in first] == [s.objects for s in again]
    text = repr([s.objects for s in random_states(STATES, 11)])
    for needle in ("'Gt'", "'Lt'", "'DoesNotExist'", "matchFields", "NoExecute", "PreferNoSchedule",
                   "'unschedulable': True", "hostIP", "'SCTP'", "restartPolicy", "overhead", "minDomains",
                   "nodeAffinityPolicy", "nodeTaintsPolicy", "matchLabelKeys", "mismatchLabelKeys",
                   "namespaceSelector", "'namespaces'", "podAntiAffinity", "example.com/gpu", "'capacity'",
                   "'operator': ''", "tolerationSeconds",
                   # issue 27: volumes, DaemonSet pods, resize status, terminating and relabelled pods
                   "'PersistentVolumeClaim'", "'ReadWriteOncePod'", "'WaitForFirstConsumer'", "allowedTopologies",
                   "'CSINode'", "'CSIStorageCapacity'", "'storageCapacity': True", "'kubernetes.io/no-provisioner'",
                   "'missing'", "'ephemeral'", "'local'", "'DaemonSet'", "allocatedResources", "'Infeasible'",
                   "deletionTimestamp", "'uid'",
                   # the classes closed later: volumes shared under attach limits, VolumeAttachments, running
                   # pods' ephemeral claims, in-tree disks (inline and PV), StatefulSet replicas' own claims
                   "'VolumeAttachment'", "'pd.csi.storage.gke.io'", "'gcePersistentDisk'", "'rbd'", "'iscsi'",
                   "'azureDisk'", "'cinder'", "'p0-scratch'", "volumeClaimTemplates", "'data-db-1'",
                   # claim bindings: a pending pod's own generic ephemeral claim, created
                   "'incoming-scratch'",
                   # resized running pods of the pending pod's ReplicaSet (not in the input)
                   "'incoming-sib'"):
        assert needle in text, needle


def _unmerged_label_keys(pod: dict) -> list[str]:
    """The (mis)matchLabelKeys of ``pod``'s affinity terms whose requirement on the pod's own
    label is not in the term's selector: what the API server would still add at creation."""
    labels = pod["metadata"].get("labels") or {}
    affinity = pod["spec"].get("affinity") or {}
    missing = []
    for kind in ("podAffinity", "podAntiAffinity"):
        for term in (affinity.get(kind) or {}).get("requiredDuringSchedulingIgnoredDuringExecution") or ():
            exprs = (term.get("labelSelector") or {}).get("matchExpressions") or ()
            for field, operator in (("matchLabelKeys", "In"), ("mismatchLabelKeys", "NotIn")):
                for key in (k for k in term.get(field) or () if k in labels):
                    if {"key": key, "operator": operator, "values": [labels[key]]} not in exprs:
                        missing.append(f"{kind} {field} {key}")
    return missing


@pytest.mark.parametrize("volumes", [False, True])
def test_pods_without_uid_are_in_stored_form(volumes):
    """A pod without a ``uid`` is one symreach creates as the API server would, merging its
    label keys with its labels; kso takes it as written. So every such generated pod must
    already hold those merges: a controller's pods made from a relabelled pod's spec carry a
    ``uid`` (kso_agreement --volumes --contested --seed 822 found one that did not, state 167)."""
    stale = [(i, pod["metadata"]["name"], key)
             for i, state in enumerate(random_states(400, 822, volumes)) for pod in state.objects
             if pod["kind"] == "Pod" and "uid" not in pod["metadata"] for key in _unmerged_label_keys(pod)]
    assert stale == []


@needs_kso
def test_kso_and_symreach_agree_on_random_states():
    states = random_states(STATES, 11)
    answers = kso_verdicts(states, KSO)
    disagreements = [d for i, state in enumerate(states) for d in compare(i, answers[i], symreach_verdicts(state))]
    assert sum(len(a) for a in answers) > 2 * STATES
    assert sum(has_volume_objects(s) for s in states) > STATES // 4   # the volume plugins are really asked
    assert not disagreements, "\n".join(f"state {d.state} node {d.node}: {d.cls}" for d in disagreements[:10])


@needs_kso
def test_new_pods_of_resized_pods_types_agree():
    """A pending copy of every resized running pod (a new pod of its spec) against symreach's type
    of new pods (``benchmarks.kso_resize_probes``): before, those types held what the resized pod holds."""
    from benchmarks.kso_resize_probes import resize_probes

    asked, tally, wrong = resize_probes(random_states(STATES, 11), KSO)
    assert not wrong, wrong[:3]
    assert (asked, tally.verdicts) == RESIZE_PROBES


RESIZE_PROBES = (41, 173)   # states with resized running pods copied, verdicts compared


@needs_kso
def test_batched_kso_answers_equal_single_runs():
    """The renaming that isolates states inside one kso input changes no answer."""
    states = random_states(12, 3)
    assert kso_verdicts(states, KSO, batch=6) == [kso_verdicts_single(s, KSO) for s in states]


@needs_kso
def test_witness_traces_replay_on_the_real_scheduler():
    found = witnesses(TRACES, 1)
    assert len(found) == TRACES
    steps = replay(found, KSO)
    refused = [(w.index, i, node, verdict) for w, ws in zip(found, steps)
               for i, (node, verdict) in enumerate(ws) if verdict is not None]
    assert sum(len(s) for s in steps) >= 2 * TRACES
    assert not refused, refused[:5]


VOLUME_TRACES = 4


@needs_kso
def test_volume_witness_traces_replay_on_the_real_scheduler():
    """Witnesses in scenarios with volume objects, pods using claims and in-tree disks, each
    deployment asked of kso in the state it is made in (with every volume object)."""
    found = witnesses(VOLUME_TRACES, 3, max_tries=100, volumes=True)
    assert len(found) == VOLUME_TRACES
    assert sum(any(o["kind"] == "Pod" and o["spec"].get("volumes") for o in w.objects) for w in found) >= 2
    steps = replay(found, KSO)
    refused = [(w.index, i, node, verdict) for w, ws in zip(found, steps)
               for i, (node, verdict) in enumerate(ws) if verdict is not None]
    assert sum(len(s) for s in steps) >= 2 * VOLUME_TRACES
    assert not refused, refused[:5]


@needs_kso
def test_volume_dense_states_agree():
    """States where most nodes reach the volume plugins (``volume_state``): every verdict agrees."""
    states = random_states(60, 300, volumes=True)
    answers = kso_verdicts(states, KSO)
    ours = [symreach_verdicts(s) for s in states]
    reached = [v[0] for verdicts in ours for v in verdicts.values() if v]
    volume_plugins = ("VolumeRestrictions", "NodeVolumeLimits", "VolumeBinding", "VolumeZone")
    assert sum(p in volume_plugins for p in reached) >= 60
    assert "NodeVolumeLimits" in reached and "VolumeRestrictions" in reached
    disagreements = [d for i in range(len(states)) for d in compare(i, answers[i], ours[i])]
    assert not disagreements, "\n".join(f"state {d.state} node {d.node}: {d.cls}" for d in disagreements[:10])
