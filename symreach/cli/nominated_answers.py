"""Answers with the pending pods' nominations in force, for ``check``, ``explain`` and ``matrix``.

A nomination (``frontends/k8s_nominated.py``) only adds Filter runs a
deployment must also pass, so a not-deployable answer stands and a deployable
one stands when its witness holds with the nominations
(``k8s_nominated_filter.trace_holds``); where it does not, the answer is
searched again around them (``solvers/nominated_search.py``). ``with_nominations``
does that for one target (``check``, ``explain --node``); ``settle_matrix`` does
it for every cell of a matrix, as ``check --pod T --node N`` would, within the
search budget's ``nominated-search`` guard: a cell decided with the nominations
loses their caveat (and may turn not deployable), a cell left undecided keeps
its first verdict and the caveat.
"""

from __future__ import annotations

import time
from typing import Any, Iterable, Optional

from symreach import search_budget
from symreach.model import Instance, Query
from symreach.result import Result, Verdict
from symreach.run import RunContext
from symreach.search_budget import NOMINATED_SEARCH, Budget, naming_option


def search_around(instance: Instance, query: Query, result: Result, report: object,
                  run: RunContext) -> Optional[Result]:
    """The nominated search's answer where the nominations may change ``result`` (a deployable answer
    whose witness a nomination blocks: ``solvers.nominated_search``, a witness it finds checked with
    ``k8s_nominated_filter.trace_holds``), else None: no nomination, a not-deployable or unknown answer,
    a witness that holds, or a DynamicResources error that may abort a cycle (nothing is decided then)."""
    index = getattr(report, "nominated", None)
    if index is None or not index.nominations or result.verdict is not Verdict.DEPLOYABLE or \
            instance.filter_errors:
        return None
    from symreach.frontends.k8s_nominated_filter import in_model, trace_holds
    from symreach.semantics import query_holds
    from symreach.solvers.nominated_search import search

    if (result.trace or query_holds(instance, query, instance.initial_config())) and \
            trace_holds(instance, index, result.trace or ()):
        return None
    priority = {t: index.type_priority.get(pod.name) for t, pod in enumerate(instance.pod_types)}
    start = time.perf_counter()
    found = search(instance, query, in_model(instance, index.nominations), priority, run)
    found.time_s = result.time_s + time.perf_counter() - start
    if found.verdict is Verdict.DEPLOYABLE and not trace_holds(instance, index, found.trace):
        raise AssertionError(f"{found.engine}: its witness does not hold with the nominations: an engine bug")
    return found


def with_nominations(instance: Instance, query: Query, result: Result, report: object, run: RunContext) -> Result:
    """The answer with the pending pods' nominations in force (``k8s_nominated``): ``search_around``'s
    where it decides; where it answers unknown (a limit, an undecided verdict) the first answer stays,
    marked; every other answer stands (``unchanged_by_nominations``)."""
    found = search_around(instance, query, result, report, run)
    if found is None:
        return result
    if found.verdict is Verdict.UNKNOWN:   # the marked answer (its caveat stays) says more than unknown
        result.stats["with nominations"] = f"{found.engine}: unknown: {found.reason}"
        return result
    found.stats["without nominations"] = f"{result.engine}: deployable, by a witness a nomination blocks"
    return found


def is_nominated(caveat: str) -> bool:
    """Whether a caveat is a nominated pod's (``k8s_nominated.NOMINATED_CAVEAT``)."""
    from symreach.frontends.k8s_nominated import NOMINATED_CAVEAT

    return NOMINATED_CAVEAT in caveat


def nominated_types(caveats: dict[Any, Iterable[str]]) -> bool:
    """Whether some type's caveats (``report.caveats.type_caveats``, or a worker's outline's) name a nomination."""
    return any(is_nominated(c) for cs in caveats.values() for c in cs)


NOMINATED_HOW = "nominations"   # a cell's ``by`` where the nominations turned it not deployable


