"""Nominated pods in the Kubernetes front end: one warning per pending pod with
``status.nominatedNodeName`` (the object and the field), a caveat on every pod type whose answers it can
change (priority at most the nominated pod's), and priorities as the API server's Priority admission
plugin resolves them."""

from __future__ import annotations

import copy

from symreach.frontends.k8s_nominated import NOMINATED_CAVEAT, Priorities
from symreach.frontends.kubernetes import load_kubernetes_documents
from tests.nominated_cases import node, pod


def load(objects: list[dict]):
    return load_kubernetes_documents(copy.deepcopy(objects), "state.yaml")


def deployment(name: str, priority_class: str = "") -> dict:
    spec: dict = {"containers": [{"name": "c", "image": "x"}]}
    if priority_class:
        spec["priorityClassName"] = priority_class
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name, "namespace": "default"},
            "spec": {"replicas": 1, "selector": {"matchLabels": {"app": name}},
                     "template": {"metadata": {"labels": {"app": name}}, "spec": spec}}}


def priority_class(name: str, value: int, default: bool = False) -> dict:
    return {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": name},
            "value": value, "globalDefault": default}


def test_a_nominated_pending_pod_is_a_warning_naming_the_pod_and_the_field() -> None:
    _, report = load([node("n1"), pod("q", priority=100, nominated="n1"), pod("p")])
    found = [m for c, m in report.notes if c == "nominated pods"]
    assert len(found) == 1
    assert "(Pod default/q)" in found[0] and "status.nominatedNodeName 'n1'" in found[0]
    assert "priority 100" in found[0]


def test_types_of_lower_or_equal_priority_carry_the_caveat_higher_do_not() -> None:
    _, report = load([node("n1"), pod("q", priority=100, nominated="n1"), pod("low", priority=0),
                      pod("equal", priority=100), pod("high", priority=101)])
    marked = {name for name, notes in report.caveats.items() if any(NOMINATED_CAVEAT in n for n in notes)}
    assert marked == {"default/q", "default/low", "default/equal"}


def test_no_nomination_no_warning_no_caveat() -> None:
    _, report = load([node("n1"), pod("q", priority=100), pod("p")])
    assert not [m for c, m in report.notes if c == "nominated pods"] and not report.caveats
    assert report.nominated.nominations == []


def test_pods_the_scheduler_does_not_nominate() -> None:
    """A bound pod (the nominator drops it), another scheduler's pod (not in this queue), a gated pod
    (PreEnqueue holds it back before the nomination) and a finished pod: no nomination."""
    bound = pod("b", on="n1")
    bound["status"]["nominatedNodeName"] = "n1"
    other = pod("o", nominated="n1", schedulerName="my-scheduler")
    gated = pod("g", nominated="n1", schedulingGates=[{"name": "wait"}])
    done = pod("d", nominated="n1")
    done["status"]["phase"] = "Failed"
    _, report = load([node("n1"), bound, other, gated, done, pod("p")])
    assert report.nominated.nominations == []
    assert not any(NOMINATED_CAVEAT in n for notes in report.caveats.values() for n in notes)


def test_a_nomination_to_a_node_not_in_the_input_warns_and_marks_nothing() -> None:
    _, report = load([node("n1"), pod("q", nominated="gone"), pod("p")])
    found = [m for c, m in report.notes if c == "nominated pods"]
    assert len(found) == 1 and "not a node in the input" in found[0]
    assert not any(NOMINATED_CAVEAT in n for notes in report.caveats.values() for n in notes)


def test_a_template_priority_comes_from_its_class() -> None:
    """A Deployment's template names its class (the API server resolves it when the pod is created):
    1000 is above the nominated pod's 500, so no caveat; the class-less one gets the global default 7."""
    _, report = load([node("n1"), priority_class("hi", 1000), priority_class("d", 7, default=True),
                      deployment("web", "hi"), deployment("plain"), pod("q", priority=500, nominated="n1")])
    assert report.nominated.type_priority["default/web"] == 1000
    assert report.nominated.type_priority["default/plain"] == 7
    marked = {name for name, notes in report.caveats.items() if any(NOMINATED_CAVEAT in n for n in notes)}
    assert "default/web" not in marked and "default/plain" in marked


def test_priorities_as_admission_resolves_them() -> None:
    classes = Priorities()
    assert classes.of({}) == 0                                            # no class, no default: 0
    assert classes.of({"priorityClassName": "system-node-critical"}) == 2000001000
    assert classes.of({"priorityClassName": "missing"}) is None          # unknown here
    assert classes.of({"priority": 3, "priorityClassName": "missing"}) == 3   # stored: admission wrote it
    classes.add_class(priority_class("a", 10, default=True))
    classes.add_class(priority_class("b", 4, default=True))
    assert classes.of({}) == 4                                            # the smallest global default


def test_an_unknown_priority_marks_every_type() -> None:
    """The nominated pod's class is not in the input: its priority is unknown, so every type is marked."""
    q = pod("q", priority=None, nominated="n1", priorityClassName="missing")
    _, report = load([node("n1"), q, pod("high", priority=10**9)])
    marked = {name for name, notes in report.caveats.items() if any(NOMINATED_CAVEAT in n for n in notes)}
    assert marked == {"default/q", "default/high"}


