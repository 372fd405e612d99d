"""DynamicResources (DRA): symreach's verdicts against a kso variant built with the plugin.

The shared kso does not run DRA; ``/work/wt/dra-kso/kso`` (``docs/dra.md``) does.
``EXPECTED`` holds that variant's answers for each pending pod of the two
hand-made states in ``tests/data/dra`` (claims to allocate with CEL selectors,
an allocated claim pinning its pods, a missing claim, a template claim not
created yet, a missing DeviceClass, an ``All`` request beside an allocated
claim); ``test_expectations_are_the_variant_answers`` re-asks the variant where
it is installed. Also: the CEL subset, caveats, the v1 ``dra`` field's errors.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import yaml

from benchmarks.kso_harness import any_state, kso_verdicts_single, symreach_verdicts
from symreach.errors import InputError
from symreach.frontends import dra_cel
from symreach.frontends.kubernetes import load_kubernetes_documents
from symreach.loader import load_text

DATA = Path(__file__).parent / "data" / "dra"
VARIANT = Path(os.environ.get("KSO_DRA", "/work/wt/dra-kso/kso"))
DRA = "DynamicResources"
ALLOC = (DRA, ("cannot allocate all claims",))
AWAY = (DRA, ("resourceclaim not available on the node",))


def every(why: str) -> dict:
    return {n: (DRA, (why,)) for n in ("n1", "n2", "n3")}


# pod -> node -> the variant's verdict (None: fits), from ``kso tests/data/dra/*.yaml``
EXPECTED = {
    "default/p1": {"n1": ALLOC, "n2": ALLOC, "n3": ALLOC},   # its a100 (g0 on n1) is c0's
    "default/p2": {"n1": None, "n2": AWAY, "n3": AWAY},      # c0 allocated on n1
    "default/p3": every('could not find ResourceClaim "default/nope"'),
    "default/p4": every('pod "default/p4": ResourceClaim not created yet'),
    "default/p5": every("request r: device class nosuch does not exist"),
    "default/p6": {"n1": ALLOC, "n2": AWAY, "n3": ALLOC},    # All of n1's gpus (one taken) + c0
}
# the variant on ``slices.yaml`` + a twin p1b/c1b once p1 runs on n1 and c1 holds g0 (reserved for p1)
TWIN_AFTER = {"n1": ALLOC, "n2": ALLOC, "n3": ALLOC}
# ``deployment.yaml`` once one pod of the Deployment runs on n1 holding g0 through its generated claim
TRAIN_AFTER = {"n1": ALLOC, "n2": ALLOC}
SLICES_ONLY = {"default/p1": {"n1": None, "n2": ALLOC, "n3": ALLOC}}
# ``more.yaml``: a firstAvailable request (2 gpus of mem >= 40, else a nic of the zone-z1 pool, a
# ResourceSlice with a nodeSelector), a claim being deleted, a generated claim the pod does not
# own, and an All request beside an ExactCount one in a generated claim the pod owns.
MORE = {
    "default/q1": {"n1": None, "n2": ALLOC, "n3": None},
    "default/q2": every('resourceclaim "gone" is being deleted'),
    "default/q3": every("ResourceClaim default/q3-g was not created for pod default/q3 (pod is not owner)"),
    "default/q4": {"n1": None, "n2": ALLOC, "n3": ALLOC},
}


def _objects(*names: str) -> list[dict]:
    return [o for name in names for o in yaml.safe_load_all((DATA / name).read_text()) if o]


def _state(objects: list[dict], pending: str):
    def is_other_pending(o: dict) -> bool:
        key = f"{o['metadata'].get('namespace', 'default')}/{o['metadata']['name']}"
        return o["kind"] == "Pod" and not o["spec"].get("nodeName") and key != pending
    return any_state([o for o in objects if not is_other_pending(o)], pending)


CASES = [(("slices.yaml",), pod, want) for pod, want in SLICES_ONLY.items()] + \
    [(("slices.yaml", "claims.yaml"), pod, want) for pod, want in EXPECTED.items()] + \
    [(("more.yaml",), pod, want) for pod, want in MORE.items()]


@pytest.mark.parametrize("files,pod,want", CASES)
def test_symreach_gives_the_variant_answer(files, pod, want):
    assert symreach_verdicts(_state(_objects(*files), pod)) == want


@pytest.mark.skipif(not os.access(VARIANT, os.X_OK), reason="the kso variant with DRA is not built here")
def test_expectations_are_the_variant_answers():
    checked = 0
    for files, pod, want in CASES:
        assert kso_verdicts_single(_state(_objects(*files), pod), VARIANT) == want, pod
        checked += 1
    assert checked == len(CASES) == 11


def test_cel_expressions():
    """The CEL the allocator's environment evaluates; ``model == 1`` is false, not an error (the
    variant: the pod does not fit), a missing attribute is ``no such key`` (the variant: the cycle aborts)."""
    attrs = dra_cel.attribute_values("gpu.example.com", {"model": {"string": "a100"}, "mem": {"int": 40},
                                                         "other.io/fast": {"bool": True},
                                                         "driverVersion": {"version": "550.54.15"}})
    capacity = dra_cel.capacity_values("gpu.example.com", {"memory": {"value": "80Gi"}})
    ev = lambda e: dra_cel.evaluate(e, "gpu.example.com", attrs, capacity)   # noqa: E731
    gpu = 'device.attributes["gpu.example.com"]'
    cases = {
        'device.driver == "gpu.example.com"': True,
        'device.driver != "gpu.example.com"': False,
        f'{gpu}.model == "a100"': True,
        f'{gpu}.mem >= 40 && {gpu}.mem < 80': True,
        'device.attributes["other.io"].fast == true': True,
        f'device.driver == "gpu.example.com" && ({gpu}.model == "h100" || !({gpu}.mem < 40))': True,
        f'{gpu}.model in ["a100", "h100"]': True,
        f'{gpu}.model.startsWith("a1") && {gpu}.model.matches("^a[0-9]+$")': True,
        'device.capacity["gpu.example.com"].memory.compareTo(quantity("10Gi")) >= 0': True,
        'device.capacity["gpu.example.com"].memory.isGreaterThan(quantity("81Gi"))': False,
        f'{gpu}.driverVersion.isGreaterThan(semver("550.0.0"))': True,
        f'has({gpu}.mem) && !has({gpu}.ecc)': True,
        'device.attributes["absent.io"].x == 1 && false': False,       # && is commutative over errors
        f'{gpu}.model == 1': False,                                     # heterogeneous ==
        f'{gpu}.size == 1': dra_cel.CelError("no such key: size"),
        f'{gpu}.model < 1': dra_cel.CelError("no such overload"),
        'device.foo.bar()': dra_cel.UNKNOWN,
        # the variant's runtime errors (``benchmarks/kso_dra_agreement`` shows them as each node's reason)
        f'int({gpu}.model) == 1': dra_cel.CelError("type conversion error from 'string' to 'int'"),
        f'9223372036854775807 + {gpu}.mem > 0': dra_cel.CelError("integer overflow"),
        f'{gpu}.model[0] == "a"': dra_cel.CelError("no such key: 0"),
        f'{gpu}.mem / 0 == 1': dra_cel.CelError("division by zero"),
        f'{gpu}.mem > 16 ? {gpu}.zzz == 1 : true': dra_cel.CelError("no such key: zzz"),
        f'["x", "a100"].exists(m, {gpu}.model == m) && !quantity("1500m").isInteger()': True,
        f'{gpu}.model.indexOf("10") == 1 && {gpu}.model.substring(1, 2) == "1" && {gpu}.model.split("0") == '
        '["a1", "", ""] && ["a", "b"].join("-") == "a-b" && {gpu}.model.replace("a", "b") == "b100"'.replace(
            "{gpu}", gpu): True,
        f'{gpu}.model.charAt(5) == ""': dra_cel.CelError("index out of range: 5"),
        f'{gpu}.model.substring(3, 1) == ""': dra_cel.CelError("invalid substring range. start: 3, end: 1"),
        f'// a comment\n{gpu}.model == "a100" // "http://x"\n  && "http://x" != ""  // the end\n': True,
    }
    for expression, want in cases.items():
        assert ev(expression) == want, expression
    assert len(cases) == 27


def test_unevaluated_selector_is_a_caveat_not_silent():
    objects = _objects("slices.yaml")
    for o in objects:
        if o["kind"] == "DeviceClass":
            o["spec"]["selectors"].append(   # a function the evaluator does not know
                {"cel": {"expression": 'device.foo.bar()'}})
    _, report = load_kubernetes_documents(objects, "<dra>")
    assert any("CEL selector not evaluated" in c for c in report.caveats["default/p1"])


def test_witness_allocation_is_state_not_a_caveat():
    """Two pending types that allocate devices: the allocation is state (one group over the
    claims they name), so no type carries the old caveat."""
    inst, report = load_kubernetes_documents(_objects("slices.yaml", "claims.yaml"), "<dra>")
    marked = [name for name, caveats in report.caveats.items() if any("earlier steps of a witness" in c for c in caveats)]
    assert marked == []
    assert [g for g in inst.binding_groups if g.holders] and inst.type_index("default/p1") in inst.binding_of


def test_dra_verdict_comes_after_every_other_plugin():
    """A node failing NodeResourcesFit and DynamicResources reports NodeResourcesFit."""
    objects = _objects("slices.yaml")
    pod = next(o for o in objects if o["kind"] == "Pod")
    pod["spec"]["containers"][0]["resources"] = {"requests": {"cpu": "5"}}
    got = symreach_verdicts(_state(objects, "default/p1"))
    assert got["n2"] == ("NodeResourcesFit", ("Insufficient cpu",))


BAD = [
    ("apiVersion: resource.k8s.io/v1\nkind: ResourceSlice\nmetadata: {name: s}\nspec:\n  driver: 7\n",
     "spec.driver", 5),
    ("apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata: {name: c}\nspec:\n  devices:\n"
     "    requests:\n    - name: r\n      exactly: {deviceClassName: gpu, count: many}\n",
     "spec.devices.requests[0].exactly.count", 8),
    ("apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata: {name: c}\nspec: {devices: {requests: []}}\n"
     "status:\n  allocation:\n    nodeSelector: {nodeSelectorTerms: [{matchFields: [{key: metadata.uid, operator: In, values: [x]}]}]}\n",
     "status.allocation.nodeSelector", 7),
]


@pytest.mark.parametrize("text,field,line", BAD)
def test_bad_dra_objects_name_file_field_line(text, field, line, tmp_path):
    from symreach.frontends.kubernetes import load_kubernetes

    path = tmp_path / "bad.yaml"
    path.write_text(text)
    with pytest.raises(InputError) as err:
        load_kubernetes(path)
    assert field in str(err.value) and f"bad.yaml:{line}:" in str(err.value)


V1 = """version: 1
semantics: kubernetes
nodes: [{name: n1, capacity: {cpu: 1, pods: 10}}]
podTypes:
- name: p
  dra: %s
