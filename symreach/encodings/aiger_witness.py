"""HWMCC/AIGER witnesses of deployable answers, on the model ``symreach export --aiger`` writes.

A hardware model checker's answer "the bad output can be 1" is checked by
simulating its witness on the AIG. ``symreach check --aiger-witness FILE``
writes the same evidence for symreach's answers, whichever engine found
them, so that a tool of that world (ABC, aigsim) can check them::

    1            the output 0 is reachable
    b0           ... bad-state property 0
    000          initial latch values (AIGER 1.0: every latch resets to 0)
    100000       input vector of frame 0: the one-hot choice of an action
    ...
    000000       the frame where the output is 1 (the inputs do not matter)
    .

The model is ``AigerModel(compile_system(instance, query))``, exactly what
``symreach export --aiger`` writes for the same files and target. Its inputs
are the system's actions; the answer's trace (replayed against the
semantics) is projected onto them: steps on pairs the system does not model
(outside the affinity cone) are dropped, and on a saturated pair only the
first deployment and the last deletion change its presence bit. The
projection is then simulated on the system, and must reach the target, before
anything is written.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Optional, Sequence

from symreach.errors import InputError
from symreach.model import Instance, Query
from symreach.result import DEPLOY, Step
from symreach.encodings.system import TransitionSystem

if TYPE_CHECKING:
    from symreach.encodings.aiger import AigerModel


class WitnessError(ValueError):
    """The trace does not map onto the model (a bug: the trace replays on the semantics)."""


def trace_actions(system: TransitionSystem, instance: Instance, trace: Sequence[Step]) -> list[int]:
    """The system's action indices that ``trace`` takes, up to the first target state."""
    types = {name: i for i, name in enumerate(system.type_names)}
    nodes = {name: i for i, name in enumerate(system.node_names)}
    by_key = {(a.op, a.type_index, a.node_index): i for i, a in enumerate(system.actions)}
    state = dict(system.initial)
    real = dict(instance.initial)
    actions: list[int] = []
    if system.holds(system.target, state):
        return actions
    for k, step in enumerate(trace):
        pair = (types[step.pod], nodes[step.node])
        before = real.get(pair, 0)
        real[pair] = before + (1 if step.op == DEPLOY else -1)
        vars_ = system.pairs.get(pair)
        if vars_ is None:
            continue  # not modelled: it cannot change what the target depends on
        if not vars_.counted and (before > 0 if step.op == DEPLOY else real[pair] > 0):
            continue  # a saturated pair's presence bit does not change
        index = by_key.get((step.op, *pair))
        nxt = None if index is None else system.successor(system.actions[index], state)
        if nxt is None:
            raise WitnessError(f"step {k + 1} ({step.op} {step.pod} on {step.node}) is not an "
                               "enabled action of the exported model")
        state = nxt
        actions.append(index)
        if system.holds(system.target, state):
            return actions
    raise WitnessError("the trace does not reach the target on the exported model")


def witness_text(model: "AigerModel", actions: Sequence[int]) -> str:
    """The AIGER witness: header, reset latches, one one-hot input vector per action,
    one more for the frame where the output is 1."""
    n_in = model.aig.n_inputs
    lines = ["1", "b0", "0" * model.aig.n_latches]
    for i in actions:
        lines.append("".join("1" if j == i else "0" for j in range(n_in)))
    lines += ["0" * n_in, "."]
    return "\n".join(lines) + "\n"


def aiger_witness(instance: Instance, query: Query, trace: Optional[Sequence[Step]],
                  path: str = "") -> str:
    """The witness of a deployable answer's ``trace`` on the exported model of ``instance``."""
    from symreach.encodings.compile import compile_system
    from symreach.encodings.aiger import AigerModel

    if trace is None:
        raise InputError("the answer has no replayed trace to write as an AIGER witness", path)
    system = compile_system(instance, query)
    return witness_text(AigerModel(system), trace_actions(system, instance, trace))
