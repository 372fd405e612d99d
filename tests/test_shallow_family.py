"""The shallow-goal benchmark family: goals at the depth a naive BFS says."""

from __future__ import annotations

from collections import deque

import pytest

from benchmarks.shallow_nets import shallow_goals
from benchmarks.shared_data import PETRI_DIR
from symreach.frontends.petri_net import read_net

NET = "ERK-PT-000001"


def _first_marked(net) -> dict[str, int]:
    start = frozenset(net.initial)
    depth = {start: 0}
    queue = deque([start])
    out = {p: 0 for p in start}
    while queue:
        m = queue.popleft()
        for t in net.transitions:
            if t.pre <= m:
                m2 = (m - t.pre) | t.post
                if m2 not in depth:
                    depth[m2] = depth[m] + 1
                    queue.append(m2)
                    for p in m2:
                        out.setdefault(p, depth[m2])
    return out


@pytest.mark.skipif(not (PETRI_DIR / f"{NET}.pnml").exists(), reason="shared nets not present")
def test_one_goal_per_depth_at_its_bfs_depth():
    net = read_net(PETRI_DIR / f"{NET}.pnml")
    truth = _first_marked(net)
    goals = list(shallow_goals([NET]))
    depths = [g.meta["firings"] for g in goals]
    assert depths == sorted(set(depths))       # one per depth, shallow first
    assert set(depths) == {d for d in truth.values() if 1 <= d <= 8}
    for g in goals:
        assert truth[g.meta["goal"]] == g.meta["firings"] and g.expected == "deployable"
    every = list(shallow_goals([NET], every=True))
    assert {g.meta["goal"] for g in every} == {p for p, d in truth.items() if 1 <= d <= 8}
