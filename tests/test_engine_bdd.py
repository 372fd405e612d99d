"""The shared engine suite on the BDD engine, with and without fast paths,
forward and backward, and with each fixpoint strategy."""

import pytest

from symreach.solvers.bdd import BddEngine
from tests.engine_suite import EngineSuite


class TestBddEngine(EngineSuite):
    """Default configuration: preprocessing fast paths may decide."""

    def make_engine(self):
        return BddEngine()


class TestBddSymbolicOnly(EngineSuite):
    """Fast paths off: every case goes through the BDD fixpoint."""

    def make_engine(self):
        return BddEngine(fast_paths=False)


class TestBddBackward(EngineSuite):
    def make_engine(self):
        return BddEngine(fast_paths=False, direction="backward")


@pytest.mark.parametrize("strategy", ["saturation", "bfs", "chaining-frontier"])
class TestBddStrategies(EngineSuite):
    @pytest.fixture(autouse=True)
    def _strategy(self, strategy):
        self.strategy = strategy

    def make_engine(self):
        return BddEngine(fast_paths=False, strategy=self.strategy, dynamic_reorder=True)