"""


@pytest.mark.parametrize("dra,problem", [
    ("{filter: [{node: n9, plugin: DynamicResources, reasons: [x]}]}", "unknown node 'n9'"),
    ("{preFilter: {plugin: VolumeBinding, reasons: [x]}}", "expected DynamicResources"),
    ("{preFilter: {plugin: DynamicResources, reasons: []}}", "at least one reason"),
    ("{devices: 1}", "devices"),
    ("{allocations: {slots: [], states: [{held: []}]}}", "expected distinct slot names"),
    ("{allocations: {slots: [default/c], states: [{held: [null], nodes: {n9: 0}}]}}", "unknown name 'n9'"),
    ("{allocations: {slots: [default/c], states: [{held: [null], releases: {default/c: 3}}]}}", "at most 0"),
    ("{allocations: {slots: [default/c], states: [{held: [x, y]}]}}", "one per slot"),
    ("{allocations: {slots: [default/c], states: [{held: [null], frees: {n1: {}}}]}}", "at least one holding"),
    ("{allocations: {slots: [default/c], states: [{held: [null], frees: {n1: {g0: 2}}}]}}", "at most 0"),
])
def test_bad_v1_dra_field(dra, problem):
    with pytest.raises(InputError) as err:
        load_text(V1 % dra, "bad.yaml")
    assert problem in str(err.value) and str(err.value).startswith("bad.yaml:6: podTypes[0].dra")


def test_cli_bad_dra_object_is_exit_2_with_file_and_line(tmp_path):
    from click.testing import CliRunner

    from symreach.cli import cli

    path = tmp_path / "bad.yaml"
    path.write_text(BAD[1][0] + "---\napiVersion: v1\nkind: Node\nmetadata: {name: n1}\n"
                    "status: {allocatable: {cpu: '1', pods: '5'}}\n")
    run = CliRunner().invoke(cli, ["matrix", str(path)])
    assert run.exit_code == 2
    assert "bad.yaml:8" in run.output and "spec.devices.requests[0].exactly.count" in run.output


def test_engines_on_a_dra_instance():
    """Allocation is state only explicit keeps: it answers every cell (each witness replays),
    bdd and ic3 decline in one line, auto gives explicit's answers."""
    from symreach.model import Query
    from symreach.result import Verdict
    from symreach.semantics import replay
    from symreach.solvers.registry import make_engine

    inst, _ = load_kubernetes_documents(_objects("slices.yaml", "claims.yaml"), "<dra>")
    answers = {}
    for engine in ("explicit", "bdd", "ic3", "auto"):
        for t in range(len(inst.pod_types)):
            for n in range(len(inst.nodes)):
                result = make_engine(engine).check(inst, Query((frozenset({(t, n)}),)))
                if result.verdict is Verdict.DEPLOYABLE:
                    replay(inst, result.trace)
                if engine in ("bdd", "ic3"):
                    assert result.verdict is Verdict.UNKNOWN and "DRA devices" in result.reason
                else:
                    answers.setdefault((t, n), set()).add(result.verdict)
    assert len(answers) == 18 and all(len(v) == 1 for v in answers.values())
    p2 = inst.type_index("default/p2")
    # c0 pins p2 to n1 until p2 has run and gone (the controller deallocates it); n3 has no gpu
    assert [answers[(p2, n)] for n in range(3)] == [{Verdict.DEPLOYABLE}, {Verdict.DEPLOYABLE}, {Verdict.NOT_DEPLOYABLE}]


