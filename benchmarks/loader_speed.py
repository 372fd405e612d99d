"""Loader timings on large instances (not a unit test).

    python benchmarks/loader_speed.py [--repeat N]

Times, with ``time.perf_counter`` (best of N runs):

* ``load_document`` on plain data already in memory (label resolution,
  static filters, bounds): the Appendix B encoding of BART-PT-002 and
  generated clusters with 300 pod types and 1000, 2000, 3000 nodes;
* ``load_instance`` on the same clusters written as YAML, as
  ``symreach generate cluster ... -o FILE`` writes them (adds safe YAML
  reading with line tracking).

Reference (2-core machine, best of 3; the machine is noisy, so compare runs
made back to back). Before the indexed resolution: BART ~21-52 s, clusters
1000/2000/3000 nodes 2.0/2.5/4.1 s (load_document), 2.3/-/9.3 s (load_instance).
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import yaml

from symreach.frontends.petri_net import read_net
from symreach.frontends.reduction_petri import encode_petri
from symreach.generators.clusters import generate_cluster
from symreach.loader import load_document, load_instance
from benchmarks.shared_data import PETRI_DIR

PETRI = PETRI_DIR
NODES = (1000, 2000, 3000)
POD_TYPES = 300


def best_of(repeat: int, run) -> tuple[float, object]:
    best, result = float("inf"), None
    for _ in range(repeat):
        start = time.perf_counter()
        result = run()
        best = min(best, time.perf_counter() - start)
    return best, result


def dump_yaml(doc: object) -> str:
    """What ``symreach generate cluster -o`` writes (cli_encode.dump_yaml, without importing the CLI)."""
    dumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)

    class NoAliases(dumper):  # type: ignore[misc, valid-type]
        def ignore_aliases(self, data: object) -> bool:
            return True

    return yaml.dump(doc, Dumper=NoAliases, sort_keys=False, default_flow_style=False, allow_unicode=True)


def report(name: str, seconds: float, instance) -> None:
    print(f"{name:44s} {seconds:7.2f} s   ({len(instance.pod_types)} types, {len(instance.nodes)} nodes)",
          flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=1, help="runs per case; the best is shown")
    args = parser.parse_args()
    bart = PETRI / "BART-PT-002.pnml"
    if bart.exists():
        doc = encode_petri(read_net(bart), goal="TrainState_1_1_1")
        report("load_document BART-PT-002 (Appendix B)", *best_of(args.repeat, lambda: load_document(doc)))
    else:
        print(f"(skipping BART: {bart} not found)")
    with tempfile.TemporaryDirectory() as tmp:
        for nodes in NODES:
            doc = generate_cluster(nodes=nodes, pod_types=POD_TYPES, seed=1)
            report(f"load_document cluster {nodes} x {POD_TYPES}", *best_of(args.repeat, lambda: load_document(doc)))
            path = Path(tmp) / f"cluster-{nodes}.yaml"
            path.write_text(dump_yaml(doc))
            report(f"load_instance cluster {nodes} x {POD_TYPES} (YAML)",
                   *best_of(args.repeat, lambda: load_instance(path)))


if __name__ == "__main__":
    main()
