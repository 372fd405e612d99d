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
    out = []
    for entry in choices:
        if isinstance(entry, gangs.Mark):
            if entry.met is False:
                out.append(f"group {entry.name} missed")
            continue
        t, n = entry
        out.append(f"{inst.pod_types[t].name} on {inst.nodes[n].name}" if n is not None
                   else f"{inst.pod_types[t].name} fits nowhere")
    return ", ".join(out)


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
    for config, entry in gangs.run_states(inst, sigma, choices):
        if not isinstance(entry, gangs.Mark) and entry[1] is None:
            t = entry[0]
            return f" (first blocked: {inst.pod_types[t].name}, {unschedulable(inst, t, config)[:-1]})"
    return ""


def cycle_phrase(inst: Instance, cycle: Optional[gangs.Cycle]) -> str:
    if cycle is None:
        return "the scheduler's cycle was not simulated"
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
        k = len(answer.placement_now)
        count = f"all {k}" if k == answer.members else f"{k} of the {answer.members} pending"
        what = f"this order places {count} now: {_placed(inst, answer.placement_now)}"
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
    """Members and nodes; in a composite's run also ``{"group", "met"}`` where a group starts
    (met null) or ends (a missed group's pods are reverted)."""
    return [{"group": e.name, "met": e.met} if isinstance(e, gangs.Mark) else
            {"pod": inst.pod_types[e[0]].name, "node": None if e[1] is None else inst.nodes[e[1]].name}
            for e in pairs]


def explain_group_text(inst: Instance, answer) -> str:
    """``explain --group``: the scheduler's cycle member by member (one run that fails, if
    any), each member's feasible nodes or the scheduler's reasons, then the answer's sentence."""
    cycle = answer.cycle
    lines = [f"group {answer.root}: {gangs.member_policy_text(gangs.gang_of(inst, answer.root))}"]
    run = None if cycle is None else (cycle.failing or cycle.succeeding)
    if run:
        label = "one run that fails" if cycle.failing else "one run (every run succeeds)"
        lines.append(f"the scheduler's cycle from the current state, {label}:")
        lines += run_lines(inst, gangs.gang_of(inst, answer.root), inst.initial_config(), run)
    if answer.placement:
        lines.append(f"a gang step that works{' after the trace' if answer.result.trace else ''}: "
                     f"{_placed(inst, answer.placement)}")
    lines.append(sentence(inst, answer)[0].upper() + sentence(inst, answer)[1:])
    return "\n".join(lines)


def run_lines(inst: Instance, gang: gangs.Gang, sigma: Config, run: gangs.Choices) -> list[str]:
    """A scheduler run member by member in the scheduler's words: each member's node and the
    feasible ones, or the FitError of one that fits nowhere; where a group ends, whether its
    policy holds, with the GangScheduling plugin's message when it does not ("minCount (2)
    cannot be satisfied: 1 scheduled, 0 remaining") and its assumed pods reverted; at the end
    "no pods were schedulable" when the policy held with no pod assumed."""
    lines: list[str] = []
    open_: list[list[int]] = []     # per open group: [met children or members, tried, assumed]
    depth, i, assumed_any = 1, 0, False
    leaf_root = not gang.root.composite
    if leaf_root:
        open_.append([gang.running(inst, sigma)[gang.root.name], 0, 0])
    for config, entry in gangs.run_states(inst, sigma, run):
        pad = "  " * depth
        if isinstance(entry, gangs.Mark):
            group = gang.groups[entry.name]
            if entry.met is None:
                running = 0 if group.composite else gang.running(inst, config)[group.name]
                open_.append([running, 0, 0])
                lines.append(f"{pad}group {group.name} ({_policy(gang, group)}):")
                depth += 1
                continue
            depth -= 1
            done, tried, assumed = open_.pop()
            lines.append(f"{'  ' * depth}group {group.name}: " + _end(gang, group, entry.met, done, tried, assumed))
            if open_ and entry.met:
                open_[-1][0] += 1
            if open_:
                open_[-1][1] += 1
            assumed_any = assumed_any or (entry.met and assumed > 0)
            if open_ and entry.met:
                open_[-1][2] += assumed
            continue
        t, n = entry
        i += 1
        name = inst.pod_types[t].name
        if open_:
            open_[-1][1] += 1
        if n is None:
            lines.append(f"{pad}{i}. {name}: {unschedulable(inst, t, config)}")
            continue
        if open_:
            open_[-1][0] += 1
            open_[-1][2] += 1
        fits = [inst.nodes[m].name for m in range(len(inst.nodes))
                if semantics.node_failure(inst, t, m, config) is None]
        lines.append(f"{pad}{i}. {name} -> {inst.nodes[n].name} (feasible: {', '.join(fits)})")
    if leaf_root:
        done, tried, assumed = open_.pop()
        met = done >= gang.need(gang.root)
        lines.append(f"  group {gang.root.name}: " + _end(gang, gang.root, met, done, tried, assumed))
        assumed_any = assumed > 0
    else:
        met = bool(run) and isinstance(run[-1], gangs.Mark) and bool(run[-1].met)
    if met and not assumed_any:
        lines.append("  the scheduler: no pods were schedulable (the policy holds, but no pod was assumed)")
    return lines


def _policy(gang: gangs.Gang, group) -> str:
    if group.composite:
        return f"{gang.need(group)} of {len(gang.children.get(group.name, ()))} child groups"
    pending = sum(c for _, c in group.members)
    return f"minCount {gang.need(group)}, {pending} pending" if group.policy != "basic" else \
        f"basic policy, {pending} pending"


def _end(gang: gangs.Gang, group, met: bool, done: int, tried: int, assumed: int) -> str:
    """How a group's evaluation ends, in the GangScheduling plugin's words when it misses."""
    if met:
        return f"policy met ({done} scheduled)"
    total = len(gang.children.get(group.name, ())) if group.composite else sum(c for _, c in group.members)
    why = f"minCount ({gang.need(group)}) cannot be satisfied: {done} scheduled, {total - tried} remaining"
    return why + (f"; its {assumed} assumed pods are reverted" if assumed else "")


# ---- a gang certificate as lemmas ----------------------------------------------------------------

def _ordinal(k: int) -> str:
    return f"{k}{'th' if 10 <= k % 100 <= 20 else {1: 'st', 2: 'nd', 3: 'rd'}.get(k % 10, 'th')}"


def blocked_text(inst: Instance, sigma: Config, choices: gangs.Choices) -> str:
    """The members a failing scheduler cycle assumes, then the first one that fits no node,
    with each node's failing filter and the object it names (taint, amounts, term, domain)."""
    placed: list[str] = []
    counts: dict[int, int] = {}
    for config, entry in gangs.run_states(inst, sigma, choices):
        if isinstance(entry, gangs.Mark):
            continue
        t, n = entry
        if n is not None:
            placed.append(f"{type_name(inst, t)} on {inst.nodes[n].name}")
            counts[t] = counts.get(t, 0) + 1
            continue
        k = 1 + counts.get(t, 0)
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
