"""What VolumeBinding's runs cost on states with many of them, against another checkout.

    python -m benchmarks.volume_runs --states 60 --seed 5 --baseline /path/to/other/checkout

A pending pod with 5 to 12 unbound claims of one no-provisioner class and 1 to 3 nodes;
2 to 4 kinds of PVs (access modes, node affinity), 2 to 8 of each, so that claims compete
for equal-size PVs (up to millions of runs of ``findMatchingVolumes`` on a node). Per state:
the CPU time of the volume plugins' Filter verdicts (``pod_volumes``) and of loading the state
(with the claim bindings explored), the verdict sets, and the caveats. ``--baseline`` runs the
same states under that checkout (its ``symreach``, in a subprocess; alternately with this one,
``--rounds`` times) and prints both side by side with the load.
"""

from __future__ import annotations

import argparse
import copy
import functools
import json
import os
import random
import subprocess
import sys
import time
from pathlib import Path

import yaml

MODES = ("[ReadWriteOnce]", "[ReadWriteOnce, ReadWriteMany]", "[ReadWriteOnce, ReadOnlyMany]",
         "[ReadWriteOnce, ReadWriteMany, ReadOnlyMany]")
LOCAL = ", storageClassName: local, local: {path: /x}"
AFFINITY = (", nodeAffinity: {required: {nodeSelectorTerms: [{matchExpressions: [{key: kubernetes.io/hostname, "
            "operator: In, values: [%s]}]}]}}")


def many_runs_state(rng: random.Random) -> list[dict]:
    from tests.test_kso_classes import C, node, pod
    from tests.test_kso_classes_27 import SC_WFFC, pv, pvc, uses

    nodes = rng.randint(1, 3)
    docs = [node(f"n{i}") for i in range(nodes)] + [SC_WFFC]
    for s in range(rng.randint(2, 4)):
        spec = LOCAL
        if rng.random() < 0.5:
            spec += AFFINITY % ", ".join(f"n{i}" for i in rng.sample(range(nodes), rng.randint(1, nodes)))
        docs += [pv(f"pv-{s}-{k}", spec).replace("[ReadWriteOnce]", MODES[s]) for k in range(rng.randint(2, 8))]
    claims = [f"c{k}" for k in range(rng.randint(5, 12))]
    for c in claims:
        mode = rng.choice(("[ReadWriteOnce]",) * 4 + ("[ReadWriteMany]", "[ReadOnlyMany]"))
        docs.append(pvc(c, ", storageClassName: local").replace("[ReadWriteOnce]", mode)
                    .replace("storage: 10Gi", f"storage: {rng.choice((1, 1, 2))}Gi"))
    docs.append(pod("incoming", C + uses(*claims)))
    return [yaml.safe_load(d) for d in docs]


def measure(states: int, seed: int) -> list[dict]:
    """Per state: Filter CPU, load CPU, the verdict sets per node and the kinds of caveat."""
    from symreach.frontends.k8s_volume_filters import pod_volumes
    from symreach.frontends.k8s_volumes import VOLUME_KINDS, VolumeIndex
    from symreach.frontends.kubernetes import load_kubernetes_documents

    rng = random.Random(seed)
    out = []
    for docs in [many_runs_state(rng) for _ in range(states)]:
        index = VolumeIndex()
        for obj in copy.deepcopy(docs):
            if obj["kind"] in VOLUME_KINDS:
                index.add(obj["kind"], obj, "default", obj["metadata"]["name"])
        index.settle()
        nodes = [{"name": o["metadata"]["name"], "labels": o["metadata"]["labels"]} for o in docs if o["kind"] == "Node"]
        t0 = time.process_time()
        found = pod_volumes(index, docs[-1]["spec"], "default", "incoming", nodes)
        filter_cpu = time.process_time() - t0
        t0 = time.process_time()
        _, report = load_kubernetes_documents(copy.deepcopy(docs), "<state>")
        load_cpu = time.process_time() - t0
        caveats = report.caveats.get("default/incoming", [])
        verdicts = {n["name"]: sorted(map(repr, found.runs.get(n["name"], [found.filters[n["name"]]])))
                    if n["name"] in found.filters else ["fit"] + sorted(map(repr, found.passed_runs.get(n["name"], [])))
                    for n in nodes}
        out.append({"filter": filter_cpu, "load": load_cpu, "verdicts": verdicts,
                    "runs_caveat": any("ways to match them" in c or "search states" in c for c in caveats),
                    "states_caveat": any("joint bindings" in c for c in caveats), "runs": most_runs(index, docs, nodes)})
    return out


def most_runs(index, docs: list[dict], nodes: list[dict]) -> int:
    """The most runs of ``findMatchingVolumes`` on a node (counted by ``Runs``' choices), 0 where
    this checkout has no ``Runs``."""
    try:
        from symreach.frontends.k8s_volume_filters import pod_claims
        from symreach.frontends.k8s_volume_matching import Runs
    except ImportError:
        return 0
    claims = pod_claims(index, docs[-1]["spec"], "default", "incoming")
    best = 0
    for node in nodes:
        runs = Runs(index, claims, node["labels"])

        @functools.lru_cache(maxsize=None)
        def count(k: int, taken: frozenset) -> int:
            if k == len(runs.order):
                return 1
            return sum(count(k + 1, taken if pv is None else taken | {pv}) for pv in runs.choices(k, taken))

        best = max(best, count(0, frozenset()))
    return best


def _side(checkout: Path, states: int, seed: int) -> list[dict]:
    env = dict(os.environ, PYTHONPATH=str(checkout))
    # this file, run with the checkout's symreach and tests (the baseline need not have it)
    done = subprocess.run([sys.executable, str(Path(__file__).resolve()), "--states", str(states), "--seed", str(seed),
                           "--json"], cwd=checkout, env=env, capture_output=True, text=True, check=True)
    return json.loads(done.stdout)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--states", type=int, default=60)
    ap.add_argument("--seed", type=int, default=5)
    ap.add_argument("--baseline", type=Path, help="another checkout to compare with, side by side")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--json", action="store_true", help="print this checkout's measurements as JSON")
    args = ap.parse_args()
    if args.json:
        print(json.dumps(measure(args.states, args.seed)))
        return
    here = Path(__file__).resolve().parent.parent
    sides = {"this": here} if args.baseline is None else {"baseline": args.baseline.resolve(), "this": here}
    for r in range(args.rounds):
        found = {name: _side(path, args.states, args.seed) for name, path in sides.items()}
        this = found["this"]
        runs = sorted(s["runs"] for s in this)
        print(f"round {r + 1}, load {os.getloadavg()[0]:.2f}: {len(this)} states, runs per node (most): "
              f"median {runs[len(runs) // 2]:,}, largest {runs[-1]:,}, over 256 on {sum(n > 256 for n in runs)}")
        for name, rows in found.items():
            print(f"  {name:8}: Filter CPU {sum(s['filter'] for s in rows):.2f} s (largest {max(s['filter'] for s in rows):.3f}),"
                  f" load CPU {sum(s['load'] for s in rows):.2f} s; runs caveat on {sum(s['runs_caveat'] for s in rows)},"
                  f" joint-binding caveat on {sum(s['states_caveat'] for s in rows)}")
        if "baseline" in found:
            differ = sum(a["verdicts"] != b["verdicts"] for a, b in zip(found["baseline"], this))
            print(f"  verdict sets differ on {differ} states")


if __name__ == "__main__":
    main()
