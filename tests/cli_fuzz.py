"""End-to-end fuzzing of the command line: mutated inputs, random options.

Every case is one ``symreach`` invocation, in-process through click's
CliRunner (fast: no interpreter start-up), on a mutated seed file (format
v1, Kubernetes dump, PNML, DAG JSON, certificates) with a random
combination of options. A case passes when it ends with a documented exit
status (0, 1, 2 or 3) and no traceback; ``--timeout`` is always given, and a
case that runs ``HANG_GRACE_S`` past it counts as a hang.

``tests/test_cli_fuzz.py`` drives ``make_case`` from hypothesis (marked
slow). For long runs::

    PYTHONPATH=. python3 -m tests.cli_fuzz --count 100000 --seed 1 --report fuzz.json

prints and writes the counts: inputs, exit codes, tracebacks, hangs.
"""

from __future__ import annotations

import argparse
import collections
import copy
import json
import os
import random
import shutil
import sys
import tempfile
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional

import yaml
from click.testing import CliRunner

REPO = Path(__file__).resolve().parent.parent
ALLOWED_EXIT = {0, 1, 2, 3}
TIMEOUT_S = 5.0
HANG_GRACE_S = 30.0  # generous: a loaded machine is slow, a hang is forever

SEEDS: dict[str, str] = {
    "v1.yaml": (REPO / "examples" / "paper-2.6.yaml").read_text(),
    "v1-cap1.yaml": (REPO / "examples" / "paper-2.6-capacity1.yaml").read_text(),
    "full.yaml": (REPO / "tests" / "data" / "loader" / "full.yaml").read_text(),
    "full.json": (REPO / "tests" / "data" / "loader" / "full.json").read_text(),
    "dump.yaml": (REPO / "examples" / "cluster-dump.yaml").read_text(),
    "volumes.yaml": (REPO / "tests" / "data" / "loader" / "volumes-dump.yaml").read_text(),
    "net.pnml": """<?xml version="1.0"?>
<pnml><net id="n" type="http://www.pnml.org/version-2009/grammar/ptnet"><page id="p">
<place id="a"><initialMarking><text>1</text></initialMarking></place><place id="b"/><place id="c"/>
<transition id="t1"/><transition id="t2"/>
<arc id="e1" source="a" target="t1"/><arc id="e2" source="t1" target="b"/>
<arc id="e3" source="b" target="t2"/><arc id="e4" source="t2" target="c"/>
</page></net></pnml>
""",
    "net.json": json.dumps({"name": "n", "places": ["a", "b", "c"], "initial": ["a"],
                            "transitions": [{"name": "t1", "pre": ["a"], "post": ["b"]},
                                            {"name": "t2", "pre": ["b"], "post": ["c"]}]}),
    "dag.json": json.dumps({"vertices": ["a", "b", "c", "d"], "edges": [["a", "c"], ["b", "c"], ["c", "d"]],
                            "target": "d"}),
    "cert.txt": "# symreach-sat-invariant/1\n",
}
NAMES = ["a", "b", "c", "n1", "web", "db", "zz", "payments/payments-api", "general-a", "P-v1_0", "", "-x",
         "a@n1", "k=v", "\u00e9", "x" * 300]
ENGINES = ["explicit", "bdd", "bmc", "ic3", "auto", "explicit", "explicit", "bdd", "nosuch"]
GARBAGE: list[Any] = [None, True, 0, -1, 2**70, 1.5, float("nan"), "", "5x", "1Gi", "-1", [], {}, [{}],
                      {"matchLabels": {}}, "In", "Exists", "kubernetes.io/hostname", "n1", "a"]


@dataclass
class Case:
    """One invocation: argv (with ``{dir}`` for the case's scratch directory) and files to create."""

    argv: list[str]
    files: dict[str, bytes] = field(default_factory=dict)

    def describe(self) -> str:
        return " ".join(self.argv)


# ---- mutations ---------------------------------------------------------------------

def _paths(value: Any, prefix: tuple = ()) -> list[tuple]:
    out = [prefix]
    if isinstance(value, dict):
        for k, v in value.items():
            out += _paths(v, prefix + (k,))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            out += _paths(v, prefix + (i,))
    return out


def _garbage(rng: random.Random) -> Any:
    """A fresh copy: a later mutation of the same case must never change ``GARBAGE`` itself
    (it did: its lists grew, case after case, into a structure too deep to walk)."""
    return copy.deepcopy(rng.choice(GARBAGE))