def test_dump_without_dra_objects_is_a_caveat():
    """A dump of nodes and pods only: the claims are missing for the scheduler too, with a caveat."""
    objects = [o for o in _objects("slices.yaml") if o["kind"] in ("Node", "Pod")]
    inst, report = load_kubernetes_documents(objects, "<dra>")
    t = inst.type_index("default/p1")
    assert inst.static_block[t] == ('could not find ResourceClaim "default/c1"',) * 3
    assert any("no resource.k8s.io objects" in c for c in report.caveats["default/p1"])


def test_two_pods_taking_one_device_is_exact(tmp_path):
    """Two pending pods each needing n1's one a100: both fit alone; once the first runs its claim
    holds the device and the variant refuses the second everywhere (``TWIN_AFTER``), so both
    together are not deployable, with no caveat; deleting the first frees it for the second."""
    from click.testing import CliRunner

    from symreach.cli import cli

    path = tmp_path / "two.yaml"
    path.write_text(yaml.safe_dump_all(_with_twin()))
    run = CliRunner().invoke(cli, ["check", str(path), "--pod", "default/p1", "--node", "n1",
                                   "--with", "default/p1b@n1", "-o", "json"])
    import json
    answer = json.loads(run.stdout)
    assert answer["verdict"] == "not-deployable" and not answer.get("caveats")
    inst, _ = load_kubernetes_documents(list(yaml.safe_load_all(path.read_text())), "<dra>")
    from symreach import semantics
    p1, p1b = inst.type_index("default/p1"), inst.type_index("default/p1b")
    sigma = semantics.deploy(inst, inst.initial_config(), p1, 0)
    assert {n.name: semantics.node_failure(inst, p1b, k, sigma) for k, n in enumerate(inst.nodes)} == {
        n: None if want is None else semantics.Failure(*want) for n, want in TWIN_AFTER.items()}
    sigma = semantics.delete(inst, sigma, p1, 0)   # c1's last user goes: the controller deallocates it
    assert sigma == inst.initial_config() and semantics.node_failure(inst, p1b, 0, sigma) is None