class MatrixSettler:
    """Re-decides a matrix's cells with the nominations in force, a few pod types at a time (as they
    are decided: ``--stream`` writes a row once its type is settled). Cells it cannot decide keep
    their verdict and the caveat; ``stats()`` says how many it re-decided."""

    def __init__(self, m, inst: Instance, report: object, budget: Budget, symmetry: bool = True,
                 cell_timeout: Optional[float] = None) -> None:
        from symreach.frontends.k8s_nominated_filter import unchanged_by_nominations
        from symreach.cli.options import SEARCH_BUDGET

        self.m, self.inst, self.report = m, inst, report
        self.original = dict(m.caveats)     # each type's caveats, as check's verdicts read them
        self.marked = {t for t, cs in m.caveats.items() if any(is_nominated(c) for c in cs)}
        self.index = getattr(report, "nominated", None)
        self.left = budget.limit(NOMINATED_SEARCH)   # search states the nominated searches may still visit
        with search_budget.using(budget):   # the caveat of a cell the guard left: the budget that raises it
            self.past = naming_option(f"the search around the nominated pods went {search_budget.past(NOMINATED_SEARCH)}",
                                      SEARCH_BUDGET)
        self.solve = {"symmetry": symmetry, "cell_timeout": cell_timeout}   # the matrix's (witnesses found again)
        self.settled = self.searched = self.changed = self.kept = 0
        self.unchanged = unchanged_by_nominations
        self.why: Optional[str] = None      # why cells were left marked, first reason

    @property
    def active(self) -> bool:
        return self.index is not None and bool(self.index.nominations)

    def types_done(self, types: Iterable[int]) -> None:
        """Settle every cell of ``types`` (their rows are final in ``m``)."""
        if not self.active:
            return
        for t in types:
            self._settle_type(t)

    def _settle_type(self, t: int) -> None:
        from symreach.solvers.cells import DEPLOYABLE, NOT_DEPLOYABLE, solve_type

        m, inst = self.m, self.inst
        if t not in self.marked and not self._reaches_marked(t):
            return   # its witnesses deploy types above every nomination: they hold, and no cell is marked
        own = self.original.get(t, ())
        others = tuple(c for c in own if not is_nominated(c))
        answer = None
        per_node: dict[int, tuple[str, ...]] = {}
        for n in range(len(m.nodes)):
            verdict = m.cells[(t, n)]
            if verdict == DEPLOYABLE:
                if answer is None:   # the witnesses: the type solved again (deterministic), as Matrix.witness does
                    answer = solve_type(inst, t, **self.solve, deadline_at=RunContext.for_process().wall_deadline())
                per_node[n] = self._settle_cell(t, n, answer, own, others)
            elif verdict == NOT_DEPLOYABLE and not inst.filter_errors:
                per_node[n] = others   # nominations only take deployments away
                self.settled += own != others
            else:   # unknown; or a DynamicResources abort a nomination may change (unchanged_by_nominations)
                per_node[n] = own
                self.kept += own != others
        self._store(t, per_node)

    def _reaches_marked(self, t: int) -> bool:
        """Whether a witness of a cell of ``t`` may deploy a type a nomination is added for: some type
        of its affinity cone is marked (``solve_type``'s witnesses deploy its cone's types only, but where
        bindings or DynamicResources errors take it to the whole instance)."""
        from symreach.encodings.preprocess import affinity_cone

        inst = self.inst
        if inst.bindings or inst.filter_errors:
            return True
        return bool(self.marked & affinity_cone(inst, Query((frozenset({(t, 0)}),))))

    def _settle_cell(self, t: int, n: int, answer, own: tuple[str, ...], others: tuple[str, ...]) -> tuple[str, ...]:
        """A deployable cell's caveats, its verdict turned not deployable where the nominations say so."""
        from symreach.solvers.cells import NOT_DEPLOYABLE

        m, inst = self.m, self.inst
        try:
            trace = answer.witness(inst, n)
        except KeyError:
            trace = None
        if trace is None:
            return self._left(own, (), "the cell's witness was not found again")
        query = Query((frozenset({(t, n)}),), f"{m.types[t]} on {m.nodes[n]}")
        first = Result(Verdict.DEPLOYABLE, "matrix", trace=trace)
        if self.left <= 0 and not self.unchanged(inst, self.index, first):   # a witness that holds costs no state
            return self._left(own, trace, self.past, guard=True)
        found = search_around(inst, query, first, self.report, self._cell_run())
        if found is not None:
            self.searched += 1
            self.left -= found.stats.get("states", 0)
            if found.verdict is Verdict.UNKNOWN:
                return self._left(own, trace, found.reason, guard=self.left <= 0)
        elif not self.unchanged(inst, self.index, first):   # the witness does not hold, undecided (filter errors)
            return self._left(own, trace, "a DynamicResources error may abort a cycle")
        self.settled += own != others or found is not None
        if found is not None and found.verdict is Verdict.NOT_DEPLOYABLE:
            self.changed += 1
            for view, value in ((m.cells, NOT_DEPLOYABLE), (m.how, NOMINATED_HOW)):
                if isinstance(view, dict):   # the fixpoint method's
                    view[(t, n)] = value
                else:
                    view.set(t, (n,), value)
        return others

    def _cell_run(self) -> RunContext:
        """A search's context: the states left of the guard, and the run's deadline or ``--cell-timeout``
        from now, whichever comes first (a cell's search is bounded as a matrix cell's engine is)."""
        run = RunContext.for_process(max_states=self.left)
        timeout = self.solve["cell_timeout"]
        if timeout is not None:
            until = time.monotonic() + timeout
            run = run.with_(deadline=until if run.deadline is None else min(run.deadline, until))
        return run

    def _left(self, own: tuple[str, ...], trace, why: str, guard: bool = False) -> tuple[str, ...]:
        """An undecided deployable cell: its verdict stays, with its caveats (``_marked``) and, where
        the guard stopped it, the guard's."""
        self.kept += 1
        if self.why is None:
            self.why = self.past if guard else why
        return self._marked(own, trace) + ((self.past,) if guard else ())

    def _marked(self, own: tuple[str, ...], trace) -> tuple[str, ...]:
        """An undecided deployable cell's caveats: its type's, and (as ``check``'s verdict carries the
        caveats of every type its witness deploys) the nominated ones of the types its witness deploys."""
        extra = [c for step in trace for c in self.original.get(self.inst.type_index(step.pod), ())
                 if is_nominated(c)]
        return own + tuple(dict.fromkeys(c for c in extra if c not in own))

    def _store(self, t: int, per_node: dict[int, tuple[str, ...]]) -> None:
        """The cells' caveats in ``m``: the type's, the union of its cells'; a cell carrying fewer, its own."""
        m = self.m
        union = tuple(dict.fromkeys(c for cs in per_node.values() for c in cs))
        if union:
            m.caveats[t] = union
        else:
            m.caveats.pop(t, None)
        own = {n: cs for n, cs in per_node.items() if cs != union}
        if own:
            m.cell_caveats[t] = own
        else:
            m.cell_caveats.pop(t, None)

    def stats(self) -> dict[str, Any]:
        """What the matrix's stats say of it (``"nominations"``)."""
        out: dict[str, Any] = {"cells re-decided": self.settled, "searched around them": self.searched,
                               "turned not deployable": self.changed,
                               "left marked": self.kept, "search states left": max(self.left, 0)}
        if self.why is not None:
            out["why marked"] = self.why
        return out


def settle_matrix(m, inst: Instance, report: object, budget: Budget, symmetry: bool = True,
                  cell_timeout: Optional[float] = None) -> Optional[MatrixSettler]:
    """Every cell of ``m`` re-decided with the nominations in force (``MatrixSettler``), its stats in
    ``m.stats["nominations"]``; None (nothing done) without nominations."""
    settler = MatrixSettler(m, inst, report, budget, symmetry, cell_timeout)
    if not settler.active:
        return None
    settler.types_done(range(len(m.types)))
    m.stats["nominations"] = settler.stats()
    return settler
