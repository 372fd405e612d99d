"""The engine interface every solver implements, and the limits it honours."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional, Protocol

from symreach.model import Instance, Query
from symreach.result import Result


@dataclass(frozen=True)
class Limits:
    """Resource limits; reaching one yields an ``unknown`` verdict, never a crash."""

    timeout_s: Optional[float] = None
    max_states: Optional[int] = None
    max_depth: Optional[int] = None


class Engine(Protocol):
    """``check`` decides whether ``query`` (default: the instance's) can be covered."""

    name: str

    def check(self, instance: Instance, query: Optional[Query] = None,
              limits: Limits = Limits()) -> Result: ...