def test_dra_verdict_survives_a_claim_binding():
    """A type whose WaitForFirstConsumer claim another deployment binds keeps its DRA row."""
    from symreach import semantics

    binds = ("binds: {claims: [default/data], states: [{bound: [null], nodes: {n1: 1, n2: 1}}, "
             "{bound: [PV pv-1]}]}")
    inst = load_text(f"""version: 1
semantics: kubernetes
nodes: [{{name: n1, capacity: {{cpu: 4, pods: 10}}}}, {{name: n2, capacity: {{cpu: 4, pods: 10}}}}]
podTypes:
- name: a
  volumes: {{claims: [data], {binds}}}
- name: b
  volumes: {{claims: [data], {binds}}}
  dra: {{filter: [{{node: n2, plugin: DynamicResources, reasons: [cannot allocate all claims]}}], allocates: true}}
""", "<v1>")
    a, b = inst.type_index("a"), inst.type_index("b")
    sigma = semantics.deploy(inst, inst.initial_config(), a, 0)
    assert inst.binding_groups and semantics.group_state(inst, sigma, 0) == 1
    failure = semantics.node_failure(inst, b, 1, sigma)
    assert (failure.plugin, failure.reasons) == ALLOC
    assert semantics.node_failure(inst, b, 0, sigma) is None


