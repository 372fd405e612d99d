"""A BDD run stopped by its limit says what it proved (issue 30 item 3): each side's complete sweeps,
its reached set in BDD nodes and states; after k sweeps no witness has k steps or fewer."""

from __future__ import annotations

import re

import pytest

from symreach.frontends.reduction_pebbling import encode_pebbling
from symreach.generators.dags import by_shape
from symreach.loader import load_document
from symreach.report.verdict import bdd_progress, what_was_proved
from symreach.run import CancelToken, RunContext

pytest.importorskip("dd")


class StopAfter(CancelToken):
    """Cancels the run at its n-th poll: a limit reached at a chosen, machine-independent point."""

    def __init__(self, n: int | None) -> None:
        super().__init__()
        self.n, self.polls = n, 0

    def pause(self) -> bool:
        self.polls += 1
        return self.n is not None and self.polls > self.n


def pyramid(height: int, k: int):
    dag = by_shape("pyramid", height, 0)
    return load_document(encode_pebbling(dag.vertices, dag.edges, dag.target, k))


def test_an_interrupted_bdd_run_states_its_sweeps_and_never_overclaims():
    from symreach.solvers.bdd import BddEngine
    from symreach.solvers.explicit import ExplicitEngine
    from symreach.solvers.witness import decide

    checked = swept = 0
    for inst in (pyramid(3, 5), pyramid(4, 4)):   # deployable (shortest witness 15 steps), not deployable
        shortest = decide(ExplicitEngine(), inst, inst.query, RunContext(), shortest=True)
        bound = len(shortest.trace) if shortest.trace else None
        full = StopAfter(None)
        BddEngine(fast_paths=False).check(inst, inst.query, RunContext(cancel=full))
        for n in range(full.polls // 2, full.polls, 4):
            res = BddEngine(fast_paths=False).check(inst, inst.query, RunContext(cancel=StopAfter(n)))
            if res.reason != "timeout during BDD fixpoint":
                continue
            sweeps = res.stats["side_sweeps"]
            assert set(sweeps) == {"forward", "backward"} and set(res.stats["side_nodes"]) == set(sweeps)
            proved = what_was_proved(res)
            assert proved == bdd_progress(res.stats) and "forward: " in proved and "backward: " in proved
            best = max(sweeps.values())
            if best:
                assert re.match(rf"no witness within {best} steps? \(BDD ", proved)
                assert bound is None or best < bound   # never claims past the shortest witness
                swept += 1
            checked += 1
    assert checked >= 10 and swept >= 3, (checked, swept)


def test_bdd_progress_text():
    stats = {"side_sweeps": {"forward": 2, "backward": 0}, "side_images": {"forward": 90, "backward": 12},
             "side_nodes": {"forward": 1200, "backward": 40}, "side_states": {"forward": 123456, "backward": 7}}
    assert bdd_progress(stats) == (
        "no witness within 2 steps (BDD forward: 2 complete sweeps, 90 images, reached set 1200 BDD nodes "
        "holding 1.235e+05 states, no target state; backward: 0 complete sweeps, 12 images, reached set 40 BDD "
        "nodes holding 7 states, no initial state)")
    assert bdd_progress({}) == ""
    # auto's race keeps the last progress report of its bdd worker
    reported = {"direction": "backward", "sweeps": 3, "images": 40, "reached_nodes": 900, "complete_sweeps": 2}
    assert bdd_progress(reported) == ("no witness within 2 steps (BDD backward: 2 complete sweeps, 40 images, "
                                      "reached set 900 BDD nodes, no initial state)")
