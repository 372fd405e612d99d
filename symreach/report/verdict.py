"""Printers: turn results and explanations into text or JSON. Engines never print."""

from __future__ import annotations

import json
from typing import Any, Optional, Sequence

from symreach.result import Result, Verdict


# The statistics worth a line in the text output; --json prints them all.
SIZE_KEYS = ("types", "cone_types", "pairs_total", "pairs_may", "state_vars", "actions", "states",
             "transitions", "iterations", "peak_nodes", "reached_nodes", "depth", "frames", "lemmas",
             "decided_by")


def result_text(result: Result, target: str = "", times: Optional[dict[str, float]] = None,
                wide: bool = False, pod_names: Sequence[str] = ()) -> str:
    """The verdict for people; ``wide`` (``-o wide``) adds every statistic; ``pod_names``:
    the pod each trace step creates or deletes (``export.traces.step_names``)."""
    lines = [result.verdict.value]
    if target:
        lines.append(f"  target:   {target}")
    lines.append(f"  engine:   {result.engine}    fragment: {result.fragment}    time: {_time_text(result, times)}")
    if result.reason:
        lines.append(f"  reason:   {result.reason}")
    proved = what_was_proved(result)
    if proved:
        lines.append(f"  proved:   {proved}")
    if result.trace:
        steps = len(result.trace)
        shortest = ", shortest" if result.stats.get("shortest") else ""
        lines.append(f"  trace ({steps} step{'' if steps == 1 else 's'}{shortest}, replayed against the semantics):")
        width = len(str(len(result.trace)))
        for i, step in enumerate(result.trace, 1):
            pod = f" (pod {pod_names[i - 1]})" if len(pod_names) == len(result.trace) else ""
            held = f" holding {step.holding}" if step.holding else ""
            lines.append(f"    {i:>{width}}. {step.op} {step.pod} on {step.node}{held}{pod}")
    before, _, after = str(result.stats.get("trace_minimised", "")).partition(" -> ")
    if before != after:
        lines.append(f"  trace minimised: {result.stats['trace_minimised']} steps")
    if "shortest" in result.stats:
        lines.append(f"  shortest: {result.stats['shortest']}")
    keys = sorted(result.stats) if wide else SIZE_KEYS
    sizes = [f"{k}={_fmt(result.stats[k])}" for k in keys if k in result.stats]
    if sizes:
        lines.append(("  stats:    " if wide else "  sizes:    ") + ", ".join(sizes))
    return "\n".join(lines)


def _time_text(result: Result, times: Optional[dict[str, float]]) -> str:
    if not times:
        return f"{result.time_s:.3f} s"
    return times_text(times)


def times_text(times: dict[str, float]) -> str:
    """``1.434 s (start 0.200, load 0.100, decide 1.134, minimise 0.000)``: every text output's time."""
    parts = ", ".join(f"{k[:-2]} {v:.3f}" for k, v in times.items() if k != "total_s")
    return f"{times.get('total_s', 0.0):.3f} s ({parts})"


def result_data(result: Result, target: str = "", times: Optional[dict[str, float]] = None) -> dict[str, Any]:
    """The verdict as the JSON contract's keys (docs/json.md, ``check``): the same whatever the engine."""
    data: dict[str, Any] = result.to_json()
    data["target"] = target
    data["proved"] = what_was_proved(result) or None
    data["times"] = dict(times) if times else {"total_s": round(result.time_s, 6)}
    return data


def result_json(result: Result, target: str = "", times: Optional[dict[str, float]] = None) -> str:
    from symreach.report.schema import render_document

    return render_document("check", result_data(result, target, times))


def what_was_proved(result: Result) -> str:
    """What an ``unknown`` verdict still established, from the engine's statistics
    ("no witness within 23 steps", states explored, IC3 frames); empty otherwise."""
    if result.verdict is not Verdict.UNKNOWN:
        return ""
    stats = result.stats
    facts: list[str] = []
    if stats.get("outcome") == "declined":  # an engine outside its fragment proved nothing
        return ""
    engine = result.engine.rsplit("/", 1)[-1]
    depth = stats.get("depth")
    if isinstance(depth, int) and depth > 1 and (engine in ("bmc", "abc-bmc") or "queries" in stats) \
            and "frames" not in stats:
        unit = "parallel steps" if stats.get("steps", "parallel") == "parallel" else "steps"
        facts.append(f"no witness within {depth - 1} {unit} (BMC)")
    frames = stats.get("frames", stats.get("frame"))
    if isinstance(frames, int) and frames > 1:
        lemmas = f", {stats['lemmas']} lemmas" if "lemmas" in stats else ""
        facts.append(f"no witness within {frames - 1} macro steps (deletions, then one deploy): "
                     f"IC3 frames F1..F{frames}{lemmas}")
    if isinstance(stats.get("states"), int):
        edges = f", {stats['transitions']} transitions" if isinstance(stats.get("transitions"), int) else ""
        facts.append(f"{stats['states']} configurations explored{edges}, none covers the target")
    bdd = bdd_progress(stats) if engine == "bdd" else ""
    sweeps = stats.get("iterations", stats.get("sweeps"))
    if bdd:
        facts.append(bdd)
    elif isinstance(sweeps, int) and engine == "bdd":
        facts.append(f"{sweeps} BDD sweeps without reaching the target")
    others = stats.get("unknown_engines")
    for name, sub in sorted(others.items()) if isinstance(others, dict) else ():
        if isinstance(sub, dict):
            inner = what_was_proved(Result(Verdict.UNKNOWN, name, stats=sub))
            if inner:
                facts.append(f"{name}: {inner}")
    return "; ".join(facts)


def bdd_progress(stats: dict[str, Any]) -> str:
    """A BDD run its deadline stopped: after k complete chaining sweeps a side's
    reached set holds every state within k steps of its start, and every image
    was checked against the goal (``solvers.bdd.record_progress``), so no
    witness has k steps or fewer."""
    sweeps = stats.get("side_sweeps")
    if not isinstance(sweeps, dict) and isinstance(stats.get("complete_sweeps"), int):
        side = str(stats.get("direction", "forward"))   # the last progress report (auto's race, a killed run)
        return bdd_progress({"side_sweeps": {side: stats["complete_sweeps"]},
                             "side_images": {side: stats.get("images")},
                             "side_nodes": {side: stats.get("reached_nodes")}})
    if not isinstance(sweeps, dict) or not sweeps:
        return ""
    nodes, images, states = (stats.get(k) or {} for k in ("side_nodes", "side_images", "side_states"))
    sides = []
    for side, k in sweeps.items():
        goal = "target" if side == "forward" else "initial"
        held = f" holding {states[side]:.4g} states" if isinstance(states.get(side), int) else ""
        size = f", reached set {nodes[side]} BDD nodes{held}" if isinstance(nodes.get(side), int) else ""
        count = f", {images[side]} images" if isinstance(images.get(side), int) else ""
        sides.append(f"{side}: {k} complete sweep{'' if k == 1 else 's'}{count}{size}, no {goal} state")
    best = max(sweeps.values())
    head = (f"no witness within {best} step{'' if best == 1 else 's'}" if best >= 1
            else "no witness found before the first sweep completed")
    return f"{head} (BDD " + "; ".join(sides) + ")"


def _fmt(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.4g}"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k}={_fmt(v)}" for k, v in value.items()) + "}"
    return str(value)


def _json_default(value: Any) -> Any:
    if isinstance(value, (set, frozenset, tuple)):
        return list(value)
    return str(value)