def test_a_workload_template_gets_the_claim_its_controller_would_create():
    """A Deployment's pod type reads its ResourceClaimTemplate as the generated, unallocated claim:
    the same row as a created pod owning that claim (the variant's answer: fits n1 only)."""
    objects = _objects("deployment.yaml")
    template = next(o for o in objects if o["kind"] == "ResourceClaimTemplate")
    inst, _ = load_kubernetes_documents(objects, "<dra>")
    pod = {"apiVersion": "v1", "kind": "Pod",
           "metadata": {"name": "train-x", "namespace": "default", "uid": "uid-train-x"},
           "spec": {"containers": [{"name": "c", "image": "x"}],
                    "resourceClaims": [{"name": "g", "resourceClaimTemplateName": "one-gpu"}]},
           "status": {"resourceClaimStatuses": [{"name": "g", "resourceClaimName": "train-x-g"}]}}
    claim = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
             "metadata": {"name": "train-x-g", "namespace": "default", "ownerReferences": [
                 {"apiVersion": "v1", "kind": "Pod", "name": "train-x", "uid": "uid-train-x", "controller": True}]},
             "spec": template["spec"]["spec"]}
    state = any_state([o for o in objects if o["kind"] != "Deployment"] + [pod, claim], "default/train-x")
    assert symreach_verdicts(state) == {"n1": None, "n2": ALLOC}
    t = inst.type_index("default/train")
    assert inst.static_block[t] == (None, "cannot allocate all claims")


PINNED_N1 = {"nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n1"]}]}]}


def _allocated(claim: dict, pod: str, device: str = "g0") -> dict:
    """``claim`` as the scheduler leaves it after scheduling ``pod`` on n1 with ``device``."""
    return dict(claim, status={"allocation": {"devices": {"results": [
        {"request": "r", "driver": "gpu.example.com", "pool": "n1", "device": device}]}, "nodeSelector": PINNED_N1},
        "reservedFor": [{"resource": "pods", "name": pod, "uid": f"uid-{pod}"}]})


def _with_twin() -> list[dict]:
    """``slices.yaml`` and a twin of p1 and its claim (p1b, c1b): both want n1's one a100."""
    objects = _objects("slices.yaml")
    pod = next(o for o in objects if o["kind"] == "Pod")
    claim = next(o for o in objects if o["kind"] == "ResourceClaim")
    twin_pod, twin_claim = yaml.safe_load(yaml.safe_dump(pod)), yaml.safe_load(yaml.safe_dump(claim))
    twin_pod["metadata"]["name"], twin_claim["metadata"]["name"] = "p1b", "c1b"
    twin_pod["spec"]["resourceClaims"][0]["resourceClaimName"] = "c1b"
    return objects + [twin_pod, twin_claim]


