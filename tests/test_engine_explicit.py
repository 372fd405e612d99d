"""The shared engine suite on the explicit reference engine."""

from symreach.solvers.explicit import ExplicitEngine
from tests.engine_suite import EngineSuite


class TestExplicitEngine(EngineSuite):
    def make_engine(self):
        return ExplicitEngine()
