"""The package keeps the pipeline one-way and its map true (ARCHITECTURE.md, "Rules").

Imports are read with ``ast`` from the source, so the test sees every import,
including those inside functions: a lazy import still couples two modules.
Over ``symreach`` and ``benchmarks``:

- no cycle between modules;
- no module uses another module's private names (``_name``), whether
  imported (``from m import _x``), reached through a module object
  (``m._x``), or a whole private module imported from outside its package.

Over ``symreach``: each package imports none of the packages ``FORBIDDEN``
lists for it; the top level imports no subpackage; no string below ``cli/``
names a command-line option; ARCHITECTURE.md names every module, and each of
its rules names the test here (or elsewhere) that checks it.
"""

from __future__ import annotations

import ast
import re
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
    # records: how the model's (and every stage's) frozen classes are made, cheaply at start-up.
    # filter_runs: the parallel Filter scan's runs (the DRA cycle abort), part of the semantics.
    # search_budget: the exact searches' guards and the one budget scaling them (front ends read it; it imports nothing).
    assert loose == ["errors", "filter_runs", "gangs", "model", "reasons", "records", "result", "run",
                     "search_budget", "semantics"]


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


# package -> packages it must not import (ARCHITECTURE.md, "Rules"). Nothing below cli/ imports cli/
# or bench/; engines see neither input formats nor printing; certify/ shares no code with the engines
# or the readers; printing and export/ run no engine.
BELOW_CLI = ("symreach.cli", "symreach.bench")
FORBIDDEN: dict[str, tuple[str, ...]] = {
    "symreach.certify": BELOW_CLI + ("symreach.encodings", "symreach.solvers", "symreach.frontends",
                                     "symreach.loader", "symreach.export"),
    "symreach.solvers": BELOW_CLI + ("symreach.frontends", "symreach.loader", "symreach.export",
                                     "symreach.report", "symreach.generators"),
    "symreach.encodings": BELOW_CLI + ("symreach.solvers", "symreach.frontends", "symreach.loader",
                                       "symreach.export", "symreach.report", "symreach.generators"),
    "symreach.frontends": BELOW_CLI + ("symreach.solvers", "symreach.encodings", "symreach.certify",
                                       "symreach.export", "symreach.report", "symreach.generators"),
    "symreach.loader": BELOW_CLI + ("symreach.solvers", "symreach.encodings", "symreach.certify",
                                    "symreach.frontends", "symreach.export", "symreach.report",
                                    "symreach.generators"),
    "symreach.export": BELOW_CLI + ("symreach.solvers", "symreach.generators"),
    "symreach.report": BELOW_CLI + ("symreach.solvers", "symreach.export", "symreach.generators"),
    "symreach.generators": BELOW_CLI + ("symreach.solvers", "symreach.encodings"),
    "symreach.bench": ("symreach.cli",),
}
SHARED_VOCABULARY = ("symreach.model", "symreach.result", "symreach.errors", "symreach.reasons", "symreach.run",
                     "symreach.semantics", "symreach.records", "symreach.filter_runs",
                     "symreach.search_budget")   # filter_runs' bound is its filter-runs guard; it imports nothing


def forbidden_imports(imports: dict[str, "ModuleImports"]) -> list[str]:
    offences = []
    for name, info in imports.items():
        for package, banned in FORBIDDEN.items():
            if name == package or name.startswith(package + "."):
                offences += [f"{name} imports {t}" for t in sorted(info.targets)
                             if any(t == b or t.startswith(b + ".") for b in banned)]
    return offences


def test_each_package_imports_only_what_its_layer_may(imports):
    """The per-package table above: export/ no longer sits below solvers/, and so on."""
    assert set(FORBIDDEN) <= {n for n, i in imports.items() if i.is_package}
    offences = forbidden_imports(imports)
    assert not offences, "imports across layers:\n" + "\n".join(offences)


def test_the_top_level_imports_no_subpackage(imports):
    """``semantics.py`` and the rest of the vocabulary see only each other."""
    for name in SHARED_VOCABULARY:
        assert imports[name].targets <= set(SHARED_VOCABULARY), (name, imports[name].targets)