def _twin_after() -> list[dict]:
    """``_with_twin`` once p1 runs on n1 and c1 holds g0."""
    objects = _with_twin()
    for o in objects:
        if o["kind"] == "Pod" and o["metadata"]["name"] == "p1":
            o["spec"]["nodeName"], o["metadata"]["uid"] = "n1", "uid-p1"
    return [_allocated(o, "p1") if o["kind"] == "ResourceClaim" and o["metadata"]["name"] == "c1" else o
            for o in objects]


def _train_pod(i: int, node: str = "") -> dict:
    pod = {"apiVersion": "v1", "kind": "Pod",
           "metadata": {"name": f"train-{i}", "namespace": "default", "uid": f"uid-train-{i}", "labels": {"app": "train"}},
           "spec": {"containers": [{"name": "c", "image": "x"}],
                    "resourceClaims": [{"name": "g", "resourceClaimTemplateName": "one-gpu"}]},
           "status": {"resourceClaimStatuses": [{"name": "g", "resourceClaimName": f"train-{i}-g"}]}}
    if node:
        pod["spec"]["nodeName"] = node
    return pod


def _train_claim(i: int) -> dict:
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
            "metadata": {"name": f"train-{i}-g", "namespace": "default", "ownerReferences": [
                {"apiVersion": "v1", "kind": "Pod", "name": f"train-{i}", "uid": f"uid-train-{i}", "controller": True}]},
            "spec": {"devices": {"requests": [{"name": "r", "exactly": {"deviceClassName": "gpu"}}]}}}


def _train_after() -> list[dict]:
    objects = [o for o in _objects("deployment.yaml") if o["kind"] != "Deployment"]
    return objects + [_train_pod(0, "n1"), _allocated(_train_claim(0), "train-0"), _train_pod(1), _train_claim(1)]


@pytest.mark.skipif(not os.access(VARIANT, os.X_OK), reason="the kso variant with DRA is not built here")
def test_allocation_states_are_the_variant_answers():
    """The states reached after one allocating step, claims written as the scheduler does."""
    assert kso_verdicts_single(any_state(_twin_after(), "default/p1b"), VARIANT) == TWIN_AFTER
    assert kso_verdicts_single(any_state(_train_after(), "default/train-1"), VARIANT) == TRAIN_AFTER


def test_a_workloads_pods_each_take_their_own_device():
    """A Deployment's pods get fresh claims from its template: once one runs on n1 with n1's one
    gpu, the next fits nowhere (``TRAIN_AFTER``); deleting it frees the gpu."""
    from symreach import semantics

    inst, report = load_kubernetes_documents(_objects("deployment.yaml"), "<dra>")
    assert not report.caveats
    t = inst.type_index("default/train")
    sigma = semantics.deploy(inst, inst.initial_config(), t, 0)
    want = {n: semantics.Failure(*v) for n, v in TRAIN_AFTER.items()}
    assert {n.name: semantics.node_failure(inst, t, k, sigma) for k, n in enumerate(inst.nodes)} == want
    assert semantics.binding_note(inst, inst.initial_config(), t, 0) == "its claims get n1: gpu.example.com/n1/g0"
    assert semantics.delete(inst, sigma, t, 0) == inst.initial_config()
    steps = [semantics.step_of(inst, op, t, 0) for op in ("deploy", "delete")]
    assert semantics.binding_notes(inst, steps) == ["its claims get n1: gpu.example.com/n1/g0",
                                                    "frees n1: gpu.example.com/n1/g0"]


