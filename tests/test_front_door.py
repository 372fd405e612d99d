"""The front door (issue 30): operator names, kubectl conventions, matrix by pool, where, unknown."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from symreach.cli import cli

REPO = Path(__file__).resolve().parent.parent
DUMP = str(REPO / "examples" / "cluster-dump.yaml")
POOLS = str(REPO / "examples" / "pools-3zones.yaml")
EXAMPLE = str(REPO / "examples" / "paper-2.6.yaml")

NAMESPACELESS = """\
apiVersion: v1
kind: Node
metadata: {name: n1, labels: {kubernetes.io/hostname: n1}}
status: {allocatable: {cpu: "4", memory: 8Gi, pods: "10"}}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: server}
spec:
  selector: {matchLabels: {app: server}}
  template:
    metadata: {labels: {app: server}}
    spec: {containers: [{name: c, image: x, resources: {requests: {cpu: "1"}}}]}
"""


def run(*args, stdin=None):
    return CliRunner().invoke(cli, list(args), input=stdin, catch_exceptions=False)


# ---- 1. names operators use --------------------------------------------------------------

@pytest.mark.parametrize("name, namespace", [
    ("deploy/payments-api", None), ("deployment/payments-api", "payments"), ("payments-api", "payments"),
    ("payments-api-3c0518f50c-0c13b", None),           # a running pod's own name
    ("payments/payments-api", None)])
def test_operator_names_resolve_to_the_pod_type(name, namespace):
    args = ["check", DUMP, "--pod", name, "--node", "public-c", "-o", "json"]
    if namespace:
        args += ["-n", namespace]
    out = run(*args)
    assert out.exit_code == 0, out.output
    assert json.loads(out.stdout)["target"] == "payments/payments-api on public-c"


def test_every_workload_kind_has_its_short_name():
    from symreach.cli.names import resolve_pod, targets_of
    from symreach.frontends.dispatch import load_inputs

    loaded = load_inputs([DUMP])
    targets = targets_of(loaded.instance, loaded.report)
    kinds = {key.split(" ", 1)[0] for key in targets.workloads}
    assert {"Deployment", "StatefulSet", "DaemonSet"} <= kinds
    checked = 0
    for key, type_name in targets.workloads.items():
        kind, full = key.split(" ", 1)
        short = {"Deployment": "deploy", "StatefulSet": "sts", "DaemonSet": "ds", "ReplicaSet": "rs",
                 "Job": "job", "CronJob": "cronjob"}[kind]
        assert resolve_pod(targets, f"{short}/{full.split('/')[1]}", full.split("/")[0]) == type_name
        checked += 1
    assert checked == len(targets.workloads) >= 8


def test_jobs_and_cronjobs_by_name(tmp_path):
    manifest = tmp_path / "jobs.yaml"
    manifest.write_text(NAMESPACELESS + """\
---
apiVersion: batch/v1
kind: CronJob
metadata: {name: nightly, namespace: ops}
spec:
  schedule: "0 0 * * *"
  jobTemplate:
    spec:
      template:
        spec: {restartPolicy: Never, containers: [{name: c, image: x}]}
---
apiVersion: batch/v1
kind: Job
metadata: {name: once, namespace: ops}
spec:
  template:
    spec: {restartPolicy: Never, containers: [{name: c, image: x}]}
---
apiVersion: apps/v1
kind: ReplicaSet
metadata: {name: front, namespace: ops}
spec:
  selector: {matchLabels: {app: front}}
  template:
    metadata: {labels: {app: front}}
    spec: {containers: [{name: c, image: x}]}
