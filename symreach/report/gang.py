"""The gang answer as text (one sentence beside the verdict) and as JSON (issue 28, item 3),
and a gang certificate as lemmas in the scheduler's words (issue 26 item 3)."""

from __future__ import annotations

import json
import time
from typing import Any, Optional

from symreach import gangs, semantics
from symreach.model import Config, Instance
from symreach.report.details import details, with_details
from symreach.report.objects import type_name
from symreach.report.verdict import result_json, result_text

MAX_NODES = 4          # nodes listed per blocked member; more are counted
MAX_CYCLES = 200       # reachable configurations whose scheduler cycle is simulated for the lemmas
CYCLES_S = 5.0         # and the seconds they may take together (a large gang's cycle is costly)


def _placed(inst: Instance, placement: gangs.Placement) -> str:
    return ", ".join(f"{inst.pod_types[t].name} on {inst.nodes[n].name}" for t, n in placement)


def _choices(inst: Instance, choices: gangs.Choices) -> str:
    return ", ".join(f"{inst.pod_types[t].name} on {inst.nodes[n].name}" if n is not None
                     else f"{inst.pod_types[t].name} fits nowhere" for t, n in choices)


def unschedulable(inst: Instance, t: int, config) -> str:
    """The kube-scheduler's FitError text for a member in a state: "0/4 nodes are available: ..."."""
    counts: dict[str, int] = {}
    for n in range(len(inst.nodes)):
        failure = semantics.node_failure(inst, t, n, config)
        if failure is not None:
            for reason in failure.reasons:
                counts[reason] = counts.get(reason, 0) + 1
    parts = sorted(f"{c} {r}" for r, c in counts.items())
    return f"0/{len(inst.nodes)} nodes are available: {', '.join(parts)}."


def blocker(inst: Instance, sigma, choices: gangs.Choices) -> str:
    """The first member the failing choices leave without a node, in the scheduler's words."""
    config = sigma
    for t, n in choices:
        if n is None:
            return f" (first blocked: {inst.pod_types[t].name}, {unschedulable(inst, t, config)[:-1]})"
        config = semantics.deploy(inst, config, t, n)
    return ""


def cycle_phrase(inst: Instance, cycle: Optional[gangs.Cycle]) -> str:
    if cycle is None:
        return "the scheduler's cycle is not simulated for composite groups"
    if cycle.outcome == gangs.SUCCEEDS:
        return "the scheduler's cycle succeeds for every node choice"
    if cycle.outcome == gangs.FAILS:
        return "the scheduler's cycle fails for every node choice"
    return f"the scheduler's cycle may fail (e.g. {_choices(inst, cycle.failing or ())})"


def sentence(inst: Instance, answer) -> str:
    """E.g. "the scheduler's cycle fails for every node choice, but this order places all 5 now: ..."."""
    verdict = answer.result.verdict.value
    cycle = cycle_phrase(inst, answer.cycle)
    bad_cycle = answer.cycle is not None and answer.cycle.outcome != gangs.SUCCEEDS
    if answer.placement_now == ():
        link = "and"
        what = "the members already running meet the group's policy"
    elif answer.placement_now is not None:
        link = "but" if bad_cycle else "and"
        what = f"this order places all {len(answer.placement_now)} now: {_placed(inst, answer.placement_now)}"
    elif verdict == "deployable":
        link = "and"
        what = (f"a placement exists only after {len(answer.result.trace)} other moves (the trace), "
                f"in this order: {_placed(inst, answer.placement)}")
    elif verdict == "not-deployable":
        link = "and"
        what = "no placement exists in any reachable configuration"
    else:
        link = "and"
        what = "whether a placement exists was not decided"
    return f"{cycle}, {link} {what}."


def gang_text(inst: Instance, answer, target: str, times: Optional[dict] = None) -> str:
    lines = [result_text(answer.result, target, times)]
    lines.append(f"group: {gangs.member_policy_text(gangs.gang_of(inst, answer.root))}")
    lines.append(sentence(inst, answer)[0].upper() + sentence(inst, answer)[1:])
    cycle = answer.cycle
    if cycle is not None and cycle.failing is not None:
        why = blocker(inst, inst.initial_config(), cycle.failing)
        lines.append(f"scheduler's cycle, one failing run: {_choices(inst, cycle.failing)}{why}")
    lines += [f"note: {n}" for n in answer.notes]
    return "\n".join(lines)


def gang_json(inst: Instance, answer, target: str, times: Optional[dict] = None) -> str:
    data: dict[str, Any] = json.loads(result_json(answer.result, target, times))
    cycle = answer.cycle
    data["group"] = {
        "name": answer.root,
        "minCount": answer.min_count,
        "members": answer.members,
        "scheduler_cycle": None if cycle is None else cycle.outcome,
        "scheduler_failing_choice": None if cycle is None or cycle.failing is None else _steps(inst, cycle.failing),
        "scheduler_blocked": None if cycle is None or cycle.failing is None else
        blocker(inst, inst.initial_config(), cycle.failing).strip(" ()") or None,
        "placement_now": answer.placement_now is not None,
        "gang_step": _steps(inst, answer.placement),
        "sentence": sentence(inst, answer),
        "notes": answer.notes,
    }
    return json.dumps(data)


