"""Minimal witnesses: 1-minimal, short, DaemonSet and static pods last, budgeted."""

from __future__ import annotations

import json
import random

import pytest
import yaml
from click.testing import CliRunner

from symreach import semantics
from symreach.cli import cli
from symreach.frontends.dispatch import load_any
from symreach.loader import load_document, parse_query
from symreach.result import DELETE, DEPLOY, Result, Step, Verdict
from symreach.solvers.base import Limits
from symreach.solvers.bdd import BddEngine
from symreach.solvers.witness import Budget, covers, finish, minimise, pod_kind, DAEMON, STATIC
from tests.busy_node import busy_node_dump
from tests.engine_suite import chain
from tests.random_instances import random_doc


def run(*args):
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


def assert_one_minimal(inst, trace, query):
    """No single step can be dropped: each removal breaks the replay or misses the target."""
    assert covers(inst, trace, query)
    for i in range(len(trace)):
        assert not covers(inst, trace[:i] + trace[i + 1:], query), f"step {i + 1} ({trace[i]}) is unnecessary"


@pytest.fixture(scope="module")
def busy(tmp_path_factory):
    path = tmp_path_factory.mktemp("busy") / "dump.yaml"
    path.write_text(yaml.safe_dump(busy_node_dump()))
    return path


def test_cockroachdb_like_case_deletes_only_what_the_replica_needs(busy):
    """27 pods on the node; the engine's trace clears it all, the shown one deletes three big pods."""
    out = run("check", str(busy), "--pod", "default/cockroachdb", "--node", "busy", "--json")
    assert out.exit_code == 0, out.output
    data = json.loads(out.output)
    inst = load_any(busy)
    steps = tuple(Step(s["op"], s["pod"], s["node"]) for s in data["trace"])
    assert_one_minimal(inst, steps, parse_query(inst, "default/cockroachdb", node="busy"))
    before, after = (int(x) for x in data["stats"]["trace_minimised"].split(" -> "))
    assert before >= 25 and after == len(steps) == 4
    deleted = [s.pod for s in steps if s.op == DELETE]
    assert all(p.startswith("jobs/batch-") for p in deleted)  # no web pod, no DaemonSet or static pod
    assert steps[-1] == Step(DEPLOY, "default/cockroachdb", "busy")


def test_text_output_reports_the_minimisation(busy):
    out = run("check", str(busy), "--pod", "default/cockroachdb", "--node", "busy", "--quiet")
    assert "trace minimised: 27 -> 4 steps" in out.output


def test_daemonset_and_static_pods_are_recognised(busy):
    inst = load_any(busy)
    assert pod_kind(inst, inst.type_index("kube-system/node-exporter@busy")) == DAEMON
    assert pod_kind(inst, inst.type_index("kube-system/kube-proxy-busy")) == STATIC
    assert pod_kind(inst, inst.type_index("shop/web-0")) == 0


def test_deletions_nothing_needs_are_dropped_daemonset_first():
    """The replica fits already: neither the DaemonSet pod nor the web pod has to go."""
    inst = load_any_text(busy_node_dump(small=2, big=0))
    query = parse_query(inst, "default/cockroachdb", node="busy")
    noisy = (Step(DELETE, "kube-system/node-exporter@busy", "busy"), Step(DELETE, "shop/web-0", "busy"),
             Step(DEPLOY, "default/cockroachdb", "busy"))
    assert minimise(inst, noisy, query, Budget(None)) == (Step(DEPLOY, "default/cockroachdb", "busy"),)


def load_any_text(doc):
    import tempfile
    from pathlib import Path

    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "dump.yaml"
        path.write_text(yaml.safe_dump(doc))
        return load_any(path)


def test_daemonset_deletion_is_swapped_for_an_ordinary_one():
    """A deletion is needed; a trace that deletes the DaemonSet pod is rewritten to delete a web pod."""
    doc = busy_node_dump(small=2, big=0)
    for item in doc["items"]:
        if item["kind"] == "Node" and item["metadata"]["name"] == "busy":
            item["status"]["allocatable"]["cpu"] = "2600m"  # 2 x 250m + 100m + 100m in use
    inst = load_any_text(doc)
    query = parse_query(inst, "default/cockroachdb", node="busy")
    trace = (Step(DELETE, "kube-system/node-exporter@busy", "busy"), Step(DEPLOY, "default/cockroachdb", "busy"))
    assert covers(inst, trace, query)
    best = minimise(inst, trace, query, Budget(None))
    assert len(best) == 2 and best[0].pod.startswith("shop/web-")


