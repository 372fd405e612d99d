"""Engine comparison: run (instance, engine) jobs, each in its own process.

A *job* is one engine on one instance. Every job runs in a fresh Python
process (``python -m symreach.bench.runner SPEC OUT``) that

- sets ``RLIMIT_AS`` to the memory limit before importing anything heavy
  (grandchildren such as ``berkeley-abc`` inherit it),
- loads the instance (a format-v1 document, or a file through
  ``symreach.frontends.dispatch.load_any``), runs ``engine.check`` with
  ``Limits(timeout_s=...)`` and writes one JSON object: verdict, wall and CPU
  time of the check, peak resident memory, and the engine's own ``stats``.

The parent kills a child's whole process group when the wall-clock limit plus
a grace period has passed since the child *began the check* (engines that
honour ``Limits`` answer ``unknown`` before that), or, with a CPU limit, when
the CPU time its process tree spent since then (live members from ``/proc``,
plus what they reaped) passes it: on a loaded machine a wall-clock limit measures
the load as much as the engine. The child also sets ``RLIMIT_CPU`` a second
above its own share as a backstop. The child says so by
creating a marker file right before ``engine.check``: interpreter start,
imports, loading and the engine's construction (``auto`` imports every
engine there, so that its workers inherit them) are not the engine's time,
and on a loaded machine they took seconds per job, which killed sub-second
answers at short limits. Until the marker appears the child has
``SETUP_ALLOWANCE_S`` of its own. For a killed child, the CPU time comes from ``os.wait4`` and
the peak memory from the child's ``/proc/PID/status`` (``VmHWM``), polled
while it runs.

Statuses of a job: ``ok`` (deployable or not-deployable), ``unknown`` (the
engine gave up within its limit), ``timeout`` (killed by the parent),
``memout`` (``MemoryError`` or an allocation failure), ``cpu-out`` (killed at the
CPU limit), ``error`` (any other
exception or crash: an engine bug), ``skipped`` (not run: the same engine
already failed on a smaller instance of the same series, or the run's time
budget was spent).

``failures`` compares the verdicts: two engines that decide one instance
differently, or an engine that contradicts the known answer, make the run
fail; so do crashes unless the caller tolerates them.

Tables (``summary_rows``, ``instance_rows``, ``format_grid``) are shared by the
benchmark harness (``benchmarks/``) and ``symreach bench``.
"""

from __future__ import annotations

import json
import os
import resource
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Optional, Sequence

from symreach.solvers.processes import proc_stat_fields

DECIDED = ("deployable", "not-deployable")
STATUSES = ("ok", "unknown", "timeout", "cpu-out", "memout", "error", "skipped")

# Engine statistics copied into their own CSV columns (the JSON keeps all of them).
FLAT_STATS = ("iterations", "peak_nodes", "frames", "lemmas", "states", "depth", "queries",
              "state_vars", "decided_by")

_MB = 1024 * 1024
_POLL_S = 0.02
SETUP_ALLOWANCE_S = 120.0  # start, imports and loading before the check begins (module docstring)
_MEMOUT_MARKERS = ("MemoryError", "bad_alloc", "out of memory", "Cannot allocate memory",
                   "cannot allocate", "Unable to allocate")


# ---------------------------------------------------------------------------
# data
# ---------------------------------------------------------------------------

@dataclass(frozen=True)
class BenchInstance:
    """One question to ask every engine.

    Exactly one of ``document`` (a format-v1 dict) and ``path`` (a v1 file or
    a Kubernetes dump) is set; the query is the instance's own. ``expected``
    is the known answer (``deployable``/``not-deployable``) or None.
    ``series`` groups instances of growing ``size``: once an engine times out
    or runs out of memory on one of them it is not run on larger ones;
    ``rank`` orders the series when it is not the size (default: ``size``).
    """

    id: str
    family: str
    size: float = 0.0
    document: Optional[dict] = None
    path: Optional[str] = None
    expected: Optional[str] = None
    series: str = ""
    meta: dict = field(default_factory=dict)
    rank: Optional[float] = None
    # {"pod", "node", "node_selector"}: the query of a file that has none of its own
    query: Optional[dict] = None

    @property
    def position(self) -> float:
        return self.size if self.rank is None else self.rank

    def __post_init__(self) -> None:
        if (self.document is None) == (self.path is None):
            raise ValueError("give exactly one of document and path")
        if self.expected not in (None, *DECIDED):
            raise ValueError(f"bad expected verdict {self.expected!r}")