def _structured(rng: random.Random, text: str, as_json: bool) -> Optional[str]:
    try:
        docs = list(yaml.safe_load_all(text))
    except yaml.YAMLError:
        return None
    for _ in range(rng.randint(1, 3)):
        doc_i = rng.randrange(len(docs))
        paths = _paths(docs[doc_i])
        path = rng.choice(paths)
        parent, key = None, None
        node = docs[doc_i]
        for step in path:
            parent, key, node = node, step, node[step]
        action = rng.random()
        if parent is None:
            docs[doc_i] = _garbage(rng)
        elif action < 0.35:
            parent[key] = _garbage(rng) if rng.random() < 0.7 else rng.choice(NAMES)
        elif action < 0.55 and isinstance(parent, dict):
            del parent[key]
        elif action < 0.7 and isinstance(parent, list):
            parent.append(parent[key])  # duplicates
        elif action < 0.85:
            parent[key] = [node] if rng.random() < 0.5 else {"x": node}
        elif isinstance(node, int) and not isinstance(node, bool):
            parent[key] = rng.choice([0, -node, node * 10**rng.randint(1, 12)])
        elif isinstance(parent, dict):
            parent[rng.choice(NAMES) or "k"] = _garbage(rng)
    if as_json:
        return json.dumps(docs[0], default=str)
    return yaml.safe_dump_all(docs, sort_keys=False)


def _bytes(rng: random.Random, raw: bytes) -> bytes:
    data = bytearray(raw)
    for _ in range(rng.randint(1, 4)):
        action = rng.random()
        pos = rng.randrange(len(data) + 1)
        if action < 0.3 and data:
            data[min(pos, len(data) - 1)] = rng.randrange(256)
        elif action < 0.5:
            data[pos:pos] = rng.choice([b"\x00", b"\xff\xfe", b"{", b"[", b"&a [*a]", b"\t", b": ", b"\n- ",
                                        b"<!DOCTYPE x [<!ENTITY e SYSTEM 'file:///etc/passwd'>]>", b"\xe9"])
        elif action < 0.7:
            data = data[:pos]
        elif data:
            end = min(len(data), pos + rng.randint(1, 200))
            data[pos:pos] = data[pos:end]
    return bytes(data)


def mutate(rng: random.Random, name: str) -> bytes:
    text = SEEDS[name]
    roll = rng.random()
    if roll < 0.3:
        return text.encode()
    if roll < 0.65 and not name.endswith((".pnml", ".txt")):
        out = _structured(rng, text, name.endswith(".json"))
        if out is not None:
            return out.encode()
    return _bytes(rng, text.encode())


# ---- option combinations ------------------------------------------------------------

def _maybe(rng: random.Random, p: float, *items: str) -> list[str]:
    return list(items) if rng.random() < p else []


VALID = ["a", "b", "c", "n1", "n2", "payments/payments-api", "general-a", "default/zk", "default/db"]


def _name(rng: random.Random) -> str:
    return rng.choice(VALID) if rng.random() < 0.7 else rng.choice(NAMES)


def _target(rng: random.Random) -> list[str]:
    out = _maybe(rng, 0.5, "--pod", _name(rng))
    out += _maybe(rng, 0.4, "--node", _name(rng))
    out += _maybe(rng, 0.1, "--node-selector", rng.choice(["k=v", "zone=a", "bad", "=x"]))
    out += _maybe(rng, 0.1, "--with", rng.choice(["a@n1", "b@n1", "bad", "@"]))
    return out


def _timeout(rng: random.Random) -> list[str]:
    value = rng.choice([str(TIMEOUT_S), "0", "0.5", "1", str(TIMEOUT_S), "-1", "nan", "inf", "x"])
    if value not in ("-1", "nan", "inf", "x") and rng.random() < 0.9:
        return ["--timeout", value]
    return ["--timeout", value] if rng.random() < 0.5 else ["--timeout", str(TIMEOUT_S)]


