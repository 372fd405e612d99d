"""A stand-in ``kubectl`` for tests: prints a recorded dump as ``kubectl get ... -o json`` would,
and appends its arguments (one JSON list a line) to ``args.log`` beside it."""

from __future__ import annotations

import json
import sys
import textwrap
from pathlib import Path

import yaml


def make_stand_in(root: Path, dump: Path) -> Path:
    """Write ``root/kubectl`` serving ``dump``; returns ``root`` (put it first on PATH)."""
    docs = [d for d in yaml.safe_load_all(dump.read_text()) if d]
    items = [i for d in docs for i in (d.get("items") or [d])]
    (root / "dump.json").write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": items}))
    script = root / "kubectl"
    script.write_text(textwrap.dedent(f"""\
        #!{sys.executable}
        import json, sys
        with open({str(root / 'args.log')!r}, "a") as log:
            log.write(json.dumps(sys.argv[1:]) + "\\n")
        if "--context" in sys.argv and sys.argv[sys.argv.index("--context") + 1] == "broken":
            print('error: context "broken" does not exist', file=sys.stderr)
            sys.exit(1)
        sys.stdout.write(open({str(root / 'dump.json')!r}).read())
        """))
    script.chmod(0o755)
    return root


def calls(root: Path) -> list[list[str]]:
    """The argument lists the stand-in was called with, and forget them."""
    return _read_log(root)


def _read_log(root: Path) -> list:
    """The lines of ``args.log`` as JSON, and forget them."""
    log = root / "args.log"
    if not log.exists():
        return []
    out = [json.loads(line) for line in log.read_text().splitlines()]
    log.unlink()
    return out


def make_recorder(root: Path) -> Path:
    """Write ``root/kubectl`` for running exported scripts: it records every call (its arguments and
    what it read on stdin) in ``args.log`` and answers as a cluster would: ``config current-context``
    prints ``$FAKE_CONTEXT``, ``create -f - -o name`` names the pod from its generateName,
    ``get ... -o jsonpath={.spec.replicas}`` prints 3, ``get configmap`` fails (then created),
    ``get pods`` lists one pod more at every call (a controller creating them)."""
    script = root / "kubectl"
    script.write_text(textwrap.dedent(f"""\
        #!{sys.executable}
        import json, os, sys
        args = sys.argv[1:]
        stdin = sys.stdin.read() if "-f" in args and "-" in args else ""
        with open({str(root / 'args.log')!r}, "a") as log:
            log.write(json.dumps({{"args": args, "stdin": stdin}}) + "\\n")
        if args[:2] == ["config", "current-context"]:
            print(os.environ.get("FAKE_CONTEXT", "")); sys.exit(0)
        if "get" in args and "configmap" in args:
            sys.exit(1)
        if "create" in args and "configmap" in args:
            print("uid-1234"); sys.exit(0)
        if "create" in args and "--raw" in args:
            print("{{}}"); sys.exit(0)
        if "create" in args:
            import yaml
            name = yaml.safe_load(stdin)["metadata"]["generateName"] + "x7k2p"
            print("pod/" + name); sys.exit(0)
        if "get" in args and any(a.startswith("jsonpath") or a.startswith("-o=jsonpath") for a in args) \\
                or "jsonpath={{.spec.replicas}}" in args:
            print("3"); sys.exit(0)
        if "get" in args and "pods" in args:   # one pod more at every look: a controller at work
            seen = {str(root / 'pods.count')!r}
            k = int(open(seen).read()) + 1 if os.path.exists(seen) else 1
            open(seen, "w").write(str(k))
            print("\\n".join(["pod/initial-pod-0"] + [f"pod/new-pod-{{i}}" for i in range(1, k)])); sys.exit(0)
        """))
    script.chmod(0o755)
    return root


def recorded(root: Path) -> list[dict]:
    """The calls the recorder saw (``args``, ``stdin``), and forget them."""
    return _read_log(root)
