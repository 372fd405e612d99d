"""Fuzzing the command line end to end (slow): mutated v1 files, Kubernetes
dumps, PNML and DAG JSON, certificates, and random option combinations.

Every invocation must end with a documented exit status (0-3), never a
traceback or an internal error, and never run far past its ``--timeout``.
For campaigns of many inputs with counts, run ``python3 -m tests.cli_fuzz``
(see ``tests/cli_fuzz.py``).
"""

from __future__ import annotations

import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.cli_fuzz import failure, make_case, run_case

pytestmark = pytest.mark.slow


@settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)
@given(st.integers(min_value=0, max_value=2**63))
def test_cli_never_crashes_on_mutated_inputs_and_options(seed):
    case = make_case(random.Random(seed))
    why = failure(case, run_case(case))
    assert why is None, why


def test_the_harness_sees_tracebacks_and_bad_exit_codes(monkeypatch):
    """The harness must be able to fail: an engine bug shows up as a failure."""
    import symreach.cli.check as check_module
    from tests.cli_fuzz import SEEDS, Case

    case = Case(["check", "{dir}/in.yaml", "--timeout", "5"], {"in.yaml": b"version: 1\n"})
    assert failure(case, run_case(case)) is None  # a bad file: exit 2, fine
    monkeypatch.setattr(check_module, "emit_verdict", lambda *a, **k: 1 / 0)
    ok = Case(["check", "{dir}/in.yaml", "--timeout", "5"],
              {"in.yaml": SEEDS["v1.yaml"].encode()})
    assert failure(ok, run_case(ok)).startswith("traceback")


def test_case_generation_never_mutates_the_garbage_values():
    """The generator's own bug, found by seed 1406: mutations changed ``GARBAGE`` in place."""
    import copy
    import random

    from tests import cli_fuzz

    before = copy.deepcopy(cli_fuzz.GARBAGE)
    rng = random.Random(1406)
    for _ in range(1500):
        cli_fuzz.make_case(rng)
    assert repr(cli_fuzz.GARBAGE) == repr(before)