@dataclass(frozen=True)
class Job:
    instance: BenchInstance
    engine: str  # a registry name, or "module:Class" (tests inject engines this way)
    timeout_s: Optional[float] = None  # overrides the run's limit for this job
    cpu_limit_s: Optional[float] = None  # CPU seconds of the job's process tree, when set


@dataclass
class JobResult:
    instance: str
    family: str
    size: float
    engine: str
    expected: Optional[str]
    status: str
    verdict: str = "unknown"
    limit_s: Optional[float] = None  # the job's time limit
    time_s: Optional[float] = None   # wall time of engine.check
    cpu_s: Optional[float] = None    # CPU of the check (incl. solver subprocesses)
    peak_mb: Optional[float] = None  # peak resident memory of the job's process tree
    load_s: Optional[float] = None
    engine_time_s: Optional[float] = None  # the engine's own Result.time_s
    cpu_limit_s: Optional[float] = None
    load_start: Optional[float] = None  # 1-minute load average when the job started
    load_end: Optional[float] = None    # ... and when it ended
    reason: str = ""
    error: str = ""
    stats: dict = field(default_factory=dict)
    meta: dict = field(default_factory=dict)

    @property
    def solved(self) -> bool:
        return self.verdict in DECIDED

    def flat(self) -> dict[str, Any]:
        """One CSV row: fixed columns, the interesting stats, then the error."""
        row: dict[str, Any] = {
            "instance": self.instance, "family": self.family, "size": self.size,
            "engine": self.engine, "expected": self.expected or "", "verdict": self.verdict,
            "status": self.status, "limit_s": _round(self.limit_s), "time_s": _round(self.time_s), "cpu_s": _round(self.cpu_s),
            "peak_mb": _round(self.peak_mb, 1), "load_s": _round(self.load_s),
            "cpu_limit_s": _round(self.cpu_limit_s), "load_start": _round(self.load_start, 2),
            "load_end": _round(self.load_end, 2),
        }
        for key in FLAT_STATS:
            row[key] = self.stats.get(key, "")
        row["error"] = self.error.splitlines()[-1] if self.error else ""
        return row

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class Failure:
    """Something that makes the run fail: ``disagreement``, ``wrong`` or ``crash``."""

    kind: str
    instance: str
    message: str


CSV_COLUMNS = ("instance", "family", "size", "engine", "expected", "verdict", "status", "limit_s",
               "time_s", "cpu_s", "peak_mb", "load_s", "cpu_limit_s", "load_start", "load_end",
               *FLAT_STATS, "error")


def _round(x: Optional[float], digits: int = 4) -> Any:
    return "" if x is None else round(x, digits)


# ---------------------------------------------------------------------------
# engines
# ---------------------------------------------------------------------------

def resolve_engine(spec: str):
    """An engine object from a registry name or ``package.module:Class``."""
    if ":" in spec:
        import importlib

        module, attr = spec.split(":", 1)
        return getattr(importlib.import_module(module), attr)()
    from symreach.solvers.registry import import_answer_modules, make_engine

    import_answer_modules()   # every engine's, outside its check's time alike
    return make_engine(spec)


def engine_unavailable(name: str) -> Optional[str]:
    """None when ``name`` can run here, else a one-line note saying why not."""
    import importlib
    import shutil

    if ":" not in name:
        from symreach.solvers.registry import ENGINES

        if name not in ENGINES:
            return f"unknown engine (known: {', '.join(ENGINES)})"
        module, attr = ENGINES[name]
        if name.startswith("abc-") and shutil.which("berkeley-abc") is None \
                and not Path("/usr/bin/berkeley-abc").exists():
            return "berkeley-abc is not installed (apt-get install berkeley-abc)"
    else:
        module, attr = name.split(":", 1)
    try:
        mod = importlib.import_module(module)
    except Exception as exc:  # ImportError, or a module half-written right now
        return f"module {module} not importable: {type(exc).__name__}: {exc}".splitlines()[0]
    if not hasattr(mod, attr):
        return f"{module} has no {attr} yet"
    return None


# ---------------------------------------------------------------------------
# the child process
# ---------------------------------------------------------------------------

