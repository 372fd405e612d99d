"""PodDisruptionBudgets in format v1 (``disruptionBudgets:``, alias ``pdbs:``).

Parsing checks the fields strictly; ``resolve_budgets`` turns each budget
into ``model.DisruptionBudget``: the pod types it selects (its namespace and
label selector, policy/v1 semantics: a missing selector selects nothing,
``{}`` every pod of the namespace) and the disruption controller's
desiredHealthy (``desired_healthy``).
"""

from __future__ import annotations

import math
import re
from typing import Optional, Sequence, Union

from symreach.loader.labels import LabelSelector, parse_label_selector
from symreach.loader.shapes import FieldError, Path, choice, integer, mapping, sequence, string
from symreach.model import DisruptionBudget, FrozenDict, Pair, PodType
from symreach.records import record

SECTIONS = ("disruptionBudgets", "pdbs")
FIELDS = ("name", "namespace", "selector", "minAvailable", "maxUnavailable", "unhealthyPodEvictionPolicy")
POLICIES = ("IfHealthyBudget", "AlwaysAllow")
_PERCENT = re.compile(r"^([0-9]+)%$")

IntOrPercent = Union[int, str]


@record
class BudgetSpec:
    name: str
    namespace: str
    selector: LabelSelector
    min_available: Optional[IntOrPercent]
    max_unavailable: Optional[IntOrPercent]
    policy: str
    path: Path


def parse_budgets(body: dict) -> tuple[BudgetSpec, ...]:
    """The ``disruptionBudgets`` (or ``pdbs``) section of a v1 document; both at once is an error."""
    present = [s for s in SECTIONS if body.get(s) is not None]
    if len(present) > 1:
        raise FieldError((present[1],), "give PodDisruptionBudgets in one section: 'disruptionBudgets' or 'pdbs'")
    if not present:
        return ()
    section = present[0]
    out: list[BudgetSpec] = []
    seen: set[tuple[str, str]] = set()
    for i, item in enumerate(sequence(body[section], (section,))):
        path: Path = (section, i)
        raw = mapping(item, path, FIELDS, required=("name",))
        name = string(raw["name"], path + ("name",))
        namespace = string(raw.get("namespace") or "default", path + ("namespace",))
        if (namespace, name) in seen:
            raise FieldError(path + ("name",), f"duplicate PodDisruptionBudget '{namespace}/{name}'")
        seen.add((namespace, name))
        low = _int_or_percent(raw.get("minAvailable"), path + ("minAvailable",))
        high = _int_or_percent(raw.get("maxUnavailable"), path + ("maxUnavailable",))
        if low is not None and high is not None:
            raise FieldError(path + ("maxUnavailable",), "minAvailable and maxUnavailable cannot both be set")
        out.append(BudgetSpec(
            name=name, namespace=namespace,
            selector=parse_label_selector(raw.get("selector"), path + ("selector",)),
            min_available=low, max_unavailable=high,
            policy=choice(raw.get("unhealthyPodEvictionPolicy"), path + ("unhealthyPodEvictionPolicy",),
                          POLICIES, default="IfHealthyBudget"),
            path=path,
        ))
    return tuple(out)


def _int_or_percent(raw: object, path: Path) -> Optional[IntOrPercent]:
    if raw is None:
        return None
    if isinstance(raw, str):
        match = _PERCENT.match(raw.strip())
        if match is None:
            raise FieldError(path, f"expected an integer or a percentage like '50%', got {raw!r}")
        if int(match.group(1)) > 100:
            raise FieldError(path, f"a percentage must be at most 100%, got {raw!r}")
        return raw.strip()
    return integer(raw, path, minimum=0)


def scaled(value: IntOrPercent, total: int) -> int:
    """intstr.GetScaledValueFromIntOrPercent with roundUp (what the disruption controller uses)."""
    if isinstance(value, int):
        return value
    return math.ceil(int(value[:-1]) * total / 100)


def desired_healthy(min_available: Optional[IntOrPercent], max_unavailable: Optional[IntOrPercent],
                    expected: int) -> int:
    """The disruption controller's desiredHealthy (pkg/controller/disruption, getExpectedPodCount).

    maxUnavailable: expected - scaled(maxUnavailable, expected), at least 0;
    an integer minAvailable is taken as is; a percentage is scaled up. Neither:
    0 (every eviction allowed). ``expected`` is the controllers' scale; we take
    the matching pods of the initial configuration (equal for a settled cluster).
    """
    if max_unavailable is not None:
        return max(0, expected - scaled(max_unavailable, expected))
    if min_available is not None:
        return scaled(min_available, expected)
    return 0


def resolve_budgets(specs: Sequence[BudgetSpec], pod_types: Sequence[PodType],
                    initial: FrozenDict[Pair, int]) -> tuple[DisruptionBudget, ...]:
    out = []
    for spec in specs:
        counts = frozenset(t for t, pod in enumerate(pod_types)
                           if pod.namespace == spec.namespace and spec.selector.matches(pod.labels))
        expected = sum(c for (t, _), c in initial.items() if t in counts)
        out.append(DisruptionBudget(
            name=f"{spec.namespace}/{spec.name}", counts=counts,
            desired_healthy=desired_healthy(spec.min_available, spec.max_unavailable, expected),
            unhealthy_policy=spec.policy,
        ))
    return tuple(out)