def test_random_padded_traces_minimise_to_one_minimal():
    """Engine traces padded with useless deploy/delete pairs shrink to 1-minimal traces."""
    checked = 0
    for seed in range(200):
        inst = load_document(random_doc(seed))
        result = BddEngine(fast_paths=False).check(inst)
        if result.verdict is not Verdict.DEPLOYABLE or not result.trace:
            continue
        rng = random.Random(seed)
        sigma0 = inst.initial_config()
        pads = [(t, n) for t in range(len(inst.pod_types)) for n in range(len(inst.nodes))
                if semantics.deploy_failure(inst, t, n, sigma0) is None]
        padded = list(result.trace)
        for t, n in rng.sample(pads, min(3, len(pads))):
            padded[0:0] = [semantics.step_of(inst, DEPLOY, t, n), semantics.step_of(inst, DELETE, t, n)]
        padded = tuple(padded)
        assert covers(inst, padded, inst.query)
        best = minimise(inst, padded, inst.query, Budget(None))
        assert len(best) <= len(result.trace), seed
        assert_one_minimal(inst, best, inst.query)
        checked += 1
    assert checked >= 20


def test_budget_zero_leaves_the_trace_and_says_so():
    inst = load_document(chain("kubernetes", 2))
    trace = (Step(DEPLOY, "a", "n"), Step(DELETE, "a", "n"), Step(DEPLOY, "a", "n"), Step(DEPLOY, "b", "n"),
             Step(DELETE, "a", "n"), Step(DEPLOY, "c", "n"))
    result = Result(Verdict.DEPLOYABLE, "test", trace=trace)
    ticks = iter(range(100))
    finish(inst, inst.query, result, Limits(timeout_s=0.0), clock=lambda: float(next(ticks)))
    assert result.trace == trace and "minimise_stopped" in result.stats
    result = Result(Verdict.DEPLOYABLE, "test", trace=trace)
    finish(inst, inst.query, result, Limits(), clock=lambda: 0.0)
    assert len(result.trace) == 4 and result.stats["trace_minimised"] == "6 -> 4"


def test_shortest_uses_breadth_first_search():
    from pathlib import Path

    example = str(Path(__file__).resolve().parent.parent / "examples" / "paper-2.6.yaml")
    out = run("check", example, "--shortest", "--quiet")
    assert out.exit_code == 0, out.output
    assert "4 steps, shortest" in out.output and "shortest: yes" in out.output
    assert run("check", example, "--shortest", "--engine", "bdd").exit_code == 2


def test_explain_narrates_the_minimised_trace(busy):
    out = run("explain", str(busy), "--pod", "default/cockroachdb", "--node", "busy")
    assert out.exit_code == 0, out.output
    numbered = [line for line in out.output.splitlines() if line.strip()[:2].rstrip(".").isdigit()]
    assert len(numbered) == 4, out.output


def test_exported_trace_is_the_minimised_one(busy, tmp_path):
    out_file = tmp_path / "trace.json"
    out = run("check", str(busy), "--pod", "default/cockroachdb", "--node", "busy", "--quiet",
              "--trace-out", str(out_file))
    assert out.exit_code == 0
    exported = json.loads(out_file.read_text())
    steps = exported["steps"] if isinstance(exported, dict) else exported
    assert len(steps) == 4


def test_a_node_of_hundreds_of_pods_shrinks_in_few_replays():
    """Delta debugging over the deletions: replays grow with log(pods), not pods squared."""
    doc = busy_node_dump(small=200, big=20)
    for item in doc["items"]:
        if item["kind"] == "Node":
            item["status"]["allocatable"].update(cpu="61", pods="1000")
    inst = load_any_text(doc)
    query = parse_query(inst, "default/cockroachdb", node="busy")
    from symreach.solvers.portfolio import AutoEngine

    result = finish(inst, query, AutoEngine(jobs=1).check(inst, query, Limits()), Limits(), clock=lambda: 0.0)
    assert result.stats["trace_minimised"] == "223 -> 4"
    assert result.stats["minimise_replays"] < 600
    assert_one_minimal(inst, result.trace, query)
