"""Benchmark jobs as tasks of an ``Executor`` (``symreach bench --executor dask``).

Each task is ``run_job`` on the worker: the job still runs in its own process
under its own wall-clock and address-space limits, so a runaway engine kills
only its child, never the Dask worker. Jobs that name a ``path`` need the
file at the same path on the workers (a shared file system); ``document``
jobs carry their instance. Results come back in completion order and are
returned in input order, so tables are the same as with the local runner.
"""

from __future__ import annotations

import tempfile
from typing import Callable, Optional, Sequence

from symreach.bench.runner import Job, JobResult, run_job
from symreach.solvers.executor import Executor


def job_task(limits: tuple[float, Optional[int]], item: tuple[int, Job]) -> tuple[int, JobResult]:
    """One job on a worker, in a private scratch directory."""
    timeout_s, memory_mb = limits
    index, job = item
    with tempfile.TemporaryDirectory(prefix="symreach-bench-") as workdir:
        return index, run_job(job, job.timeout_s or timeout_s, memory_mb, workdir)


def run_jobs_on(executor: Executor, jobs: Sequence[Job], timeout_s: float,
                memory_mb: Optional[int] = None,
                on_result: Optional[Callable[[JobResult], None]] = None) -> list[JobResult]:
    """Every job as one task; a task the cluster loses becomes an ``error`` result."""
    results: list[Optional[JobResult]] = [None] * len(jobs)

    def lost(item: tuple[int, Job], message: str) -> tuple[int, JobResult]:
        index, job = item
        inst = job.instance
        return index, JobResult(inst.id, inst.family, inst.size, job.engine, inst.expected,
                                "error", limit_s=timeout_s, error=f"task lost: {message}",
                                meta=dict(inst.meta))

    for index, result in executor.map(job_task, (timeout_s, memory_mb), list(enumerate(jobs)),
                                      {}, on_error=lost):
        results[index] = result
        if on_result is not None:
            on_result(result)
    return [r for r in results if r is not None]