def _cpu_now() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def _vm_hwm_mb(pid: object = "self") -> Optional[float]:
    """Peak resident set of a process since its last ``exec`` (``VmHWM``), in MB.

    ``ru_maxrss`` is not used for the process itself: on Linux it keeps the
    high-water mark of the parent it was forked from, across ``exec``.
    """
    try:
        with open(f"/proc/{pid}/status") as handle:
            for line in handle:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024.0
    except (OSError, ValueError, IndexError):
        pass
    return None


def _group_peak_mb(pgid: int) -> Optional[float]:
    """The largest ``VmHWM`` among the live processes of process group ``pgid``."""
    best = None
    for entry, fields in _proc_table().items():
        if len(fields) > 2 and fields[2] == str(pgid):
            best = _max(best, _vm_hwm_mb(entry))
    return best


_TICK = os.sysconf("SC_CLK_TCK")


def tree_cpu_s(root: int) -> float:
    """CPU seconds of process ``root`` and its live descendants, and of the children they
    reaped (``auto``'s workers and ABC may sit in process groups of their own)."""
    table = _proc_table()
    children: dict[str, list[str]] = {}
    for entry, fields in table.items():
        if len(fields) > 1:
            children.setdefault(fields[1], []).append(entry)
    total, todo = 0, [str(root)]
    while todo:
        entry = todo.pop()
        # after the command name: state, ppid, pgrp, ...; utime, stime, cutime, cstime at 11-14
        try:
            total += sum(int(x) for x in table[entry][11:15])
        except (KeyError, ValueError):
            pass
        todo += children.get(entry, [])
    return total / _TICK


def _proc_table() -> dict[str, list[str]]:
    """pid -> the fields of ``/proc/PID/stat`` after the command name, for every live process."""
    out: dict[str, list[str]] = {}
    try:
        entries = os.listdir("/proc")
    except OSError:
        return out
    for entry in entries:
        if not entry.isdigit():
            continue
        try:
            out[entry] = proc_stat_fields(int(entry))
        except (OSError, IndexError):
            continue
    return out


def _max(a: Optional[float], b: Optional[float]) -> Optional[float]:
    return b if a is None else a if b is None else max(a, b)


def _peak_mb_now() -> float:
    """This process's peak, or a solver subprocess's if that was larger."""
    kids = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024.0
    own = _vm_hwm_mb()
    if own is None:
        own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0
    return max(own, kids)


def _jsonable(value: Any) -> Any:
    return json.loads(json.dumps(value, default=str))


