"""The loader's results never change when it gets faster.

Two guards:

* a corpus (fixtures, v1 examples, random documents, generated clusters,
  Appendix B encodings of small nets) whose loaded ``Instance`` is rendered
  canonically and hashed; the digests in ``data/loader_digests.json`` were
  computed with the straightforward (slow) loader. Regenerate them only when a
  result is *meant* to change:

      python -m tests.test_loader_equivalence --regenerate

* an oracle: the straightforward resolution loops (every term against every
  pod type, every pod type against every node), kept here and compared with
  the loader on random documents with rich selectors.
"""

from __future__ import annotations

import hashlib
import json
import random
import sys
from pathlib import Path
from typing import Callable, Iterator, Optional

import pytest

from symreach.errors import InputError
from symreach.loader.labels import IN, NOT_IN, label_key_requirements, static_reason
from symreach.loader import load_document
from symreach.loader.kube_objects import HONOR
from symreach.loader.v1 import parse_document, thaw
from symreach.loader.yaml_source import read_file
from symreach.model import ANY_HOST_IP, KUBERNETES, Instance, Topology
from tests.random_instances import random_doc
from benchmarks.shared_data import PETRI_DIR

ROOT = Path(__file__).resolve().parent.parent
DATA = Path(__file__).parent / "data"
DIGESTS = DATA / "loader_digests.json"
PETRI = PETRI_DIR
SMALL_NETS = ("ERK-PT-000001", "Sudoku-PT-AN01", "ResAllocation-PT-R002C002", "Eratosthenes-PT-010")
RANDOM_SEEDS = range(300)
RICH_SEEDS = range(150)
CLUSTERS = ((3, 4, 1, True), (3, 4, 2, True), (12, 10, 1, False), (30, 25, 2, False), (80, 40, 3, False),
            (150, 60, 4, False), (400, 120, 5, False))


# ---- canonical rendering -------------------------------------------------------

# Index sets are rendered in iteration order, not sorted: engines iterate them,
# so even the order of a frozenset must not change (ints hash deterministically).
def _topology(t: Topology) -> list:
    return [t.key, list(t.domain_of), [list(m) for m in t.members], list(t.values)]


def render(instance: Instance) -> dict:
    """Every field of the instance as JSON data: mapping and set iteration order kept (host ports sorted)."""
    def pairs(mapping) -> list:
        return [[list(k), v] for k, v in mapping.items()]

    def term(term) -> list:
        out = [list(term.selects), _topology(term.topology)]
        if term.existing_selects is not None:
            out.append(list(term.existing_selects))
        return out

    def spread(s) -> list:
        return [list(s.counts), s.self_match, s.max_skew, s.min_domains, list(s.eligible), _topology(s.topology)]

    out = {
        "profile": instance.profile,
        "source": instance.source,
        "nodes": [
            [n.name, list(n.labels.items()), list(n.capacity.items()),
             [[t.key, t.value, t.effect] for t in n.taints], n.unschedulable]
            for n in instance.nodes
        ],
        "pod_types": [
            {
                "name": p.name, "namespace": p.namespace, "labels": list(p.labels.items()),
                "requests": list(p.requests.items()), "creatable": p.creatable,
                "host_ports": sorted([h.port, h.protocol] + ([h.host_ip] if h.host_ip != ANY_HOST_IP else [])
                                     for h in p.host_ports),
                "affinity": [term(t) for t in p.affinity], "anti_affinity": [term(t) for t in p.anti_affinity],
                "spread": [spread(s) for s in p.spread], "max_per_node": p.max_per_node, "origin": p.origin,
                "manifest": None if p.manifest is None else thaw(p.manifest),
            }
            for p in instance.pod_types
        ],
        "static_block": [list(row) for row in instance.static_block],
        "initial": pairs(instance.initial),
        "multiplicity_bound": pairs(instance.multiplicity_bound),
        "namespaces": [[k, list(v.items())] for k, v in instance.namespaces.items()],
        "query": None if instance.query is None else [
            [list(map(list, alt)) for alt in instance.query.alternatives], instance.query.description],
    }
    if instance.query is not None and instance.query.counts:  # absent before count targets existed
        out["query"].append([[sorted(map(list, ct.pairs)), ct.at_least] for ct in instance.query.counts])
    if instance.groups or instance.group_target:  # absent before pod groups existed
        out["groups"] = [[g.name, [list(m) for m in g.members], g.policy, g.min_count, g.parent, g.composite,
                          g.rejected] for g in instance.groups] + [instance.group_target]
    return out


