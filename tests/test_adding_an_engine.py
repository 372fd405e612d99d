"""Adding an engine is one module and one registry line (issue 25, item 2).

``tests/trivial_engine.py`` is an engine that exists only here. With its one
``register`` line applied, every consumer of the registry must take it as it
takes a built-in engine: the wrapper (timing, replay, certificate), the
command line (``check``, ``certify``), ``bench``'s engine check and the shared
engine suite. The test also counts what had to be touched: no file of the
package names it, and in the tests only its module and this registration do.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from symreach.certify.dispatch import Certificate
from symreach.cli import cli
from symreach.loader import load_instance
from symreach.result import Verdict
from symreach.solvers import registry
from tests.engine_suite import EngineSuite, registry_configs
from tests.trivial_engine import REGISTRATION

REPO = Path(__file__).resolve().parent.parent
CAPACITY1 = str(REPO / "examples" / "paper-2.6-capacity1.yaml")
CAPACITY2 = str(REPO / "examples" / "paper-2.6.yaml")


@pytest.fixture
def trivial(monkeypatch):
    """The one registry line, applied for this test only."""
    monkeypatch.setitem(registry.ENGINES, REGISTRATION[0], REGISTRATION[1:])
    return REGISTRATION[0]


def test_adding_the_trivial_engine_touched_one_module_and_one_line():
    mentions = sorted(str(p.relative_to(REPO)) for root in ("symreach", "tests", "benchmarks")
                      for p in (REPO / root).rglob("*.py") if "trivial_engine" in p.read_text())
    assert mentions == ["tests/test_adding_an_engine.py", "tests/trivial_engine.py"]
    assert "trivial" not in registry.ENGINES  # nothing registered it behind the test's back


def test_the_wrapper_times_replays_and_normalises(trivial):
    engine = registry.make_engine(trivial)
    yes = engine.check(load_instance(CAPACITY2))
    assert yes.verdict is Verdict.DEPLOYABLE and yes.engine == "trivial" and yes.trace and yes.time_s >= 0
    no = engine.check(load_instance(CAPACITY1))
    assert no.verdict is Verdict.NOT_DEPLOYABLE and isinstance(no.certificate, Certificate)
    assert trivial in registry.available_engines()


def test_the_command_line_and_bench_take_it(trivial, tmp_path):
    from symreach.bench.runner import engine_unavailable

    runner = CliRunner()
    assert runner.invoke(cli, ["check", CAPACITY2, "--engine", trivial, "--quiet"]).exit_code == 0
    cert = tmp_path / "cert.json"
    out = runner.invoke(cli, ["check", CAPACITY1, "--engine", trivial, "--quiet", "--cert-out", str(cert)])
    assert out.exit_code == 1, out.output
    assert runner.invoke(cli, ["certify", CAPACITY1, str(cert)]).exit_code == 0
    assert engine_unavailable(trivial) is None


def test_the_engine_suite_runs_on_it(trivial):
    configs = {p.values[0].id: p.values[0] for p in registry_configs()}
    assert trivial in configs

    class Suite(EngineSuite):
        config = configs[trivial]

        def make_engine(self):
            return registry.make_engine(trivial)

    suite = Suite()
    cases = 0
    for profile in ("paper", "kubernetes"):
        suite.test_paper_example_capacity_2(profile)
        suite.test_paper_example_capacity_1(profile)
        suite.test_anti_affinity_symmetry(profile)
        cases += 3
    suite.test_pebbling_binary_tree()
    assert cases + 1 == 7
