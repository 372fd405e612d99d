"""run_all --cpu-limits: the family limit becomes CPU seconds, the wall limit a multiple."""

from __future__ import annotations

from benchmarks import families
from benchmarks.harness import run_benchmark


def test_cpu_limits_set_each_job_and_the_header():
    instances = [i for i in families.build(families.QUICK, ["pyramid"]) if i.id == "pyramid/h2/k4"]
    assert len(instances) == 1
    run = run_benchmark(instances, ["explicit"], 8.0, 2048, parallel=1, log=lambda s: None,
                        family_timeout_s={"pyramid": 5.0}, cpu_wall_factor=3.0)
    assert len(run.results) == 1
    job = run.results[0]
    assert job.solved and job.cpu_limit_s == 5.0 and job.limit_s == 15.0
    assert run.meta["engine_options"]["cpu_wall_factor"] == 3.0