OPTION = re.compile(r"(?<![\w-])(--[a-z][a-z0-9-]*)")
# Strings below cli/ that name another program's options on purpose: the kubectl scripts that
# export/traces.py writes and reads back.
FOREIGN_OPTIONS = {("symreach.export.traces", "--namespace"),
                   # the guarded script's bash: kubectl's own --context and --timeout
                   ("symreach.export.kubectl_script", "--context"), ("symreach.export.kubectl_script", "--timeout")}


def cli_options() -> set[str]:
    """Every long option of every ``symreach`` command, as click knows them."""
    import click

    from symreach.cli.main import cli

    found: set[str] = set()

    def walk(command: click.Command, ctx: click.Context) -> None:
        for param in command.params:
            found.update(o for o in param.opts + param.secondary_opts if o.startswith("--"))
        if isinstance(command, click.Group):
            for sub in command.list_commands(ctx):
                walk(command.get_command(ctx, sub), ctx)

    walk(cli, click.Context(cli))
    return found


def option_mentions(source: str, options: set[str]) -> list[tuple[int, str]]:
    """(line, option) for every string in ``source`` that names one of ``options``.

    Docstrings may name options (they explain who sets a value); a kubectl
    command line (a string starting ``kubectl ``) names kubectl's options."""
    tree = ast.parse(source)
    docstrings = {id(node.body[0].value) for node in ast.walk(tree)
                  if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
                  and node.body and isinstance(node.body[0], ast.Expr)
                  and isinstance(node.body[0].value, ast.Constant)}
    found = []
    for node in ast.walk(tree):
        if (isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings
                and not node.value.startswith("kubectl ")):
            found += [(node.lineno, o) for o in OPTION.findall(node.value) if o in options]
    return found


def test_no_command_line_option_below_cli():
    """Below cli/ errors and messages name fields (``pod``, ``with #2``); cli/ names the options."""
    options = cli_options()
    assert {"--pod", "--max-input-mb", "--strict", "--shortest"} <= options
    offences, scanned = [], 0
    for name, path in discover().items():
        if not name.startswith("symreach.") or name.startswith(("symreach.cli", "symreach.__main__")):
            continue
        scanned += 1
        offences += [f"{path.relative_to(REPO)}:{line}: {option}"
                     for line, option in option_mentions(path.read_text(), options)
                     if (name, option) not in FOREIGN_OPTIONS]
    assert scanned > 50
    assert not offences, "command-line options named below cli/:\n" + "\n".join(offences)


def test_the_layer_checks_can_fail():
    """A planted banned import, option string and unmapped module are found."""
    planted = {"symreach.solvers.x": ModuleImports("symreach.solvers.x", REPO, False, {"symreach.export.traces"}),
               "symreach.export.y": ModuleImports("symreach.export.y", REPO, False, {"symreach.encodings.aiger"})}
    assert forbidden_imports(planted) == ["symreach.solvers.x imports symreach.export.traces"]
    source = ('def f():\n    """Set by ``--pod``."""\n    raise ValueError("--pod needs --node")\n'
              'X = "kubectl wait --pod"\n')
    assert option_mentions(source, {"--pod", "--node"}) == [(3, "--pod"), (3, "--node")]
    assert unmapped_modules("`symreach/cli/main.py` registers `check.py`", ["symreach/cli/main.py",
                            "symreach/cli/check.py", "symreach/cli/evidence.py",
                            "symreach/solvers/evidence.py"]) == ["symreach/cli/evidence.py",
                                                                 "symreach/solvers/evidence.py"]


ARCHITECTURE = REPO / "ARCHITECTURE.md"


def unmapped_modules(text: str, modules: list[str]) -> list[str]:
    """The modules (``symreach/pkg/name.py``) that ``text`` does not name: by full path, or by
    file name on a line that also names the package's folder (``symreach/pkg/``)."""
    missing = []
    for module in modules:
        folder, _, file = module.rpartition("/")
        bare = re.compile(r"(?<![\w])" + re.escape(file) + r"(?![\w])")
        named = module in text or any(f"{folder}/" in line and bare.search(line) for line in text.splitlines())
        if folder == "symreach":
            named = named or bool(bare.search(text))
        if not named:
            missing.append(module)
    return missing


