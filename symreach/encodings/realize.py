"""Turn a trace of an abstracted system into a trace that replays from the real sigma0.

Engines run on an abstraction of sigma0: saturated pairs capped at one pod,
types outside the affinity cone dropped (``preprocess``), or, for fast paths,
an arbitrary sub-configuration. The real configuration is always the
abstract one plus *extra* pods (pointwise ``real >= abstract`` with equal
support on every modelled pair). Every guard a deployment of the abstract
trace evaluates is either identical on both (presence of modelled pairs,
spread counts of counted pairs) or anti-monotone (capacity, ports,
anti-affinity, existing anti-affinity), so deleting extra pods can only help,
and with all extras deleted real == abstract on what the guard reads.

``realize_trace`` therefore walks the abstract trace and, before a deployment
that fails on the real configuration, deletes first the extras that can
matter for it (same node, anti-affinity domains, counted spread pods), then,
if still needed, every extra. An abstract deletion deletes the real copies
down to the abstract count, keeping the supports equal. The result is
replayed before it is returned, by ``replay_state.replay`` (the semantics'
guards from sums kept per step, tested against ``semantics`` itself: on
thousands of nodes the plain replay costs O(nodes) per step).
"""

from __future__ import annotations

from typing import Iterable, Mapping, Optional, Sequence

from symreach import semantics
from symreach.encodings.replay_state import ReplayState, replay
from symreach.run import RunContext
from symreach.model import KUBERNETES, Instance, Pair, Query
from symreach.result import DELETE, DEPLOY, Step

AbstractStep = tuple[str, int, int]  # (op, type index, node index)


def _relevant_extras(inst: Instance, t: int, n: int, extras: Iterable[Pair]) -> list[Pair]:
    pod = inst.pod_types[t]
    out = []
    for (u, m) in extras:
        hit = m == n
        if not hit:
            for term in pod.anti_affinity:
                if u in term.selects and m in term.topology.domain_nodes(n):
                    hit = True
                    break
        if not hit and inst.profile == KUBERNETES:
            for term in inst.pod_types[u].anti_affinity:
                if t in term.blocks and m in term.topology.domain_nodes(n):
                    hit = True
                    break
        if not hit:
            for h in pod.spread:
                if u in h.counts and m in h.eligible:
                    hit = True
                    break
        if hit:
            out.append((u, m))
    return sorted(out)


def realize_trace(inst: Instance, abstract_initial: Mapping[Pair, int],
                  steps: Sequence[AbstractStep], query: Optional[Query] = None,
                  run: Optional[RunContext] = None) -> Optional[tuple[Step, ...]]:
    """A real trace for ``steps`` (run from ``abstract_initial``), or None if a
    deployment fails even with every extra pod deleted (the abstraction was
    not one of the sound ones above) or the result does not replay. ``run``
    (default: the command's, ``RunContext.for_process``) is polled while
    deleting many pods."""
    run = run if run is not None else RunContext.for_process()
    state = ReplayState(inst)
    real = state.counts   # the real configuration, kept by the state
    abstract = {p: c for p, c in abstract_initial.items() if c > 0}
    out: list[Step] = []

    def shrink(p: Pair) -> None:
        # one deletion step per extra pod: with 10^12 initial pods this is the
        # long phase, so it polls the run's deadline
        extra = real.get(p, 0) - abstract.get(p, 0)
        if extra <= 0:
            return
        step = semantics.step_of(inst, DELETE, *p)
        for _ in range(extra):
            if len(out) % 4096 == 0:
                run.check("trace realisation")
            out.append(step)
        state.change(p[0], p[1], -extra)

    for op, t, n in steps:
        p = (t, n)
        if op == DELETE:
            if abstract.get(p, 0) <= 0:
                return None
            abstract[p] -= 1
            shrink(p)
            continue
        if state.deploy_failure(t, n) is not None:
            extras = [q for q, c in real.items() if c > abstract.get(q, 0)]
            for q in _relevant_extras(inst, t, n, extras):
                shrink(q)
            if state.deploy_failure(t, n) is not None:
                for q in sorted(q for q, c in real.items() if c > abstract.get(q, 0)):
                    shrink(q)
                if state.deploy_failure(t, n) is not None:
                    return None
        out.append(semantics.step_of(inst, DEPLOY, t, n))
        state.deploy(t, n)
        abstract[p] = abstract.get(p, 0) + 1
    trace = tuple(out)
    try:
        replay(inst, trace, query)
    except semantics.ReplayError:
        return None
    return trace
