"""One suite of engine cases that every registered engine runs.

``tests/test_engine_suite.py`` runs it on every engine of the registry
(``registry_configs``: bdd once per fixpoint strategy, ABC's engines where
berkeley-abc is installed); an engine registered but not importable fails
there, it never vanishes. A configuration of one engine can run it too::

    class TestMyEngine(EngineSuite):
        def make_engine(self):
            return MyEngine()

Every deployable verdict's trace is replayed against the executable semantics
here as well (the registry's wrapper already does so; this is the suite's own
check). An engine that is not complete for the suite's cases says so in its
``EngineConfig``: a witness-only engine (BMC) may answer ``unknown`` where the
verdict is not-deployable, a fragment engine (the lazy search) ``unknown``
when it declines, never the wrong verdict.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional

import pytest

from symreach import semantics
from symreach.frontends.reduction_pebbling import encode_pebbling
from symreach.generators.dags import binary_tree, pyramid
from symreach.loader import load_document
from symreach.result import Verdict
from symreach.solvers.base import Limits

HOST = "kubernetes.io/hostname"
PROFILES = ("paper", "kubernetes")
D, N = Verdict.DEPLOYABLE, Verdict.NOT_DEPLOYABLE


def aff(*terms, kind="podAffinity"):
    return {kind: {"requiredDuringSchedulingIgnoredDuringExecution": list(terms)}}


def term(labels, key=HOST):
    return {"labelSelector": {"matchLabels": labels}, "topologyKey": key}


def doc(profile, nodes, types, initial=(), query=None):
    d = {"version": 1, "semantics": profile, "nodes": nodes, "podTypes": types, "initial": list(initial)}
    if query is not None:
        d["query"] = query
    return d


def chain(profile, capacity, query=None, node_name="n"):
    """Paper section 2.6: b needs a, c needs b, one node."""
    return doc(profile, [{"name": node_name, "capacity": {"cpu": str(capacity)}}], [
        {"name": "a", "labels": {"app": "a"}, "requests": {"cpu": "1"}},
        {"name": "b", "labels": {"app": "b"}, "requests": {"cpu": "1"}, "affinity": aff(term({"app": "a"}))},
        {"name": "c", "labels": {"app": "c"}, "requests": {"cpu": "1"}, "affinity": aff(term({"app": "b"}))},
    ], query=query or {"pod": "c", "node": node_name})


@dataclass(frozen=True)
class EngineConfig:
    """How one registered engine runs the suite (module docstring)."""

    id: str
    name: str                                   # its registry name
    options: dict[str, Any] = field(default_factory=dict)
    witness_only: bool = False                  # not-deployable may come out unknown
    declines: Optional[str] = None              # unknown allowed when the reason says this
    limits: Limits = Limits()
    subset: Optional[frozenset[str]] = None     # only these cases (CI cost), None: all


# ABC runs as a process per case (0.2-0.7 s each on this machine): in CI its
# three engines run the cases that exercise each kind of constraint once
ABC_CASES = frozenset({"test_paper_example_capacity_1", "test_paper_example_capacity_2",
                       "test_spread_arithmetic", "test_anti_affinity_symmetry", "test_host_ports",
                       "test_co_occurrence_query"})


# engines that are not complete on the suite's cases, by registry name
PARTIAL = {
    "bmc": dict(witness_only=True, limits=Limits(max_depth=12)),
    "abc-bmc": dict(witness_only=True),
    "lazy": dict(declines="outside the lazy-deletion fragment"),
}


def registry_configs() -> list[Any]:
    """One ``pytest.param(EngineConfig)`` per registered engine (bdd: per strategy).
    ABC's engines are skipped, saying so, where berkeley-abc is not installed."""
    from symreach.solvers.abc import abc_available
    from symreach.solvers.bdd import STRATEGIES
    from symreach.solvers.registry import ENGINES

    params = []
    for name in ENGINES:
        marks = ()
        if name.startswith("abc-") and not abc_available():
            marks = (pytest.mark.skip(reason="berkeley-abc is not installed"),)
        if name == "bdd":
            for strategy in STRATEGIES:
                # the strategies other than the default one run on the BDD fixpoint alone
                options = ({} if strategy == "chaining" else
                           {"strategy": strategy, "fast_paths": False, "dynamic_reorder": True})
                params.append(pytest.param(EngineConfig(f"bdd-{strategy}", name, options), id=f"bdd-{strategy}"))
            continue
        subset = ABC_CASES if name.startswith("abc-") else None
        params.append(pytest.param(EngineConfig(name, name, subset=subset, **PARTIAL.get(name, {})),
                                   id=name, marks=marks))
    return params


