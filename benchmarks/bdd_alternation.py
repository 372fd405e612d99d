"""The BDD engine's forward/backward alternation, side by side across checkouts.

Instances: pebbling pyramids (``--pyramids 13:14,13:15``) and goals of the
Appendix B nets (``--nets NET:PLACE,...``, expected verdicts from
answers.json). Every (instance, checkout) pair runs in its own process with
``PYTHONPATH`` set to the checkout (``--checkout LABEL=PATH``, repeatable;
default: this one), runs interleaved per instance so both see the same
machine load, and reports the CPU time of the check (``time.process_time``),
its wall time, CUDD's peak node count and the images per side. The load
average is written before and after.

    python -m benchmarks.bdd_alternation --checkout old=/tmp/old --checkout new=. \\
        --pyramids 13:14,13:15 --nets ERK-PT-000001:RKIPP_RP --timeout 300

Results: benchmarks/results/bdd_alternation.md, or ``--out`` (rewritten after every run).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.shared_data import PETRI_DIR
from symreach.frontends.petri_net import read_net
from symreach.frontends.reduction_pebbling import encode_pebbling
from symreach.frontends.reduction_petri import encode_petri
from symreach.generators.dags import pyramid

OUT = Path(__file__).resolve().parent / "results" / "bdd_alternation.md"
ROOT = Path(__file__).resolve().parent.parent

# Runs in the child, against whichever checkout PYTHONPATH names: only the
# engine API every checkout shares (load_document, BddEngine.check, Limits).
CHILD = """
import json, sys, time
import symreach
from symreach.loader import load_document
from symreach.solvers.base import Limits
from symreach.solvers.bdd import BddEngine
doc = json.load(open(sys.argv[1]))
inst = load_document(doc, filename=sys.argv[1])
c0, w0 = time.process_time(), time.perf_counter()
r = BddEngine().check(inst, inst.query, Limits(timeout_s=float(sys.argv[2])))
s = r.stats or {}
print(json.dumps({"verdict": r.verdict.value, "cpu": time.process_time() - c0,
                  "wall": time.perf_counter() - w0, "peak_nodes": s.get("peak_nodes"),
                  "side_images": s.get("side_images"), "decided": s.get("decided_direction"),
                  "symreach": symreach.__file__}))
"""


def instances(pyramids: str, nets: str):
    """(name, expected, document) triples."""
    for spec in filter(None, pyramids.split(",")):
        h, k = (int(x) for x in spec.split(":"))
        d = pyramid(h)
        # the price of pyramid(h) is h + 2 pebbles
        yield (f"pyramid h={h} k={k}", "deployable" if k >= h + 2 else "not-deployable",
               encode_pebbling(d.vertices, d.edges, d.target, k))
    answers = json.loads((PETRI_DIR / "answers.json").read_text()) if nets else {}
    for spec in filter(None, nets.split(",")):
        name, place = spec.split(":")
        ans = answers[name]
        expected = "deployable" if place in (ans.get("coverable") or []) else (
            "not-deployable" if place in (ans.get("not_coverable") or []) else "?")
        yield f"{name} {place}", expected, encode_petri(read_net(PETRI_DIR / f"{name}.pnml"), place)


def run_one(checkout: str, doc_path: str, timeout: float) -> dict:
    """One check in a child whose only ``symreach`` is the checkout's: it runs
    in the document's directory, since ``python -c`` puts the working
    directory ahead of ``PYTHONPATH``."""
    env = dict(os.environ, PYTHONPATH=str(Path(checkout).resolve()))
    try:
        p = subprocess.run([sys.executable, "-c", CHILD, doc_path, str(timeout)], env=env,
                           cwd=str(Path(doc_path).parent),
                           capture_output=True, text=True, timeout=timeout * 3 + 60)
    except subprocess.TimeoutExpired:
        return {"verdict": "killed"}
    if p.returncode != 0:
        return {"verdict": f"error: {(p.stderr.strip().splitlines() or ['?'])[-1][:80]}"}
    return json.loads(p.stdout.strip().splitlines()[-1])


def fmt(x, digits: int = 1) -> str:
    if x is None:
        return "-"
    return f"{x:.{digits}f}" if isinstance(x, float) else f"{x:,}" if isinstance(x, int) else str(x)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--checkout", action="append", default=[],
                    help="LABEL=PATH of a checkout to run (repeatable); default: this one")
    ap.add_argument("--pyramids", default="13:14,13:15")
    ap.add_argument("--nets", default="")
    ap.add_argument("--timeout", type=float, default=120.0)
    ap.add_argument("--out", type=Path, default=OUT)
    args = ap.parse_args()
    checkouts = [c.split("=", 1) for c in args.checkout] or [["this", str(ROOT)]]
    head = ["# BDD engine: forward/backward alternation, side by side", "",
            f"`python -m benchmarks.bdd_alternation {' '.join(sys.argv[1:])}`; 2 shared cores; "
            f"one process per run, checkouts interleaved per instance; BDD engine defaults; "
            f"{args.timeout:g} s wall limit. CPU = `time.process_time()` of the check. "
            f"Load average at start: {os.getloadavg()[0]:.1f}.", "",
            "| instance | expected | checkout | verdict | CPU s | wall s | peak nodes "
            "| images fwd / bwd | decided by |",
            "|---|---|---|---|---|---|---|---|---|"]
    rows: list[str] = []
    with tempfile.TemporaryDirectory(prefix="bdd-alt-") as work:
        for name, expected, doc in instances(args.pyramids, args.nets):
            path = Path(work) / "doc.json"
            path.write_text(json.dumps(doc))
            for label, checkout in checkouts:
                load = os.getloadavg()[0]
                r = run_one(checkout, str(path), args.timeout)
                imgs = r.get("side_images") or {}
                rows.append(f"| {name} | {expected} | {label} | {r['verdict']} | {fmt(r.get('cpu'))} | "
                            f"{fmt(r.get('wall'))} | {fmt(r.get('peak_nodes'))} | "
                            f"{imgs.get('forward', '-')} / {imgs.get('backward', '-')} | "
                            f"{r.get('decided') or '-'} (load {load:.1f}) |")
                print(rows[-1], flush=True)
                args.out.write_text("\n".join(head + rows) + "\n")
    args.out.write_text("\n".join(head + rows + ["", f"Load average at the end: {os.getloadavg()[0]:.1f}."])
                   + "\n")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
