"""Start-up: ``import symreach.cli`` and a small ``check`` load no heavy backend.

A module check in a fresh interpreter, not a timing (the CPU cost is measured by
``benchmarks/startup.py``): CUDD, python-sat, networkx and Dask cost 0.3-0.5 s
of CPU to import and a small instance needs none of them.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
HEAVY = ("dd", "pysat", "networkx", "dask", "numpy")
# not heavy, but not needed by a small check either: rapidyaml reads only big Kubernetes dumps, PyYAML
# only what yaml_simple declines,
# ABC and the race's worker processes run only when the tiny explicit search does not decide
NOT_FOR_SMALL = ("ryml", "symreach.loader.yaml_fast", "symreach.solvers.abc", "symreach.encodings.compile",
                 "symreach.solvers.workers", "yaml", "symreach.loader.yaml_libyaml")


def _loaded_after(code: str, modules: tuple[str, ...] = HEAVY) -> list[str]:
    probe = (f"import sys, json\n{code}\n"
             f"print(json.dumps(sorted(m for m in {modules!r} if m in sys.modules)))")
    env = dict(os.environ, PYTHONPATH=str(ROOT), SYMREACH_NO_SUPERVISOR="1")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, env=env,
                         cwd=ROOT, timeout=120)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_import_cli_loads_no_backend() -> None:
    assert _loaded_after("import symreach.cli") == []


def test_help_lists_every_command_without_a_backend() -> None:
    loaded = _loaded_after("from symreach.cli.main import COMMANDS, cli\n"
                           "from click.testing import CliRunner\n"
                           "r = CliRunner().invoke(cli, ['--help'])\n"
                           "assert r.exit_code == 0, r.output\n"
                           "assert all(name in r.output for name in COMMANDS), r.output")
    # --help imports every command module: none of them may import a backend at top level
    assert loaded == []


def test_small_check_loads_no_backend() -> None:
    code = ("from symreach.cli.main import cli\n"
            "try:\n"
            "    cli(['check', '--quiet', 'examples/paper-2.6.yaml'], prog_name='symreach')\n"
            "except SystemExit as exc:\n"
            "    assert exc.code == 0, exc.code")
    assert _loaded_after(code, HEAVY + NOT_FOR_SMALL) == []


# Every symreach module a small check may import (``check`` on examples/paper-2.6.yaml). Each module
# costs start-up (about 1 ms of CPU each, ``benchmarks/startup.py``): a new one on this path must be
# needed there, not merely imported at the top of a module for a rare branch.
SMALL_CHECK_MODULES = frozenset("symreach." + m if m else "symreach" for m in """
    loader.dra solvers.goal_plan
    certify certify.may_fixpoint certify.names certify.never_deployable
    certify.node_filters certify.static_filter certify.theorem5 cli cli.check cli.errors cli.evidence
    cli.executor_options cli.group_check cli.main cli.moves_options cli.names cli.nominated_answers cli.options
    cli.output cli.process
    cli.timing encodings encodings.coexist encodings.preprocess encodings.realize encodings.replay_state
    encodings.restrict encodings.symmetry errors export export.traces frontends frontends.dispatch loader
    loader.budgets loader.collector loader.controllers loader.groups loader.kube_objects loader.labels
    loader.moves loader.quantities loader.query loader.resolve loader.shapes loader.v1 loader.volumes
    loader.yaml_simple loader.yaml_source model reasons records report report.caveats report.moves
    report.narrate report.progress report.verdict report.warnings result run search_budget semantics solvers
    solvers.abc_binary solvers.base solvers.explicit solvers.fast_paths solvers.heap solvers.portfolio
    solvers.processes solvers.registry solvers.replica_order solvers.schedule solvers.witness
""".split()) | {"symreach"}


def test_small_check_imports_only_its_modules() -> None:
    """Beyond what the interpreter had loaded before: symreach's listed modules, click, the standard library."""
    probe = ("import sys, json\nbefore = set(sys.modules)\nfrom symreach.cli.main import cli\ntry:\n"
             "    cli(['check', '--quiet', 'examples/paper-2.6.yaml'], prog_name='symreach')\n"
             "except SystemExit as exc:\n    assert exc.code == 0, exc.code\n"
             "print(json.dumps(sorted(set(sys.modules) - before)))")
    env = dict(os.environ, PYTHONPATH=str(ROOT), SYMREACH_NO_SUPERVISOR="1")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, env=env, cwd=ROOT,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    loaded = json.loads(out.stdout.strip().splitlines()[-1])
    ours = {m for m in loaded if m.split(".")[0] == "symreach"}
    assert len(ours) >= 40 and "symreach.solvers.explicit" in ours  # the check really ran
    assert sorted(ours - SMALL_CHECK_MODULES) == []
    others = {m.split(".")[0] for m in loaded} - {"symreach", "click"} - set(sys.stdlib_module_names)
    assert sorted(others) == []
    assert not {"yaml", "traceback", "decimal", "csv", "difflib", "pickle", "multiprocessing"} & set(loaded)
