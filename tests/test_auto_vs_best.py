"""The run_all section that compares ``auto`` with the per-instance best single engine."""

from __future__ import annotations

from benchmarks.auto_vs_best import auto_ratio, auto_section, best_single
from symreach.bench.runner import JobResult


def _job(instance: str, engine: str, time_s: float | None, status: str = "ok", error: str = "") -> JobResult:
    verdict = "deployable" if status == "ok" else "unknown"
    return JobResult(instance, "fam", 1, engine, "deployable", status, verdict, time_s=time_s, error=error)


def test_best_single_ignores_auto_and_undecided_jobs():
    rows = [_job("a", "auto", 0.01), _job("a", "bdd", 0.5), _job("a", "ic3", 0.2),
            _job("a", "bmc", None, status="timeout")]
    assert best_single(rows).engine == "ic3"
    assert best_single([_job("a", "auto", 0.01)]) is None


def test_ratio_floors_both_times():
    assert auto_ratio(_job("a", "auto", 0.01), _job("a", "ic3", 0.002)) == 1.0
    assert auto_ratio(_job("a", "auto", 1.0), _job("a", "ic3", 0.25)) == 4.0
    assert auto_ratio(_job("a", "auto", None, status="unknown"), _job("a", "ic3", 0.25)) is None


def test_section_counts_losses_wins_and_unrun_instances():
    budget = "time budget of 900 s spent"
    results = [
        _job("slow", "ic3", 0.5), _job("slow", "auto", 2.0),                       # ratio 4
        _job("lost", "bdd", 1.0), _job("lost", "auto", None, status="timeout"),    # a loss
        _job("mine", "bdd", None, status="unknown"), _job("mine", "auto", 3.0),   # auto only
        _job("cut", "bdd", None, status="skipped", error=budget), _job("cut", "auto", 0.1),
    ]
    text = auto_section(results)
    assert "both decided 1: geometric mean 4.00, max 4.00; auto more than 2x the best on 1" in text
    assert "decided by a single engine and not by auto: 1\n  - lost: bdd 1.00 s" in text
    assert "decided by auto and by no single engine: 1 (mine)" in text
    assert "no single engine run: 1" in text
    assert auto_section([_job("a", "ic3", 0.1)]) is None   # auto did not run
