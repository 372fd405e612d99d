"""Engine names on the command line -> engine objects.

Engines are imported lazily so that a missing optional backend only fails
when it is asked for.
"""

from __future__ import annotations

import importlib

from symreach.solvers.base import Engine

# name -> (module, class)
ENGINES: dict[str, tuple[str, str]] = {
    "explicit": ("symreach.solvers.explicit", "ExplicitEngine"),
    "bdd": ("symreach.solvers.bdd", "BddEngine"),
    "bmc": ("symreach.solvers.bmc", "BmcEngine"),
    "ic3": ("symreach.solvers.ic3", "Ic3Engine"),
    "lazy": ("symreach.solvers.lazy_search", "LazySearchEngine"),
    "abc-pdr": ("symreach.solvers.abc", "AbcPdrEngine"),
    "abc-bmc": ("symreach.solvers.abc", "AbcBmcEngine"),
    "abc-reach": ("symreach.solvers.abc", "AbcReachEngine"),
    "auto": ("symreach.solvers.portfolio", "AutoEngine"),
}
DEFAULT_ENGINE = "auto"


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


def make_engine(name: str, **options) -> Engine:
    """An engine by command-line name; ``options`` go to its constructor."""
    if name not in ENGINES:
        raise KeyError(name)
    module, attr = ENGINES[name]
    return getattr(importlib.import_module(module), attr)(**options)
