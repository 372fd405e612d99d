"""The deployability matrix for people: nodes grouped into pools, short column
keys with a legend (no 40-character columns), ``--transpose``, filters.

``view(m, inst, ...)`` chooses rows and columns; ``render_view`` prints them.
A cell's mark comes from ``cell_mark`` alone, so other marks (caveats) can
be added in one place. ``where_text`` answers "which pools and nodes can
ever host this pod" from one row of the matrix.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Optional, Sequence

from symreach.model import Instance
from symreach.report.pools import Pool, matches, node_pools, node_zone, zone_split, zones_text

DEPLOYABLE, NOT_DEPLOYABLE, UNKNOWN = "deployable", "not-deployable", "unknown"
MARK = {DEPLOYABLE: "Y", NOT_DEPLOYABLE: ".", UNKNOWN: "?"}
ABSENT = "-"   # a DaemonSet with no pod for the node
CAVEAT = "*"   # the answer depends on what is not modelled (symreach.report.caveats)
FORBIDDEN = "!"  # both move sets asked: the paper's moves reach it on some node, the operator rules do not
FORBIDDEN_LEGEND = ("! the paper's moves reach it on some node there, an operator's moves "
                    "(PodDisruptionBudgets, protected pods, replica counts) do not")
LEGEND = ("Y deployable on every node, . on none, ? unknown (limit reached), "
          "k/n deployable on k of the pool's n nodes,\n"
          "- no pod of the DaemonSet there, * depends on what is not modelled (listed below)")


NODE_LEGEND = ("Y deployable, . not deployable, ? unknown (limit reached), - no pod of the DaemonSet there,\n"
               "* depends on what is not modelled (listed below)")


@dataclass
class Row:
    name: str
    per_node: tuple[Optional[int], ...]   # pod type index per node (None: none there)


@dataclass
class View:
    rows: list[Row]
    columns: list[Pool]                   # pools, or one pseudo-pool per node (ungrouped)
    grouped: bool


def cell_mark(values: Sequence[Optional[str]]) -> str:
    """The mark of a pool's (or a node's) cell from its nodes' verdicts (None: no pod there)."""
    present = [v for v in values if v is not None]
    if not present:
        return ABSENT
    if all(v == present[0] for v in present):
        return MARK[present[0]]
    yes = sum(v == DEPLOYABLE for v in present)
    unknown = "?" if any(v == UNKNOWN for v in present) else ""
    return f"{yes}/{len(present)}{unknown}"


def view(m, inst: Instance, grouped: bool = True, pods: Optional[str] = None, nodes: Optional[str] = None,
         namespace: Optional[str] = None) -> View:
    """The matrix's rows (pod types, a DaemonSet as one row) and columns (pools or nodes) after filters."""
    rows = []
    for name, per_node in m.row_subjects():
        t0 = next((t for t in per_node if t is not None), None)
        pod = inst.pod_types[t0] if t0 is not None else None
        labels = dict(pod.labels) if pod is not None else {}
        if namespace is not None and (pod is None or pod.namespace != namespace):
            continue
        if matches(pods, name, labels):
            rows.append(Row(name, tuple(per_node)))
    chosen = [n for n, node in enumerate(inst.nodes) if matches(nodes, node.name, dict(node.labels))]
    if grouped:
        columns = node_pools(inst, chosen)
    else:
        columns = [Pool(f"n{i + 1}", inst.nodes[n].name, (n,)) for i, n in enumerate(chosen)]
    return View(rows, columns, grouped)


def marks(m, v: View, row: Row) -> list[str]:
    """The row's mark in every column; ``*`` where a cell of the column carries caveats (``m.caveats_of``)."""
    caveats = getattr(m, "caveats", None) or {}
    t0 = row.per_node[0] if row.per_node else None
    if t0 is not None and hasattr(m.cells, "row") and all(t == t0 for t in row.per_node):
        values = m.cells.row(t0)  # one pod type's row as a list: millions of cells on large clusters
        out = [cell_mark([values[n] for n in col.nodes]) for col in v.columns]
    else:
        out = [cell_mark([None if row.per_node[n] is None else m.cells[(row.per_node[n], n)] for n in col.nodes])
               for col in v.columns]
    if any(t in caveats for t in row.per_node if t is not None):
        per_cell = getattr(m, "cell_caveats", None) or {}
        if not any(t in per_cell for t in row.per_node if t is not None):   # every cell its type's: all marked
            out = [mark + CAVEAT if mark != ABSENT else mark for mark in out]
        else:
            out = [mark + CAVEAT if mark != ABSENT and any(row.per_node[n] is not None and
                                                           m.caveats_of(row.per_node[n], n) for n in col.nodes)
                   else mark for mark, col in zip(out, v.columns)]
    forbidden = operator_forbidden(m)
    if forbidden:
        out = [mark + FORBIDDEN if any((row.per_node[n], n) in forbidden for n in col.nodes) else mark
               for mark, col in zip(out, v.columns)]
    return out


