"""Caveat marks: which answers depend on something the model leaves out.

The Kubernetes front end records, per pod type, what it could not model
exactly (``Report.caveats``: a claim that binds on first use, the claims of
StatefulSet replicas not in the input yet, a dump without volume objects, a
namespace without its object). An answer carries the caveats of the types it depends on: a
matrix cell those of its row's type, a ``check`` verdict those of the target's
types and, when deployable, of every type its witness deploys; a
not-deployable verdict may rest on any type, so it carries them all.
"""

from __future__ import annotations

import json

from symreach.model import Instance, Query
from symreach.result import Result, Verdict

MARK = "*"


def type_caveats(report: object, instance: Instance) -> dict[int, tuple[str, ...]]:
    """Pod type index -> its caveats (none for inputs that are not Kubernetes objects)."""
    recorded: dict[str, list[str]] = getattr(report, "caveats", None) or {}
    names = {t.name: i for i, t in enumerate(instance.pod_types)}
    return {names[name]: tuple(messages) for name, messages in recorded.items() if name in names and messages}


def verdict_caveats(report: object, instance: Instance, query: Query, result: Result) -> list[str]:
    """The caveats a ``check`` verdict carries, each prefixed by its pod type."""
    per_type = type_caveats(report, instance)
    if not per_type:
        return []
    per_type = _without_settled_nominations(report, instance, result, per_type)
    if result.verdict is Verdict.DEPLOYABLE:
        types = {t for t, _ in query.pairs()} | {instance.type_index(s.pod) for s in result.trace or ()}
    else:
        types = set(per_type)
    return [f"{instance.pod_types[t].name}: {message}" for t in sorted(types & set(per_type))
            for message in per_type[t]]


def _without_settled_nominations(report: object, instance: Instance, result: Result,
                                 per_type: dict[int, tuple[str, ...]]) -> dict[int, tuple[str, ...]]:
    """``per_type`` without the nominated pods' caveats when they cannot change this verdict
    (``k8s_nominated_filter.unchanged_by_nominations``: a not-deployable answer, a witness that holds
    with the nominations)."""
    index = getattr(report, "nominated", None)
    if index is None or not index.nominations:
        return per_type
    from symreach.frontends.k8s_nominated import NOMINATED_CAVEAT
    from symreach.frontends.k8s_nominated_filter import unchanged_by_nominations

    if not unchanged_by_nominations(instance, index, result):
        return per_type
    kept = {t: tuple(m for m in messages if NOMINATED_CAVEAT not in m) for t, messages in per_type.items()}
    return {t: messages for t, messages in kept.items() if messages}


def with_caveats(text: str, caveats: list[str]) -> str:
    """A verdict with its caveats: ``"caveats": [...]`` in a JSON object, else the first
    line marked and the caveats listed under it."""
    if not caveats:
        return text
    if text.startswith("{"):
        data = json.loads(text)
        data["caveats"] = caveats
        return json.dumps(data, default=str)
    first, _, rest = text.partition("\n")
    lines = [first + MARK] + ([rest] if rest else []) + ["  caveats (" + MARK + " depends on what is not modelled):"]
    return "\n".join(lines + [f"    {c}" for c in caveats])
