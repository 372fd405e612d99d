"""The engine interface every solver implements, and the limits it honours.

An engine receives one ``symreach.run.RunContext`` (deadline, cancel token,
progress sink, limits, the prologue ``auto`` already ran); ``Limits`` is the
plain value of the numeric limits, which callers may pass instead
(``as_context`` starts its deadline at once). The registry's wrapper
(``registry.make_engine``) times every run, replays every witness and
normalises every certificate, so an engine only decides.
"""

from __future__ import annotations

from typing import Optional, Protocol, Union

from symreach.model import Instance, Query
from symreach.records import record
from symreach.result import Result
from symreach.run import RunContext


@record
class Limits:
    """Resource limits as plain numbers; reaching one yields ``unknown``, never a crash."""

    timeout_s: Optional[float] = None
    max_states: Optional[int] = None
    max_depth: Optional[int] = None
    memory_mb: Optional[int] = None

    def start(self) -> RunContext:
        """A run context whose deadline is ``timeout_s`` from now."""
        return RunContext.within(self.timeout_s, max_states=self.max_states, max_depth=self.max_depth,
                                 memory_mb=self.memory_mb)


RunLike = Union[RunContext, Limits, None]


def as_context(run: RunLike) -> RunContext:
    """The run context an engine works under (a ``Limits`` starts its clock now)."""
    if run is None:
        return RunContext()
    if isinstance(run, Limits):
        return run.start()
    return run


def resolve_query(instance: Instance, query: Optional[Query]) -> Query:
    """The query to decide: the given one, else the instance's own."""
    query = query or instance.query
    if query is None:
        raise ValueError("no query given")
    return query


class Engine(Protocol):
    """``check`` decides whether ``query`` (default: the instance's) can be covered."""

    name: str

    def check(self, instance: Instance, query: Optional[Query] = None, run: RunLike = None) -> Result: ...