def operator_forbidden(m) -> frozenset:
    """(t, n) cells the paper's moves reach and the operator's do not (``m.operator``: both move sets asked)."""
    operator = getattr(m, "operator", None) or {}
    return frozenset(p for p, verdict in operator.items() if verdict == NOT_DEPLOYABLE and m.cells[p] == DEPLOYABLE)


def render_view(m, inst: Instance, v: View, transpose: bool = False,
                mark_of: Callable = marks) -> str:
    """A legend of column keys, then the table (pod types by pools, or pools by pod types)."""
    table = [mark_of(m, v, row) for row in v.rows]
    what = "pool" if v.grouped else "node"
    lines = (LEGEND if v.grouped else NODE_LEGEND).split("\n")
    if getattr(m, "operator", None) is not None:
        lines.append(FORBIDDEN_LEGEND)
    if not transpose:
        lines.append(f"{what}s:")
        for col in v.columns:
            lines.append(f"  {col.key:<4} {_column_legend(inst, col, v.grouped)}")
        heads = [c.key for c in v.columns]
        names = [r.name for r in v.rows]
        cells = table
    else:
        lines.append("pod types:")
        for i, row in enumerate(v.rows):
            lines.append(f"  {i + 1:<4} {row.name}")
        heads = [str(i + 1) for i in range(len(v.rows))]
        names = [f"{c.key} {_pool_title(c)}" if v.grouped else c.name for c in v.columns]
        cells = [[table[r][c] for r in range(len(v.rows))] for c in range(len(v.columns))]
    widths = [max([len(h)] + [len(row[j]) for row in cells]) for j, h in enumerate(heads)]
    left = max([len(n) for n in names] + [4])
    lines.append(" " * left + "".join(f"  {h:>{w}}" for h, w in zip(heads, widths)))
    for name, row in zip(names, cells):
        lines.append((f"{name:<{left}}" + "".join(f"  {c:>{w}}" for c, w in zip(row, widths))).rstrip())
    if not v.rows:
        lines.append("(no pod type matches)")
    if v.grouped:
        lines += zone_lines(m, inst, v)
    lines += caveat_lines(m, v)
    if m.stats.get("reason"):
        lines.append(f"incomplete: {m.stats['reason']}")
    return "\n".join(lines)


def zone_lines(m, inst: Instance, v: View) -> list[str]:
    """``zones: ROW on P4 pool=general: zone-a 0/2, zone-b 1/1``: every shown cell whose pool's
    zones answer differently, so a pool spanning zones never hides a zone's answer."""
    out = []
    for row in v.rows:
        def verdict(n: int, row: Row = row) -> Optional[str]:
            t = row.per_node[n]
            return None if t is None else m.cells[(t, n)]

        for col in v.columns:
            split = zone_split(inst, col, verdict)
            if split is not None:
                parts = [f"{zone} {cell_mark(values)}" for zone, values in split]
                out.append(f"by zone: {row.name} on {col.key} {col.name}: " + ", ".join(parts))
    return out


def _pool_title(col: Pool) -> str:
    zones = zones_text(col)
    return f"{col.name} ({zones})" if zones else col.name


def caveat_lines(m, v: View) -> list[str]:
    """``* ROW: caveat`` for every shown row whose answers depend on what is not modelled."""
    caveats = getattr(m, "caveats", None) or {}
    out = []
    for row in v.rows:
        types = sorted({t for t in row.per_node if t is not None and t in caveats})
        out += [f"{CAVEAT} {row.name}: {c}" for t in types[:1] for c in caveats[t]]
    return out


