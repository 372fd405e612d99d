"""The package's import graph keeps the pipeline one-way (ARCHITECTURE.md).

Imports are read with ``ast`` from the source, so the test sees every import,
including those inside functions: a lazy import still couples two modules.
Two rules, over ``symreach`` and ``benchmarks``:

- no cycle between modules;
- no module uses another module's private names (``_name``), whether
  imported (``from m import _x``), reached through a module object
  (``m._x``), or a whole private module imported from outside its package.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator

import pytest

REPO = Path(__file__).resolve().parent.parent
PACKAGES = ("symreach", "benchmarks")


@dataclass
class ModuleImports:
    name: str
    path: Path
    is_package: bool
    targets: set[str] = field(default_factory=set)          # modules this one imports
    private_uses: list[str] = field(default_factory=list)   # "line: what" of private names used


def module_name(path: Path) -> str:
    parts = list(path.relative_to(REPO).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def discover() -> dict[str, Path]:
    modules = {}
    for package in PACKAGES:
        for path in sorted((REPO / package).rglob("*.py")):
            modules[module_name(path)] = path
    return modules


def resolve_relative(current: str, is_package: bool, level: int, module: str | None) -> str:
    base = current.split(".")
    if not is_package:
        base = base[:-1]
    if level > 1:
        base = base[: len(base) - (level - 1)]
    return ".".join(base + ([module] if module else []))


def is_private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def private_module(name: str) -> bool:
    return any(is_private(part) for part in name.split("."))


def package_of(name: str) -> str:
    return name.rsplit(".", 1)[0] if "." in name else ""


def analyse(name: str, path: Path, known: dict[str, Path]) -> ModuleImports:
    result = ModuleImports(name, path, path.name == "__init__.py")
    tree = ast.parse(path.read_text(), filename=str(path))
    module_aliases: dict[str, str] = {}   # local name -> project module it is bound to

    def note_module(target: str, line: int) -> None:
        result.targets.add(target)
        if private_module(target) and not package_of(name).startswith(package_of(target)):
            result.private_uses.append(f"{line}: imports private module {target}")

    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name in known:
                    note_module(alias.name, node.lineno)
                    if alias.asname:
                        module_aliases[alias.asname] = alias.name
        elif isinstance(node, ast.ImportFrom):
            source = (resolve_relative(name, result.is_package, node.level, node.module)
                      if node.level else node.module or "")
            if source.split(".")[0] not in PACKAGES:
                continue
            for alias in node.names:
                submodule = f"{source}.{alias.name}"
                if submodule in known:              # ``from pkg import module``
                    note_module(submodule, node.lineno)
                    module_aliases[alias.asname or alias.name] = submodule
                    continue
                if source in known:
                    note_module(source, node.lineno)
                if is_private(alias.name) and source != name:
                    result.private_uses.append(f"{node.lineno}: from {source} import {alias.name}")
    for node in ast.walk(tree):
        if (isinstance(node, ast.Attribute) and is_private(node.attr)
                and isinstance(node.value, ast.Name) and node.value.id in module_aliases):
            result.private_uses.append(f"{node.lineno}: {node.value.id}.{node.attr} "
                                       f"(private name of {module_aliases[node.value.id]})")
    result.targets.discard(name)
    return result


def cycles(graph: dict[str, set[str]]) -> Iterator[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    counter = 0

    def visit(v: str) -> Iterator[list[str]]:
        nonlocal counter
        index[v] = low[v] = counter
        counter += 1
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                yield from visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                yield sorted(component)

    for v in sorted(graph):
        if v not in index:
            yield from visit(v)


@pytest.fixture(scope="module")
def imports() -> dict[str, ModuleImports]:
    known = discover()
    return {name: analyse(name, path, known) for name, path in known.items()}


def test_no_import_cycle(imports):
    graph = {name: info.targets for name, info in imports.items()}
    found = list(cycles(graph))
    assert not found, "import cycles:\n" + "\n".join(" <-> ".join(c) for c in found)


def test_no_module_uses_another_modules_private_names(imports):
    offences = [f"{info.path.relative_to(REPO)}:{use}" for info in imports.values() for use in info.private_uses]
    assert not offences, "private names used across modules:\n" + "\n".join(offences)


def test_the_checker_sees_a_cycle_and_a_private_name(tmp_path):
    """The rules above can fail: a planted cycle and a planted private use are found."""
    assert list(cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}})) == [["a", "b", "c"]]
    assert list(cycles({"a": {"b"}, "b": set()})) == []
    known = {"symreach.x": tmp_path / "x.py", "symreach.y": tmp_path / "y.py"}
    source = tmp_path / "y.py"
    source.write_text("from symreach.x import _hidden\nimport symreach.x as x\nx._also\n")
    info = analyse("symreach.y", source, known)
    assert info.targets == {"symreach.x"}
    assert len(info.private_uses) == 2


def test_top_level_holds_only_the_shared_vocabulary():
    """Model, semantics, results and errors at the top; every role in its subpackage."""
    loose = sorted(p.stem for p in (REPO / "symreach").glob("*.py") if not p.stem.startswith("__"))
    # gangs: the gang step's executable semantics (SPEC 5.1), a reference like semantics.
    assert loose == ["errors", "gangs", "model", "reasons", "result", "semantics"]


def test_certificate_checkers_share_no_code_with_the_engines(imports):
    """A checker that imported the engine's encoding could not catch its bugs."""
    checkers = [info for name, info in imports.items() if name.startswith("symreach.certify")]
    assert checkers
    for info in checkers:
        shared = sorted(t for t in info.targets
                        if t.startswith(("symreach.encodings", "symreach.solvers")))
        assert not shared, f"{info.name} imports {shared}"


def test_front_ends_and_engines_stay_apart(imports):
    """Engines never see input formats; front ends never decide reachability."""
    for name, info in imports.items():
        if name.startswith("symreach.solvers"):
            assert not any(t.startswith(("symreach.frontends", "symreach.loader", "symreach.cli"))
                           for t in info.targets), name
        if name.startswith(("symreach.frontends", "symreach.loader")):
            assert not any(t.startswith(("symreach.solvers", "symreach.encodings", "symreach.cli"))
                           for t in info.targets), name