def check(tmp_path, objects: list[dict], pod_name: str, node_name: str, *extra: str) -> dict:
    import json

    import yaml
    from click.testing import CliRunner

    from symreach.cli import cli

    path = tmp_path / "state.yaml"
    path.write_text(yaml.safe_dump_all(objects))
    out = CliRunner().invoke(cli, ["check", str(path), "--pod", pod_name, "--node", node_name, "--json", *extra])
    return json.loads(out.stdout)


def test_the_caveat_stays_only_where_the_nomination_can_change_the_answer(tmp_path):
    """q (100) is nominated to n1 and takes its 2 CPUs. p on n1: the first witness deploys p there, which
    the scheduler refuses while q is nominated; the search around the nominations schedules q first
    (tests/test_nominated_reach.py): exact, no mark. p on n2, q on n1 (its own nomination is not added):
    the witnesses hold with the nomination: no mark. A not-deployable answer stands (nominations only
    take deployments away): no mark."""
    objects = [node("n1"), node("n2"), pod("q", cpu="2", priority=100, nominated="n1"), pod("p"),
               pod("big", cpu="3")]
    marked = lambda data: [c for c in data["caveats"] if NOMINATED_CAVEAT in c]   # noqa: E731
    on_n1 = check(tmp_path, objects, "default/p", "n1")
    assert on_n1["verdict"] == "deployable" and not marked(on_n1) and len(on_n1["trace"]) == 2
    for pod_name, node_name in (("default/p", "n2"), ("default/q", "n1")):
        data = check(tmp_path, objects, pod_name, node_name)
        assert data["verdict"] == "deployable" and not marked(data), (pod_name, node_name)
    never = check(tmp_path, objects, "default/big", "n1")
    assert never["verdict"] == "not-deployable" and not marked(never)


def test_a_nomination_ends_when_its_pod_is_scheduled():
    """p cannot go to n1 while q (100) is nominated there, but once q is scheduled (on n2) its nomination
    is gone: [deploy q on n2, deploy p on n1] holds; [deploy p on n1] does not."""
    from symreach.frontends.k8s_nominated_filter import trace_holds
    from symreach.result import DEPLOY, Step

    inst, report = load([node("n1"), node("n2"), pod("q", cpu="2", priority=100, nominated="n1"), pod("p")])
    index = report.nominated
    assert not trace_holds(inst, index, [Step(DEPLOY, "default/p", "n1")])
    assert trace_holds(inst, index, [Step(DEPLOY, "default/q", "n2"), Step(DEPLOY, "default/p", "n1")])
    assert trace_holds(inst, index, [Step(DEPLOY, "default/q", "n1"), Step(DEPLOY, "default/p", "n2")])


def test_a_new_pod_of_the_nominated_pods_type_leaves_the_nomination():
    """n1 has 4 CPUs; q (2 CPUs, 100) is nominated there; p needs 3. Deploying q's type on n2 may be q
    (the nomination ends, then p fits n1). Two pods of q's type, the first on n1: if it is q, the second
    (a new pod, same priority) fits n1 beside it; if the first were a new pod, q's nomination would
    still hold and the second would need 2 + 2 + 2 CPUs there. The search finds the choice that holds."""
    from symreach.frontends.k8s_nominated_filter import trace_holds
    from symreach.result import DEPLOY, Step

    inst, report = load([node("n1", cpu="4"), node("n2"), pod("q", cpu="2", priority=100, nominated="n1"),
                         pod("p", cpu="3")])
    index = report.nominated
    assert not trace_holds(inst, index, [Step(DEPLOY, "default/p", "n1")])
    assert trace_holds(inst, index, [Step(DEPLOY, "default/q", "n2"), Step(DEPLOY, "default/p", "n1")])
    assert trace_holds(inst, index, [Step(DEPLOY, "default/q", "n1"), Step(DEPLOY, "default/q", "n1")])


def test_explain_says_what_the_scheduler_says_now_with_the_nominations(tmp_path):
    """``explain``'s verdicts now apply the nominations as the scheduler does (kso's answers for this
    state are tests/test_nominated_kso.py's higher-priority-takes-cpu) and name the nominated pod in
    the details; the nomination caveat is gone (reachability: tests/test_nominated_reach.py)."""
    import json

    import yaml
    from click.testing import CliRunner

    from symreach.cli import cli

    path = tmp_path / "state.yaml"
    path.write_text(yaml.safe_dump_all([node("n1"), node("n2"), pod("q", cpu="2", priority=100, nominated="n1"),
                                        pod("p")]))
    out = CliRunner().invoke(cli, ["explain", str(path), "--pod", "default/p", "-o", "json"])
    nodes = {v["node"]: v for v in json.loads(out.stdout)["pods"][0]["nodes"]}
    assert nodes["n1"]["reason"] == "Insufficient cpu" and nodes["n2"]["fits_now"]
    assert "0m free of 2000m on n1" in nodes["n1"]["details"][0] and "default/q (priority 100)" in nodes["n1"]["details"][0]
    own = CliRunner().invoke(cli, ["explain", str(path), "--pod", "default/q", "-o", "json"])
    assert all(v["fits_now"] for v in json.loads(own.stdout)["pods"][0]["nodes"])   # its own nomination
    text = CliRunner().invoke(cli, ["explain", str(path), "--pod", "default/p"]).stdout
    assert "Insufficient cpu" in text and "caveats (" not in text
    asked = CliRunner().invoke(cli, ["explain", str(path), "--pod", "default/p", "--node", "n1"]).stdout
    # the first witness deploys p on n1; the search around the nominations schedules q first: exact
    assert NOMINATED_CAVEAT not in asked and "its nomination ends" in asked
