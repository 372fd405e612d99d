"""Deletions that name what their pod holds: pods of one type on one node holding DRA devices of
different kinds (issue 27).

Two pods of the Deployment ``train`` (one gpu each, from a template) run on n1, one holding
n1's a100 (g0), the other its t4 (g1); the pending bare pod ``want`` needs an a100. Deleting
the a100's holder lets ``want`` fit n1, deleting the t4's holder does not. Both outcomes are
reachable, the deletion names the holding, the witness picks the right one, replay refuses a
deletion naming a holding no pod there has (or naming none when the pods there differ), and
``certify`` re-checks closure under every holding's deletion. ``AFTER`` holds the DRA kso
variant's answers (``/work/wt/dra-kso/kso``, docs/dra.md) on the two states after a deletion;
``test_expectations_are_the_variant_answers`` asks it again where it is built.
"""

from __future__ import annotations

import copy
import os
from pathlib import Path

import pytest
import yaml

from benchmarks.kso_harness import any_state, kso_verdicts_single, symreach_verdicts
from symreach import semantics
from symreach.frontends.kubernetes import load_kubernetes_documents
from symreach.model import Query
from symreach.result import DELETE, DEPLOY, Step, Verdict

DATA = Path(__file__).parent / "data" / "dra"
VARIANT = Path(os.environ.get("KSO_DRA", "/work/wt/dra-kso/kso"))
ALLOC = ("DynamicResources", ("cannot allocate all claims",))
A100, T4 = "gpu.example.com/n1/g0", "gpu.example.com/n1/g1"
PINNED_N1 = {"nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n1"]}]}]}
# the variant's verdicts for ``want`` once the pod holding <device> is deleted (its claim goes with it)
AFTER = {"g0": {"n1": None, "n2": ALLOC}, "g1": {"n1": ALLOC, "n2": ALLOC}}
BEFORE = {"n1": ALLOC, "n2": ALLOC}


def _train(i: int, device: str) -> list[dict]:
    """Pod train-i of the Deployment on n1 and its generated claim holding n1's ``device``."""
    pod = {"apiVersion": "v1", "kind": "Pod",
           "metadata": {"name": f"train-{i}", "namespace": "default", "uid": f"uid-train-{i}", "labels": {"app": "train"},
                        "ownerReferences": [{"apiVersion": "apps/v1", "kind": "Deployment", "name": "train",
                                             "uid": "uid-train", "controller": True}]},
           "spec": {"nodeName": "n1", "containers": [{"name": "c", "image": "x"}],
                    "resourceClaims": [{"name": "g", "resourceClaimTemplateName": "one-gpu"}]},
           "status": {"resourceClaimStatuses": [{"name": "g", "resourceClaimName": f"train-{i}-g"}]}}
    claim = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
             "metadata": {"name": f"train-{i}-g", "namespace": "default", "ownerReferences": [
                 {"apiVersion": "v1", "kind": "Pod", "name": f"train-{i}", "uid": f"uid-train-{i}", "controller": True}]},
             "spec": {"devices": {"requests": [{"name": "r", "exactly": {"deviceClassName": "gpu"}}]}},
             "status": {"allocation": {"devices": {"results": [
                 {"request": "r", "driver": "gpu.example.com", "pool": "n1", "device": device}]},
                 "nodeSelector": PINNED_N1},
                 "reservedFor": [{"resource": "pods", "name": f"train-{i}", "uid": f"uid-train-{i}"}]}}
    return [pod, claim]


def _want() -> list[dict]:
    claim = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
             "metadata": {"name": "ca100", "namespace": "default"},
             "spec": {"devices": {"requests": [{"name": "r", "exactly": {"deviceClassName": "gpu", "selectors": [
                 {"cel": {"expression": 'device.attributes["gpu.example.com"].model == "a100"'}}]}}]}}}
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "want", "namespace": "default"},
           "spec": {"containers": [{"name": "c", "image": "x"}],
                    "resourceClaims": [{"name": "g", "resourceClaimName": "ca100"}]}}
    return [claim, pod]


def _cluster(running: tuple[str, ...] = ("g0", "g1")) -> list[dict]:
    """``deployment.yaml`` with n1's pool holding an a100 (g0) and a t4 (g1), the ``train`` pods
    holding ``running``, and ``want``."""
    objects = [o for o in yaml.safe_load_all((DATA / "deployment.yaml").read_text()) if o]
    pool = next(o for o in objects if o["kind"] == "ResourceSlice")
    pool["spec"]["devices"] = [{"name": "g0", "attributes": {"model": {"string": "a100"}}},
                               {"name": "g1", "attributes": {"model": {"string": "t4"}}}]
    for o in objects:
        if o["kind"] == "Deployment":
            o["spec"]["replicas"] = 2
    return objects + [x for i, d in enumerate(running) for x in _train(i, d)] + _want()


def test_symreach_gives_the_variant_answers_after_each_deletion():
    """Loaded as the states the two deletions leave, ``want`` gets the variant's verdicts."""
    assert symreach_verdicts(any_state(_cluster(), "default/want")) == BEFORE
    checked = 0
    for device, want in AFTER.items():
        kept = tuple(d for d in ("g0", "g1") if d != device)
        assert symreach_verdicts(any_state(_cluster(kept), "default/want")) == want, device
        checked += 1
    assert checked == 2


@pytest.mark.skipif(not os.access(VARIANT, os.X_OK), reason="the kso variant with DRA is not built here")
def test_expectations_are_the_variant_answers():
    assert kso_verdicts_single(any_state(_cluster(), "default/want"), VARIANT) == BEFORE
    for device, want in AFTER.items():
        kept = tuple(d for d in ("g0", "g1") if d != device)
        assert kso_verdicts_single(any_state(_cluster(kept), "default/want"), VARIANT) == want, device