def digest(doc: object, filename: str = "<memory>", lines=None) -> str:
    """sha256 of the rendered instance, or of the error message when loading fails."""
    try:
        instance = load_document(doc, filename=filename, lines=lines)
    except InputError as err:
        text = json.dumps({"error": str(err)})
    else:
        check_shared_topologies(instance)
        text = json.dumps(render(instance), separators=(",", ":"), ensure_ascii=True)
    return hashlib.sha256(text.encode()).hexdigest()


def check_shared_topologies(instance: Instance) -> None:
    """One Topology object per key (engines rely on identity for caching)."""
    seen: dict[str, Topology] = {}
    for p in instance.pod_types:
        for t in [*p.affinity, *p.anti_affinity, *p.spread]:
            assert seen.setdefault(t.topology.key, t.topology) is t.topology


# ---- the corpus ----------------------------------------------------------------

def corpus() -> Iterator[tuple[str, Callable[[], str]]]:
    """(case name, thunk computing its digest)."""
    files = sorted((DATA / "loader").glob("*.yaml")) + sorted((DATA / "loader").glob("*.json"))
    for path in files + sorted((ROOT / "examples").glob("*.yaml")):
        def load_file(path=path) -> Optional[str]:
            try:
                data, lines = read_file(path)
            except InputError as err:
                # The message names the file; keep the digest independent of the checkout's location.
                message = str(err).replace(str(path), path.relative_to(ROOT).as_posix())
                return hashlib.sha256(json.dumps({"error": message}).encode()).hexdigest()
            if not isinstance(data, dict) or data.get("version") != 1:
                return None  # not a v1 instance (e.g. a kubectl dump)
            return digest(data, filename=path.relative_to(ROOT).as_posix(), lines=lines)
        yield f"file:{path.relative_to(ROOT).as_posix()}", load_file
    for seed in RANDOM_SEEDS:
        yield f"random:{seed}", lambda seed=seed: digest(random_doc(seed))
    for seed in RICH_SEEDS:
        yield f"rich:{seed}", lambda seed=seed: digest(rich_doc(seed))
    from symreach.generators.clusters import generate_cluster
    for nodes, types, seed, small in CLUSTERS:
        yield (f"cluster:{nodes}x{types}:{seed}:{small}",
               lambda a=(nodes, types, seed, small): digest(generate_cluster(*a)))
    if PETRI.is_dir():
        from symreach.frontends.petri_net import read_net
        from symreach.frontends.reduction_petri import encode_petri
        for name in SMALL_NETS:
            path = PETRI / f"{name}.pnml"
            if not path.exists():
                continue
            net = read_net(path)
            for goal in dict.fromkeys((net.places[0], net.places[-1])):
                yield f"petri:{name}:{goal}", lambda net=net, goal=goal: digest(encode_petri(net, goal))


def compute_digests() -> dict[str, Optional[str]]:
    return {name: thunk() for name, thunk in corpus()}


def test_loader_matches_golden_digests():
    golden = json.loads(DIGESTS.read_text())
    current = compute_digests()
    missing = sorted(set(golden) - set(current))
    # The Petri nets live outside the repository; everything else must be there.
    assert not [m for m in missing if not m.startswith("petri:")], missing
    changed = sorted(name for name in current if name in golden and current[name] != golden[name])
    assert not changed, f"loader results changed for {len(changed)} case(s): {changed[:10]}"
    new = sorted(set(current) - set(golden))
    assert not new, f"cases without a golden digest (regenerate deliberately): {new[:10]}"


# ---- the oracle: straightforward resolution ------------------------------------