""")
    for name, expect in (("cronjob/nightly", "ops/nightly"), ("job/once", "ops/once"), ("rs/front", "ops/front")):
        out = run("check", str(manifest), "--pod", name, "--node", "n1", "-o", "json")
        assert out.exit_code == 0 and json.loads(out.stdout)["target"] == f"{expect} on n1", out.output


def test_did_you_mean_for_pods_nodes_and_label_keys():
    out = run("check", DUMP, "--pod", "payments-apy", "--node", "public-c")
    assert out.exit_code == 2 and "did you mean 'payments-api'" in out.stderr
    out = run("check", DUMP, "--pod", "deploy/payments-api", "--node", "publik-c")
    assert out.exit_code == 2 and "did you mean 'public-c'" in out.stderr
    out = run("check", DUMP, "--pod", "deploy/payments-api", "--domain", "topology.kubernetes.io/zon=eu-central-1a")
    assert out.exit_code == 2 and "did you mean 'topology.kubernetes.io/zone'" in out.stderr
    assert "label keys of the nodes: " in out.stderr and "pool" in out.stderr
    out = run("check", DUMP, "--pod", "deploy/payments-api", "--domain", "topology.kubernetes.io/zone=eu-central-9")
    assert out.exit_code == 2 and "eu-central-1a, eu-central-1b, eu-central-1c" in out.stderr
    out = run("check", DUMP, "--pod", "deploy/payments-api", "--domain", "topology.kubernetes.io/zone")
    assert out.exit_code == 2 and "give topology.kubernetes.io/zone=VALUE (values of" in out.stderr


def test_list_targets_is_the_full_list():
    out = run("check", DUMP, "--list-targets", "-o", "json")
    data = json.loads(out.stdout)
    assert out.exit_code == 0 and data["schema_version"] == 1
    names = [t["name"] for t in data["pod_types"]]
    assert len(names) == 10 and "kube-system/nvidia-device-plugin" in names
    api = next(t for t in data["pod_types"] if t["name"] == "payments/payments-api")
    assert "deploy/payments-api" in api["names"] and api["running_pods"] == 1
    text = run("check", DUMP, "--list-targets", "-n", "payments").stdout
    assert text.startswith("pod types (4):") and "shop/" not in text
    for command in ("explain", "matrix", "where", "export"):
        assert run(command, DUMP, "--list-targets", "-n", "payments").stdout == text
    # an unknown name cuts its candidates at 10 and says how to see them all
    many = run("check", POOLS, "--pod", "nope", "--node", "general-0")
    assert "(known pod types: web-0" in many.stderr


# ---- 2. kubectl conventions --------------------------------------------------------------

def test_filename_and_stdin_and_namespace_default(tmp_path):
    manifest = tmp_path / "install.yaml"
    manifest.write_text(NAMESPACELESS)
    out = run("check", "-f", str(manifest), "--pod", "deploy/server", "--node", "n1", "-n", "argocd", "-o", "json")
    assert out.exit_code == 0 and json.loads(out.stdout)["target"] == "argocd/server on n1", out.output
    out = run("check", "-f", "-", "--pod", "server", "--node", "n1", "-o", "json", stdin=NAMESPACELESS)
    assert out.exit_code == 0 and json.loads(out.stdout)["target"] == "default/server on n1"
    assert run("check", "--pod", "x").exit_code == 2  # no input at all


@pytest.mark.parametrize("command", [["check", EXAMPLE], ["explain", EXAMPLE], ["matrix", EXAMPLE],
                                     ["where", EXAMPLE, "--pod", "c"]])
@pytest.mark.parametrize("fmt", ["json", "yaml", "csv"])
def test_every_command_takes_o(command, fmt):
    import yaml

    out = run(*command, "-o", fmt)
    assert out.exit_code in (0, 1), out.output
    if fmt == "json":
        assert json.loads(out.stdout)["schema_version"] == 1
    elif fmt == "yaml":
        assert yaml.safe_load(out.stdout)["command"] == command[0]
    else:
        assert "," in out.stdout.splitlines()[0]


def test_old_flags_are_aliases():
    assert json.loads(run("check", EXAMPLE, "--json").stdout)["command"] == "check"
    assert json.loads(run("matrix", EXAMPLE, "--format", "json").stdout)["command"] == "matrix"
    assert run("check", EXAMPLE, "--memory-mb", "4096").exit_code == 0


def test_check_help_lists_every_engine_of_the_registry():
    from symreach.solvers.registry import ENGINES

    text = " ".join(run("check", "--help").stdout.split())
    assert all(name in text for name in ENGINES) and "lazy" in text


# ---- 4. matrix for people -------------------------------------------------------------

def test_matrix_groups_nodes_into_named_pools_with_short_columns():
    out = run("matrix", POOLS)
    lines = out.stdout.splitlines()
    assert out.exit_code == 0
    # one pool per node class, its zones beside its name (instance-type: same split as pool)
    assert ("  P2   pool=general  (zones zone-a,zone-b,zone-c; 4 nodes: general-0, general-1, general-2, "
            "general-3)") in lines
    assert max(len(line) for line in lines if not line.startswith(" ")) < 160
    header = next(line for line in lines if line.split()[:2] == ["P1", "P2"])
    assert header.split() == ["P1", "P2", "P3"]
    # the pool's zones answer differently for db-4: the cell counts nodes, a line names the zones
    assert "db-4       .  1/4   ." in lines
    assert [line for line in lines if line.startswith("by zone:")] == [
        "by zone: db-4 on P2 pool=general: zone-a ., zone-b Y, zone-c ."]


def test_pools_split_by_class_not_by_zone():
    from symreach.loader import load_instance
    from symreach.report.pools import node_pools, zone_split

    inst = load_instance(POOLS)
    pools = node_pools(inst)
    assert [(p.name, p.zones, len(p.nodes)) for p in pools] == [
        ("pool=system node-role.kubernetes.io/control-plane", ("zone-a", "zone-b", "zone-c"), 3),
        ("pool=general", ("zone-a", "zone-b", "zone-c"), 4), ("pool=highmem", ("zone-a", "zone-b", "zone-c"), 4)]
    general = pools[1]
    assert zone_split(inst, general, lambda n: "deployable") is None   # every zone alike: no line
    split = zone_split(inst, general, lambda n: "deployable" if inst.nodes[n].name == "general-1" else "x")
    assert split is not None and [z for z, _ in split] == ["zone-a", "zone-b", "zone-c"]


def test_matrix_transpose_and_filters():
    out = run("matrix", POOLS, "--transpose", "--pods", "db-*,web-*", "--nodes", "pool=general")
    lines = out.stdout.splitlines()
    assert lines[2:5] == ["pod types:", "  1    web-0", "  2    db-4"]
    rows = [line for line in lines if line.startswith("P")]
    assert rows == ["P1 pool=general (zones zone-a,zone-b,zone-c)  Y  1/4"]
    data = json.loads(run("matrix", POOLS, "--pods", "db-4", "-o", "json").stdout)
    assert data["pods"] == ["db-4"] and len(data["cells"]) == 11 and len(data["pools"]) == 3
    assert data["pools"][1]["zones"] == ["zone-a", "zone-b", "zone-c"]


def test_pool_cell_counts_mixed_nodes():
    from symreach.report.matrix_view import cell_mark

    assert cell_mark(["deployable", "deployable"]) == "Y"
    assert cell_mark(["deployable", "not-deployable", "not-deployable"]) == "1/3"
    assert cell_mark(["deployable", "unknown"]) == "1/2?"
    assert cell_mark([None, None]) == "-"


def test_where_answers_pools_and_nodes_in_one_run():
    out = run("where", DUMP, "--pod", "deploy/payments-api")
    assert out.exit_code == 0
    assert out.stdout.splitlines()[0] == "payments/payments-api can ever run on 3 of 6 nodes"
    assert "         can:     general-a (runs there now)" in out.stdout
    assert "never:   gpu-b: node(s) had untolerated taint(s)" in out.stdout
    data = json.loads(run("where", DUMP, "--pod", "payments-api", "-o", "json").stdout)
    can = sorted(n for p in data["pools"] for n in p["nodes"]["deployable"])
    assert can == ["general-a", "general-c", "public-c"] and data["can"] == 3
    never = run("where", POOLS, "--pod", "db-4")
    assert never.exit_code == 0 and "can ever run on 1 of 11 nodes" in never.stdout
    assert "  some  pool=general (zones zone-a,zone-b,zone-c)  (1/4)" in never.stdout
    assert "         can:     general-1 [zone-b] (runs there now)" in never.stdout


# ---- 6. unknown is informative ----------------------------------------------------------

def test_unknown_says_what_was_proved():
    from symreach.report.verdict import result_text, what_was_proved
    from symreach.result import Result, Verdict

    bmc = Result(Verdict.UNKNOWN, "bmc", stats={"depth": 24, "queries": 25, "steps": "parallel"})
    assert what_was_proved(bmc) == "no witness within 23 parallel steps (BMC)"
    ic3 = Result(Verdict.UNKNOWN, "ic3", stats={"frames": 11, "lemmas": 900})
    assert what_was_proved(ic3).startswith("no witness within 10 macro steps")
    explicit = Result(Verdict.UNKNOWN, "explicit", stats={"states": 6334, "transitions": 35498})
    assert "6334 configurations explored" in what_was_proved(explicit)
    auto = Result(Verdict.UNKNOWN, "auto", stats={"unknown_engines": {"ic3": {"frame": 5}, "bmc": {"depth": 3}}})
    assert what_was_proved(auto) == ("bmc: no witness within 2 parallel steps (BMC); ic3: no witness within 4 "
                                     "macro steps (deletions, then one deploy): IC3 frames F1..F5")
    assert what_was_proved(Result(Verdict.DEPLOYABLE, "bmc", stats={"depth": 3, "queries": 1})) == ""
    text = result_text(bmc, "t", {"load_s": 0.5, "decide_s": 2.0, "minimise_s": 0.0, "total_s": 2.5})
    assert "time: 2.500 s (load 0.500, decide 2.000, minimise 0.000)" in text and "  proved:   no witness" in text


def test_a_limit_keeps_the_engines_progress():
    from symreach.report.progress import Recorder

    rec = Recorder()
    rec("bmc", depth=7, clauses=10)
    assert rec.last_stats("bmc") == {"depth": 7, "clauses": 10}
    rec("ic3", frame=3)
    assert rec.last_stats("auto") == {"unknown_engines": {"bmc": {"depth": 7, "clauses": 10}, "ic3": {"frame": 3}}}


def test_check_json_times_are_split():
    data = json.loads(run("check", EXAMPLE, "--engine", "explicit", "-o", "json").stdout)
    assert set(data["times"]) == {"start_s", "load_s", "decide_s", "minimise_s", "total_s"}
    assert data["times"]["total_s"] >= data["times"]["load_s"] > 0


class _Tty:
    def __init__(self) -> None:
        self.text = ""

    def isatty(self) -> bool:
        return True

    def write(self, text: str) -> None:
        self.text += text

    def flush(self) -> None:
        pass


def test_loading_and_minimising_show_progress_and_clear_it():
    from symreach.report.progress import Recorder, StderrProgress, loading

    tty = _Tty()
    with loading("examples/cluster-dump.yaml", stream=tty):
        assert "[loading] inputs=examples/cluster-dump.yaml" in tty.text
    assert tty.text.endswith("\r\x1b[K")
    rec = Recorder(StderrProgress(tty, interval_s=0.0))
    rec("bmc", depth=3)
    rec("minimise", steps=27)
    assert "[minimise] steps=27" in tty.text and rec.last_stats("bmc") == {"depth": 3}
    rec.close()
    assert tty.text.endswith("\r\x1b[K")


def test_namespace_filters_use_the_pod_types_namespace():
    """A format-v1 type's name has no namespace/ prefix; -n still finds and filters it."""
    assert run("check", EXAMPLE, "--pod", "c", "--node", "n1", "-n", "default").exit_code == 0
    assert run("check", EXAMPLE, "--pod", "c", "--node", "n1", "-n", "other").exit_code == 2
    rows = [ln.split()[0] for ln in run("matrix", EXAMPLE, "-n", "default").stdout.splitlines()[-4:-1]]  # then time:
    assert rows == ["a", "b", "c"]
    text = run("explain", DUMP, "-n", "kube-system").stdout
    assert text.count("\npod ") + text.startswith("pod ") == 2