def _loaded():
    inst, report = load_kubernetes_documents(copy.deepcopy(_cluster()), "<dra>")
    return inst, report, inst.type_index("default/train"), inst.type_index("default/want")


def test_each_holding_is_a_deletion_of_its_own():
    """The semantics: a deletion of a train pod on n1 has two outcomes, named by the gpu freed;
    after the a100's, ``want`` fits n1 (as the variant says), after the t4's it does not. No
    caveat is left on the types."""
    inst, report, train, want = _loaded()
    assert not any("different devices" in c for cs in report.caveats.values() for c in cs)
    sigma = inst.initial_config()
    choices = dict(semantics.deletions(inst, sigma, train, 0))
    assert sorted(choices) == [A100, T4]
    verdicts = {}
    for holding, after in choices.items():
        assert semantics.delete(inst, sigma, train, 0, holding) == after
        failure = semantics.node_failure(inst, want, 0, after)
        verdicts[holding] = None if failure is None else (failure.plugin, failure.reasons)
    assert verdicts == {A100: AFTER["g0"]["n1"], T4: AFTER["g1"]["n1"]}
    assert semantics.binding_notes(inst, [Step(DELETE, "default/train", "n1", holding=T4)]) == [f"frees n1: {T4}"]


def test_witness_deletes_the_pod_holding_the_a100():
    """explicit's witness for ``want`` on n1 deletes the a100's holder, named in the step (text and
    JSON), and replays; with only the t4 holder deletable the target is not reachable."""
    from symreach.report.verdict import result_text
    from symreach.solvers.explicit import ExplicitEngine

    inst, _, train, want = _loaded()
    result = ExplicitEngine().check(inst, Query((frozenset({(want, 0)}),)))
    assert result.verdict is Verdict.DEPLOYABLE
    assert result.trace == (Step(DELETE, "default/train", "n1", holding=A100), Step(DEPLOY, "default/want", "n1"))
    semantics.replay(inst, result.trace, Query((frozenset({(want, 0)}),)))
    assert result.to_json()["trace"][0] == {"op": "delete", "pod": "default/train", "node": "n1", "binds": None,
                                            "holding": A100}
    assert f"delete default/train on n1 holding {A100}" in result_text(result)
    wrong = (Step(DELETE, "default/train", "n1", holding=T4), Step(DEPLOY, "default/want", "n1"))
    with pytest.raises(semantics.ReplayError, match="illegal"):
        semantics.replay(inst, wrong)


@pytest.mark.parametrize("holding,why", [("gpu.example.com/n1/g7", "holds gpu.example.com/n1/g7"),
                                         ("", "must name one of")])
def test_replay_refuses_a_forged_deletion(holding, why):
    """A deletion naming a holding no pod there has, or none where the pods there differ."""
    inst, _, _, _ = _loaded()
    with pytest.raises(semantics.ReplayError, match=why):
        semantics.replay(inst, [Step(DELETE, "default/train", "n1", holding=holding)])


def test_certify_checks_every_holdings_deletion():
    """``want`` beside both train pods on n1 is not deployable (n1 has two gpus); explicit's
    certificate is accepted, and refused once the state deleting the t4's holder leads to is cut."""
    import json

    from symreach.certify.explicit_states import check_certificate, read_states
    from symreach.model import CountTarget
    from symreach.solvers.explicit import ExplicitEngine

    inst, _, train, want = _loaded()
    query = Query((frozenset({(want, 0)}),), counts=(CountTarget(frozenset({(train, 0)}), 2),))
    result = ExplicitEngine().check(inst, query)
    assert result.verdict is Verdict.NOT_DEPLOYABLE
    cert = json.loads(result.certificate.dumps())
    assert check_certificate(inst, cert)[0]
    gone = dict(semantics.deletions(inst, inst.initial_config(), train, 0))[T4]
    rows = [i for i in range(len(cert["states"]))
            if read_states(inst, dict(cert, states=[cert["states"][i]], bound=[cert["bound"][i]])) == {gone}]
    assert len(rows) == 1
    for key in ("states", "bound"):
        del cert[key][rows[0]]
    ok, why = check_certificate(inst, cert)
    assert not ok and "not closed" in why


def test_exported_steps_delete_the_pod_holding_it():
    """The trace's pod names follow the holding: the input's a100 holder is train-0 (not the last
    listed); of two pods a trace creates, deleting the a100's holder names the first one created."""
    from symreach.export.traces import step_names

    inst, report, _, _ = _loaded()
    assert report.initial_holdings == {("default/train", "train-0"): A100, ("default/train", "train-1"): T4}
    names = report.initial_pod_names
    steps = [Step(DELETE, "default/train", "n1", holding=A100)]
    assert step_names(steps, inst, names, report.initial_holdings) == ["default/train-0"]
    steps = [Step(DELETE, "default/train", "n1", holding=T4)]
    assert step_names(steps, inst, names, report.initial_holdings) == ["default/train-1"]
    gone = [Step(DELETE, "default/train", "n1", holding=A100), Step(DELETE, "default/train", "n1", holding=T4)]
    made = [Step(DEPLOY, "default/train", "n1"), Step(DEPLOY, "default/train", "n1"),
            Step(DELETE, "default/train", "n1", holding=A100)]
    semantics.replay(inst, gone + made)
    planned = step_names(gone + made, inst, names, report.initial_holdings)
    assert planned[2:] == [planned[2], planned[3], planned[2]] and planned[2] != planned[3]