def oracle(doc: dict) -> dict:
    """selects / counts / self_match / eligible / static_block by brute force over the parsed document."""
    d = parse_document(doc)
    kube = d.profile == KUBERNETES

    def select(selector, namespaces):
        return sorted(u for u, pod in enumerate(d.pod_types)
                      if (namespaces is None or pod.namespace in namespaces) and selector.matches(pod.labels))

    def term(owner, t, running=False):
        """As the pending owner's term, or (``running``) as a running owner's term."""
        selector = t.selector.with_requirements(
            label_key_requirements(t.match_label_keys, owner.labels, IN)
            + label_key_requirements(t.mismatch_label_keys, owner.labels, NOT_IN))
        namespaces = None
        if kube:
            ns_selector = t.namespace_selector
            if not t.namespaces and ns_selector is None:
                namespaces = {owner.namespace}
            elif not running and ns_selector is not None and ns_selector.requirements and ns_selector.matches({}):
                namespaces = None  # kube-scheduler v1.35 matches a pending pod's selector against no labels
            else:
                namespaces = set(t.namespaces)
                if ns_selector is not None:
                    namespaces |= {ns for ns, labels in d.namespaces.items() if ns_selector.matches(labels)}
        return select(selector, namespaces)

    def static(p, n):
        reason = static_reason(p.placement, n)
        if not kube or p.placement.node_affinity is None or not p.placement.node_affinity.terms:
            return reason
        names = set()  # NodeAffinity's PreFilter: matchFields metadata.name In, in every term
        for node_term in p.placement.node_affinity.terms:
            ins = [set(r.values) for r in node_term.field_requirements if r.operator == IN]
            if not ins:
                return reason
            names |= set.intersection(*ins)
        if not names:
            return "pod affinity terms conflict"
        return reason if n.name in names else "node(s) didn't satisfy plugin(s) [NodeAffinity]"

    def spread(owner, s):
        selector = s.selector.with_requirements(label_key_requirements(s.match_label_keys, owner.labels, IN))
        if kube and (selector.nothing or selector.is_empty()):
            counts = []
        else:
            counts = select(selector, {owner.namespace} if kube else None)
        keys = {c.topology_key for c in owner.spread}
        eligible = [
            n for n, node in enumerate(d.nodes)
            if all(k in node.labels for k in keys)
            and (s.node_affinity_policy != HONOR or owner.placement.matches_node_affinity(node))
            and (s.node_taints_policy != HONOR or owner.placement.tolerates_taints(node))
        ]
        return [counts, selector.matches(owner.labels), eligible]

    return {
        "affinity": [[term(p, t) for t in p.affinity.pod_affinity] for p in d.pod_types],
        "anti": [[term(p, t) for t in p.affinity.pod_anti_affinity] for p in d.pod_types],
        "blocks": [[term(p, t, running=True) for t in p.affinity.pod_anti_affinity] for p in d.pod_types],
        "spread": [[spread(p, s) for s in p.spread] for p in d.pod_types],
        "static": [[static(p, n) for n in d.nodes] for p in d.pod_types],
    }


def observed(instance: Instance) -> dict:
    return {
        "affinity": [[sorted(t.selects) for t in p.affinity] for p in instance.pod_types],
        "anti": [[sorted(t.selects) for t in p.anti_affinity] for p in instance.pod_types],
        "blocks": [[sorted(t.blocks) for t in p.anti_affinity] for p in instance.pod_types],
        "spread": [[[sorted(s.counts), s.self_match, sorted(s.eligible)] for s in p.spread]
                   for p in instance.pod_types],
        "static": [list(row) for row in instance.static_block],
    }


KEYS = ("app", "tier", "zone", "role", "")
VALUES = ("a", "b", "c", "", "1")


def _requirements(rng: random.Random, operators=("In", "NotIn", "Exists", "DoesNotExist")) -> list[dict]:
    out = []
    for _ in range(rng.randint(0, 3)):
        op = rng.choice(operators)
        expr = {"key": rng.choice(KEYS[:4]), "operator": op}
        if op in ("In", "NotIn"):
            expr["values"] = rng.sample(VALUES, rng.randint(1, 3))
        elif op in ("Gt", "Lt"):
            expr["values"] = [str(rng.randint(-1, 2))]
        out.append(expr)
    return out


def _label_selector(rng: random.Random) -> Optional[dict]:
    roll = rng.random()
    if roll < 0.08:
        return None
    body: dict = {}
    if rng.random() < 0.6:
        body["matchLabels"] = {rng.choice(KEYS[:4]): rng.choice(VALUES) for _ in range(rng.randint(0, 2))}
    if rng.random() < 0.6:
        body["matchExpressions"] = _requirements(rng)
    return body


def _labels(rng: random.Random) -> dict:
    return {k: rng.choice(VALUES) for k in KEYS[:4] if rng.random() < 0.5}


