"""IC3 on the Petri nets of /work/shared/data/petri (Appendix B encoding).

For every net: two coverable goal places (first and middle of answers.json's
sorted list) and one never-markable place where the net has one. IC3 runs
without the preprocessing fast paths (so the verdict is IC3's), with a
120 s limit; a trace is replayed, an invariant re-checked by certify_sat.
Results: benchmarks/results/ic3_nets.md.

    python -m benchmarks.ic3_nets [--timeout 120] [--nets NAME,...]
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from symreach.certify.clause_invariant import check_certificate
from symreach.frontends.petri_net import read_net
from symreach.frontends.reduction_petri import encode_petri
from symreach.loader import load_document
from symreach.solvers.base import Limits
from symreach.solvers.ic3 import Ic3Engine
from benchmarks.shared_data import PETRI_DIR

DATA = PETRI_DIR
OUT = Path(__file__).resolve().parent / "results" / "ic3_nets.md"


def goals(answer: dict) -> list[tuple[str, bool]]:
    cov = sorted(answer.get("coverable") or [])
    out = [(p, True) for p in dict.fromkeys([cov[0], cov[len(cov) // 2]])] if cov else []
    nc = sorted(answer.get("not_coverable") or [])
    if nc:
        out.append((nc[0], False))
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--timeout", type=float, default=120.0)
    ap.add_argument("--nets", default="")
    args = ap.parse_args()
    answers = json.loads((DATA / "answers.json").read_text())
    rows = []
    names = sorted(answers) if not args.nets else args.nets.split(",")
    for name in names:
        net = read_net(DATA / f"{name}.pnml")
        for place, coverable in goals(answers[name]):
            inst = load_document(encode_petri(net, place))
            t0 = time.perf_counter()
            res = Ic3Engine(fast_paths=False).check(inst, run=Limits(timeout_s=args.timeout))
            dt = time.perf_counter() - t0
            verdict = res.verdict.value
            expect = "deployable" if coverable else "not-deployable"
            agree = "—" if verdict == "unknown" else ("yes" if verdict == expect else "**NO**")
            evidence = ""
            if res.certificate is not None and hasattr(res.certificate, "dumps"):
                ok, _ = check_certificate(inst, res.certificate.dumps())
                evidence = f"invariant {res.stats.get('invariant_clauses')} clauses, certify {'ok' if ok else 'REJECTED'}"
            elif res.trace:
                evidence = f"trace {len(res.trace)} ops (replayed)"
            st = res.stats
            rows.append((name, place, expect, verdict, agree, f"{dt:.2f}", st.get("state_vars", ""),
                         st.get("frames", ""), st.get("queries", ""), st.get("ctis", ""), st.get("ctgs", ""),
                         st.get("lemmas", ""), evidence))
            print(" | ".join(map(str, rows[-1])), flush=True)
    lines = ["# IC3 on the Petri-net benchmark (Appendix B encoding)", "",
             f"`python -m benchmarks.ic3_nets --timeout {args.timeout:g}`; IC3 without preprocessing fast "
             "paths (MiniSat 2.2, CTG on); ground truth `answers.json`. 2 cores, shared machine.", "",
             "| net | goal place | expected | IC3 | agrees | time s | state vars | frames | queries | CTIs | CTGs | lemmas | evidence |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    lines += ["| " + " | ".join(map(str, r)) + " |" for r in rows]
    unfinished = [f"{r[0]}:{r[1]}" for r in rows if r[3] == "unknown"]
    wrong = [f"{r[0]}:{r[1]}" for r in rows if r[4] == "**NO**"]
    lines += ["", f"Finished {len(rows) - len(unfinished)}/{len(rows)}; disagreements: {len(wrong)} "
              f"{', '.join(wrong)}", f"Not finished within {args.timeout:g} s: {', '.join(unfinished) or 'none'}"]
    if not args.nets:
        OUT.write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