def make_case(rng: random.Random) -> Case:
    """A random invocation of a random command on a mutated seed."""
    command = rng.choices(["check", "explain", "matrix", "export", "certify", "encode", "generate", "junk"],
                          weights=[40, 12, 10, 8, 8, 12, 6, 4])[0]
    instance = rng.choice(["v1.yaml", "v1-cap1.yaml", "full.yaml", "full.json", "dump.yaml", "volumes.yaml"])
    files = {"in" + Path(instance).suffix: mutate(rng, instance)}
    src = "{dir}/in" + Path(instance).suffix
    if command == "check":
        argv = ["check", src, *_target(rng), "--engine", rng.choice(ENGINES), *_timeout(rng)]
        argv += _maybe(rng, 0.3, "--json") + _maybe(rng, 0.2, "--jobs", "1") + _maybe(rng, 0.1, "--quiet")
        argv += _maybe(rng, 0.2, "--max-states", rng.choice(["1", "50", "100000"]))
        argv += _maybe(rng, 0.3, "--trace-out", "{dir}/" + rng.choice(["t.json", "t.yaml", "t.sh", "t.txt", "t"]))
        argv += _maybe(rng, 0.1, "--trace-out", rng.choice(["/proc/x", "{dir}/missing/t.json", "/dev/full"]))
        argv += _maybe(rng, 0.05, "--trace-format", rng.choice(["json", "yaml", "kubectl", "text", "xml"]))
        argv += _maybe(rng, 0.2, "--cert-out", rng.choice(["{dir}/c.txt", "/proc/c"]))
        if "auto" in argv and "--jobs" not in argv:
            argv += ["--jobs", "1"]  # keep in-process runs light; the race is covered by the tests
    elif command == "explain":
        argv = ["explain", src, *_maybe(rng, 0.6, "--pod", _name(rng)),
                *_maybe(rng, 0.5, "--node", _name(rng)), "--engine", rng.choice(ENGINES[:4] + ["nosuch"]),
                *_timeout(rng), *_maybe(rng, 0.3, "--json")]
    elif command == "matrix":
        argv = ["matrix", src, "--format", rng.choice(["text", "json", "csv"]), *_timeout(rng)]
    elif command == "export":
        out = rng.choice(["{dir}/m.aig", "{dir}/m.aag", "/proc/m.aig", "{dir}/no/m.aig"])
        argv = ["export", src, *_target(rng), *_timeout(rng)]
        argv += (["--aiger", out] if rng.random() < 0.6 else
                 ["--dimacs", "{dir}/m.cnf", *_maybe(rng, 0.9, "--depth", rng.choice(["0", "1", "3", "-1"]))])
    elif command == "certify":
        files["cert"] = mutate(rng, "cert.txt") if rng.random() < 0.7 else bytes(
            rng.randrange(256) for _ in range(rng.randrange(64)))
        argv = ["certify", src, "{dir}/cert", *_timeout(rng)]
    elif command == "encode":
        if rng.random() < 0.5:
            net = rng.choice(["net.pnml", "net.json"])
            files["net" + Path(net).suffix] = mutate(rng, net)
            argv = ["encode", "petri", "{dir}/net" + Path(net).suffix, "--goal", rng.choice(["c", "a", "zz", ""])]
        else:
            files["dag.json"] = mutate(rng, "dag.json")
            argv = ["encode", "pebbling", "{dir}/dag.json", "-k", rng.choice(["0", "1", "2", "5", "-1"])]
            argv += _maybe(rng, 0.3, "--target", rng.choice(["d", "c", "zz"]))
        argv += _timeout(rng) + _maybe(rng, 0.3, "-o", rng.choice(["{dir}/o.yaml", "/proc/o"]))
    elif command == "generate":
        kind = rng.choice(["pebbling", "net", "cluster"])
        if kind == "pebbling":
            argv = ["generate", "pebbling", "--shape", rng.choice(["pyramid", "tree", "path", "random", "x"]),
                    "--height", str(rng.randint(-1, 6)), "-k", str(rng.randint(-1, 8))]
        elif kind == "net":
            argv = ["generate", "net", "--family", rng.choice(["ring", "mutex", "philosophers"]),
                    "-n", str(rng.randint(1, 5)), "--goal", rng.choice(["coverable", "never", "dead", "zz"])]
        else:
            argv = ["generate", "cluster", "--nodes", str(rng.randint(0, 8)), "--pod-types", str(rng.randint(0, 8)),
                    "--seed", str(rng.randint(0, 99)), *_maybe(rng, 0.5, "--small")]
        argv += _timeout(rng)
    else:
        argv = [rng.choice(["check", "matrix", "nosuch", "explain"]), rng.choice(["--bogus", src, "-"]),
                *rng.sample(["--json", "--timeout", "--engine", "--pod", "-o", "--memory", "1"], 2)]
    return Case(argv, files)