def rich_doc(seed: int) -> dict:
    """A random document stressing selectors: every operator, empty values, label keys, namespaces."""
    rng = random.Random(f"rich:{seed}")
    kube = rng.random() < 0.7
    nodes = []
    for i in range(rng.randint(1, 8)):
        node: dict = {"name": f"n{i}", "labels": _labels(rng), "capacity": {"cpu": "4", "pods": 20}}
        if rng.random() < 0.3:
            node["taints"] = [{"key": rng.choice(KEYS[:4]), "value": rng.choice(VALUES[:2]),
                               "effect": rng.choice(["NoSchedule", "NoExecute", "PreferNoSchedule"])}]
        if rng.random() < 0.1:
            node["unschedulable"] = True
        if not kube:
            node["labels"].update({"zone": "z", "kubernetes.io/hostname": f"n{i}"})
        nodes.append(node)
    namespaces = [{"name": "default"}, {"name": "other", "labels": {"team": "x"}}, {"name": "third"}]
    types = []
    n_types = rng.randint(1, 12)
    for i in range(n_types):
        t: dict = {"name": f"t{i}", "labels": _labels(rng), "requests": {"cpu": "1"}}
        if kube and rng.random() < 0.4:
            t["namespace"] = rng.choice(["default", "other", "third", "fresh"])
        if rng.random() < 0.3:
            t["nodeSelector"] = {rng.choice(KEYS[:4]): rng.choice(VALUES)}
        if rng.random() < 0.2:
            t["nodeName"] = rng.choice(nodes)["name"]
        if rng.random() < 0.3:
            t["tolerations"] = [{"key": rng.choice(KEYS[:4]), "operator": "Exists"}]
        if rng.random() < 0.2:
            t["tolerations"] = t.get("tolerations", []) + [{"operator": "Exists", "effect": "NoSchedule"}]
        affinity: dict = {}
        if rng.random() < 0.3:
            terms = [{"matchExpressions": _requirements(rng, ("In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"))}
                     for _ in range(rng.randint(0, 2))]
            if rng.random() < 0.3 and terms:
                terms[0]["matchFields"] = [{"key": "metadata.name", "operator": rng.choice(["In", "NotIn"]),
                                            "values": [rng.choice(nodes)["name"]]}]
            affinity["nodeAffinity"] = {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": terms}}
        for kind in ("podAffinity", "podAntiAffinity"):
            if rng.random() < 0.6:
                terms = []
                for _ in range(rng.randint(1, 3)):
                    term: dict = {"labelSelector": _label_selector(rng),
                                  "topologyKey": rng.choice(["kubernetes.io/hostname", "zone"])}
                    if term["labelSelector"] is not None and rng.random() < 0.3:
                        keys = rng.sample(KEYS[:4], 2)
                        term["matchLabelKeys"] = [keys[0]]
                        if rng.random() < 0.5:
                            term["mismatchLabelKeys"] = [keys[1]]
                    if kube and rng.random() < 0.3:
                        term["namespaces"] = rng.sample(["default", "other", "fresh"], rng.randint(1, 2))
                    if kube and rng.random() < 0.3:
                        term["namespaceSelector"] = rng.choice([{}, {"matchLabels": {"team": "x"}}, {
                            "matchExpressions": [{"key": "kubernetes.io/metadata.name", "operator": "NotIn",
                                                  "values": ["default"]}]}])
                    terms.append(term)
                affinity[kind] = {"requiredDuringSchedulingIgnoredDuringExecution": terms}
        if affinity:
            t["affinity"] = affinity
        if rng.random() < 0.4:
            constraint: dict = {"maxSkew": rng.randint(1, 2), "topologyKey": rng.choice(["zone", "kubernetes.io/hostname"]),
                                "whenUnsatisfiable": "DoNotSchedule", "labelSelector": _label_selector(rng)}
            if constraint["labelSelector"] is not None and rng.random() < 0.3:
                used = {r["key"] for r in constraint["labelSelector"].get("matchExpressions", [])}
                used |= set(constraint["labelSelector"].get("matchLabels", {}))
                free = [k for k in KEYS[:4] if k not in used]
                if free:
                    constraint["matchLabelKeys"] = [rng.choice(free)]
            for policy in ("nodeAffinityPolicy", "nodeTaintsPolicy"):
                if rng.random() < 0.4:
                    constraint[policy] = rng.choice(["Honor", "Ignore"])
            t["topologySpreadConstraints"] = [constraint]
        types.append(t)
    doc = {"version": 1, "semantics": "kubernetes" if kube else "paper", "nodes": nodes, "podTypes": types}
    if kube:
        doc["namespaces"] = namespaces
    return doc


@pytest.mark.parametrize("source", ["random", "rich"])
def test_resolution_matches_brute_force_oracle(source):
    checked = 0
    for seed in range(300 if source == "random" else 400):
        doc = random_doc(seed) if source == "random" else rich_doc(seed)
        try:
            instance = load_document(doc)
        except InputError:
            continue
        assert observed(instance) == oracle(doc), f"{source} seed {seed}"
        checked += 1
    assert checked > 100


def main() -> None:
    if sys.argv[1:] != ["--regenerate"]:
        raise SystemExit("usage: python -m tests.test_loader_equivalence --regenerate")
    digests = compute_digests()
    DIGESTS.write_text(json.dumps(digests, indent=1, sort_keys=True) + "\n")
    print(f"wrote {len(digests)} digests to {DIGESTS}")


if __name__ == "__main__":
    main()
