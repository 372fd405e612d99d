"""Gangs (issue 28): the v1 ``groups:`` section, the gang step, the scheduler's cycle, the CLI."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from symreach import gangs
from symreach.certify import gang_states
from symreach.cli import cli
from symreach.errors import InputError
from symreach.loader import load_text
from symreach.solvers.gang_explicit import answer

ROOT = Path(__file__).resolve().parent.parent
TRAINING = str(ROOT / "examples" / "gang-training.yaml")
NEVER = str(ROOT / "examples" / "gang-never.yaml")


def run(*args):
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


def instance(nodes: str, pods: str, groups: str, initial: str = "[]"):
    return load_text(f"version: 1\nnodes: {nodes}\npodTypes: {pods}\ninitial: {initial}\ngroups: {groups}\n")


def cycle(inst, name="g"):
    gang = gangs.gang_of(inst, name)
    return gangs.scheduler_cycle(inst, gang, inst.initial_config())


# ---- the scheduler's cycle, hand-worked --------------------------------------------------------

def test_cycle_succeeds_for_every_choice():
    # 2 + 2 cpu, three 1-cpu members: wherever the first two go, the third fits.
    inst = instance("[{name: a, capacity: {cpu: 2}}, {name: b, capacity: {cpu: 2}}]",
                    "[{name: w, requests: {cpu: 1}}]",
                    "[{name: g, policy: {gang: {minCount: 3}}, members: [{pod: w, count: 3}]}]")
    c = cycle(inst)
    assert c.outcome == gangs.SUCCEEDS and c.failing is None and len(c.succeeding) == 3


def test_cycle_may_fail_and_shows_the_failing_choice():
    # small first: on big-node it leaves 1 cpu and the 2-cpu member (big-node only) fails;
    # on small-node the big member still fits. Hand-worked: may-fail, failing choice small@big.
    inst = instance("[{name: big, labels: {size: big}, capacity: {cpu: 2}}, {name: little, capacity: {cpu: 1}}]",
                    "[{name: small, requests: {cpu: 1}}, {name: large, requests: {cpu: 2}, nodeSelector: {size: big}}]",
                    "[{name: g, policy: {gang: {minCount: 2}}, members: [{pod: small}, {pod: large}]}]")
    c = cycle(inst)
    small, large = inst.type_index("small"), inst.type_index("large")
    big, little = inst.node_index("big"), inst.node_index("little")
    assert c.outcome == gangs.MAY_FAIL
    assert c.failing == ((small, big), (large, None))
    assert c.succeeding == ((small, little), (large, big))


def test_cycle_fails_for_every_choice_though_a_placement_exists():
    inst = load_text(Path(TRAINING).read_text(), TRAINING)
    c = cycle(inst, "ml/train")
    assert c.outcome == gangs.FAILS and c.succeeding is None
    worker = inst.type_index("worker")
    assert c.failing[:4] == ((worker, None),) * 4   # no worker fits before the launcher runs
    ans = answer(inst, "ml/train")
    assert ans.result.verdict.value == "deployable" and ans.placement_now is not None
    gangs.check_step(inst, gangs.gang_of(inst, "ml/train"), inst.initial_config(), ans.placement_now)
    zone_a = {inst.node_index("gpu-a1"), inst.node_index("gpu-a2")}
    assert {n for _, n in ans.placement_now} <= zone_a   # zone b has too few GPUs


# ---- the gang step and its evidence -------------------------------------------------------------

def test_never_example_certificate_is_rechecked_and_a_forged_one_refused():
    inst = load_text(Path(NEVER).read_text(), NEVER)
    ans = answer(inst, "db/replicas")
    assert ans.result.verdict.value == "not-deployable" and ans.cycle.outcome == gangs.FAILS
    cert = ans.result.certificate.to_json()
    ok, why = gang_states.check_certificate(inst, cert)
    assert ok, why
    forged = dict(cert, states=cert["states"][:1])
    assert not gang_states.check_certificate(inst, forged)[0]


def test_gang_after_deletions_gives_a_trace_then_the_step():
    # The only node is full of a deletable pod: the gang fits only after it is deleted.
    inst = instance("[{name: n, capacity: {cpu: 2}}]",
                    "[{name: hog, requests: {cpu: 2}}, {name: w, requests: {cpu: 1}}]",
                    "[{name: g, policy: {gang: {minCount: 2}}, members: [{pod: w, count: 2}]}]",
                    "[{pod: hog, node: n}]")
    ans = answer(inst, "g")
    assert ans.result.verdict.value == "deployable" and ans.placement_now is None
    assert [(s.op, s.pod) for s in ans.result.trace] == [("delete", "hog")]
    assert len(ans.placement) == 2


def test_composite_needs_every_level():
    # root needs both children; child b's two members need two nodes but only one fits b.
    text = """version: 1
