"""ABC (berkeley-abc) as an external engine on the AIGER export.

``AbcPdrEngine`` (``pdr``), ``AbcBmcEngine`` (``bmc3``) and ``AbcReachEngine``
(BDD ``reach`` with raised frame and node limits) write the system as binary
AIGER (this ABC build refuses ``.aag``) into a temporary directory and run::

    berkeley-abc -q "read_aiger m.aig; <command>; write_status st.txt"

ABC's exit code is always 0; the verdict is the first word of ``st.txt``
(``snl_SAT`` / ``snl_UNSAT`` / ``snl_UNK``). For ``snl_SAT`` the status file
carries the counterexample (initial latches, then the inputs of every frame
concatenated); it is simulated on the system (an input vector is the
one-hot choice of an action), realised against sigma0 and replayed, so a
``deployable`` verdict from ABC has the same evidence as ours. ABC's
``snl_UNSAT`` has no certificate we can re-check: the reason says that the
verdict is ABC's. Without the binary, ``check`` returns ``unknown``.

ABC runs as a child the run's cancel token can stop and kill from another thread
(``solvers.child``): ``auto`` runs this engine in a thread of its own process.
Its CPU (``stats["abc_cpu_s"]``) is counted as any reaped child's.
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING, Optional

from symreach.encodings.compile import compile_system
from symreach.encodings.realize import realize_trace
from symreach.model import Instance, Query
from symreach.result import Result, Verdict
from symreach.run import RunContext
from symreach.solvers import abc_binary
from symreach.solvers.abc_binary import abc_available  # noqa: F401 - this module's API
from symreach.solvers.fast_paths import PreprocessingEngine
from symreach.solvers.child import Child

if TYPE_CHECKING:
    from symreach.encodings.aiger import AigerModel

DEFAULT_TIMEOUT_S = 600.0


class _AbcEngine(PreprocessingEngine):
    name = "abc"

    def __init__(self, fast_paths: bool = True) -> None:
        self.fast_paths = fast_paths

    def command(self, timeout_s: float) -> str:  # pragma: no cover - overridden
        raise NotImplementedError

    def decide(self, instance: Instance, query: Query, pre, run: RunContext) -> Result:
        start = time.perf_counter()
        binary = abc_binary.ABC_BINARY   # read at call time: tests point it elsewhere
        if not abc_binary.abc_available():
            return Result(Verdict.UNKNOWN, self.name, fragment=pre.fragment,
                          reason=f"{binary} is not installed (apt-get install berkeley-abc)",
                          time_s=time.perf_counter() - start)
        from symreach.encodings.aiger import AigerModel  # python-sat: only when ABC runs (start-up)

        system = compile_system(instance, query, pre)
        model = AigerModel(system)
        left_at_start = run.remaining()
        timeout = left_at_start if left_at_start is not None else DEFAULT_TIMEOUT_S
        stats = dict(system.stats)
        stats.update(aig_ands=len(model.aig.ands), aig_latches=model.aig.n_latches,
                     aig_inputs=model.aig.n_inputs)
        with tempfile.TemporaryDirectory(prefix="symreach-abc-") as tmp:
            aig = Path(tmp) / "m.aig"
            aig.write_bytes(model.to_bytes(binary=True))
            # what is left of the budget after compiling: ABC's own -T must end first
            left = max(1.0, timeout - (time.perf_counter() - start))
            script = f"read_aiger m.aig; {self.command(max(1, int(left)))}; write_status st.txt"
            stats["abc_command"] = script
            if run.past():  # cancelled (or out of time) while compiling: ABC never starts
                return Result(Verdict.UNKNOWN, self.name, fragment=pre.fragment, stats=stats,
                              reason=run.timeout_reason("before ABC started"),
                              time_s=time.perf_counter() - start)
            ended, out = _run_abc([binary, "-q", script], tmp, run, left + 0.5, stats)
            if not ended:
                return Result(Verdict.UNKNOWN, self.name, fragment=pre.fragment, stats=stats,
                              reason=f"timeout: ABC did not finish within the time limit of {timeout:g} s",
                              time_s=time.perf_counter() - start)
            if run.cancel.cancelled:
                return Result(Verdict.UNKNOWN, self.name, fragment=pre.fragment, stats=stats,
                              reason="stopped: ABC was killed (the run was cancelled)",
                              time_s=time.perf_counter() - start)
            st = Path(tmp) / "st.txt"
            status = st.read_text().split("\n") if st.exists() else []
        stats["abc_stdout"] = out.strip()[-400:]
        word = status[0].split()[0] if status and status[0].split() else ""
        elapsed = time.perf_counter() - start
        if word == "snl_UNSAT":
            return Result(Verdict.NOT_DEPLOYABLE, self.name, fragment=pre.fragment, stats=stats,
                          reason=f"ABC `{self.command(0).split()[0]}` proved the target unreachable "
                                 "(ABC's verdict; no symreach certificate)", time_s=elapsed)
        if word == "snl_SAT":
            actions = _decode_cex(model, status[1:])
            trace = None
            if actions is not None:
                steps = [(system.actions[i].op, system.actions[i].type_index, system.actions[i].node_index)
                         for i in actions]
                trace = realize_trace(instance, pre.abstract_initial, steps, query, run)
            if trace is not None:
                stats["cex_length"] = len(actions)
                return Result(Verdict.DEPLOYABLE, self.name, fragment=pre.fragment, trace=trace, stats=stats,
                              reason="ABC counterexample, simulated on the system and replayed",
                              time_s=time.perf_counter() - start)
            return Result(Verdict.DEPLOYABLE, self.name, fragment=pre.fragment, stats=stats,
                          reason="ABC reports the target reachable (ABC's verdict; its counterexample "
                                 "could not be read or replayed)", time_s=time.perf_counter() - start)
        return Result(Verdict.UNKNOWN, self.name, fragment=pre.fragment, stats=stats,
                      reason=undecided_reason(word, out, timeout, elapsed), time_s=elapsed)


def _run_abc(argv: list[str], cwd: str, run: RunContext, timeout_s: float,
             stats: dict) -> tuple[bool, str]:
    """Run ABC as a child that the run's cancel token can pause and kill from another
    thread (``solvers.child``; ``auto`` runs this engine in a thread of its own
    process): (whether it ended within ``timeout_s``, its output). Its CPU goes to
    ``stats["abc_cpu_s"]``; it is reaped in every case."""
    log = Path(cwd) / "abc.out"
    with open(log, "w") as handle, Child(argv, cwd, handle) as child:
        ended = run.cancel.wait_child(child, timeout_s)
    stats["abc_cpu_s"] = child.cpu_s
    return ended, log.read_text(errors="replace")


def undecided_reason(word: str, stdout: str, timeout_s: float, elapsed_s: float) -> str:
    """ABC says ``snl_UNK`` both when its ``-T`` limit stopped it and when it
    gave up; name the time limit when that is what happened."""
    if word in ("snl_UNK", "") and ("timeout" in stdout.lower() or elapsed_s >= max(1, int(timeout_s))):
        return f"timeout: ABC reached its time limit of {max(1, int(timeout_s))} s"
    return f"ABC returned {word or 'no status'} (undecided)"


def _decode_cex(model: "AigerModel", lines: list[str]) -> Optional[list[int]]:
    """Simulate ABC's counterexample (latch line, then concatenated inputs) on
    the system; the action indices up to the first target state, or None."""
    system = model.system
    n_in = model.aig.n_inputs
    rows = [ln.strip() for ln in lines if ln.strip() and set(ln.strip()) <= {"0", "1"}]
    if len(rows) < 2 or n_in == 0:
        return None
    bits = "".join(rows[1:])
    state = dict(system.initial)
    actions: list[int] = []
    if system.holds(system.target, state):
        return actions
    for f in range(len(bits) // n_in):
        vec = bits[f * n_in:(f + 1) * n_in]
        on = [i for i, b in enumerate(vec) if b == "1"]
        if len(on) == 1:
            nxt = system.successor(system.actions[on[0]], state)
            if nxt is not None:
                state = nxt
                actions.append(on[0])
                if system.holds(system.target, state):
                    return actions
    return None


class AbcPdrEngine(_AbcEngine):
    name = "abc-pdr"

    def command(self, timeout_s: float) -> str:
        return f"pdr -T {int(timeout_s)}"


class AbcBmcEngine(_AbcEngine):
    name = "abc-bmc"

    def command(self, timeout_s: float) -> str:
        return f"bmc3 -T {int(timeout_s)}"


class AbcReachEngine(_AbcEngine):
    name = "abc-reach"

    def command(self, timeout_s: float) -> str:
        return f"reach -F 10000000 -B 10000000 -T {int(timeout_s)}"