def test_a_released_claim_is_allocated_again_elsewhere():
    """p2's claim c0 is allocated on n1 in the input with no pod reserving it; once p2 has run
    and gone, the controller deallocates c0, so p2 may go to any node with a free gpu."""
    from symreach import semantics
    from symreach.model import Query
    from symreach.result import Verdict
    from symreach.solvers.registry import make_engine

    inst, _ = load_kubernetes_documents(_objects("slices.yaml", "claims.yaml"), "<dra>")
    p2 = inst.type_index("default/p2")
    sigma = semantics.deploy(inst, inst.initial_config(), p2, 0)
    sigma = semantics.delete(inst, sigma, p2, 0)
    assert semantics.node_failure(inst, p2, 1, sigma) is None
    result = make_engine("explicit").check(inst, Query((frozenset({(p2, 1)}),)))
    assert result.verdict is Verdict.DEPLOYABLE and [s.op for s in result.trace] == ["deploy", "delete", "deploy"]
    semantics.replay(inst, result.trace)
    assert semantics.binding_notes(inst, result.trace) == [
        None, "claim default/c0 is deallocated (no pod reserves it)", "allocates claim default/c0: n2: gpu.example.com/n2/g0"]


def test_certify_rechecks_the_allocation_states():
    """explicit's not-deployable certificate for p1 and p1b both on n1 names each state's
    allocation; the checker accepts it and refuses a forged state where both hold n1's g0."""
    import json

    from symreach.certify.explicit_states import check_certificate
    from symreach.model import Query
    from symreach.result import Verdict
    from symreach.solvers.explicit import ExplicitEngine

    inst, _ = load_kubernetes_documents(_with_twin(), "<dra>")
    p1, p1b = inst.type_index("default/p1"), inst.type_index("default/p1b")
    result = ExplicitEngine().check(inst, Query((frozenset({(p1, 0), (p1b, 0)}),)))
    assert result.verdict is Verdict.NOT_DEPLOYABLE
    cert = json.loads(result.certificate.dumps())
    assert cert["claims"] == ["default/c1", "default/c1b"] and len(cert["states"]) == 3
    assert check_certificate(inst, cert)[0]
    g0 = "n1: gpu.example.com/n1/g0"
    cert["bound"][0] = [g0, g0]
    ok, why = check_certificate(inst, cert)
    assert not ok and "cannot be bound" in why


@pytest.mark.skipif(not os.access(VARIANT, os.X_OK), reason="the kso variant with DRA is not built here")
def test_allocation_walks_agree_with_the_variant():
    """A few allocation walks (``benchmarks.kso_dra_walks``): every state reached, every claim user
    that could go next, node by node, as the variant says (the full run: ``kso_dra_agreement --walks``)."""
    import random

    from benchmarks.kso_dra_walks import walk_verdicts

    states, rows = walk_verdicts(random.Random(3), 4, 3, VARIANT, 2)
    assert [(r.pod, r.node, r.kso) for r in rows] == [(r.pod, r.node, r.symreach) for r in rows]
    assert len(states) >= 4 and len(rows) >= 20


@pytest.mark.parametrize("models,choices", [(("a100", "a100"), 1), (("a100", "t4"), 2)])
def test_deleting_one_of_several_pods_is_exact_for_devices_of_one_kind(models, choices):
    """Two pods of the Deployment on n1 hold its two gpus; a deletion frees one of them. Devices
    of one kind (driver, pool, attributes) are interchangeable: one choice; devices that differ
    are a choice each, the deletion naming what its pod holds (``tests/test_dra_holdings.py``).
    No caveat either way."""
    from symreach import semantics

    objects = _objects("deployment.yaml")
    pool = next(o for o in objects if o["kind"] == "ResourceSlice")
    pool["spec"]["devices"] = [{"name": f"g{i}", "attributes": {"model": {"string": m}}} for i, m in enumerate(models)]
    inst, report = load_kubernetes_documents(objects, "<dra>")
    t = inst.type_index("default/train")
    sigma = semantics.deploy(inst, semantics.deploy(inst, inst.initial_config(), t, 0), t, 0)
    assert semantics.node_failure(inst, t, 0, sigma).reasons == ("cannot allocate all claims",)
    outcomes = semantics.deletions(inst, sigma, t, 0)
    assert len(outcomes) == choices
    assert all(semantics.node_failure(inst, t, 0, after) is None for _, after in outcomes)
    assert not report.caveats.get("default/train")


