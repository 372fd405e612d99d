"""Regression tests of issue 14: no traceback, no hang, no orphan, no lost verdict.

Each test re-runs the command of the original report. In-process runs use
click's CliRunner; signals, the supervisor's backstop and memory limits need
the real executable, run as a subprocess with a generous safety timeout
(never a wall-clock threshold: the assertions are about states and outputs).
"""

from __future__ import annotations

import io
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from symreach.cli.main import cli

REPO = Path(__file__).resolve().parent.parent
EXAMPLE = str(REPO / "examples" / "paper-2.6.yaml")
CAPACITY1 = str(REPO / "examples" / "paper-2.6-capacity1.yaml")
SAFETY_S = 120  # a hang, not a slow machine, is what exceeds this


def run(*args: str):
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


def no_traceback(result) -> bool:
    return "Traceback" not in result.output and result.exception is None or isinstance(result.exception, SystemExit)


# ---- tracebacks --------------------------------------------------------------------------

@pytest.fixture
def utf16(tmp_path):
    path = tmp_path / "b.json"
    path.write_bytes(b"\xff\xfe")
    return str(path)


def test_encode_pebbling_and_petri_on_a_utf16_bom_file(utf16):
    for args in (["encode", "pebbling", utf16, "-k", "2"], ["encode", "petri", utf16, "--goal", "q"]):
        result = run(*args)
        assert result.exit_code == 2 and no_traceback(result)
        assert result.stderr.strip() == f"symreach: error: {utf16}: not UTF-8 text (byte 0)"