nodes: [{name: n1, labels: {b: ok}, capacity: {cpu: 4}}, {name: n2, capacity: {cpu: 4}}]
podTypes:
  - {name: a, requests: {cpu: 1}}
  - name: b
    labels: {app: b}
    nodeSelector: {b: ok}
    affinity: {podAntiAffinity: {requiredDuringSchedulingIgnoredDuringExecution:
      [{labelSelector: {matchLabels: {app: b}}, topologyKey: kubernetes.io/hostname}]}}
groups:
  - {name: root, composite: true, policy: {gang: {minGroupCount: MIN}}}
  - {name: ga, parent: root, policy: {gang: {minCount: 1}}, members: [{pod: a}]}
  - {name: gb, parent: root, policy: {gang: {minCount: 2}}, members: [{pod: b, count: 2}]}
"""
    both = load_text(text.replace("MIN", "2"))
    one = load_text(text.replace("MIN", "1"))
    assert answer(both, "root").result.verdict.value == "not-deployable"
    ans = answer(one, "ga")
    assert ans.root == "root" and ans.result.verdict.value == "deployable"
    assert ans.placement == ((one.type_index("a"), 0),)   # gb is left out whole, never partly
    assert gang_states.step_exists(one, "root", one.initial_config())
    assert not gang_states.step_exists(both, "root", both.initial_config())


def test_min_count_above_the_members_is_never():
    inst = instance("[{name: n, capacity: {cpu: 8}}]", "[{name: w, requests: {cpu: 1}}]",
                    "[{name: g, policy: {gang: {minCount: 3}}, members: [{pod: w, count: 2}]}]")
    assert answer(inst, "g").result.verdict.value == "not-deployable"


# ---- the v1 schema ----------------------------------------------------------------------------

@pytest.mark.parametrize("groups, problem", [
    ("[{name: g, policy: {gang: {minCount: 1}}, members: [{pod: zz}]}]", "unknown pod type 'zz'"),
    ("[{name: g, policy: {gang: {minCount: 1}, basic: {}}}]", "exactly one of basic and gang"),
    ("[{name: g, policy: {gang: {minCount: 0}}}]", "must be at least 1"),
    ("[{name: g, policy: {gang: {minGroupCount: 1}}}]", "unknown field 'minGroupCount'"),
    ("[{name: g, composite: true, policy: {basic: {}}, members: [{pod: w}]}]", "no pods of its own"),
    ("[{name: g, policy: {basic: {}}, parent: h}]", "unknown group 'h'"),
    ("[{name: g, policy: {basic: {}}, parent: h}, {name: h, policy: {basic: {}}}]", "is not composite"),
    ("[{name: g, policy: {basic: {}}, members: [{pod: w}]}, {name: h, policy: {basic: {}}, members: [{pod: w}]}]",
     "already a member of group 'g'"),
    ("[{name: g, policy: {basic: {}}}, {name: g, policy: {basic: {}}}]", "duplicate group name"),
    ("[{name: g, policy: {gang: {minCount: 1}}, member: []}]", "unknown field 'member'"),
])
def test_bad_groups_are_input_errors(groups, problem):
    with pytest.raises(InputError) as err:
        instance("[{name: n}]", "[{name: w}]", groups)
    assert problem in err.value.problem and "groups" in (err.value.field_path or "")


def test_query_group_must_exist():
    with pytest.raises(InputError) as err:
        load_text("version: 1\nnodes: [{name: n}]\npodTypes: [{name: w}]\nquery: {group: nope}\n")
    assert "unknown group 'nope'" in err.value.problem


# ---- the command line --------------------------------------------------------------------------

def test_cli_sentence_json_and_other_engines():
    out = run("check", TRAINING)
    assert out.exit_code == 0, out.output
    assert "The scheduler's cycle fails for every node choice, but this order places all 5 now:" in out.output
    data = json.loads(run("check", TRAINING, "--json").output)
    assert data["group"]["scheduler_cycle"] == "fails" and data["group"]["placement_now"] is True
    assert data["group"]["minCount"] == 5 and data["group"]["members"] == 5
    assert data["group"]["scheduler_blocked"] == ("first blocked: worker, 0/4 nodes are available: 1 node(s) didn't "
                                                  "match Pod's node affinity/selector, 3 node(s) didn't match pod "
                                                  "affinity rules")
    refused = run("check", TRAINING, "--engine", "abc-pdr")
    assert refused.exit_code == 2 and "does not answer group targets" in refused.output
    assert run("check", TRAINING, "--group", "nope").exit_code == 2


def test_cli_certificate_round_trip(tmp_path):
    cert = tmp_path / "never.json"
    out = run("check", NEVER, "--group", "db/replicas", "--cert-out", str(cert))
    assert out.exit_code == 1 and "no placement exists" in out.output
    checked = run("certify", NEVER, str(cert))
    assert checked.exit_code == 0 and checked.output.startswith("VALID")
    other = run("certify", TRAINING, str(cert))
    assert other.exit_code == 1 and "refused: the certificate is for another instance" in other.output
    explained = run("certify", NEVER, str(cert), "--explain")
    assert explained.exit_code == 0 and "4. replica: 0/4 nodes are available" in explained.output


def test_explain_group_and_why_name_the_blocking_member():
    out = run("explain", TRAINING, "--group", "ml/train")
    assert out.exit_code == 0
    assert ("1. worker: 0/4 nodes are available: 1 node(s) didn't match Pod's node affinity/selector, "
            "3 node(s) didn't match pod affinity rules.") in out.output
    assert "5. launcher -> gpu-a1 (feasible: gpu-a1, gpu-a2, gpu-b1, cpu-b1)" in out.output
    why = run("check", NEVER, "--why")
    assert why.exit_code == 1
    assert "4. replica: 0/4 nodes are available: 1 Insufficient cpu, 1 node(s) didn't match Pod's node " \
           "affinity/selector, 2 node(s) didn't match pod anti-affinity rules." in why.output


def test_basic_policy_needs_one_member():
    # basic: the cycle succeeds once one member is placed (KEP-4671: no minCount check).
    inst = instance("[{name: n, capacity: {cpu: 1}}]", "[{name: w, requests: {cpu: 1}}]",
                    "[{name: g, policy: {basic: {}}, members: [{pod: w, count: 3}]}]")
    ans = answer(inst, "g")
    assert ans.result.verdict.value == "deployable" and len(ans.placement_now) == 1
    assert ans.cycle.outcome == gangs.SUCCEEDS


def test_nodes_sharing_a_hostname_are_not_interchangeable_with_others():
    # n1 and n2 share hostname h (one anti-affinity domain, n2 holds the blocker); n3 is alone.
    # n1 and n3 look alike but only n3 admits the member: the search must try both.
    inst = instance("[{name: n1, labels: {kubernetes.io/hostname: h}}, {name: n2, labels: {kubernetes.io/hostname: h}},"
                    " {name: n3}]",
                    "[{name: blocker, labels: {app: x}, nodeName: n2}, {name: m, affinity: {podAntiAffinity: "
                    "{requiredDuringSchedulingIgnoredDuringExecution: [{labelSelector: {matchLabels: {app: x}}, "
                    "topologyKey: kubernetes.io/hostname}]}}}]",
                    "[{name: g, policy: {gang: {minCount: 1}}, members: [{pod: m}]}]",
                    "[{pod: blocker, node: n2}]")
    gang = gangs.gang_of(inst, "g")
    assert gangs.gang_step(inst, gang, inst.initial_config()) == ((inst.type_index("m"), inst.node_index("n3")),)
    assert cycle(inst).outcome == gangs.SUCCEEDS
