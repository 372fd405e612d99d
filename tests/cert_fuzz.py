"""Certificate fuzzing: mutations and forgeries of all eight kinds, judged by the explicit engine.

Beside the CLI fuzzer (``tests/cli_fuzz.py``). The seeds are genuine
certificates (``tests/cert_corpus.py``: every engine's not-deployable proofs
on seeded tiny instances, every kind of target). Each case takes one, applies
a structure-aware mutation or a forgery, and runs what ``symreach certify``
runs, in-process (parse, then the checker of the kind), mapping outcomes to
its exit statuses: 0 VALID, 1 INVALID, 2 unreadable, 4 anything else raised.

The judge: a certificate accepted as VALID must be true. Its own target
(the ``query`` and ``counts`` it states) is rebuilt on the instance it was
checked against and decided by the explicit engine, the reference; VALID for
a target the explicit engine finds deployable (or one that names what the
instance lacks, or states nothing) is a **false acceptance**. Exit 4 is a
bug too (a user's file must never crash the checker).

Mutations: JSON kinds -- delete, retype or blow up a field anywhere in the
tree (``10**30``, ``-1``, ``None``, strings for numbers), drop, duplicate or
shuffle list items, rename pods and nodes, empty or trivial targets
(``[]``, ``[[]]``, ``{"pairs": [], "atLeast": 1}``), ``atLeast`` 0 or
negative; the IC3 text kind -- drop, duplicate or flip clause literals,
rewrite or drop header lines, garbage lines, truncation. Forgeries: a
certificate's target swapped for another pair (often deployable), a
certificate checked against another instance (seeded instances share pod
and node names), a certificate relabelled as another kind, two
certificates spliced.

Long runs, outside CI, in chunks::

    PYTHONPATH=. timeout 3000 python3 -m tests.cert_fuzz --cases 25000 --seed 1 --report cf-1.json

``tests/test_cert_fuzz.py`` runs a seeded sample in CI.
"""

from __future__ import annotations

import argparse
import collections
import copy
import inspect
import json
import random
import signal
import sys
import time
import traceback
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Optional, Union

from symreach.certify.dispatch import KINDS, check_loaded, parse
from symreach.certify import clause_invariant
from symreach.errors import InputError
from symreach.model import CountTarget, Instance, Query
from symreach.result import Verdict
from symreach.solvers.base import Limits
from symreach.solvers.explicit import ExplicitEngine
from tests.cert_corpus import cert_format, corpus

BOUND = "target" in inspect.signature(check_loaded).parameters  # certify binds the target asked
HUGE = (10**30, -1, 2**63, -(2**63) - 1, 0, 1, 2, 40, 10**6, 2**31, 3.5, True, None, "1", "", [], {})
HANG_S = 20.0  # a case still checking after this long is a hang (a certificate must not stall certify)
HANG = 5       # its outcome: not an exit status, a bug like exit 4
JUDGE_STATES = 200_000  # the judge's state cap: beyond it the case is "judge unknown", never accepted


@dataclass
class Seed:
    fmt: str
    kind: str
    inst: Instance
    query: Query
    text: str


@dataclass
class Stats:
    cases: int = 0
    exits: collections.Counter = field(default_factory=collections.Counter)
    by_kind: collections.Counter = field(default_factory=collections.Counter)
    valid_judged: int = 0
    false_accepts: list = field(default_factory=list)
    crashes: list = field(default_factory=list)
    mutations: collections.Counter = field(default_factory=collections.Counter)
    crash_kinds: collections.Counter = field(default_factory=collections.Counter)
    judge_unknown: list = field(default_factory=list)

    def to_json(self) -> dict:
        return {"cases": self.cases, "exits": dict(self.exits), "by_kind": dict(self.by_kind),
                "valid_judged": self.valid_judged, "false_accepts": len(self.false_accepts),
                "judge_unknown": len(self.judge_unknown),
                "exit4": self.exits.get(4, 0), "hangs": self.exits.get(HANG, 0), "mutations": dict(self.mutations),
                "crash_kinds": dict(self.crash_kinds),
                "false_accept_samples": self.false_accepts[:5], "crash_samples": self.crashes[:5],
                "judge_unknown_samples": self.judge_unknown[:5]}


def seeds(instances: Union[int, Iterable[int]] = 40) -> list[Seed]:
    """Genuine certificates of every kind and target kind, from the seeded instances
    ``instances`` (a count: the first that many)."""
    chosen = range(instances) if isinstance(instances, int) else instances
    return [Seed(fmt, kind, inst, query, text) for fmt, kind, inst, query, text, _ in corpus(chosen)]