def _gpu_cluster(nodes: int, gpus: int, claims: int) -> list[dict]:
    """``nodes`` nodes with ``gpus`` identical gpus each, a Deployment taking one gpu per pod from a
    template, and ``claims`` bare pods with a one-gpu claim each."""
    objects = [o for o in _objects("deployment.yaml") if o["kind"] in ("DeviceClass", "ResourceClaimTemplate", "Deployment")]
    for i in range(nodes):
        objects.append({"apiVersion": "v1", "kind": "Node", "metadata": {"name": f"n{i}"},
                        "status": {"allocatable": {"cpu": "4", "pods": "10"}}})
        objects.append({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": f"s{i}"},
                        "spec": {"driver": "gpu.example.com", "nodeName": f"n{i}",
                                 "pool": {"name": f"n{i}", "generation": 1, "resourceSliceCount": 1},
                                 "devices": [{"name": f"g{k}"} for k in range(gpus)]}})
    for j in range(claims):
        objects.append({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
                        "metadata": {"name": f"c{j}", "namespace": "default"},
                        "spec": {"devices": {"requests": [{"name": "r", "exactly": {"deviceClassName": "gpu"}}]}}})
        objects.append({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": f"p{j}", "namespace": "default"},
                        "spec": {"containers": [{"name": "c", "image": "x"}],
                                 "resourceClaims": [{"name": "g", "resourceClaimName": f"c{j}"}]}})
    return objects


def test_devices_of_one_kind_make_one_state():
    """2 nodes x 2 identical gpus, the Deployment and one bare pod: states are kept up to which gpu
    of a node a claim holds, so few are listed and none is caveated; the Deployment can run 4
    pods, but not 4 beside p0 (each takes a gpu), and p0 runs beside 3."""
    from symreach.model import CountTarget, Query
    from symreach.result import Verdict
    from symreach.semantics import replay
    from symreach.solvers.explicit import ExplicitEngine

    inst, report = load_kubernetes_documents(_gpu_cluster(2, 2, 1), "<dra>")
    assert not report.caveats
    group = next(g for g in inst.binding_groups if g.holders)
    # c0 unallocated (9 ways to run 0-2 pods per node) or on n0 or n1 (6 each): without the
    # renaming, which gpu each holds would multiply these
    assert len(group.states) == 9 + 6 + 6
    w, p0 = inst.type_index("default/train"), inst.type_index("default/p0")
    every = frozenset((w, n) for n in range(2))
    answers = []
    for pods, with_p0 in ((4, False), (4, True), (3, True)):
        alternatives = (frozenset({(p0, 0)}), frozenset({(p0, 1)})) if with_p0 else (frozenset(),)
        result = ExplicitEngine().check(inst, Query(alternatives, counts=(CountTarget(every, pods),)))
        if result.verdict is Verdict.DEPLOYABLE:
            replay(inst, result.trace)
        answers.append(result.verdict)
    assert answers == [Verdict.DEPLOYABLE, Verdict.NOT_DEPLOYABLE, Verdict.DEPLOYABLE]


def test_a_pool_in_two_slices_gives_a_deploy_choice_per_slice():
    """n1's pool split over two slices: the allocator meets them in the informer's order (random),
    so a pod of train takes g0 or g1: each a deploy choice naming its gpu, no caveat."""
    from symreach import semantics

    objects = _objects("deployment.yaml")
    pool = next(o for o in objects if o["kind"] == "ResourceSlice")
    second = yaml.safe_load(yaml.safe_dump(pool))
    second["metadata"]["name"], second["spec"]["devices"] = "n1-gpu-b", [{"name": "g1"}]
    for s in (pool, second):
        s["spec"]["pool"]["resourceSliceCount"] = 2
    inst, report = load_kubernetes_documents(objects + [second], "<dra>")
    assert not report.caveats
    t, sigma = inst.type_index("default/train"), inst.initial_config()
    texts = [semantics.choice_text(inst, sigma, t, 0, k) for k, _ in semantics.deploys(inst, sigma, t, 0)]
    assert texts == ["its claims get n1: gpu.example.com/n1/g0", "its claims get n1: gpu.example.com/n1/g1"]
