"""Certificates of every kind for seeded tiny instances and every kind of target.

Shared by the ``--why`` rendering test and the certificate fuzzer: each
engine (fast paths on, which yields static-filter, Theorem 5 and
may-be-present certificates, and off) proves not-deployable on random tiny
instances (``tests.random_instances``) for presence, pool, co-occurrence,
count and ``--more`` targets; the certificates come back as the text
``--cert-out`` writes.
"""

from __future__ import annotations

import importlib
import json
import random
from typing import Callable, Iterator, Optional

from symreach.certify.dispatch import KINDS
from symreach.loader import load_document, parse_query
from symreach.model import Instance, Query
from symreach.result import Result, Verdict
from symreach.solvers.base import Limits
from tests.random_instances import random_doc

TARGET_KINDS = ("presence", "pool", "co-occurrence", "count", "more")
# The eight kinds of issue 26 (kinds added later, e.g. gang states, are not generated here).
EIGHT_KINDS = ("symreach-static-filter/1", "symreach-theorem5/1", "symreach-may-fixpoint/1",
               "symreach-explicit-states/1", "symreach-lazy-closure/1", "symreach-bdd-invariant/1",
               "symreach-sat-invariant/1", "symreach-counter-invariant/1")


def certificate_text(cert, inst: Optional[Instance] = None) -> str:
    """The text ``check --cert-out`` writes: bound to ``inst`` where certificates bind."""
    try:
        from symreach.certify.dispatch import as_certificate
    except ImportError:  # before certificates were bound to their instance
        as_certificate = None
    if as_certificate is not None and inst is not None:
        return as_certificate(cert).bind(inst).dumps()
    if isinstance(cert, str):
        return cert
    if hasattr(cert, "dumps"):
        return cert.dumps()
    if hasattr(cert, "to_json"):
        return json.dumps(cert.to_json())
    return json.dumps(cert, default=str)


def limits(counters: str = "off"):
    """20 s, and whether the BDD engine counts interchangeable nodes."""
    try:
        return Limits(timeout_s=20, counters=counters)
    except TypeError:  # the run context carries it (the contract branch's symreach.run)
        run = importlib.import_module("symreach.run")
        return run.RunContext.within(20, counters=counters)


def cert_format(text: str) -> str:
    return json.loads(text)["format"] if text.lstrip().startswith("{") else text.splitlines()[0][2:].strip()


def engines() -> list[tuple[str, Callable[[], object], object]]:
    """(label, factory, limits): every engine that writes its own certificate."""
    from symreach.solvers.bdd import BddEngine
    from symreach.solvers.explicit import ExplicitEngine
    from symreach.solvers.ic3 import Ic3Engine
    from symreach.solvers.lazy_search import LazySearchEngine

    quick = limits("off")
    return [
        ("fast-paths", lambda: Ic3Engine(), quick),
        ("explicit", lambda: ExplicitEngine(), quick),
        ("bdd", lambda: BddEngine(fast_paths=False), quick),
        ("counters", lambda: BddEngine(fast_paths=False), limits("on")),
        ("ic3", lambda: Ic3Engine(fast_paths=False), quick),
        ("lazy", lambda: LazySearchEngine(fast_paths=False), quick),
    ]


def targets(inst: Instance, rng: random.Random) -> Iterator[tuple[str, Query]]:
    """One target of each kind that makes sense on ``inst`` (names drawn by ``rng``)."""
    pods = [t.name for t in inst.pod_types]
    nodes = [n.name for n in inst.nodes]
    pod, node = rng.choice(pods), rng.choice(nodes)
    yield "presence", parse_query(inst, pod, node)
    zone = inst.nodes[0].labels.get("zone")
    if zone is not None:
        yield "pool", parse_query(inst, pod, node_selector={"zone": zone})
    other = rng.choice(pods)
    if other != pod:
        yield "co-occurrence", parse_query(inst, pod, node, with_pairs=[(other, rng.choice(nodes))])
    yield "count", parse_query(inst, pod, node, count=rng.randint(2, 3))
    yield "more", parse_query(inst, pod, node, more=True)


def decide(engine, run, inst: Instance, query: Query) -> Optional[Result]:
    try:
        return engine.check(inst, query, run)
    except Exception:  # an engine that declines this fragment
        return None


def corpus(seeds, profiles=("paper", "kubernetes"), wanted=None) -> Iterator[tuple[str, str, Instance, Query, str, dict]]:
    """(format, target kind, instance, query, certificate text, v1 document) for every
    not-deployable verdict found; ``wanted`` (a set of (format, target kind)) stops early
    once covered."""
    seen: set[tuple[str, str]] = set()
    for seed in seeds:
        rng = random.Random(seed)
        doc = random_doc(seed, rng.choice(profiles))
        inst = load_document(doc)
        for kind, query in targets(inst, rng):
            for _, make, run in engines():
                res = decide(make(), run, inst, query)
                if res is None or res.verdict is not Verdict.NOT_DEPLOYABLE or res.certificate is None:
                    continue
                text = certificate_text(res.certificate, inst)
                fmt = cert_format(text)
                if fmt not in KINDS:
                    continue
                seen.add((fmt, kind))
                yield fmt, kind, inst, query, text, doc
        if wanted is not None and wanted <= seen:
            return