def test_a_declining_engine_proved_nothing():
    from symreach.report.verdict import what_was_proved
    from symreach.result import Result, Verdict

    lazy = {"states": 1, "outcome": "declined"}
    assert what_was_proved(Result(Verdict.UNKNOWN, "lazy", stats=lazy)) == ""
    auto = Result(Verdict.UNKNOWN, "auto", stats={"unknown_engines": {"lazy": lazy, "explicit": {"states": 9}}})
    assert what_was_proved(auto) == "explicit: 9 configurations explored, none covers the target"


def test_the_fallback_follows_progress_only_under_a_supervisor(monkeypatch):
    from symreach.cli import process
    from symreach.report.progress import Recorder

    sent = []
    monkeypatch.setattr(process, "tell_supervisor", sent.append)
    monkeypatch.setattr(process, "supervised", lambda: False)
    process.reset()
    process.set_fallback(lambda reason: f"unknown: {reason}")
    sent.clear()
    rec = Recorder(on_report=lambda: process.refresh_fallback(0.0))
    rec("bmc", depth=1)
    assert sent == []
    monkeypatch.setattr(process, "supervised", lambda: True)
    rec("bmc", depth=2)
    assert sent == [{"fallback": f"unknown: {process.REASON}"}]
    process.refresh_fallback(3600.0)  # throttled
    assert len(sent) == 1
    process.reset()