# ---- running a certificate as ``certify`` does ---------------------------------------

def certify_exit(inst: Instance, text: str, question: Optional[Query] = None) -> tuple[int, str, Any]:
    """(exit status, message, parsed certificate or None), as ``symreach certify FILE CERT``
    with the target options of ``question`` would end."""
    try:
        loaded = parse(text)
    except (ValueError, InputError) as exc:
        return 2, str(exc), None
    except RecursionError:
        return 2, "too deeply nested", None
    except Exception as exc:  # noqa: BLE001 - any other exception is the bug being hunted
        return 4, f"parse: {type(exc).__name__}: {exc}", None
    try:
        signal.setitimer(signal.ITIMER_REAL, HANG_S)
        if getattr(loaded, "digest", "") is None:
            return 1, "refused: bound to no instance", loaded
        ok, message = check_loaded(inst, loaded, question) if BOUND else check_loaded(inst, loaded)
    except InputError as exc:
        return 2, str(exc), loaded
    except RecursionError:
        return 2, "too deeply nested", loaded
    except _Hang:
        return HANG, f"check: still running after {HANG_S:g} s\n{traceback.format_exc(limit=-3)}", loaded
    except Exception as exc:  # noqa: BLE001
        return 4, f"check: {type(exc).__name__}: {exc}\n{traceback.format_exc(limit=-3)}", loaded
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
    return (0 if ok else 1), message, loaded


class _Hang(BaseException):
    """Raised in the checker by the per-case alarm (a BaseException: no checker swallows it)."""


def _alarm(signum, frame) -> None:
    raise _Hang()


signal.signal(signal.SIGALRM, _alarm)


# ---- the judge ----------------------------------------------------------------------------

class JudgeUnknown(Exception):
    """The explicit engine reached its state or time cap: the case is neither accepted nor refuted."""


class Judge:
    """The explicit engine on a certificate's own target; verdicts cached per (instance, target).

    A mutated target can ask for 10**30 pods of a pod type that requests nothing: the
    search is capped (``JUDGE_STATES``, ``HANG_S``) and an unknown verdict raises
    ``JudgeUnknown`` -- counted apart, never as a true acceptance."""

    def __init__(self) -> None:
        self.cache: dict[tuple[int, Any], Optional[Verdict]] = {}

    def false_acceptance(self, inst: Instance, loaded, question: Optional[Query]) -> Optional[str]:
        """None when the accepted certificate's claims are true: the question certify was
        asked and the certificate's own target are both not deployable."""
        try:
            query = own_target(inst, loaded)
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            return f"accepted, but its target does not name this instance's objects: {exc}"
        if not query.alternatives and not query.counts:
            return "accepted a certificate with no target"
        for what, q in (("its own target", query), ("the target asked", question)):
            if q is not None and self.deployable(inst, q):
                return f"accepted, but the explicit engine finds {what} deployable"
        return None

    def deployable(self, inst: Instance, query: Query) -> bool:
        key = (id(inst), query.alternatives, query.counts)
        if key not in self.cache:
            limits = Limits(timeout_s=HANG_S, max_states=JUDGE_STATES)
            self.cache[key] = ExplicitEngine().check(inst, query, limits).verdict
        if self.cache[key] not in (Verdict.DEPLOYABLE, Verdict.NOT_DEPLOYABLE):
            raise JudgeUnknown(f"explicit engine: {self.cache[key]} within {JUDGE_STATES} states / {HANG_S:g} s")
        return self.cache[key] is Verdict.DEPLOYABLE


def own_target(inst: Instance, loaded) -> Query:
    content = loaded.content
    if loaded.format == clause_invariant.FORMAT:
        raw_query, raw_counts = content.query, content.counts
    else:
        raw_query, raw_counts = content.get("query"), content.get("counts", [])
    alternatives = tuple(frozenset((inst.type_index(p), inst.node_index(n)) for p, n in alt) for alt in raw_query)
    counts = tuple(CountTarget(frozenset((inst.type_index(p), inst.node_index(n)) for p, n in ct["pairs"]),
                               int(ct["atLeast"])) for ct in raw_counts or ())
    if not alternatives and counts:
        alternatives = (frozenset(),)
    return Query(alternatives, "the certificate's own target", counts)


# ---- mutations ------------------------------------------------------------------------------