def _column_legend(inst: Instance, col: Pool, grouped: bool) -> str:
    if not grouped:
        return col.name
    names = [inst.nodes[n].name for n in col.nodes]
    shown = ", ".join(names[:4]) + (f", ... ({len(names) - 4} more)" if len(names) > 4 else "")
    zones = zones_text(col)
    return f"{col.name}  ({zones + '; ' if zones else ''}{len(names)} node{'s' if len(names) != 1 else ''}: {shown})"


def view_json(m, inst: Instance, v: View) -> dict:
    """The grouped view as data (``-o json`` of ``matrix`` adds it under ``pools``)."""
    return {"pools": [{"key": c.key, "name": c.name, "zones": list(c.zones),
                       "nodes": [inst.nodes[n].name for n in c.nodes]} for c in v.columns],
            "rows": [{"pod": row.name, "marks": dict(zip([c.key for c in v.columns], marks(m, v, row)))}
                     for row in v.rows]}


# ---- where ---------------------------------------------------------------------------------

def where_data(m, inst: Instance, row: Row, static_reasons: dict[int, str]) -> dict:
    """Per pool: the nodes that can ever host the row's pod, those that never can (with the
    static reason when there is one) and those left unknown; each node's caveats (``m.caveats_of``)."""
    pools = []
    for pool in node_pools(inst):
        entry: dict = {"pool": pool.name, "zones": list(pool.zones),
                       "nodes": {DEPLOYABLE: [], NOT_DEPLOYABLE: [], UNKNOWN: []},
                       "running": [], "reasons": {}, "node_zones": {}, "caveats": {}}
        for n in pool.nodes:
            t = row.per_node[n]
            if t is None:
                continue
            name = inst.nodes[n].name
            verdict = m.cells[(t, n)]
            if len(pool.zones) > 1:
                entry["node_zones"][name] = node_zone(inst, n)
            entry["nodes"][verdict].append(name)
            if inst.initial.get((t, n), 0) > 0:
                entry["running"].append(name)
            if verdict == NOT_DEPLOYABLE and n in static_reasons:
                entry["reasons"][name] = static_reasons[n]
            caveats = m.caveats_of(t, n)
            if caveats:
                entry["caveats"][name] = list(caveats)
        pools.append(entry)
    can = [n for p in pools for n in p["nodes"][DEPLOYABLE]]
    every = [c for p in pools for cs in p["caveats"].values() for c in cs]
    return {"pod": row.name, "can": len(can), "nodes": sum(t is not None for t in row.per_node),
            "pools": pools, "caveats": list(dict.fromkeys(every))}


def where_text(data: dict) -> str:
    lines = [f"{data['pod']} can ever run on {data['can']} of {data['nodes']} nodes"]
    for p in data["pools"]:
        yes, no, unk = (p["nodes"][k] for k in (DEPLOYABLE, NOT_DEPLOYABLE, UNKNOWN))
        size = len(yes) + len(no) + len(unk)
        if not size:
            continue
        head = "yes  " if len(yes) == size else "never" if len(no) == size else "some " if yes else "?    "
        zones = p.get("zones") or []
        spans = f" ({'zone' if len(zones) == 1 else 'zones'} {','.join(zones)})" if zones else ""
        lines.append(f"  {head} {p['pool']}{spans}  ({len(yes)}/{size})")
        at = p.get("node_zones") or {}

        marked = p.get("caveats") or {}

        def where(n: str) -> str:   # the node's zone, when its pool spans several and they differ; its mark
            return (CAVEAT if n in marked else "") + (f" [{at[n]}]" if n in at and head == "some " else "")
        if yes:
            running = set(p["running"])
            lines.append("         can:     " + ", ".join(n + where(n) + (" (runs there now)" if n in running else "")
                                                        for n in yes))
        if no:
            reasons = p["reasons"]
            by_reason: dict[str, list[str]] = {}
            for n in no:
                by_reason.setdefault(reasons.get(n, "no sequence of deployments and deletions gets it there"),
                                     []).append(n)
            for reason, names in by_reason.items():
                lines.append(f"         never:   {', '.join(n + where(n) for n in names)}: {reason}")
        if unk:
            lines.append("         unknown: " + ", ".join(n + where(n) for n in unk) + " (a limit was reached)")
    lines += [f"{CAVEAT} {c}" for c in data.get("caveats", [])]
    return "\n".join(lines)