class EngineSuite:
    """Mixin: the shared cases. Subclasses define ``make_engine()`` (or set ``config``)."""

    config = EngineConfig("exact", "")

    def make_engine(self):  # pragma: no cover - overridden
        raise NotImplementedError

    def run(self, d):
        inst = load_document(d)
        result = self.make_engine().check(inst, inst.query, self.config.limits)
        if result.verdict is Verdict.DEPLOYABLE:
            semantics.replay(inst, result.trace, inst.query)
        return result

    def expect(self, d, verdict):
        result = self.run(d)
        if result.verdict is Verdict.UNKNOWN:
            allowed = ((self.config.witness_only and verdict is Verdict.NOT_DEPLOYABLE)
                       or (self.config.declines is not None and self.config.declines in result.reason))
            assert allowed, (self.config.id, "unknown", result.reason)
            if verdict is Verdict.DEPLOYABLE:  # the case goes on to read the witness
                pytest.skip(f"{self.config.id} declines: {result.reason}")
            return result
        assert result.verdict is verdict, (result.verdict, result.reason)
        return result

    # ---- paper section 2.6 -------------------------------------------------------
    @pytest.mark.parametrize("profile", PROFILES)
    def test_paper_example_capacity_2(self, profile):
        result = self.expect(chain(profile, 2), D)
        assert [s.op for s in result.trace] == ["deploy", "deploy", "delete", "deploy"]

    @pytest.mark.parametrize("profile", PROFILES)
    def test_paper_example_capacity_1(self, profile):
        self.expect(chain(profile, 1), N)

    # ---- self-affinity bootstrap ----------------------------------------------------
    @pytest.mark.parametrize("profile", PROFILES)
    def test_self_affinity_bootstrap(self, profile):
        nodes = [{"name": "n1", "capacity": {"cpu": "2"}}, {"name": "n2", "capacity": {"cpu": "2"}}]
        types = [{"name": "s", "labels": {"app": "s"}, "requests": {"cpu": "1"},
                  "affinity": aff(term({"app": "s"}))}]
        self.expect(doc(profile, nodes, types, query={"pod": "s", "node": "n2"}), D)
        # s on both nodes at once: the second needs a witness on its own node
        self.expect(doc(profile, nodes, types, query={"pod": "s", "node": "n1",
                                                       "with": [{"pod": "s", "node": "n2"}]}), N)

    @pytest.mark.parametrize("profile", PROFILES)
    def test_bootstrap_per_term_vs_all_terms(self, profile):
        """s needs itself and u on its node: the paper waives the self term alone;
        kubernetes needs one pod matching both terms, which no pod does."""
        nodes = [{"name": "n", "capacity": {"cpu": "3"}}]
        types = [{"name": "s", "labels": {"app": "s"}, "requests": {"cpu": "1"},
                  "affinity": aff(term({"app": "s"}), term({"app": "u"}))},
                 {"name": "u", "labels": {"app": "u"}, "requests": {"cpu": "1"}}]
        self.expect(doc(profile, nodes, types, query={"pod": "s", "node": "n"}),
                    D if profile == "paper" else N)

    @pytest.mark.parametrize("profile", PROFILES)
    def test_missing_topology_key(self, profile):
        """The node lacks the term's key: kubernetes fails outright, the paper's waiver applies."""
        nodes = [{"name": "n", "capacity": {"cpu": "2"}}]
        types = [{"name": "s", "labels": {"app": "s"}, "requests": {"cpu": "1"},
                  "affinity": aff(term({"app": "s"}, key="zone"))}]
        d = doc(profile, nodes, types, query={"pod": "s", "node": "n"})
        if profile == "paper":
            pytest.skip("the paper profile rejects nodes without a topology key as ill-formed")
        self.expect(d, N)

    # ---- spread -------------------------------------------------------------------
    @pytest.mark.parametrize("profile", PROFILES)
    @pytest.mark.parametrize("skew", [1, 2])
    def test_spread_arithmetic(self, profile, skew):
        """Zone b is eligible but web cannot land there, so it stays at 0: zone a may
        hold maxSkew web pods. Two on a1+a2 need maxSkew 2."""
        nodes = [{"name": "a1", "labels": {"zone": "a"}, "capacity": {"cpu": "4"}},
                 {"name": "a2", "labels": {"zone": "a"}, "capacity": {"cpu": "4"}},
                 {"name": "b1", "labels": {"zone": "b"}, "capacity": {"cpu": "4"},
                  "taints": [{"key": "x", "value": "y", "effect": "NoSchedule"}]}]
        web = {"name": "web", "labels": {"app": "web"}, "requests": {"cpu": "1"}, "maxPerNode": 2,
               "topologySpreadConstraints": [{"maxSkew": skew, "topologyKey": "zone",
                                              "whenUnsatisfiable": "DoNotSchedule",
                                              "labelSelector": {"matchLabels": {"app": "web"}}}]}
        if profile == "paper":
            pytest.skip("eligibility from taints policy is a kubernetes-profile rule")
        self.expect(doc(profile, nodes, [web], query={"pod": "web", "node": "a1"}), D)
        self.expect(doc(profile, nodes, [web], query={"pod": "web", "node": "a1",
                                                       "with": [{"pod": "web", "node": "a2"}]}),
                    D if skew == 2 else N)

    @pytest.mark.parametrize("profile", PROFILES)
    def test_spread_counts_other_types(self, profile):
        """api spreads against web pods per host; with two web pods initially on h1 and
        none on h2 (web not creatable), api on h1 needs the h1 web pods deleted."""
        nodes = [{"name": "h1", "capacity": {"cpu": "8"}}, {"name": "h2", "capacity": {"cpu": "8"}}]
        types = [{"name": "web", "labels": {"app": "web"}, "requests": {"cpu": "1"}, "creatable": False,
                  "maxPerNode": 3},
                 {"name": "api", "labels": {"app": "api"}, "requests": {"cpu": "1"}, "maxPerNode": 3,
                  "topologySpreadConstraints": [{"maxSkew": 1, "topologyKey": HOST,
                                                 "whenUnsatisfiable": "DoNotSchedule",
                                                 "labelSelector": {"matchLabels": {"app": "web"}}}]}]
        init = [{"pod": "web", "node": "h1", "count": 2}]
        result = self.expect(doc(profile, nodes, types, init, {"pod": "api", "node": "h1"}), D)
        assert sum(1 for s in result.trace if s.op == "delete") >= 1
        # one web pod may stay on h1 (1 + 0 - 0 <= 1)
        self.expect(doc(profile, nodes, types, init,
                        {"pod": "api", "node": "h1", "with": [{"pod": "web", "node": "h1"}]}), D)

    # ---- anti-affinity symmetry and host ports -----------------------------------
    @pytest.mark.parametrize("profile", PROFILES)
    def test_anti_affinity_symmetry(self, profile):
        """db refuses web on its node. Only kubernetes checks existing pods' anti-affinity."""
        nodes = [{"name": "n", "capacity": {"cpu": "4"}}]
        types = [{"name": "db", "labels": {"app": "db"}, "requests": {"cpu": "1"},
                  "affinity": aff(term({"app": "web"}), kind="podAntiAffinity")},
                 {"name": "web", "labels": {"app": "web"}, "requests": {"cpu": "1"}}]
        q = {"pod": "web", "node": "n", "with": [{"pod": "db", "node": "n"}]}
        self.expect(doc(profile, nodes, types, [{"pod": "db", "node": "n", "count": 1}], q),
                    D if profile == "paper" else N)

    @pytest.mark.parametrize("profile", PROFILES)
    def test_host_ports(self, profile):
        nodes = [{"name": "n", "capacity": {"cpu": "4"}}]
        types = [{"name": "a", "labels": {"app": "a"}, "requests": {"cpu": "1"}, "hostPorts": [{"port": 80}]},
                 {"name": "b", "labels": {"app": "b"}, "requests": {"cpu": "1"}, "hostPorts": [{"port": 80}]}]
        q = {"pod": "a", "node": "n", "with": [{"pod": "b", "node": "n"}]}
        if profile == "paper":
            pytest.skip("host ports are a kubernetes-profile input")
        self.expect(doc(profile, nodes, types, query=q), N)
        self.expect(doc(profile, nodes, types, query={"pod": "a", "node": "n"}), D)

    # ---- query forms -------------------------------------------------------------------
    @pytest.mark.parametrize("profile", PROFILES)
    def test_node_selector_query(self, profile):
        d = chain(profile, 1)
        d["nodes"] = [{"name": "priv", "labels": {"pool": "private"}, "capacity": {"cpu": "1"}},
                      {"name": "pub", "labels": {"pool": "public"}, "capacity": {"cpu": "2"}}]
        d["query"] = {"pod": "c", "nodeSelector": {"pool": "public"}}
        result = self.expect(d, D)
        assert result.trace[-1].node == "pub" and result.trace[-1].pod == "c"
        d["query"] = {"pod": "c", "nodeSelector": {"pool": "private"}}
        self.expect(d, N)

    @pytest.mark.parametrize("profile", PROFILES)
    def test_co_occurrence_query(self, profile):
        q = {"pod": "c", "node": "n", "with": [{"pod": "a", "node": "n"}, {"pod": "b", "node": "n"}]}
        self.expect(chain(profile, 2, q), N)
        self.expect(chain(profile, 3, q), D)

    @pytest.mark.parametrize("profile", PROFILES)
    def test_initially_present_target(self, profile):
        d = chain(profile, 1)
        d["initial"] = [{"pod": "c", "node": "n", "count": 1}]
        result = self.expect(d, D)
        assert result.trace == ()

    @pytest.mark.parametrize("profile", PROFILES)
    def test_non_creatable_types(self, profile):
        d = chain(profile, 2)
        d["podTypes"][1]["creatable"] = False
        self.expect(d, N)
        d["initial"] = [{"pod": "b", "node": "n", "count": 1}]
        result = self.expect(d, D)
        assert all(not (s.op == "deploy" and s.pod == "b") for s in result.trace)

    # ---- pebbling (Appendix C) -------------------------------------------------------
    @pytest.mark.parametrize("h", [2, 3])
    def test_pebbling_pyramid(self, h):
        dag = pyramid(h)
        self.expect(encode_pebbling(dag.vertices, dag.edges, dag.target, h + 1), N)
        result = self.expect(encode_pebbling(dag.vertices, dag.edges, dag.target, h + 2), D)
        assert result.trace[-1].pod.endswith(str(dag.target))

    def test_pebbling_binary_tree(self):
        dag = binary_tree(2)
        self.expect(encode_pebbling(dag.vertices, dag.edges, dag.target, 3), N)
        self.expect(encode_pebbling(dag.vertices, dag.edges, dag.target, 4), D)