def test_certify_garbage_certificate(tmp_path):
    garbage = tmp_path / "garbage.bin"
    garbage.write_bytes(bytes(range(256)))
    result = run("certify", CAPACITY1, str(garbage))
    assert result.exit_code == 2 and no_traceback(result)
    assert str(garbage) in result.stderr and len(result.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize("target", ["/proc/foo", "MISSING/t.json", "/dev/full"])
def test_trace_out_unwritable_keeps_the_verdict(tmp_path, target):
    path = target.replace("MISSING", str(tmp_path / "no-such-dir"))
    if path == "/dev/full" and not os.path.exists(path):
        pytest.skip("no /dev/full here")
    result = run("check", EXAMPLE, "--trace-out", path)
    assert result.exit_code == 0 and no_traceback(result)
    assert result.stdout.startswith("deployable")
    assert result.stderr.startswith(f"symreach: error: cannot write {path}: ")


def test_cert_out_unwritable_keeps_the_verdict():
    result = run("check", CAPACITY1, "--engine", "ic3", "--cert-out", "/proc/foo")
    assert result.exit_code == 1 and no_traceback(result)
    assert result.stdout.startswith("not-deployable")
    assert "cannot write /proc/foo" in result.stderr


def test_outputs_are_written_after_the_verdict_and_atomically(tmp_path):
    out = tmp_path / "t.json"
    result = run("check", EXAMPLE, "--trace-out", str(out))
    assert result.exit_code == 0 and json.loads(out.read_text())[0]["op"] == "deploy"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["t.json"]  # no temporary left behind


def test_write_atomic_writes_devices_in_place_and_cleans_up(tmp_path):
    from symreach.cli.output import write_atomic

    write_atomic(Path(os.devnull), "x")  # a device is written, never replaced
    assert Path(os.devnull).is_char_device()
    with pytest.raises(OSError):
        write_atomic(tmp_path / "missing" / "f", "x")
    (tmp_path / "d").mkdir()
    with pytest.raises(OSError):
        write_atomic(tmp_path / "d", "x")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["d"]


def test_no_trace_to_write_is_said():
    result = run("check", CAPACITY1, "--trace-out", "/tmp/never-written.json")
    assert result.exit_code == 1 and "no witness trace (not-deployable)" in result.stderr


def test_export_aiger_to_unwritable_path():
    result = run("export", EXAMPLE, "--aiger", "/proc/foo")
    assert result.exit_code == 2 and no_traceback(result)
    assert result.stderr.strip() == "symreach: error: cannot write /proc/foo: No such file or directory"


def test_explain_unknown_engine():
    result = run("explain", EXAMPLE, "--pod", "c", "--node", "n1", "--engine", "nosuch")
    assert result.exit_code == 2 and no_traceback(result)
    assert "unknown engine 'nosuch'; choose from explicit, bdd" in result.stderr  # --engine lists the registry


def test_explain_on_a_file_without_pod_types(tmp_path):
    empty = tmp_path / "empty.yaml"
    empty.write_text("version: 1\nnodes:\n  - name: n1\n    capacity: {cpu: '1'}\npodTypes: []\n")
    result = run("explain", str(empty))
    assert result.exit_code == 2 and f"{empty}: the file declares no pod types" in result.stderr


def test_unexpected_exception_is_one_line_exit_4(monkeypatch):
    import symreach.frontends.dispatch as dispatch

    def boom(*_args, **_kwargs):
        raise KeyError("bug")

    monkeypatch.setattr(dispatch, "load_inputs", boom)
    result = run("check", EXAMPLE)
    assert result.exit_code == 4 and "symreach: internal error: KeyError" in result.stderr
    assert "Traceback" not in result.output


# ---- options ---------------------------------------------------------------------------------

@pytest.mark.parametrize("value", ["-5", "nan", "inf", "-inf", "soon"])
def test_timeout_must_be_finite_and_non_negative(value):
    for command in ("check", "matrix", "explain", "export"):
        result = run(command, EXAMPLE, "--timeout", value)
        assert result.exit_code == 2 and "--timeout" in result.stderr, (command, value)


def test_trace_format_needs_trace_out():
    result = run("check", EXAMPLE, "--trace-format", "yaml")
    assert result.exit_code == 2 and "--trace-format needs --trace-out" in result.stderr


def test_option_errors_name_the_file():
    result = run("check", EXAMPLE, "--pod", "zz", "--node", "n1")
    assert result.exit_code == 2 and EXAMPLE in result.stderr


# ---- limits, in-process (cooperative deadline) ---------------------------------------------------

BIG = """\
version: 1
semantics: paper
nodes:
  - {name: n1, capacity: {cpu: "2"}}
podTypes:
  - {name: z, labels: {app: z}}
  - {name: a, labels: {app: a}, requests: {cpu: "1"}}
  - name: b
    labels: {app: b}
    requests: {cpu: "1"}
    affinity: {podAffinity: {requiredDuringSchedulingIgnoredDuringExecution: [
      {labelSelector: {matchLabels: {app: a}}, topologyKey: kubernetes.io/hostname}]}}
  - name: c
    labels: {app: c}
    requests: {cpu: "1"}
    affinity:
      podAffinity: {requiredDuringSchedulingIgnoredDuringExecution: [
        {labelSelector: {matchLabels: {app: b}}, topologyKey: kubernetes.io/hostname}]}
      podAntiAffinity: {requiredDuringSchedulingIgnoredDuringExecution: [
        {labelSelector: {matchLabels: {app: z}}, topologyKey: kubernetes.io/hostname}]}
initial:
  - {pod: z, node: n1, count: 1000000000000}
query: {pod: c, node: n1}
"""


def test_trace_realisation_honours_the_timeout(tmp_path):
    """10^12 initial pods to delete one by one: the realisation polls the deadline."""
    big = tmp_path / "big.yaml"
    big.write_text(BIG)
    result = run("check", str(big), "--timeout", "0.3", "--engine", "auto")
    assert result.exit_code == 3 and result.stdout.startswith("unknown")
    assert "timeout" in result.stdout


def test_realize_polls_the_deadline():
    from symreach.encodings.realize import realize_trace
    from symreach.errors import LimitReached, clear_deadline, set_deadline
    from symreach.loader import load_text

    inst = load_text(BIG, "big.yaml")
    a, b, c = (inst.type_index(x) for x in "abc")
    set_deadline(0.0)
    try:
        with pytest.raises(LimitReached, match="trace realisation"):
            realize_trace(inst, {}, [("deploy", a, 0), ("deploy", b, 0), ("delete", a, 0), ("deploy", c, 0)])
    finally:
        clear_deadline()


def test_matrix_timeout_zero_and_one_line_header():
    result = run("matrix", EXAMPLE, "--timeout", "0")
    assert result.exit_code == 3
    lines = result.stdout.splitlines()
    assert lines[2] == "pools:" and "(1 node: n1)" in lines[3] and lines[-1].startswith("incomplete: timeout")
    full = run("matrix", str(REPO / "examples" / "cluster-dump.yaml"), "-o", "wide")
    header = [ln for ln in full.stdout.splitlines() if ln.startswith(" ")][-1].split()
    assert header == [f"n{i}" for i in range(1, 7)]  # every node on one header line, by its key


# ---- output papercuts ----------------------------------------------------------------------

def test_progress_line_is_cleared_even_when_a_worker_drew_it():
    from symreach.report.progress import StderrProgress

    stream = io.StringIO()
    StderrProgress(stream).close()  # never drawn here: a forked worker may have drawn it
    assert stream.getvalue() == "\r\x1b[K"


def test_one_step_is_singular():
    from symreach.report.verdict import result_text
    from symreach.result import Result, Step, Verdict

    text = result_text(Result(Verdict.DEPLOYABLE, "x", trace=(Step("deploy", "a", "n1"),)))
    assert "trace (1 step," in text


def test_text_trace_shows_resources_dropping_to_zero():
    from symreach.export.traces import export_trace
    from symreach.loader import load_instance
    from symreach.result import Step

    inst = load_instance(EXAMPLE)
    text = export_trace((Step("deploy", "a", "n1"), Step("delete", "a", "n1")), inst, "text")
    assert "n1 now uses cpu 1/2" in text and "n1 now uses cpu 0/2" in text


def test_abc_reason_names_the_time_limit():
    from symreach.solvers.abc import undecided_reason

    assert undecided_reason("snl_UNK", "Reached timeout (3 seconds)", 3, 3.1).startswith("timeout")
    assert undecided_reason("snl_UNK", "", 3, 3.2).startswith("timeout")
    assert "timeout" not in undecided_reason("snl_UNK", "", 60, 0.5)


# ---- the supervised executable: signals, backstop, memory ---------------------------------------

def symreach(*args: str, **kwargs) -> subprocess.Popen:
    env = dict(os.environ, PYTHONPATH=str(REPO))
    env.pop("SYMREACH_SUPERVISOR_FD", None)
    return subprocess.Popen([sys.executable, "-m", "symreach", *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=env, **kwargs)


def finish(proc: subprocess.Popen, timeout: float) -> tuple[str, str]:
    """(stdout, stderr) of a run; a run past ``timeout`` (a hang) is killed, never left behind."""
    try:
        return proc.communicate(timeout=timeout)
    finally:
        if proc.poll() is None:
            proc.kill()


def descendants(pid: int) -> dict[int, str]:
    """Live descendants of ``pid`` (pid -> command name), from /proc."""
    parent: dict[int, int] = {}
    names: dict[int, str] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as handle:
                    fields = handle.read().rsplit(")", 1)
                name = fields[0].split("(", 1)[1]
                rest = fields[1].split()
            except (OSError, IndexError):
                continue
            if rest[0] != "Z":
                parent[int(entry)] = int(rest[1])
                names[int(entry)] = name
    found: dict[int, str] = {}
    todo = [pid]
    while todo:
        current = todo.pop()
        for child, ppid in parent.items():
            if ppid == current and child not in found:
                found[child] = names[child]
                todo.append(child)
    return found


def alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as handle:
            return handle.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def wait_until(condition, what: str) -> None:
    end = time.monotonic() + SAFETY_S
    while not condition():
        assert time.monotonic() < end, f"never happened: {what}"
        time.sleep(0.05)


@pytest.fixture(scope="module")
def hard(tmp_path_factory):
    """A pyramid no engine decides quickly: every run is interrupted or limited."""
    from symreach.cli.output import dump_yaml
    from symreach.frontends.reduction_pebbling import encode_pebbling
    from symreach.generators.dags import pyramid

    dag = pyramid(16)
    path = tmp_path_factory.mktemp("hard") / "pyramid16.yaml"
    path.write_text(dump_yaml(encode_pebbling(dag.vertices, dag.edges, dag.target, 17)))
    return str(path)


@pytest.mark.parametrize("engine,sig,code,expect", [
    ("auto", signal.SIGTERM, 143, 3),
    ("auto", signal.SIGHUP, 129, 3),
    ("auto", signal.SIGINT, 130, 3),
    ("ic3", signal.SIGINT, 130, 1),
    pytest.param("abc-pdr", signal.SIGTERM, 143, 2,
                 marks=pytest.mark.skipif(shutil.which("berkeley-abc") is None, reason="berkeley-abc is not installed")),
])
def test_signals_end_every_child(hard, engine, sig, code, expect):
    """``expect``: descendants to wait for (supervised child, race workers or berkeley-abc)."""
    proc = symreach("check", hard, "--engine", engine)
    try:
        wait_until(lambda: len(descendants(proc.pid)) >= expect
                   and (engine != "abc-pdr" or "berkeley-abc" in descendants(proc.pid).values()),
                   f"{engine} started its processes")
        children = descendants(proc.pid)
        proc.send_signal(sig)
        out, err = proc.communicate(timeout=SAFETY_S)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == code
    assert err.strip() == "interrupted" and out == ""
    wait_until(lambda: not any(alive(p) for p in children), "every child ended")


def test_timeout_backstop_prints_unknown(hard):
    proc = symreach("check", hard, "--engine", "bdd", "--timeout", "1")
    out, err = finish(proc, SAFETY_S)
    assert proc.returncode == 3 and out.startswith("unknown") and "timeout" in out, err


def test_matrix_timeout_on_a_hard_instance(hard):
    proc = symreach("matrix", hard, "--timeout", "1")
    out, err = finish(proc, SAFETY_S)
    # the matrix of unknowns once the file is loaded; on a slow machine the
    # limit may strike while loading, before there is a matrix to print
    assert proc.returncode == 3 and ("?" in out and "timeout" in out or "error: timeout" in err), (out, err)


def test_memory_limit_generate_tree_height_40():
    proc = symreach("generate", "pebbling", "--shape", "tree", "--height", "40", "-k", "3", "--memory", "300")
    out, err = finish(proc, SAFETY_S)
    assert proc.returncode == 3 and "symreach: error: memory limit (300 MB" in err, err
    assert "Traceback" not in err


def test_memory_limit_check_bdd_ends_with_reason_memory_limit(hard):
    """CUDD under RLIMIT_AS alone garbage-collects and crawls until the timeout;
    capped below the limit (``solvers/cudd_memory.py``) it fails at once, and the
    verdict says ``memory limit``. The timeout is far away: only memory can end it."""
    proc = symreach("check", hard, "--engine", "bdd", "--memory", "300", "--timeout", "900", "--json")
    out, err = finish(proc, SAFETY_S * 8)
    assert proc.returncode == 3, err
    data = json.loads(out)
    assert data["verdict"] == "unknown" and data["reason"] == "memory limit (300 MB)", data


def test_cudd_cap_follows_the_address_space_limit():
    from symreach.solvers.cudd_memory import is_out_of_memory

    code = ("import resource; resource.setrlimit(resource.RLIMIT_AS, (2 << 30, resource.RLIM_INFINITY));"
            "from symreach.solvers.cudd_memory import cap_manager;"
            "import dd.cudd; b = dd.cudd.BDD(); print(cap_manager(b), b.configure()['max_memory'])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO,
                         env={**os.environ, "PYTHONPATH": str(REPO)}, timeout=SAFETY_S).stdout.split()
    assert int(out[0]) == int(out[1]) and 0 < int(out[0]) < 2 << 30
    assert is_out_of_memory(ValueError("`DdNode *node` is `NULL` pointer."))
    assert is_out_of_memory(RuntimeError("CUDD appears to have run out of memory."))
    assert not is_out_of_memory(ValueError("unknown operator"))


def test_memory_limit_export_dimacs_huge_depth():
    """Session 7's defect: under a 200 MB cap this run sometimes spun at the limit or died
    ("lost sys.stderr"). The unrolling now polls the address space (``RunContext.check_memory``)
    and stops with room left to print its line."""
    proc = symreach("export", EXAMPLE, "--dimacs", os.devnull, "--depth", "100000000", "--memory", "200")
    out, err = finish(proc, SAFETY_S * 3)
    assert proc.returncode == 3 and err == "symreach: error: memory limit (200 MB)\n", err


def test_memory_error_leaving_a_command_is_one_line(monkeypatch):
    """The other half of the fix: a ``MemoryError`` raised anywhere in a command becomes its
    one line right where it leaves the command (``cli.errors._memory_released``), before
    click's ``with`` blocks, where CPython 3.11 could spin unwinding with memory still full."""
    import symreach.encodings.dimacs as dimacs

    def full(*_args, **_kwargs):
        raise MemoryError

    monkeypatch.setattr(dimacs, "bmc_cnf", full)
    result = run("export", EXAMPLE, "--dimacs", os.devnull, "--depth", "3")
    assert result.exit_code == 3 and result.stderr == "symreach: error: memory limit\n", result.stderr


def test_a_child_whose_parent_died_before_die_with_parent_exits_at_once():
    """PR_SET_PDEATHSIG only covers a parent that dies after the request: a child that
    finds another parent (the one it was forked by is gone) exits instead of running on."""
    from symreach.solvers.processes import die_with_parent

    for parent, expected in ((os.getpid(), 0), (-1, 1)):  # -1: never anyone's parent
        pid = os.fork()
        if pid == 0:  # pragma: no cover - the child
            die_with_parent(parent=parent)
            os._exit(0)
        _, status = os.waitpid(pid, 0)
        assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == expected


def test_check_memory_stops_near_the_address_space_limit(monkeypatch):
    import symreach.run as run_module
    from symreach.errors import LimitReached

    ctx = run_module.RunContext()
    mb = run_module.MB
    monkeypatch.setattr(run_module, "address_space", lambda: (200 * mb, 100 * mb))
    ctx.check_memory("export")  # far from the limit: goes on
    monkeypatch.setattr(run_module, "address_space", lambda: (200 * mb, 190 * mb))
    with pytest.raises(LimitReached, match=r"^memory limit \(200 MB\)$"):
        ctx.check_memory("export")
    monkeypatch.setattr(run_module, "address_space", lambda: (None, None))
    ctx.check_memory("export")  # no limit


def test_sigterm_ends_benchmark_jobs_in_their_own_groups(tmp_path):
    """Benchmark jobs run in sessions of their own; the supervisor kills those groups too."""
    (tmp_path / "one.yaml").write_text(Path(EXAMPLE).read_text())
    proc = symreach("bench", str(tmp_path), "--engines", "tests.test_bench:HangingEngine", "--timeout", "600",
                    cwd=str(REPO))
    try:
        wait_until(lambda: len(descendants(proc.pid)) >= 2, "the benchmark job started")
        children = descendants(proc.pid)
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=SAFETY_S)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 143 and err.strip().endswith("interrupted")
    wait_until(lambda: not any(alive(p) for p in children), "every benchmark job ended")


@pytest.mark.parametrize("field, value, problem", [
    ("affinity", "[1, 2]", "affinity: expected a mapping, got a list"),
    ("affinity", "true", "affinity: expected a mapping, got a boolean"),
    ("tolerations", "7", "tolerations: expected a list, got an integer"),
    ("volumes", "{a: 1}", "volumes: expected a list, got a mapping"),
])
def test_malformed_template_field_is_an_input_error_not_a_crash(tmp_path, field, value, problem):
    """Fuzz finds: a workload template whose ``affinity`` is a list or a boolean
    crashed the signature of its pod type, a DaemonSet's ``tolerations: 7`` its
    pinning, before shape validation could name the line."""
    dump = tmp_path / "in.yaml"
    dump.write_text(
        "apiVersion: apps/v1\nkind: DaemonSet\nmetadata: {name: web, namespace: default}\n"
        "spec:\n  selector: {matchLabels: {app: web}}\n  template:\n"
        "    metadata: {labels: {app: web}}\n"
        f"    spec:\n      {field}: {value}\n"
        "      containers: [{name: c, image: x}]\n"
        "---\napiVersion: v1\nkind: Node\nmetadata: {name: n1}\n"
        "status: {allocatable: {cpu: '1', memory: 1Gi, pods: '10'}}\n")
    result = run("check", str(dump), "--node", "n1", "--engine", "explicit", "--timeout", "0", "--json")
    assert result.exit_code == 2 and no_traceback(result), result.output
    assert f"in.yaml:9: document 1 (DaemonSet default/web): spec.template.spec.{problem}" in result.stderr


@pytest.mark.parametrize("obj, problem", [
    ("kind: PersistentVolumeClaim\nmetadata: {name: c, namespace: default}\nspec: {storageClassName: []}",
     "spec.storageClassName: expected a string, got a list"),
    ("kind: PersistentVolumeClaim\nmetadata: {name: c, namespace: default}\nspec: {volumeName: {a: 1}}",
     "spec.volumeName: expected a string, got a mapping"),
    ("kind: PersistentVolume\nmetadata: {name: v}\nspec: {nodeAffinity: [1]}",
     "spec.nodeAffinity: expected a mapping, got a list"),
    ("kind: StorageClass\nmetadata: {name: s}\nprovisioner: x\nallowedTopologies: 3",
     "allowedTopologies: expected a list, got an integer"),
])
def test_malformed_volume_objects_are_input_errors(tmp_path, obj, problem):
    dump = tmp_path / "v.yaml"
    dump.write_text("apiVersion: v1\nkind: Node\nmetadata: {name: n1}\n"
                    "status: {allocatable: {cpu: '1', pods: '10'}}\n---\napiVersion: v1\n" + obj + "\n")
    result = run("check", str(dump), "--node", "n1", "--timeout", "0")
    assert result.exit_code == 2 and no_traceback(result), result.output
    assert problem in result.stderr and "v.yaml:" in result.stderr


@pytest.mark.parametrize("protocol, shown", [("{x: TCP}", "{'x': 'TCP'}"), ("HTTP", "'HTTP'")])
def test_host_port_protocol_outside_the_api_values_is_an_input_error(tmp_path, protocol, shown):
    """Fuzz find (101,000-input run): a mapping as a port's protocol crashed the
    host-port de-duplication (``unhashable type: 'dict'``, exit 4)."""
    dump = tmp_path / "p.yaml"
    dump.write_text("apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: default}\nspec:\n"
                    "  containers:\n  - name: c\n    image: x\n    ports:\n"
                    f"    - {{containerPort: 80, hostPort: 80, protocol: {protocol}}}\n")
    result = run("check", str(dump), "--timeout", "0")
    assert result.exit_code == 2 and no_traceback(result), result.output
    assert (f"p.yaml:9: document 1 (Pod default/p): spec.containers[0].ports[0].protocol: unsupported value {shown}: "
            'supported values: "SCTP", "TCP", "UDP"') in result.stderr
