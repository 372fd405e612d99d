"""Sizes of the Appendix B encoding of the 15 MCC nets, and explicit-engine times.

For every net in ``/work/shared/data/petri``: places, transitions, initially
marked places, pod types of E_PN, state bits (one bit per (type, node) pair;
the encoding has one node), the time to load the document, and the explicit
engine's verdict, time and explored states under a time limit.

Goals: for each net the coverable place that a breadth-first search over
markings marks last (the deepest deployable question; ties broken by
declaration order; the search stops after 50,000 markings), and for nets that
have never-markable places also the first of those (a not-deployable question,
which needs the full lossy state space).

Usage: ``python benchmarks/encoded_sizes.py [--timeout 60] [--no-engine] [--md FILE]``
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from symreach.encodings.petri_net import read_pnml  # noqa: E402
from symreach.encodings.reduction_petri import encode_petri  # noqa: E402
from benchmarks.shared_data import PETRI_DIR

DATA = PETRI_DIR


def deepest_place(net, max_markings: int = 50_000) -> tuple[str, int]:
    """The place first marked at the largest BFS depth, and that depth (firings)."""
    start = frozenset(net.initial)
    depth_of = {p: 0 for p in start}
    seen = {start}
    frontier = [start]
    depth = 0
    while frontier and len(seen) < max_markings:
        depth += 1
        nxt = []
        for m in frontier:
            for t in net.transitions:
                if t.pre <= m:
                    m2 = (m - t.pre) | t.post
                    if m2 not in seen:
                        seen.add(m2)
                        nxt.append(m2)
                        for p in m2:
                            depth_of.setdefault(p, depth)
        frontier = nxt
    best = max(net.places, key=lambda p: (depth_of.get(p, -1), -net.places.index(p)))
    return best, depth_of[best]


def rows(timeout: float, engine: bool):
    answers = json.loads((DATA / "answers.json").read_text())
    for name in sorted(answers):
        net = read_pnml(DATA / f"{name}.pnml")
        answer = answers[name]
        deep, depth = deepest_place(net)
        assert deep in answer["coverable"]
        goals = [(deep, True)]
        if answer["not_coverable"]:
            goals.append((answer["not_coverable"][0], False))
        for goal, coverable in goals:
            doc = encode_petri(net, goal)
            types = len(doc["podTypes"])
            row = {"net": name, "places": len(net.places), "transitions": len(net.transitions),
                   "marked": len(net.initial), "types": types, "bits": types * len(doc["nodes"]),
                   "goal": goal, "depth": depth if coverable else "-", "expected": "deployable" if coverable else "not-deployable"}
            if engine:
                from symreach.loader import load_document
                from symreach.solvers.base import Limits
                from symreach.solvers.explicit import ExplicitEngine

                t0 = time.perf_counter()
                inst = load_document(doc, filename=f"{name}.pnml")
                row["load_s"] = time.perf_counter() - t0
                result = ExplicitEngine().check(inst, limits=Limits(timeout_s=timeout))
                row.update(verdict=result.verdict.value, time_s=result.time_s,
                           states=result.stats.get("states", ""))
                if result.verdict.value != "unknown":
                    assert result.verdict.value == row["expected"], (name, goal, result)
            yield row


def markdown(all_rows, timeout: float, engine: bool) -> str:
    head = ["net", "places", "transitions", "marked", "pod types", "state bits", "goal",
            "firings", "expected"]
    if engine:
        head += ["load s", "explicit verdict", f"explicit s (limit {timeout:g})", "states"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in all_rows:
        cells = [r["net"], r["places"], r["transitions"], r["marked"], r["types"], r["bits"],
                 f"`{r['goal']}`", r["depth"], r["expected"]]
        if engine:
            cells += [f"{r['load_s']:.2f}", r["verdict"], f"{r['time_s']:.2f}", r["states"]]
        lines.append("| " + " | ".join(str(c) for c in cells) + " |")
    return "\n".join(lines) + "\n"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--timeout", type=float, default=60.0, help="explicit engine limit per goal (s)")
    ap.add_argument("--no-engine", action="store_true", help="sizes only")
    ap.add_argument("--md", type=Path, help="also write the table to this Markdown file")
    args = ap.parse_args()
    engine = not args.no_engine
    collected = []
    for r in rows(args.timeout, engine):
        collected.append(r)
        print("  ".join(f"{k}={v:.2f}" if isinstance(v, float) else f"{k}={v}"
                        for k, v in r.items()), flush=True)
    table = markdown(collected, args.timeout, engine)
    print(table)
    if args.md:
        args.md.parent.mkdir(parents=True, exist_ok=True)
        args.md.write_text(
            "# Appendix B encoding of the MCC one-safe nets\n\n"
            "Generated by `python benchmarks/encoded_sizes.py"
            + (f" --timeout {args.timeout:g}" if engine else " --no-engine")
            + "`. State bits: one per (pod type, node) pair; the encoding has one node. "
            "`firings`: length of the shortest firing sequence marking the goal. "
            "`load s`: `load_document` on the emitted dict. Explicit engine: breadth-first "
            "search with saturation; `unknown` means the time limit was reached.\n\n" + table)


if __name__ == "__main__":
    main()