# ---- running -------------------------------------------------------------------------

@dataclass
class Outcome:
    exit_code: Optional[int]
    traceback: Optional[str]
    seconds: float
    output: str

    @property
    def hang(self) -> bool:
        return self.seconds > TIMEOUT_S + HANG_GRACE_S


def run_case(case: Case) -> Outcome:
    """Run one case in a fresh scratch directory; never raises."""
    from symreach.cli.main import cli

    scratch = tempfile.mkdtemp(prefix="symreach-fuzz-")
    try:
        for name, data in case.files.items():
            Path(scratch, name).write_bytes(data)
        argv = [a.replace("{dir}", scratch) for a in case.argv]
        start = time.perf_counter()
        result = CliRunner().invoke(cli, argv, catch_exceptions=True)
        seconds = time.perf_counter() - start
        tb = None
        if result.exception is not None and not isinstance(result.exception, SystemExit):
            tb = "".join(traceback.format_exception(*result.exc_info)) if result.exc_info else repr(result.exception)
        elif "Traceback (most recent call last)" in result.output or "internal error" in result.output:
            tb = result.output
        return Outcome(result.exit_code, tb, seconds, result.output[-2000:])
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def failure(case: Case, outcome: Outcome) -> Optional[str]:
    """Why this outcome breaks the contract, or None."""
    if outcome.traceback is not None:
        return f"traceback: {case.describe()}\n{outcome.traceback}"
    if outcome.exit_code not in ALLOWED_EXIT:
        return f"exit {outcome.exit_code}: {case.describe()}\n{outcome.output}"
    if outcome.hang:
        return f"hang ({outcome.seconds:.1f} s): {case.describe()}"
    return None


def campaign(count: int, seed: int, report: Optional[str] = None, progress_every: int = 1000) -> dict:
    rng = random.Random(seed)
    exits: collections.Counter = collections.Counter()
    commands: collections.Counter = collections.Counter()
    failures: list[str] = []
    slowest = 0.0
    start = time.perf_counter()
    done = 0
    for done in range(1, count + 1):
        case = make_case(rng)
        outcome = run_case(case)
        exits[str(outcome.exit_code)] += 1
        commands[case.argv[0]] += 1
        slowest = max(slowest, outcome.seconds)
        why = failure(case, outcome)
        if why is not None:
            failures.append(why)
            if report:  # keep the failing input, to reproduce it
                keep = Path(report).with_suffix("") / f"failure-{done}"
                keep.mkdir(parents=True, exist_ok=True)
                (keep / "argv.txt").write_text(case.describe() + "\n")
                for name, data in case.files.items():
                    (keep / name).write_bytes(data)
        if done % progress_every == 0 or done == count:
            summary = _summary(done, seed, exits, commands, failures, slowest, time.perf_counter() - start)
            print(json.dumps({k: v for k, v in summary.items() if k != "failures"}), flush=True)
            if report:
                Path(report).write_text(json.dumps(summary, indent=1))
    return _summary(done, seed, exits, commands, failures, slowest, time.perf_counter() - start)


def _summary(done, seed, exits, commands, failures, slowest, elapsed) -> dict:
    return {"inputs": done, "seed": seed, "exit_codes": dict(sorted(exits.items())),
            "commands": dict(sorted(commands.items())),
            "tracebacks": sum(f.startswith("traceback") for f in failures),
            "bad_exit_codes": sum(f.startswith("exit") for f in failures),
            "hangs": sum(f.startswith("hang") for f in failures),
            "slowest_case_s": round(slowest, 2), "elapsed_s": round(elapsed, 1), "failures": failures[:50]}


def main(argv: Optional[list[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--count", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--report", help="Write the counts (and the first failures) here as JSON.")
    args = parser.parse_args(argv)
    os.environ.setdefault("SYMREACH_NO_SUPERVISOR", "1")
    summary = campaign(args.count, args.seed, args.report)
    for line in summary["failures"][:10]:
        print(line, file=sys.stderr)
    return 0 if not summary["failures"] else 1


if __name__ == "__main__":
    sys.exit(main())
