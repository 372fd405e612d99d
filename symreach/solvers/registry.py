"""Engine names on the command line -> engine objects, each behind one wrapper.

Engines are imported lazily so that a missing optional backend only fails
when it is asked for. Adding an engine is one module (a class with ``name``
and ``check``; ``fast_paths.PreprocessingEngine`` gives it the common start)
and one ``register`` line here (or in the module that adds it: the tests
register one of their own). ``--engine``, ``symreach bench`` and the shared
engine suite (tests/engine_suite.py) all read this table.

``make_engine`` returns the engine wrapped in ``Checked``, the one place
that does for every engine what no engine should repeat: it times the run,
replays every witness against the executable semantics (an engine bug is an
``AssertionError``, never a wrong answer) and turns the certificate into a
``certify.dispatch.Certificate`` once, so that an engine only decides.
"""

from __future__ import annotations

import importlib
import time
from typing import Any, Optional

from symreach import semantics
from symreach.model import Instance, Query
from symreach.result import Result, Verdict
from symreach.solvers.base import Engine, RunLike, as_context, resolve_query

# An engine without ``volume_checks = True`` encodes neither NodeVolumeLimits' presence-based count
# nor in-tree disk conflicts (``semantics.unencoded_volume_checks``); where either can decide
# something it declines, and ``auto`` asks explicit, which calls the semantics itself.
DECLINED = "engine {engine} does not encode {what}; the explicit engine does"

# name -> (module, class)
ENGINES: dict[str, tuple[str, str]] = {}
DEFAULT_ENGINE = "auto"


def register(name: str, module: str, cls: str) -> None:
    """Make ``module.cls`` the engine called ``name``."""
    ENGINES[name] = (module, cls)


register("explicit", "symreach.solvers.explicit", "ExplicitEngine")
register("bdd", "symreach.solvers.bdd", "BddEngine")
register("bmc", "symreach.solvers.bmc", "BmcEngine")
register("ic3", "symreach.solvers.ic3", "Ic3Engine")
register("lazy", "symreach.solvers.lazy_search", "LazySearchEngine")
register("abc-pdr", "symreach.solvers.abc", "AbcPdrEngine")
register("abc-bmc", "symreach.solvers.abc", "AbcBmcEngine")
register("abc-reach", "symreach.solvers.abc", "AbcReachEngine")
register("auto", "symreach.solvers.portfolio", "AutoEngine")


def available_engines() -> list[str]:
    """Names whose module is present in this installation."""
    names = []
    for name, (module, attr) in ENGINES.items():
        try:
            if hasattr(importlib.import_module(module), attr):
                names.append(name)
        except ImportError:
            continue
    return names


def engine_class(name: str) -> type:
    """The class registered as ``name`` (KeyError: unknown; ImportError: not installed)."""
    module, attr = ENGINES[name]
    return getattr(importlib.import_module(module), attr)


def make_engine(name: str, **options) -> "Checked":
    """An engine by command-line name; ``options`` go to its constructor."""
    if name not in ENGINES:
        raise KeyError(name)
    return Checked(engine_class(name)(**options))


class Checked:
    """An engine behind the registry's wrapper (module docstring)."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self.name = engine.name

    def __getattr__(self, attr: str) -> Any:  # the engine's own settings (``auto``'s engines, ...)
        if attr == "engine":  # not set yet (copy, unpickling)
            raise AttributeError(attr)
        return getattr(self.engine, attr)

    def check(self, instance: Instance, query: Optional[Query] = None, run: RunLike = None) -> Result:
        query = resolve_query(instance, query)
        if instance.moves.restricted and self.name == "auto":  # answered from the paper's question if sound
            from symreach.solvers.operator_shortcut import shortcut

            start = time.perf_counter()
            result = shortcut(self.engine, instance, query, as_context(run), finish_result)
            result.time_s = time.perf_counter() - start
            return finish_result(instance, query, result)
        if instance.moves.restricted and not getattr(self.engine, "operator_moves", False):
            return Result(Verdict.UNKNOWN, self.name,
                          reason=f"engine {self.name} does not answer under operator moves yet; the explicit engine does")
        if not getattr(self.engine, "volume_checks", False):
            unencoded = semantics.unencoded_volume_checks(instance)
            if unencoded is not None:
                return Result(Verdict.UNKNOWN, self.name, reason=DECLINED.format(engine=self.name, what=unencoded))
        start = time.perf_counter()
        result = self.engine.check(instance, query, as_context(run))
        result.time_s = time.perf_counter() - start
        return finish_result(instance, query, result)


# what a check imports on first use (deferred for the command line's start-up): the certificate's
# normalisation (``finish_result``) and ABC's AIGER lowering (``abc-*``, ``auto``). A benchmark
# job imports them before it times any engine's check (``bench.runner``), so no engine pays for
# compiling them (45 ms of CPU where no bytecode is cached) and none is spared it
ANSWER_MODULES = ("symreach.certify.dispatch", "symreach.encodings.aiger")


def import_answer_modules() -> None:
    """Import ``ANSWER_MODULES`` now, outside the time of the check that will need them."""
    import importlib

    for module in ANSWER_MODULES:
        importlib.import_module(module)


def finish_result(instance: Instance, query: Query, result: Result) -> Result:
    """Replay the witness; normalise the certificate (``Checked``)."""
    if result.verdict is Verdict.DEPLOYABLE and result.trace:
        try:
            semantics.replay(instance, result.trace, query)
        except semantics.ReplayError as exc:
            raise AssertionError(f"{result.engine}: its witness does not replay ({exc}): an engine bug") from None
    if result.certificate is not None:
        from symreach.certify.dispatch import as_certificate

        result.certificate = as_certificate(result.certificate)
    return result