def test_architecture_names_every_module():
    """A module missing from ARCHITECTURE.md's map fails here: add it where it belongs."""
    modules = sorted(str(p.relative_to(REPO)) for p in (REPO / "symreach").rglob("*.py")
                     if p.name not in ("__init__.py", "__main__.py"))
    assert len(modules) > 100
    missing = unmapped_modules(ARCHITECTURE.read_text(), modules)
    assert not missing, "modules missing from ARCHITECTURE.md:\n" + "\n".join(missing)


def test_every_rule_in_architecture_names_a_test_that_exists():
    """Each bullet under "## Rules" names ``tests/FILE.py::test_name``, and that test exists."""
    text = ARCHITECTURE.read_text()
    rules = text.split("\n## Rules", 1)[1].split("\n## ", 1)[0]
    bullets = [b for b in re.split(r"\n(?=- )", rules) if b.startswith("- ")]
    assert len(bullets) >= 6
    for bullet in bullets:
        named = re.findall(r"tests/(\w+\.py)::(\w+)", bullet)
        assert named, f"a rule names no test: {bullet[:80]}"
        for file, test in named:
            source = (REPO / "tests" / file).read_text()
            assert re.search(rf"^def {test}\(", source, re.M), f"{file}::{test} does not exist"


# Packages that must not decode front-end naming: the ``@`` of ``ns/name@node`` (DaemonSet pods)
# is read by ``model.daemonset_member`` only; ``PodType.origin`` is for reports.
NAMING_BLIND = ("symreach.solvers", "symreach.encodings", "symreach.export", "symreach.bench")


def naming_decodes(source: str) -> list[tuple[int, str]]:
    """(line, what) for every ``x.split("@")``-like call and every ``.origin`` read in ``source``."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                and node.func.attr in ("split", "rsplit", "partition", "rpartition")
                and any(isinstance(a, ast.Constant) and a.value == "@" for a in node.args)):
            found.append((node.lineno, f'{node.func.attr}("@")'))
        if isinstance(node, ast.Attribute) and node.attr == "origin":
            found.append((node.lineno, ".origin"))
    return found


def test_front_end_naming_stays_above_the_engines():
    """Engines, encodings and exporters ask the model which pods are a DaemonSet's."""
    assert naming_decodes('a, b, c = p.name.rpartition("@")\nx = t.origin\n') == [
        (1, 'rpartition("@")'), (2, ".origin")]
    offences, scanned = [], 0
    for name, path in discover().items():
        if name.startswith(NAMING_BLIND):
            scanned += 1
            offences += [f"{path.relative_to(REPO)}:{line}: {what}"
                         for line, what in naming_decodes(path.read_text())]
    assert scanned > 40
    assert not offences, "front-end naming decoded below the front ends:\n" + "\n".join(offences)


def unresolved_imports(source: str, known: set[str]) -> list[tuple[int, str]]:
    """(line, module) for every absolute import of a project module that does not exist.

    A moved module's old path fails here even where it is imported inside a
    function, which no import at start-up would notice."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found += [(node.lineno, a.name) for a in node.names
                      if a.name.split(".")[0] in PACKAGES and a.name not in known]
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            if node.module.split(".")[0] in PACKAGES and node.module not in known:
                found.append((node.lineno, node.module))
    return found


def test_every_project_import_resolves():
    """No import names a module that was moved or removed (tests included)."""
    known = set(discover())
    assert unresolved_imports("def f():\n    from symreach.export.aiger import AigerModel\n",
                              known) == [(2, "symreach.export.aiger")]
    paths = [p for package in PACKAGES + ("tests",) for p in sorted((REPO / package).rglob("*.py"))]
    assert len(paths) > 150
    offences = [f"{p.relative_to(REPO)}:{line}: {module}" for p in paths
                for line, module in unresolved_imports(p.read_text(), known)]
    assert not offences, "imports of modules that do not exist:\n" + "\n".join(offences)
