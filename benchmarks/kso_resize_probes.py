"""New pods of a resized pod's type against the real kube-scheduler (kso).

A bound pod whose status carries an in-place resize holds what its status says
(``k8s_requests.pod_requests``); a new pod created from the same spec holds its
spec's requests. symreach puts the running pod in a non-creatable type of its
own and keeps its spec in the type new pods get (``Report.resized`` names it).
Here kso is asked about a pending copy of every such pod (status, node and uid
dropped: a pod as created from the spec) in the state itself, on every node,
and symreach answers for the type of new pods with ``semantics.node_failure``
in σ0. Pods with a generic ephemeral volume are not copied (a copy's claim
would have another name).
"""

from __future__ import annotations

import copy
from typing import Sequence

from benchmarks.kso_binding_steps import Question, Tally, compare_walks
from benchmarks.kso_harness import Verdict
from symreach import semantics
from symreach.errors import InputError
from symreach.frontends.kubernetes import load_kubernetes_documents
from symreach.generators.k8s_states import State


def questions(index: int, state: State) -> list[Question]:
    """The state with a pending copy of each resized running pod, and symreach's verdicts for them.
    Nothing for a state symreach refuses to load: the differential run counts it as a failure already."""
    try:
        inst, report = load_kubernetes_documents(copy.deepcopy(state.objects), "<state>")
    except InputError:
        return []
    if not report.resized:
        return []
    pods = {f"{o['metadata'].get('namespace', 'default')}/{o['metadata']['name']}": o
            for o in state.objects if o["kind"] == "Pod"}
    sigma = inst.initial_config()
    copies: list[dict] = []
    named: dict[str, str] = {}
    for full, type_name in sorted(report.resized.items()):
        pod = pods[full]
        if any("ephemeral" in v for v in pod["spec"].get("volumes") or ()):
            continue
        probe = as_created(pod, f"resize-probe-{len(copies)}")
        copies.append(probe)
        named[f"{probe['metadata'].get('namespace', 'default')}/{probe['metadata']['name']}"] = type_name
    if not copies:
        return []
    ours = {name: {node.name: _verdict(inst, inst.type_index(type_name), n, sigma)
                   for n, node in enumerate(inst.nodes)} for name, type_name in named.items()}
    return [Question(index, 0, list(state.objects) + copies, named, ours, False)]


def as_created(pod: dict, name: str) -> dict:
    """A new pod of ``pod``'s spec: pending, no status, no uid."""
    out = copy.deepcopy(pod)
    out["metadata"]["name"] = name
    out["metadata"].pop("uid", None)
    out.pop("status", None)
    out["spec"].pop("nodeName", None)
    return out


def _verdict(inst, t: int, n: int, sigma) -> Verdict:
    failure = semantics.node_failure(inst, t, n, sigma)
    return None if failure is None else (failure.plugin, failure.reasons)


def resize_probes(states: Sequence[State], kso) -> tuple[int, Tally, list]:
    """(states with resized pods copied, the tally, the disagreements) over ``states``."""
    asked = [q for i, state in enumerate(states) for q in questions(i, state)]
    tally, wrong = compare_walks(asked, kso) if asked else (Tally(), [])
    return len(asked), tally, wrong
