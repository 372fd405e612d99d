"""Filter verdicts with nominated pods (``status.nominatedNodeName``), one class per case, exactly as
the kube-scheduler's ``RunFilterPluginsWithNominatedPods`` gives them.

``KSO`` holds the answers of the kso variant with nominated pods (``benchmarks/kso_nominated``), written
in; where the variant is built (``KSO_NOMINATED``, default /work/wt/nom-kso/kso) they are re-asked.
"""

from __future__ import annotations

import copy
import os
from pathlib import Path

import pytest

from benchmarks.kso_harness import admitted, kso_pending
from symreach.frontends.k8s_nominated_filter import nominated_failure
from symreach.frontends.kubernetes import load_kubernetes_documents
from tests.nominated_cases import CASES

VARIANT = Path(os.environ.get("KSO_NOMINATED", "/work/wt/nom-kso/kso"))

# case -> pending pod -> node -> kso's first failing plugin and reasons (None: fits)
KSO = {'higher-priority-takes-cpu': {'default/q': {'n1': None, 'n2': None},
                               'default/p': {'n1': ('NodeResourcesFit', ('Insufficient cpu',)), 'n2': None}},
 'equal-priority': {'default/q': {'n1': None, 'n2': None},
                    'default/p': {'n1': ('NodeResourcesFit', ('Insufficient cpu',)), 'n2': None}},
 'lower-priority-ignored': {'default/q': {'n1': None, 'n2': None}, 'default/p': {'n1': None, 'n2': None}},
 'nominated-anti-affinity': {'default/q': {'n1': None, 'n2': None}, 'default/p': {'n1': None, 'n2': None}},
 'nominated-anti-affinity-counted': {'default/q': {'n1': None, 'n2': None, 'n3': None},
                                     'default/p': {'n1': ('InterPodAffinity',
                                                          ("node(s) didn't satisfy existing pods anti-affinity "
                                                           'rules',)),
                                                   'n2': ('InterPodAffinity',
                                                          ("node(s) didn't satisfy existing pods anti-affinity "
                                                           'rules',)),
                                                   'n3': None}},
 'own-anti-affinity': {'default/q': {'n1': None, 'n2': None},
                       'default/p': {'n1': ('InterPodAffinity', ("node(s) didn't match pod anti-affinity rules",)),
                                     'n2': None}},
 'host-port': {'default/q': {'n1': None, 'n2': None},
               'default/p': {'n1': ('NodePorts', ("node(s) didn't have free ports for the requested pod ports",)),
                             'n2': None}},
 'spread': {'default/q': {'n1': None, 'n2': None},
            'default/p': {'n1': ('PodTopologySpread', ("node(s) didn't match pod topology spread constraints",)),
                          'n2': None}},
 'own-nomination': {'default/q': {'n1': None, 'n2': None},
                    'default/r': {'n1': ('NodeResourcesFit', ('Insufficient cpu',)), 'n2': None}},
 'affinity-second-run': {'default/q': {'n1': None, 'n2': None},
                         'default/p': {'n1': ('InterPodAffinity', ("node(s) didn't match pod affinity rules",)),
                                       'n2': ('InterPodAffinity', ("node(s) didn't match pod affinity rules",))}},
 'running-pods-and-two-nominations': {'default/q1': {'n1': None, 'n2': None},
                                      'default/q2': {'n1': None, 'n2': None},
                                      'default/p': {'n1': ('NodeResourcesFit', ('Insufficient cpu',)), 'n2': None},
                                      'default/p0': {'n1': None, 'n2': None}},
 'nominated-where-it-would-not-fit': {'default/q': {'n1': ('TaintToleration',
                                                           ('node(s) had untolerated taint(s)',)),
                                                    'n2': None},
                                      'default/p': {'n1': ('NodeResourcesFit', ('Insufficient cpu',)),
                                                    'n2': None}},
 'not-nominated': {'default/g': {'n1': None, 'n2': ('NodeResourcesFit', ('Insufficient cpu',))},
                   'default/o': {'n1': None, 'n2': ('NodeResourcesFit', ('Insufficient cpu',))},
                   'default/p': {'n1': None, 'n2': None}},
 'nominated-to-a-missing-node': {'default/q': {'n1': None, 'n2': None}, 'default/p': {'n1': None, 'n2': None}},
 'rwop-nominated-skipped': {'default/q': {'n1': None, 'n2': None}, 'default/p': {'n1': None, 'n2': None}},
 'rwop-nominated-skipped-binding': {'default/q': {'n1': ('VolumeBinding', ("node(s) didn't match PersistentVolume's "
                                                                          'node affinity',)),
                                                  'n2': None},
                                    'default/p': {'n1': ('VolumeBinding', ("node(s) didn't match PersistentVolume's "
                                                                          'node affinity',)),
                                                  'n2': None}},
 'rwop-nominated-with-disk': {'default/q': {'n1': None, 'n2': None},
                              'default/p': {'n1': ('VolumeRestrictions',
                                                   ('node(s) unavailable due to PersistentVolumeClaim with '
                                                    'ReadWriteOncePod access mode already in-use by another pod',)),
                                            'n2': None}}}