def _child_main(spec_path: str, out_path: str) -> None:
    with open(spec_path) as handle:
        spec = json.load(handle)
    memory_mb = spec.get("memory_mb")
    if memory_mb:
        limit = int(memory_mb) * _MB
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    out: dict[str, Any] = {"status": "error", "verdict": "unknown"}
    t_start, cpu_start = time.perf_counter(), _cpu_now()
    try:
        from symreach.solvers.base import Limits

        if spec.get("document") is not None:
            from symreach.loader import load_document

            instance = load_document(spec["document"], filename=spec["id"])
        else:
            from symreach.frontends.dispatch import load_any

            instance = load_any(Path(spec["path"]))
        if instance.query is None and spec.get("query"):
            from symreach.loader import parse_query

            instance = instance.with_query(parse_query(instance, **spec["query"]))
        out["load_s"] = time.perf_counter() - t_start
        engine = resolve_engine(spec["engine"])
        if instance.query is None:
            raise ValueError("the instance has no query")
        if spec.get("cpu_limit_s"):  # a backstop: the parent counts the whole group
            soft = int(_cpu_now() + spec["cpu_limit_s"]) + 2
            resource.setrlimit(resource.RLIMIT_CPU, (soft, soft + 1))
        Path(began_marker(out_path)).touch()  # the parent's kill clock starts now
        t0, cpu0 = time.perf_counter(), _cpu_now()
        result = engine.check(instance, instance.query, Limits(timeout_s=spec.get("timeout_s")))
        out["time_s"] = time.perf_counter() - t0
        out["cpu_s"] = _cpu_now() - cpu0
        out["verdict"] = result.verdict.value
        out["status"] = "ok" if result.verdict.value in DECIDED else "unknown"
        out["engine_time_s"] = result.time_s
        out["reason"] = result.reason
        out["stats"] = _jsonable(result.stats)
        out["stats"].setdefault("trace_steps", len(result.trace))
    except MemoryError:
        out = {"status": "memout", "verdict": "unknown", "error": "MemoryError"}
    except BaseException as exc:  # an engine bug: report it, never hide it
        import traceback

        out = {"status": "error", "verdict": "unknown",
               "error": "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))[-4000:]}
    out.setdefault("cpu_s", _cpu_now() - cpu_start)
    out["peak_mb"] = _peak_mb_now()
    tmp = out_path + ".tmp"
    with open(tmp, "w") as handle:
        json.dump(out, handle, default=str)
    os.replace(tmp, out_path)


# ---------------------------------------------------------------------------
# the parent: one job
# ---------------------------------------------------------------------------

def default_grace(timeout_s: float) -> float:
    """Extra wall time, after the check began, before the parent kills a child."""
    return 2.0 + 0.1 * timeout_s


def began_marker(out_path: str) -> str:
    """The file a child creates when its ``engine.check`` begins."""
    return out_path + ".began"


def run_job(job: Job, timeout_s: float, memory_mb: Optional[int], workdir: str,
            grace_s: Optional[float] = None, cpu_limit_s: Optional[float] = None) -> JobResult:
    """Run one job in its own process group; never raises for engine failures.

    ``cpu_limit_s`` (or the job's own): CPU seconds of the group after its check began."""
    inst = job.instance
    cpu_limit_s = job.cpu_limit_s or cpu_limit_s
    base = JobResult(inst.id, inst.family, inst.size, job.engine, inst.expected, "error",
                     limit_s=timeout_s, meta=dict(inst.meta), cpu_limit_s=cpu_limit_s,
                     load_start=os.getloadavg()[0])
    fd, spec_path = tempfile.mkstemp(prefix="job-", suffix=".json", dir=workdir)
    out_path = spec_path[:-5] + ".out.json"
    log_path = spec_path[:-5] + ".log"
    spec = {"id": inst.id, "engine": job.engine, "timeout_s": timeout_s, "memory_mb": memory_mb,
            "document": inst.document, "path": inst.path, "query": inst.query,
            "cpu_limit_s": cpu_limit_s}
    with os.fdopen(fd, "w") as handle:
        json.dump(spec, handle)
    env = dict(os.environ)
    # One thread per job (numpy/BLAS would otherwise reserve address space per core).
    for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        env[var] = "1"
    root = str(Path(__file__).resolve().parents[2])  # the directory holding the symreach package
    env["PYTHONPATH"] = os.pathsep.join([root, os.getcwd()] + ([env["PYTHONPATH"]]
                                                              if env.get("PYTHONPATH") else []))
    limit = timeout_s + (default_grace(timeout_s) if grace_s is None else grace_s)
    killed = ""  # "wall" or "cpu": which limit the parent killed the job at
    with open(log_path, "wb") as log:
        proc = subprocess.Popen([sys.executable, "-m", "symreach.bench.runner", spec_path, out_path],
                                stdin=subprocess.DEVNULL, stdout=log, stderr=log,
                                start_new_session=True, env=env)
        from symreach.solvers.processes import register_group

        register_group(proc.pid)  # a group of its own: the CLI's supervisor must kill it too
        started = time.perf_counter()
        marker = began_marker(out_path)
        began: Optional[float] = None  # when the child's check began (its marker file)
        cpu_at_begin = 0.0
        polls, peak = 0, None
        while True:
            pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
            if pid == proc.pid:
                break
            polls += 1
            if polls % 10 == 0:  # the group's peak, in case it must be killed
                peak = _max(peak, _group_peak_mb(proc.pid))
            now = time.perf_counter()
            if began is None and os.path.exists(marker):
                began = now
                cpu_at_begin = tree_cpu_s(proc.pid) if cpu_limit_s else 0.0
            cpu_out = bool(cpu_limit_s and began is not None and polls % 5 == 0
                           and tree_cpu_s(proc.pid) - cpu_at_begin > cpu_limit_s)
            if cpu_out or ((now - began > limit) if began is not None
                           else (now - started > SETUP_ALLOWANCE_S)):
                peak = _max(peak, _group_peak_mb(proc.pid))
                killed = "cpu" if cpu_out else "wall"
                _kill_group(proc.pid)
                pid, status, usage = os.wait4(proc.pid, 0)
                break
            time.sleep(_POLL_S)
        proc.returncode = os.waitstatus_to_exitcode(status)  # we reaped it ourselves
    wall = time.perf_counter() - (started if began is None else began)
    if not killed and proc.returncode == -signal.SIGXCPU:
        killed = "cpu"  # the child's own RLIMIT_CPU backstop
    base.load_end = os.getloadavg()[0]
    try:
        result = _read_child(base, out_path, log_path, killed, proc.returncode, wall, usage,
                             timeout_s, peak, in_setup=began is None)
    finally:
        for path in (spec_path, out_path, log_path, marker):
            try:
                os.unlink(path)
            except FileNotFoundError:
                pass
    return result


def _kill_group(pid: int) -> None:
    """SIGKILL the child's own process group (the child and any solver it started)."""
    try:
        os.killpg(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def _read_child(base: JobResult, out_path: str, log_path: str, killed: str, code: int,
                wall: float, usage, timeout_s: float, peak: Optional[float],
                in_setup: bool = False) -> JobResult:
    try:
        with open(out_path) as handle:
            out = json.load(handle)
    except (FileNotFoundError, json.JSONDecodeError):
        out = None
    if out is not None and not killed:
        for key in ("status", "verdict", "time_s", "cpu_s", "peak_mb", "load_s", "engine_time_s",
                    "reason", "error"):
            if key in out and out[key] is not None:
                setattr(base, key, out[key])
        base.stats = out.get("stats") or {}
        return base
    base.cpu_s = usage.ru_utime + usage.ru_stime
    base.peak_mb = peak  # polled from /proc; ru_maxrss would include the parent's pages
    log = _tail(log_path)
    if killed == "cpu":
        base.status, base.time_s = "cpu-out", wall
        base.error = f"killed at its CPU limit of {base.cpu_limit_s:g} s ({wall:.1f} s of wall time)"
    elif killed:
        base.status, base.time_s = "timeout", max(wall, timeout_s)
        base.error = (f"killed after {wall:.1f} s of setup, before its check began" if in_setup else
                      f"killed {wall:.1f} s after its check began (limit {timeout_s:g} s + grace)")
    elif any(m in log for m in _MEMOUT_MARKERS):
        base.status, base.error = "memout", log[-2000:] or f"exit status {code}"
    else:
        base.status = "error"
        base.error = (log[-2000:] + "\n" if log else "") + f"child exited with status {code} " \
                                                           "without a result"
    return base


def _tail(path: str, size: int = 8000) -> str:
    try:
        with open(path, "rb") as handle:
            handle.seek(0, os.SEEK_END)
            handle.seek(max(0, handle.tell() - size))
            return handle.read().decode("utf-8", errors="replace")
    except OSError:
        return ""


# ---------------------------------------------------------------------------
# the parent: many jobs
# ---------------------------------------------------------------------------

def order_jobs(jobs: Sequence[Job]) -> list[Job]:
    """Smallest instances of every series first, so a time budget cuts the largest ones."""
    rank: dict[tuple[str, str], list[float]] = {}
    for job in jobs:
        key = (job.instance.series or job.instance.id, job.engine)
        rank.setdefault(key, []).append(job.instance.position)
    for sizes in rank.values():
        sizes.sort()

    def key(item):
        i, job = item
        series = job.instance.series or job.instance.id
        return (rank[(series, job.engine)].index(job.instance.position), i)

    return [job for _, job in sorted(enumerate(jobs), key=key)]


def run_jobs(jobs: Sequence[Job], timeout_s: float, memory_mb: Optional[int] = None,
             parallel: int = 2, budget_s: Optional[float] = None,
             on_result: Optional[Callable[[JobResult], None]] = None,
             stop_series: bool = True, grace_s: Optional[float] = None,
             cpu_limit_s: Optional[float] = None,
             on_start: Optional[Callable[[Job], None]] = None) -> list[JobResult]:
    """Run ``jobs`` with at most ``parallel`` at a time; results in input order.

    ``on_start(job)`` and ``on_result(result)`` are called as jobs start and end
    (from worker threads, one at a time): a progress display.

    ``stop_series``: once an engine hit ``timeout``/``memout``/``unknown`` on
    an instance of a series, larger instances of that series are skipped for
    that engine. ``budget_s``: jobs not started within this many seconds are
    skipped (the run's wall time stays bounded by about budget + one limit).
    """
    ordered = order_jobs(jobs)
    index = {id(job): i for i, job in enumerate(jobs)}
    results: list[Optional[JobResult]] = [None] * len(jobs)
    failed_at: dict[tuple[str, str], float] = {}  # (series, engine) -> smallest failing size
    lock = threading.Lock()
    cursor = iter(ordered)
    start = time.perf_counter()

    def skipped(job: Job, why: str) -> JobResult:
        inst = job.instance
        return JobResult(inst.id, inst.family, inst.size, job.engine, inst.expected, "skipped",
                         limit_s=job.timeout_s or timeout_s, error=why, meta=dict(inst.meta))

    with tempfile.TemporaryDirectory(prefix="symreach-bench-") as workdir:
        def worker() -> None:
            while True:
                with lock:
                    job = next(cursor, None)
                    if job is None:
                        return
                    inst = job.instance
                    key = (inst.series, job.engine)
                    res = None
                    if budget_s is not None and time.perf_counter() - start > budget_s:
                        res = skipped(job, f"time budget of {budget_s:g} s spent")
                    elif stop_series and inst.series and key in failed_at \
                            and failed_at[key] <= inst.position:
                        res = skipped(job, f"no answer on a smaller instance of {inst.series}")
                    if res is None and on_start is not None:
                        on_start(job)
                if res is None:
                    res = run_job(job, job.timeout_s or timeout_s, memory_mb, workdir, grace_s,
                                  cpu_limit_s)
                with lock:
                    if res.status in ("timeout", "cpu-out", "memout", "unknown") and inst.series:
                        failed_at[key] = min(failed_at.get(key, inst.position), inst.position)
                    results[index[id(job)]] = res
                    if on_result is not None:
                        on_result(res)

        threads = [threading.Thread(target=worker, daemon=True) for _ in range(max(1, parallel))]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    return [r for r in results if r is not None]


# ---------------------------------------------------------------------------
# checking the answers
# ---------------------------------------------------------------------------

def failures(results: Iterable[JobResult], crashes_fail: bool = True) -> list[Failure]:
    """Disagreements between engines, contradictions of known answers, crashes."""
    out: list[Failure] = []
    by_instance: dict[str, list[JobResult]] = {}
    for r in results:
        by_instance.setdefault(r.instance, []).append(r)
    for inst, rows in by_instance.items():
        decided = {r.engine: r.verdict for r in rows if r.solved}
        if len(set(decided.values())) > 1:
            said = ", ".join(f"{e}={v}" for e, v in sorted(decided.items()))
            out.append(Failure("disagreement", inst, f"engines disagree on {inst}: {said}"))
        expected = next((r.expected for r in rows if r.expected), None)
        if expected:
            for engine, verdict in sorted(decided.items()):
                if verdict != expected:
                    out.append(Failure("wrong", inst, f"{engine} says {verdict} on {inst}, "
                                                      f"the known answer is {expected}"))
        if crashes_fail:
            for r in rows:
                if r.status == "error":
                    last = r.error.strip().splitlines()[-1] if r.error.strip() else "crashed"
                    out.append(Failure("crash", inst, f"{r.engine} crashed on {inst}: {last}"))
    return out


def failure_report(found: Sequence[Failure]) -> str:
    """The loud text printed when a run fails."""
    if not found:
        return ""
    bar = "!" * 72
    lines = [bar, f"!!! BENCHMARK FAILED: {len(found)} problem(s)"]
    for kind in ("wrong", "disagreement", "crash"):
        items = [f for f in found if f.kind == kind]
        if items:
            lines.append(f"!!! {kind} ({len(items)}):")
            lines += [f"!!!   {f.message}" for f in items]
    lines.append(bar)
    return "\n".join(lines)

if __name__ == "__main__":  # the child process of run_job
    _child_main(sys.argv[1], sys.argv[2])
    # The answer is written. Tearing the interpreter down (a full collection, then every
    # object freed) took up to 2 CPU s after a check on the largest nets (BART), which the
    # parent's CPU limit counts: jobs decided within their limit were killed while exiting.
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)