def _paths(root: Any) -> list[tuple]:
    """Paths to every node of a JSON tree, at most 12 items of each list (states and
    BDD nodes run to thousands; the first dozen are where a mutation is visible)."""
    out, stack = [], [((), root)]
    while stack:
        path, value = stack.pop()
        out.append(path)
        items = value.items() if isinstance(value, dict) else enumerate(value[:12]) if isinstance(value, list) else ()
        stack.extend((path + (k,), v) for k, v in items)
    return out


def _get(value: Any, path: tuple) -> Any:
    for p in path:
        value = value[p]
    return value


def _set(value: Any, path: tuple, new: Any) -> Any:
    if not path:
        return new
    parent = _get(value, path[:-1])
    parent[path[-1]] = new
    return value


def _names(inst: Instance) -> list[str]:
    return [t.name for t in inst.pod_types] + [n.name for n in inst.nodes] + ["zz", "t9", "n9", ""]


def mutate_json(data: dict, inst: Instance, rng: random.Random) -> tuple[dict, str]:
    data = copy.deepcopy(data)
    op = rng.choice(["delete", "retype", "huge", "list", "rename", "target", "counts", "format", "profile"])
    paths = [p for p in _paths(data) if p]
    path = rng.choice(paths)
    parent = _get(data, path[:-1])
    if op == "delete":
        if isinstance(parent, dict):
            del parent[path[-1]]
        else:
            parent.pop(path[-1])
    elif op in ("retype", "huge"):
        _set(data, path, rng.choice(HUGE))
    elif op == "list":
        lists = [p for p in _paths(data) if isinstance(_get(data, p), list)]
        target = _get(data, rng.choice(lists)) if lists else []
        how = rng.choice(["drop", "dup", "shuffle", "clear", "reverse"])
        if how == "drop" and target:
            target.pop(rng.randrange(len(target)))
        elif how == "dup" and target:
            target.append(copy.deepcopy(rng.choice(target)))
        elif how == "shuffle":
            rng.shuffle(target)
        elif how == "clear":
            target.clear()
        else:
            target.reverse()
        op = f"list-{how}"
    elif op == "rename":
        strings = [p for p in paths if isinstance(_get(data, p), str) and p[-1] != "format"]
        if strings:
            _set(data, rng.choice(strings), rng.choice(_names(inst)))
    elif op == "target":
        data["query"] = rng.choice([[], [[]], [[_pair(inst, rng)]], [[_pair(inst, rng), _pair(inst, rng)]],
                                    [[_pair(inst, rng)], [_pair(inst, rng)]], _first(data.get("query"))])
    elif op == "counts":
        data["counts"] = rng.choice([[], [{"pairs": [], "atLeast": 1}], [{"pairs": [_pair(inst, rng)], "atLeast": 0}],
                                     [{"pairs": [_pair(inst, rng)], "atLeast": rng.randint(-2, 4)}],
                                     [{"pairs": [_pair(inst, rng), _pair(inst, rng)], "atLeast": 2}]])
    elif op == "format":
        data["format"] = rng.choice(sorted(KINDS))
    else:
        data["profile"] = rng.choice(["paper", "kubernetes", "", None])
    return data, op


def _first(query: Any) -> list:
    """The first alternative of a (possibly already mutated) query."""
    return query[:1] if isinstance(query, list) else []


def _pair(inst: Instance, rng: random.Random) -> list[str]:
    return [rng.choice(inst.pod_types).name, rng.choice(inst.nodes).name]


