"""Tables, CSV and JSON for benchmark results (the runner lives in ``symreach.bench.runner``)."""

from __future__ import annotations

import csv
import io
import json
import statistics
from dataclasses import asdict
from pathlib import Path
from typing import Any, Iterable, Optional, Sequence

from symreach.bench.analysis import engines_in, ratio_to_best, winners
from symreach.bench.runner import CSV_COLUMNS, Failure, JobResult

# ---------------------------------------------------------------------------
# tables
# ---------------------------------------------------------------------------

_SHORT = {"deployable": "yes", "not-deployable": "no"}


def cell(r: Optional[JobResult], metric: str = "time_s") -> str:
    """A compact per-job cell: ``yes 0.12`` / ``no 3.4`` / ``t/o`` / ``cpu`` / ``mem`` / ``ERR``."""
    if r is None:
        return "-"
    if r.solved:
        return f"{_SHORT[r.verdict]} {_fmt_s(getattr(r, metric))}"
    return {"unknown": "unk", "timeout": "t/o", "cpu-out": "cpu", "memout": "mem", "error": "ERR",
            "skipped": "skip"}.get(r.status, r.status)


def _fmt_s(x: Optional[float]) -> str:
    if x is None:
        return "?"
    if x < 10:
        return f"{x:.2f}"
    return f"{x:.1f}" if x < 100 else f"{x:.0f}"


def instance_rows(results: Sequence[JobResult], bad: Iterable[str] = (),
                  metric: str = "time_s") -> tuple[list[str], list[list[str]]]:
    """One row per instance, one column per engine (the time's ratio to the instance's best
    after ``x`` when it is not the best), the winner; ``!!`` marks failed instances."""
    engines = engines_in(results)
    bad = set(bad)
    wins = winners(results, metric)
    by: dict[str, dict[str, JobResult]] = {}
    for r in results:
        by.setdefault(r.instance, {})[r.engine] = r
    headers = ["instance", "expected", *engines, "winner", ""]
    rows = []
    for inst, cells in by.items():
        first = next(iter(cells.values()))
        row = [inst, _SHORT.get(first.expected or "", "?")]
        for e in engines:
            r = cells.get(e)
            ratio = ratio_to_best(r, wins[inst], metric) if r is not None else None
            row.append(cell(r, metric) + (f" x{ratio:.3g}" if ratio is not None and ratio >= 1.005 else ""))
        rows.append(row + [wins[inst].engine or "-", "!!" if inst in bad else ""])
    return headers, rows


def summary_rows(results: Sequence[JobResult]) -> tuple[list[str], list[list[str]]]:
    """Per family x engine: solved/total, total and median time of the solved jobs."""
    groups: dict[tuple[str, str], list[JobResult]] = {}
    for r in results:
        groups.setdefault((r.family, r.engine), []).append(r)
    headers = ["family", "engine", "solved", "total s", "median s", "max s", "unk/t-o", "mem",
               "err", "skip"]
    rows = []
    for (family, engine), rs in groups.items():
        times = [r.time_s for r in rs if r.solved and r.time_s is not None]
        rows.append([family, engine, f"{sum(r.solved for r in rs)}/{len(rs)}",
                     _fmt_s(sum(times)) if times else "-",
                     _fmt_s(statistics.median(times)) if times else "-",
                     _fmt_s(max(times)) if times else "-",
                     str(sum(r.status in ("unknown", "timeout", "cpu-out") for r in rs)),
                     str(sum(r.status == "memout" for r in rs)),
                     str(sum(r.status == "error" for r in rs)),
                     str(sum(r.status == "skipped" for r in rs))])
    return headers, rows


def format_grid(headers: Sequence[str], rows: Sequence[Sequence[str]], markdown: bool = False) -> str:
    """A plain fixed-width table, or a Markdown one."""
    if markdown:
        lines = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
        lines += ["| " + " | ".join(str(c).replace("|", "\\|") for c in row) + " |" for row in rows]
        return "\n".join(lines)
    widths = [max([len(str(h))] + [len(str(row[i])) for row in rows]) for i, h in enumerate(headers)]
    fmt = "  ".join(f"{{:<{w}}}" for w in widths)
    lines = [fmt.format(*headers).rstrip(), fmt.format(*("-" * w for w in widths)).rstrip()]
    lines += [fmt.format(*[str(c) for c in row]).rstrip() for row in rows]
    return "\n".join(lines)


RUN_COLUMNS = ("symreach_version", "commit", "cores", "cpu_model", "engine_options")


def _run_columns(meta: dict) -> dict[str, Any]:
    """The run's metadata (``symreach.bench.meta.run_meta``) as constant CSV columns."""
    machine = meta.get("machine") or {}
    return {"symreach_version": meta.get("symreach_version", ""), "commit": meta.get("commit") or "",
            "cores": machine.get("cores", ""), "cpu_model": machine.get("cpu", ""),
            "engine_options": json.dumps(meta.get("engine_options", {}), sort_keys=True)}


def write_csv(results: Sequence[JobResult], path: Optional[Path] = None,
              meta: Optional[dict] = None) -> str:
    """The results as CSV (also returned as text); with ``meta``, the run's version,
    commit, machine and engine options in every row."""
    buf = io.StringIO()
    columns = list(CSV_COLUMNS) + (list(RUN_COLUMNS) if meta is not None else [])
    writer = csv.DictWriter(buf, fieldnames=columns, lineterminator="\n")
    writer.writeheader()
    extra = _run_columns(meta) if meta is not None else {}
    for r in results:
        writer.writerow({**r.flat(), **extra})
    text = buf.getvalue()
    if path is not None:
        Path(path).write_text(text)
    return text


def results_json(results: Sequence[JobResult], meta: Optional[dict] = None,
                 found: Sequence[Failure] = ()) -> dict[str, Any]:
    return {"meta": meta or {}, "failures": [asdict(f) for f in found],
            "results": [r.to_json() for r in results]}
