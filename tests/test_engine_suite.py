"""The shared engine suite (tests/engine_suite.py) on every engine of the registry.

An engine that is registered but cannot be built (its module missing, an
import error) fails here; ABC's engines are skipped, with the reason, only
where berkeley-abc is not installed. ABC's engines run the subset of cases
``engine_suite.ABC_CASES`` in CI (a process per case); the others every case.
"""

from __future__ import annotations

import pytest

from symreach.solvers.registry import make_engine
from tests.engine_suite import EngineSuite, registry_configs


@pytest.mark.parametrize("engine_config", registry_configs())
class TestRegisteredEngine(EngineSuite):
    @pytest.fixture(autouse=True)
    def _config(self, engine_config, request):
        self.config = engine_config
        if engine_config.subset is not None and request.function.__name__ not in engine_config.subset:
            pytest.skip(f"{engine_config.id} runs the CI subset of the suite (engine_suite.ABC_CASES)")

    def make_engine(self):
        return make_engine(self.config.name, **self.config.options)