def mutate_text(text: str, inst: Instance, rng: random.Random) -> tuple[str, str]:
    """The IC3 clause format: header lines and clause lines."""
    lines = text.splitlines()
    header = [i for i, line in enumerate(lines) if line.startswith("#")]
    clauses = [i for i, line in enumerate(lines) if line and not line.startswith("#")]
    op = rng.choice(["drop-clause", "dup-clause", "flip", "header-value", "header-field", "header-field",
                     "drop-header", "garbage", "truncate", "rename", "empty-target", "trivial-counts"])
    if op == "header-field":  # one field inside a header's JSON (a pair's bits or bound, a query pair ...)
        fields = [i for i in header if _json_header(lines[i]) is not None]
        if fields:
            i = rng.choice(fields)
            key, value = lines[i][1:].partition(":")[0].strip(), _json_header(lines[i])
            paths = [p for p in _paths(value) if p]
            if paths:
                _set(value, rng.choice(paths), rng.choice(HUGE))
                lines[i] = f"# {key}: {json.dumps(value)}"
        return "\n".join(lines) + "\n", op
    if op == "drop-clause" and clauses:
        lines.pop(rng.choice(clauses))
    elif op == "dup-clause" and clauses:
        lines.append(lines[rng.choice(clauses)])
    elif op == "flip" and clauses:
        i = rng.choice(clauses)
        lits = lines[i].split()
        j = rng.randrange(len(lits))
        lits[j] = lits[j][1:] if lits[j].startswith("-") else "-" + lits[j]
        lines[i] = " ".join(lits)
    elif op == "header-value" and header:
        i = rng.choice(header)
        key = lines[i][1:].partition(":")[0]
        lines[i] = f"#{key}: {json.dumps(rng.choice(HUGE))}"
    elif op == "drop-header" and header:
        lines.pop(rng.choice(header))
    elif op == "garbage":
        lines.insert(rng.randrange(len(lines) + 1), rng.choice(["present[", "-count[a@b#99999999999]", "x y z",
                                                                "present[t0@n0] -present[t0@n0]", "#", "# :"]))
    elif op == "truncate":
        cut = rng.randrange(len(text) + 1)
        return text[:cut], op
    elif op == "rename":
        name = rng.choice(_names(inst))
        victim = rng.choice([t.name for t in inst.pod_types] + [n.name for n in inst.nodes])
        return text.replace(victim, name), op
    elif op == "empty-target":
        lines = [f"# query: {rng.choice(['[]', '[[]]'])}" if line.startswith("# query:") else line for line in lines]
    else:
        lines = [line for line in lines if not line.startswith("# counts:")]
        lines.insert(1, f'# counts: [{{"pairs": [], "atLeast": {rng.randint(0, 2)}}}]')
    return "\n".join(lines) + "\n", op


def _json_header(line: str) -> Any:
    """The JSON value of a ``# key: value`` header line, when it is a list or an object."""
    try:
        value = json.loads(line[1:].partition(":")[2])
    except ValueError:
        return None
    return value if isinstance(value, (list, dict)) else None


def make_case(pool: list[Seed], rng: random.Random) -> tuple[Instance, str, Optional[Query], str, str]:
    """(instance checked against, certificate text, target asked, seed format, mutation).

    The target asked is the seed's (as ``certify FILE CERT`` with ``check``'s options
    would be), or the mutated certificate's own target when it names one: the forger
    also chooses the question. Half the time the forger re-binds the certificate to
    the instance it is checked against (a digest is a checksum, not a signature)."""
    seed = rng.choice(pool)
    inst, text, op = seed.inst, seed.text, ""
    roll = rng.random()
    if roll < 0.1:  # forgery: a genuine certificate against another instance
        inst, op = rng.choice(pool).inst, "other-instance"
    elif roll < 0.15:  # forgery: two certificates spliced
        other = rng.choice(pool)
        if other.text.startswith("{") and text.startswith("{"):
            a, b = json.loads(text), json.loads(other.text)
            key = rng.choice(sorted(b))
            a[key] = b[key]
            text, op = json.dumps(a), "splice"
    if not op:
        text, op = _mutations(text, inst, rng)
    if rng.random() < 0.5:
        text = rebind(text, inst)
    question = _question(inst, text) or _renamed(seed.query, seed.inst, inst)
    return inst, text, question, seed.fmt, op


def rebind(text: str, inst: Instance) -> str:
    """The certificate bound to ``inst`` (when it parses and this version binds)."""
    try:
        cert = parse(text)
    except Exception:  # noqa: BLE001 - an unreadable certificate stays as it is
        return text
    if not hasattr(cert, "bind"):
        return text
    try:
        return cert.bind(inst).dumps()
    except Exception:  # noqa: BLE001
        return text


def _question(inst: Instance, text: str) -> Optional[Query]:
    try:
        query = own_target(inst, parse(text))
    except Exception:  # noqa: BLE001 - no target of its own on this instance
        return None
    return query if query.alternatives and (query.counts or any(query.alternatives)) else None


def _renamed(query: Query, source: Instance, inst: Instance) -> Optional[Query]:
    """``query`` of ``source`` on ``inst``, by pod and node names (None: a name is missing)."""
    def pair(p):
        return inst.type_index(source.pod_types[p[0]].name), inst.node_index(source.nodes[p[1]].name)
    try:
        return Query(tuple(frozenset(pair(p) for p in alt) for alt in query.alternatives), query.description,
                     tuple(CountTarget(frozenset(pair(p) for p in ct.pairs), ct.at_least) for ct in query.counts))
    except KeyError:
        return None