def _steps(inst: Instance, pairs) -> list[dict[str, Any]]:
    return [{"pod": inst.pod_types[t].name, "node": None if n is None else inst.nodes[n].name} for t, n in pairs]


def explain_group_text(inst: Instance, answer) -> str:
    """``explain --group``: the scheduler's cycle member by member (one run that fails, if
    any), each member's feasible nodes or the scheduler's reasons, then the answer's sentence."""
    cycle = answer.cycle
    lines = [f"group {answer.root}: {gangs.member_policy_text(gangs.gang_of(inst, answer.root))}"]
    run = None if cycle is None else (cycle.failing or cycle.succeeding)
    if run:
        label = "one run that fails" if cycle.failing else "one run (every run succeeds)"
        lines.append(f"the scheduler's cycle from the current state, {label}:")
        config = inst.initial_config()
        for i, (t, n) in enumerate(run, 1):
            name = inst.pod_types[t].name
            if n is None:
                lines.append(f"  {i}. {name}: {unschedulable(inst, t, config)}")
                continue
            fits = [inst.nodes[m].name for m in range(len(inst.nodes))
                    if semantics.node_failure(inst, t, m, config) is None]
            lines.append(f"  {i}. {name} -> {inst.nodes[n].name} (feasible: {', '.join(fits)})")
            config = semantics.deploy(inst, config, t, n)
    if answer.placement:
        lines.append(f"a gang step that works{' after the trace' if answer.result.trace else ''}: "
                     f"{_placed(inst, answer.placement)}")
    lines.append(sentence(inst, answer)[0].upper() + sentence(inst, answer)[1:])
    return "\n".join(lines)


# ---- a gang certificate as lemmas ----------------------------------------------------------------

def _ordinal(k: int) -> str:
    return f"{k}{'th' if 10 <= k % 100 <= 20 else {1: 'st', 2: 'nd', 3: 'rd'}.get(k % 10, 'th')}"


def blocked_text(inst: Instance, sigma: Config, choices: gangs.Choices) -> str:
    """The members a failing scheduler cycle assumes, then the first one that fits no node,
    with each node's failing filter and the object it names (taint, amounts, term, domain)."""
    config, placed = sigma, []
    for t, n in choices:
        if n is not None:
            placed.append(f"{type_name(inst, t)} on {inst.nodes[n].name}")
            config = semantics.deploy(inst, config, t, n)
            continue
        k = 1 + sum(1 for u, m in choices[:len(placed)] if u == t and m is not None)
        why = []
        for m in range(len(inst.nodes)):
            failure = semantics.node_failure(inst, t, m, config)
            if failure is not None:
                notes = details(inst, t, m, config, failure.reasons)
                why.append(f"{inst.nodes[m].name}: {with_details(failure.reasons, notes)}")
        more = f" (+{len(why) - MAX_NODES} more nodes)" if len(why) > MAX_NODES else ""
        before = f"after {', '.join(placed)}, " if placed else ""
        return (f"{before}the {_ordinal(k)} {type_name(inst, t)} fits on no node: "
                + "; ".join(why[:MAX_NODES]) + more)
    return ""


def certificate_states(inst: Instance, content: dict) -> list[Config]:
    """The configurations a gang certificate lists, as configurations of ``inst``."""
    index = [inst.pair(inst.type_index(p), inst.node_index(n)) for p, n in content["pairs"]]
    empty = [0] * len(inst.initial_config())
    out = []
    for row in content["states"]:
        sigma = list(empty)
        for i, c in zip(index, row):
            sigma[i] = c
        out.append(tuple(sigma))
    return out


def gang_lemmas(inst: Instance, content: dict) -> list[str]:
    """What a gang certificate proves, then why in the scheduler's words: in the reachable
    configurations it lists (the current one first), which member the default PodGroup
    cycle leaves without a node and each node's failing filter."""
    gang = gangs.gang_of(inst, str(content["group"]))
    states = certificate_states(inst, content)
    sigma0 = inst.initial_config()
    pending = sum(gang.pending.values())
    out = [f"never group {gang.root.name} ({gangs.member_policy_text(gang)}): in none of the {len(states)} "
           f"configurations the rest of the cluster can reach do {pending} pending members fit at once "
           "in any order and on any nodes"]
    if gang.root.composite:
        return out + ["the scheduler's cycle is not simulated for composite groups"]
    seen: dict[str, list[bool]] = {}
    ordered = sorted(states, key=lambda sigma: sigma != sigma0)[:MAX_CYCLES]
    deadline, simulated = time.monotonic() + CYCLES_S, 0
    for sigma in ordered:
        try:
            cycle = gangs.scheduler_cycle(inst, gang, sigma, deadline)
        except gangs.GangLimit:
            break
        simulated += 1
        if cycle is not None and cycle.failing is not None:
            seen.setdefault(blocked_text(inst, sigma, cycle.failing), []).append(sigma == sigma0)
    for text, where in seen.items():
        label = "now" if where[0] and len(where) == 1 else \
            f"in {len(where)} of the {len(states)} configurations{' (now among them)' if any(where) else ''}"
        out.append(f"{label}, {text}" if text else f"{label}, the scheduler's cycle fails")
    if simulated < len(states):
        out.append(f"the scheduler's cycle was simulated in {simulated} of the {len(states)} configurations")
    return out
