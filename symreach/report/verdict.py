"""Printers: turn results and explanations into text or JSON. Engines never print."""

from __future__ import annotations

import json
from typing import Any, Sequence

from symreach.result import Result


# The statistics worth a line in the text output; --json prints them all.
SIZE_KEYS = ("types", "cone_types", "pairs_total", "pairs_may", "state_vars", "actions", "states",
             "transitions", "iterations", "peak_nodes", "reached_nodes", "depth", "frames", "lemmas",
             "decided_by")


def result_text(result: Result, target: str = "", pod_names: Sequence[str] = ()) -> str:
    """``pod_names``: the pod each trace step creates or deletes (``export.traces.step_names``)."""
    lines = [result.verdict.value]
    if target:
        lines.append(f"  target:   {target}")
    lines.append(f"  engine:   {result.engine}    fragment: {result.fragment}    time: {result.time_s:.3f} s")
    if result.reason:
        lines.append(f"  reason:   {result.reason}")
    if result.trace:
        steps = len(result.trace)
        shortest = ", shortest" if result.stats.get("shortest") else ""
        lines.append(f"  trace ({steps} step{'' if steps == 1 else 's'}{shortest}, replayed against the semantics):")
        width = len(str(len(result.trace)))
        for i, step in enumerate(result.trace, 1):
            pod = f" (pod {pod_names[i - 1]})" if len(pod_names) == len(result.trace) else ""
            lines.append(f"    {i:>{width}}. {step.op} {step.pod} on {step.node}{pod}")
    before, _, after = str(result.stats.get("trace_minimised", "")).partition(" -> ")
    if before != after:
        lines.append(f"  trace minimised: {result.stats['trace_minimised']} steps")
    if "shortest" in result.stats:
        lines.append(f"  shortest: {result.stats['shortest']}")
    sizes = [f"{k}={_fmt(result.stats[k])}" for k in SIZE_KEYS if k in result.stats]
    if sizes:
        lines.append("  sizes:    " + ", ".join(sizes))
    return "\n".join(lines)


def result_json(result: Result, target: str = "") -> str:
    data: dict[str, Any] = result.to_json()
    if target:
        data["target"] = target
    return json.dumps(data, default=_json_default)


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