def _mutations(text: str, inst: Instance, rng: random.Random) -> tuple[str, str]:
    rounds = 1 + (rng.random() < 0.3) + (rng.random() < 0.1)
    ops = []
    for _ in range(rounds):
        if text.lstrip().startswith("{"):
            try:
                data = json.loads(text)
            except json.JSONDecodeError:
                break
            if not isinstance(data, dict) or not _paths(data)[1:]:
                break
            data, op = mutate_json(data, inst, rng)
            text = json.dumps(data)
        else:
            text, op = mutate_text(text, inst, rng)
        ops.append(op)
    return text, "+".join(ops) or "none"


def bounded(phase: str, fn: Callable, *args: Any) -> tuple[Any, Optional[str]]:
    """(``fn(*args)``, None), or (None, why) when it runs past ``2 * HANG_S``: every phase
    of a case (the mutation and re-binding, the checker, the judge) has a time bound
    (seed 301 stalled in the re-binding, outside the checker's alarm)."""
    signal.setitimer(signal.ITIMER_REAL, 2 * HANG_S)
    try:
        return fn(*args), None
    except _Hang:
        return None, f"{phase}: still running after {2 * HANG_S:g} s\n{traceback.format_exc(limit=-3)}"
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)


def run(cases: int, seed: int, pool: Optional[list[Seed]] = None, stats: Optional[Stats] = None,
        judge: Optional[Judge] = None, every: Optional[Callable[[Stats], None]] = None) -> Stats:
    """``every``: called with the counts so far after each 1,000 cases (partial reports)."""
    pool = pool if pool is not None else seeds()
    stats = stats or Stats()
    judge = judge or Judge()
    rng = random.Random(seed)
    for i in range(cases):
        if every is not None and i and i % 1000 == 0:
            every(stats)
        case, hang = bounded("making the case", make_case, pool, rng)
        if case is None:  # the mutation or the re-binding stalled: a hang like the checker's
            stats.cases += 1
            stats.exits[HANG] += 1
            stats.crashes.append({"format": "?", "mutation": "?", "message": hang, "cert": ""})
            stats.crash_kinds[hang.splitlines()[0][:100]] += 1
            continue
        inst, text, question, fmt, op = case
        code, message, loaded = certify_exit(inst, text, question)
        stats.cases += 1
        stats.exits[code] += 1
        stats.by_kind[fmt] += 1
        stats.mutations[op.split("+")[0]] += 1
        if code in (4, HANG):
            stats.crashes.append({"format": fmt, "mutation": op, "message": message[:800], "cert": text[:1500]})
            where = [line.strip() for line in message.splitlines() if line.strip().startswith("File ")]
            stats.crash_kinds[message.splitlines()[0][:100] + (" @ " + where[-1][-90:] if where else "")] += 1
        elif code == 0:
            stats.valid_judged += 1
            try:
                wrong, hang = bounded("judging", judge.false_acceptance, inst, loaded, question)
            except JudgeUnknown as exc:
                wrong, hang = None, str(exc)
            if hang:  # the judge past its caps: neither a true nor a false acceptance
                stats.judge_unknown.append({"format": fmt, "mutation": op, "why": hang[:300], "cert": text[:1500]})
                continue
            if wrong:
                stats.false_accepts.append({"format": fmt, "mutation": op, "why": wrong, "message": message[:300],
                                            "cert": text[:1500], "instance": inst.source})
    return stats


def main(argv: Optional[list[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cases", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--instances", type=int, default=40, help="seeded instances the genuine certificates come from")
    ap.add_argument("--report", help="write the counts as JSON here")
    args = ap.parse_args(argv)
    start = time.monotonic()
    pool = seeds(args.instances)
    kinds = collections.Counter(s.fmt for s in pool)
    print(f"{len(pool)} genuine certificates: {dict(kinds)} ({time.monotonic() - start:.1f} s)", flush=True)
    def report_of(stats: Stats) -> dict:
        return stats.to_json() | {"seed": args.seed, "seconds": round(time.monotonic() - start, 1),
                                  "genuine": dict(kinds)}

    def partial(stats: Stats) -> None:
        if args.report:
            with open(args.report, "w") as fh:
                json.dump(report_of(stats) | {"partial": True}, fh, indent=1)
    stats = run(args.cases, args.seed, pool, every=partial)
    report = report_of(stats)
    print(json.dumps({k: v for k, v in report.items() if not k.endswith("samples")}, indent=1))
    for sample in stats.false_accepts[:3] + stats.crashes[:3]:
        print(json.dumps(sample, indent=1)[:2500])
    if args.report:
        with open(args.report, "w") as fh:
            json.dump(report, fh, indent=1)
    return 0 if not stats.false_accepts and not stats.exits.get(4) and not stats.exits.get(HANG) else 1


if __name__ == "__main__":
    sys.exit(main())