def symreach_answers(objects: list[dict]) -> dict:
    """Every pending pod's verdict on every node in the state as loaded, nominations in force."""
    inst, report = load_kubernetes_documents(copy.deepcopy(admitted(objects)), "<state>")
    sigma = inst.initial_config()
    out: dict = {}
    for pod, type_name in report.pending.items():
        out[pod] = {}
        for node in inst.nodes:
            failure = nominated_failure(inst, report.nominated, type_name, node.name, sigma, pod=pod)
            out[pod][node.name] = None if failure is None else (failure.plugin, failure.reasons)
    return out


@pytest.mark.parametrize("case", sorted(CASES))
def test_verdicts_with_nominations_are_the_schedulers(case: str) -> None:
    assert symreach_answers(CASES[case]) == KSO[case]


def test_nominations_change_the_verdicts_they_should() -> None:
    """Without the nominations (plain node_failure) the written answers differ exactly where a nomination
    of higher or equal priority sits: the cases test something. (In affinity-second-run the nominated pod
    would satisfy p's affinity, but the run without it refuses: the same verdict as without nominations.)"""
    from benchmarks.kso_harness import verdicts_at
    changed = set()
    for case, objects in CASES.items():
        inst, report = load_kubernetes_documents(copy.deepcopy(admitted(objects)), "<state>")
        for pod, type_name in report.pending.items():
            plain = verdicts_at(inst, inst.type_index(type_name), inst.initial_config())
            if plain != KSO[case][pod]:
                changed.add((case, pod))
    assert changed == {("higher-priority-takes-cpu", "default/p"), ("equal-priority", "default/p"),
                       ("nominated-anti-affinity-counted", "default/p"), ("own-anti-affinity", "default/p"),
                       ("host-port", "default/p"), ("spread", "default/p"), ("own-nomination", "default/r"),
                       ("running-pods-and-two-nominations", "default/p"),
                       ("nominated-where-it-would-not-fit", "default/p"), ("rwop-nominated-with-disk", "default/p")}


@pytest.mark.skipif(not VARIANT.exists(), reason="kso variant with nominated pods not built (benchmarks/kso_nominated)")
def test_written_answers_are_the_variants() -> None:
    names = sorted(CASES)
    pods = [sorted(KSO[c]) for c in names]
    nodes = [sorted({n for v in KSO[c].values() for n in v}) for c in names]
    asked = kso_pending([admitted(CASES[c]) for c in names], pods, nodes, VARIANT)
    assert dict(zip(names, asked)) == KSO


def test_random_states_carry_priorities_and_nominations() -> None:
    """The generator is seeded (same arguments, same states) and gives what the differential needs."""
    from symreach.generators.k8s_nominated_states import nominated_states, small_states

    first, again = nominated_states(20, 5), nominated_states(20, 5)
    assert [s.objects for s in first] == [s.objects for s in again]
    for states in (first, small_states(20, 5)):
        pods = [o for s in states for o in s.objects if o["kind"] == "Pod"]
        assert any("priority" in o["spec"] for o in pods)
        assert sum(s.nominated for s in states) >= 10
        assert all(p in {f"{o['metadata'].get('namespace') or 'default'}/{o['metadata']['name']}" for o in s.objects
                         if o["kind"] == "Pod" and not o["spec"].get("nodeName")} for s in states for p in s.pending)


@pytest.mark.skipif(not VARIANT.exists(), reason="kso variant with nominated pods not built (benchmarks/kso_nominated)")
def test_random_states_and_walks_agree_with_the_variant() -> None:
    """A small run of ``benchmarks.kso_nominated_agreement`` (its recorded runs: benchmarks/results/kso_nominated.md)."""
    from benchmarks.kso_nominated_agreement import agreement

    out = agreement(12, 7, VARIANT, workers=2, walks=2)
    stats = out["stats"]
    assert not out["classes"], out["classes"]
    assert stats["fit agrees"] == stats["plugin+reason agrees"] == stats["node verdicts"] > 0
    assert stats["walk agrees"] == stats["walk verdicts"] > 0 and stats["walk steps ending a nomination"] > 0
