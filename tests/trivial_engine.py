"""An engine that exists only in the tests: the explicit search under another name.

It is what adding an engine takes (ARCHITECTURE.md, "Adding an engine"): this
module, and one registry line (``REGISTRATION``, applied by
tests/test_adding_an_engine.py). The registry's wrapper times it, replays its
witnesses and normalises its certificates; the command line, ``bench`` and the
shared engine suite find it through the registry.
"""

from __future__ import annotations

from typing import Optional

from symreach.model import Instance, Query
from symreach.result import Result
from symreach.solvers.base import RunLike
from symreach.solvers.explicit import ExplicitEngine

REGISTRATION = ("trivial", "tests.trivial_engine", "TrivialEngine")  # registry.register(*REGISTRATION)


class TrivialEngine:
    name = "trivial"

    def check(self, instance: Instance, query: Optional[Query] = None, run: RunLike = None) -> Result:
        result = ExplicitEngine().check(instance, query, run)
        result.engine = self.name
        return result
