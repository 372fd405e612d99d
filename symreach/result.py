"""Results as data: a verdict with its evidence, separate from any printer."""

from __future__ import annotations

from dataclasses import field
from enum import Enum
from typing import Any, Optional

from symreach.records import record


class Verdict(str, Enum):
    DEPLOYABLE = "deployable"
    NOT_DEPLOYABLE = "not-deployable"
    UNKNOWN = "unknown"

    @property
    def exit_code(self) -> int:
        """Like grep: 0 found, 1 not found, 3 undecided (2 is input error)."""
        return {"deployable": 0, "not-deployable": 1, "unknown": 3}[self.value]


DEPLOY = "deploy"
DELETE = "delete"


@record
class Step:
    """One transition of a witness: deploy or delete one pod of a type on a node. A deletion
    names what its pod holds (``holding``) when pods of the type there hold different DRA
    devices: which pod goes decides what is freed (``semantics.deletions``)."""

    op: str  # DEPLOY | DELETE
    pod: str
    node: str
    # Where the scheduler may bind the deployment's claims in several ways (which of several PVs:
    # ``semantics.binding_choices``), the one this step takes, in the trace's words
    # (``semantics.choice_text``); None: the first, the input order's.
    binds: Optional[str] = None
    # A deletion where the pods of the type on the node hold different things (DRA devices of
    # different kinds, a PV of another CSI driver): what the deleted pod holds (``semantics.deletions``).
    holding: Optional[str] = None

    def to_json(self) -> dict[str, Optional[str]]:
        """Every documented key, a missing value null (docs/json.md)."""
        return {"op": self.op, "pod": self.pod, "node": self.node, "binds": self.binds, "holding": self.holding}


@record(frozen=False)
class Result:
    """What an engine found.

    ``trace`` is set for deployable verdicts and has been replayed against the
    executable semantics. ``certificate`` is engine-specific evidence for
    not-deployable verdicts that an independent checker can re-verify.
    ``stats`` holds the engine's counters (states, iterations, nodes...).
    """

    verdict: Verdict
    engine: str
    fragment: str = "general"
    trace: tuple[Step, ...] = ()
    reason: str = ""
    time_s: float = 0.0
    stats: dict[str, Any] = field(default_factory=dict)
    certificate: Optional[Any] = None

    def to_json(self) -> dict[str, Any]:
        return {
            "verdict": self.verdict.value,
            "engine": self.engine,
            "fragment": self.fragment,
            "time_s": round(self.time_s, 6),
            "trace": [s.to_json() for s in self.trace],
            "reason": self.reason,
            "stats": self.stats,
        }
