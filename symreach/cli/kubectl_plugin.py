"""``kubectl symreach check|explain|matrix|where ...``: the live cluster, read through
the user's own ``kubectl``.

The plugin runs one ``kubectl get <the kinds symreach reads> -o json`` with
the user's ``--context``, ``--kubeconfig`` and ``-n``/``-A`` (default ``-A``:
scheduling depends on every pod of a node), feeds the list to the command
as standard input, and answers exactly as ``symreach COMMAND -`` would.
``-n NS`` is also passed to the command (a target filter, and the namespace
of names like ``deploy/web``).
"""

from __future__ import annotations

import io
import subprocess
import sys
from typing import NoReturn, Optional, Sequence

# Every kind the Kubernetes front end reads (symreach.frontends.kubernetes.USED_KINDS), as kubectl names them.
KINDS = ("nodes", "namespaces", "pods", "deployments", "replicasets", "statefulsets", "daemonsets", "jobs",
         "cronjobs", "replicationcontrollers", "persistentvolumes", "persistentvolumeclaims", "storageclasses",
         "poddisruptionbudgets")
COMMANDS = ("check", "explain", "matrix", "where", "export")
USAGE = f"""Usage: kubectl symreach COMMAND [OPTIONS]

  Ask symreach about the live cluster: COMMAND is one of {', '.join(COMMANDS)}
  and takes the options of `symreach COMMAND` (no input file: the cluster is
  read with one `kubectl get {','.join(KINDS)} -A -o json`).

  kubectl options passed through: --context NAME, --kubeconfig FILE,
  -n/--namespace NS (read only NS; also the command's -n), -A/--all-namespaces
  (the default).

Examples:
  kubectl symreach where --pod deploy/web -n shop
  kubectl symreach check --pod sts/db -n data --node-selector pool=general
  kubectl symreach matrix --context prod --nodes pool=gpu
  kubectl symreach export --context prod --pod deploy/web --node n1 --moves operator --kubectl witness.sh
"""


def split_kubectl_options(args: Sequence[str]) -> tuple[list[str], list[str], Optional[str]]:
    """(kubectl's options, the command's arguments, the namespace); ``-n`` goes to both."""
    kubectl: list[str] = []
    rest: list[str] = []
    namespace: Optional[str] = None
    i = 0
    while i < len(args):
        arg = args[i]
        name, eq, value = arg.partition("=")
        if name in ("--context", "--kubeconfig", "-n", "--namespace"):
            if not eq:
                if i + 1 >= len(args):
                    fail(f"{arg} needs a value")
                value = args[i + 1]
                i += 1
            if name in ("-n", "--namespace"):
                namespace = value
                rest += ["-n", value]
            else:
                kubectl += [name, value]
        elif arg.startswith("-n") and len(arg) > 2 and not arg.startswith("--"):
            namespace = arg[2:]
            rest += ["-n", namespace]
        elif arg in ("-A", "--all-namespaces"):
            namespace = None
        else:
            rest.append(arg)
        i += 1
    return kubectl, rest, namespace


def kubectl_command(kubectl_options: Sequence[str], namespace: Optional[str]) -> list[str]:
    scope = ["-n", namespace] if namespace else ["-A"]
    return ["kubectl", *kubectl_options, "get", ",".join(KINDS), *scope, "-o", "json"]


def read_cluster(command: Sequence[str], args: Sequence[str] = ()) -> bytes:
    """The list kubectl prints; a failure is one error line and exit 2."""
    try:
        done = subprocess.run(list(command), stdout=subprocess.PIPE, stderr=subprocess.PIPE, check=False)
    except FileNotFoundError:
        fail("kubectl not found on PATH (kubectl symreach reads the cluster through it)", args)
    if done.returncode != 0:
        detail = done.stderr.decode(errors="replace").strip().splitlines()
        fail(f"`{' '.join(command)}` failed (exit {done.returncode})" + (f": {detail[-1]}" if detail else ""), args)
    return done.stdout


def fail(message: str, args: Sequence[str] = ()) -> NoReturn:
    """One error line, exit 2; under ``-o json|yaml`` also the error document (docs/json.md)."""
    from symreach.cli.errors import args_format

    print(f"kubectl-symreach: error: {message}", file=sys.stderr)
    fmt = args_format(list(args))
    if fmt is not None:
        from symreach.report.schema import error_document, render_document

        command = args[0] if args and args[0] in COMMANDS else "kubectl-symreach"
        print(render_document(command, error_document(command, "kubectl", message, 2), fmt))
    sys.exit(2)


def main(argv: Optional[Sequence[str]] = None) -> None:
    args = list(sys.argv[1:] if argv is None else argv)
    if not args or args[0] in ("-h", "--help", "help"):
        print(USAGE, end="")
        sys.exit(0 if args else 2)
    command, *options = args
    if command not in COMMANDS:
        fail(f"unknown command {command!r}; choose from {', '.join(COMMANDS)}", args)
    if any(o in ("-h", "--help") for o in options):
        from symreach.cli.main import main as symreach_main

        sys.argv = ["kubectl symreach", command, "--help"]
        symreach_main()
    kubectl_options, rest, namespace = split_kubectl_options(options)
    if command == "export" and "--context" in kubectl_options:   # the script guards the context read from
        rest += ["--context", kubectl_options[kubectl_options.index("--context") + 1]]
    if namespace:
        print(f"kubectl-symreach: note: reading namespace {namespace} only; pods of other namespaces use "
              "node capacity too and are not in the input (-A reads every namespace)", file=sys.stderr)
    data = read_cluster(kubectl_command(kubectl_options, namespace), args)
    sys.stdin = io.TextIOWrapper(io.BytesIO(data), encoding="utf-8")
    from symreach.cli.main import cli
    from symreach.cli.process import run_supervised

    run_supervised(lambda: cli(args=[command, "-", *rest], prog_name="kubectl symreach"))
