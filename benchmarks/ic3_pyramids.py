"""IC3 (and BMC, ABC) on the Appendix C pyramids: the "must show" numbers.

- h = 3, k = 4: IC3 proves not-deployable; ``certify_sat`` accepts the invariant;
- h = 3, k = 5: IC3 and BMC return traces that replay;
- k = h + 1 for h = 2, 3, ...: the largest height IC3 proves within the limit;
- ABC ``pdr`` on our AIGER export for reference (skipped without ABC).

    python -m benchmarks.ic3_pyramids [--timeout 120] [--max-h 7] [--abc-timeout 100]

Results: benchmarks/results/ic3_pyramids.md.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from symreach import semantics
from symreach.certify.clause_invariant import check_certificate
from symreach.frontends.reduction_pebbling import encode_pebbling
from symreach.generators.dags import pyramid
from symreach.loader import load_document
from symreach.result import Verdict
from symreach.solvers.abc import AbcPdrEngine, abc_available
from symreach.solvers.base import Limits
from symreach.solvers.bmc import BmcEngine
from symreach.solvers.explicit import ExplicitEngine
from symreach.solvers.ic3 import Ic3Engine

OUT = Path(__file__).resolve().parent / "results" / "ic3_pyramids.md"
KEYS = ("frames", "queries", "ctis", "ctgs", "mic_calls", "lemmas", "recycles", "invariant_clauses", "sat_s")


def instance(h: int, k: int):
    d = pyramid(h)
    return load_document(encode_pebbling(d.vertices, d.edges, d.target, k))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--timeout", type=float, default=120.0)
    ap.add_argument("--max-h", type=int, default=7)
    ap.add_argument("--abc-timeout", type=float, default=100.0)
    args = ap.parse_args()
    lines = ["# IC3 on Appendix C pyramids", "",
             f"`python -m benchmarks.ic3_pyramids --timeout {args.timeout:g}`; pebble bound k; "
             "price of pyramid(h) is h+2, so k = h+1 is not deployable. 2 shared cores.", ""]

    def out(s: str = "") -> None:
        print(s, flush=True)
        lines.append(s)
    inst = instance(3, 4)
    t0 = time.perf_counter()
    res = Ic3Engine().check(inst)
    dt = time.perf_counter() - t0
    t1 = time.perf_counter()
    ok, msg = check_certificate(inst, res.certificate.dumps())
    out(f"- h=3, k=4: IC3 {res.verdict.value} in {dt:.2f} s, {res.stats['invariant_clauses']} clauses; "
        f"certify: {'accepted' if ok else 'REJECTED ' + msg} in {time.perf_counter() - t1:.3f} s")
    out("")
    out("```")
    out(res.certificate.render())
    out("```")
    inst5 = instance(3, 5)
    ex = ExplicitEngine().check(inst5)
    for eng in (Ic3Engine(fast_paths=False), BmcEngine(fast_paths=False)):
        t0 = time.perf_counter()
        r = eng.check(inst5)
        semantics.replay(inst5, r.trace, inst5.query)
        extra = f", depth {r.stats['depth']}" if eng.name == "bmc" else ""
        out(f"- h=3, k=5: {eng.name} {r.verdict.value} in {time.perf_counter() - t0:.2f} s, trace of "
            f"{len(r.trace)} ops replays{extra} (explicit BFS: {len(ex.trace)} ops)")
    out("")
    out("| h | k | pairs | IC3 verdict | IC3 time s | " + " | ".join(KEYS) + " | certify | ABC pdr |")
    out("|---|---|---|---|---|" + "---|" * len(KEYS) + "---|---|")
    largest = None
    for h in range(2, args.max_h + 1):
        inst = instance(h, h + 1)
        t0 = time.perf_counter()
        r = Ic3Engine().check(inst, run=Limits(timeout_s=args.timeout))
        dt = time.perf_counter() - t0
        cert = ""
        if r.verdict is Verdict.NOT_DEPLOYABLE:
            cert = "ok" if check_certificate(inst, r.certificate.dumps())[0] else "REJECTED"
            largest = h
        abc = "n/a"
        if abc_available() and h <= 4:
            t0 = time.perf_counter()
            a = AbcPdrEngine(fast_paths=False).check(inst, run=Limits(timeout_s=args.abc_timeout))
            abc = f"{a.verdict.value} {time.perf_counter() - t0:.1f} s"
        vals = [r.stats.get(k, "") for k in KEYS]
        vals = [f"{v:.1f}" if isinstance(v, float) else str(v) for v in vals]
        out(f"| {h} | {h + 1} | {(h + 1) * (h + 2) // 2} | {r.verdict.value} | {dt:.2f} | " + " | ".join(vals)
            + f" | {cert} | {abc} |")
        if r.verdict is Verdict.UNKNOWN:
            break
    out("")
    out(f"Largest height proved within {args.timeout:g} s: h = {largest}.")
    OUT.write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
