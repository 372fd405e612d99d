"""Ask the real kube-scheduler (kso) and symreach the same question, node by node.

kso (``shared/tools/kso/kso``) runs the v1.35 Filter plugins on one cluster
state. Starting it costs about 0.1 s, so states are *batched*: many states go
into one kso input, each made invisible to the others by a renaming that the
scheduler cannot see through (``isolate``): every node, namespace and label
key gets a per-state prefix. Label selectors of one state then only reach pods
whose labels carry the same prefix, topology domains only contain nodes of the
same state (other states' nodes lack the prefixed keys), and node names in
``matchFields`` name only the state's own nodes. ``--check-batching`` in
``benchmarks.kso_agreement`` runs states one by one as well and compares.

A verdict is ``None`` (the pod fits) or ``(plugin, reasons)``, kso's first
failing plugin and its reason strings.
"""

from __future__ import annotations

import copy
import json
import os
import subprocess
import tempfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Optional, Sequence

import yaml

from benchmarks.shared_data import SHARED
from symreach import semantics
from symreach.frontends.kubernetes import load_kubernetes_documents
from symreach.generators.k8s_states import State

Verdict = Optional[tuple[str, tuple[str, ...]]]
_ROOT = Path(__file__).resolve().parent.parent
_BATCHED_KINDS = frozenset({"Namespace", "Node", "Pod", "DaemonSet"})
_STANDARD = ("Too many pods", "Insufficient cpu", "Insufficient memory", "Insufficient ephemeral-storage")


def find_kso() -> Optional[Path]:
    """kso beside the repository (``../shared``), then the shared checkout; None when absent."""
    candidates = [SHARED / "tools" / "kso" / "kso", _ROOT.parent / "shared" / "tools" / "kso" / "kso",
                  Path("/work/shared/tools/kso/kso")]
    for path in candidates:
        if path.is_file() and os.access(path, os.X_OK):
            return path
    return None


# ---- isolation of states inside one kso input ---------------------------------------

class _Renamer:
    """The per-state renaming of nodes, namespaces and label keys."""

    def __init__(self, index: int) -> None:
        self.prefix = f"s{index}-"

    def key(self, key: str) -> str:
        return self.prefix + key

    def labels(self, labels: Optional[dict]) -> dict:
        return {self.key(k): v for k, v in (labels or {}).items()}

    def selector(self, selector: Optional[dict]) -> Optional[dict]:
        if selector is None:
            return None
        out = dict(selector)
        if "matchLabels" in out:
            out["matchLabels"] = self.labels(out["matchLabels"])
        if "matchExpressions" in out:
            out["matchExpressions"] = [dict(e, key=self.key(e["key"])) for e in out["matchExpressions"]]
        return out

    def node_term(self, term: dict) -> dict:
        out = dict(term)
        if "matchExpressions" in out:
            out["matchExpressions"] = [dict(e, key=self.key(e["key"])) for e in out["matchExpressions"]]
        if "matchFields" in out:
            out["matchFields"] = [dict(e, values=[self.prefix + v for v in e["values"]]) for e in out["matchFields"]]
        return out

    def pod_term(self, term: dict) -> dict:
        out = dict(term, topologyKey=self.key(term["topologyKey"]))
        for field in ("labelSelector", "namespaceSelector"):
            if field in out:
                out[field] = self.selector(out[field])
        if "namespaces" in out:
            out["namespaces"] = [self.prefix + ns for ns in out["namespaces"]]
        for field in ("matchLabelKeys", "mismatchLabelKeys"):
            if field in out:
                out[field] = [self.key(k) for k in out[field]]
        return out

    def obj(self, obj: dict) -> dict:
        obj = copy.deepcopy(obj)
        meta = obj["metadata"]
        kind = obj["kind"]
        if kind == "Namespace":
            meta["labels"] = self.labels(meta.get("labels"))
            meta["labels"][self.key("kubernetes.io/metadata.name")] = meta["name"]
            meta["name"] = self.prefix + meta["name"]
        elif kind == "Node":
            meta["name"] = self.prefix + meta["name"]
            if "labels" in meta:
                meta["labels"] = self.labels(meta["labels"])
        elif kind == "Pod":
            meta["namespace"] = self.prefix + meta.get("namespace", "default")
            if "labels" in meta:
                meta["labels"] = self.labels(meta["labels"])
            self.pod_spec(obj["spec"])
        return obj

    def pod_spec(self, spec: dict) -> None:
        if spec.get("nodeName"):
            spec["nodeName"] = self.prefix + spec["nodeName"]
        if "nodeSelector" in spec:
            spec["nodeSelector"] = self.labels(spec["nodeSelector"])
        affinity = spec.get("affinity") or {}
        required = (affinity.get("nodeAffinity") or {}).get("requiredDuringSchedulingIgnoredDuringExecution")
        if required:
            required["nodeSelectorTerms"] = [self.node_term(t) for t in required["nodeSelectorTerms"]]
        for kind in ("podAffinity", "podAntiAffinity"):
            part = affinity.get(kind) or {}
            if "requiredDuringSchedulingIgnoredDuringExecution" in part:
                part["requiredDuringSchedulingIgnoredDuringExecution"] = [
                    self.pod_term(t) for t in part["requiredDuringSchedulingIgnoredDuringExecution"]]
        constraints = []
        for c in spec.get("topologySpreadConstraints") or []:
            c = dict(c, topologyKey=self.key(c["topologyKey"]))
            if "labelSelector" in c:
                c["labelSelector"] = self.selector(c["labelSelector"])
            if "matchLabelKeys" in c:
                c["matchLabelKeys"] = [self.key(k) for k in c["matchLabelKeys"]]
            constraints.append(c)
        if constraints:
            spec["topologySpreadConstraints"] = constraints


def isolate(state: State, index: int) -> list[dict]:
    """The state's objects renamed so that they cannot interact with other states' objects."""
    renamer = _Renamer(index)
    return [renamer.obj(o) for o in admitted(state.objects)]


def admitted(objects: list[dict]) -> list[dict]:
    """The objects with a Namespace object for every pod's namespace that lacks one.

    A cluster always has them (NamespaceLifecycle admission refuses a pod in a
    namespace that does not exist); kso, like a fresh API server, would
    otherwise take such a namespace as missing. symreach assumes it exists with
    its ``kubernetes.io/metadata.name`` label only (and marks answers that
    read other namespace labels with a caveat)."""
    have = {o["metadata"]["name"] for o in objects if o["kind"] == "Namespace"}
    used = sorted({o["metadata"].get("namespace") or "default" for o in objects if o["kind"] == "Pod"} - have)
    return list(objects) + [{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}} for ns in used]


# ---- running kso ------------------------------------------------------------------------

def parse_reason(text: str) -> tuple[str, tuple[str, ...]]:
    """``"NodeResourcesFit: Too many pods, Insufficient cpu"`` -> plugin and reasons."""
    plugin, _, rest = text.partition(": ")
    return plugin, tuple(rest.split(", "))


def normalized(verdict: Verdict) -> Verdict:
    """Extended resources are reported in Go map order (random): sort that tail only."""
    if verdict is None:
        return None
    plugin, reasons = verdict
    head = tuple(r for r in reasons if r in _STANDARD or not r.startswith("Insufficient "))
    tail = tuple(sorted(r for r in reasons if r not in head))
    return plugin, head + tail


def _run(kso: Path, text: str) -> list[dict]:
    with tempfile.NamedTemporaryFile("w", suffix=".json" if text.startswith("{") else ".yaml", delete=False) as handle:
        handle.write(text)
        name = handle.name
    try:
        proc = subprocess.run([str(kso), name], capture_output=True, text=True, timeout=600)
    finally:
        os.unlink(name)
    if proc.returncode != 0:
        raise RuntimeError(f"kso failed ({proc.returncode}): {proc.stderr.strip()[-500:]}")   # its error comes last
    data = json.loads(proc.stdout)
    return data if isinstance(data, list) else [data]


def dump(objects: Iterable[dict]) -> str:
    return yaml.safe_dump_all(list(objects), sort_keys=False)


def kso_verdicts(states: Sequence[State], kso: Path, batch: int = 25, workers: int = 6) -> list[dict[str, Verdict]]:
    """kso's verdict for every node of every state (the pending pod of each).

    kso spends about 0.1 s of wall time per pending pod but only a fifth of
    it on a CPU, so batches run in several kso processes at once.
    """
    shared = [i for i, s in enumerate(states) if not has_volume_objects(s)]
    alone = [i for i, s in enumerate(states) if has_volume_objects(s)]
    chunks = [[states[i] for i in shared[k:k + batch]] for k in range(0, len(shared), batch)]
    with ThreadPoolExecutor(max_workers=max(1, workers)) as pool:
        answers = list(pool.map(lambda chunk: _batch(chunk, kso), chunks))
        single = list(pool.map(lambda i: kso_verdicts_single(states[i], kso), alone))
    out: list[dict[str, Verdict]] = [{} for _ in states]
    for i, verdicts in zip(shared, (v for answer in answers for v in answer)):
        out[i] = verdicts
    for i, verdicts in zip(alone, single):
        out[i] = verdicts
    return out


def has_volume_objects(state: State) -> bool:
    """Volume objects are asked about one state per kso run: VolumeZone reads fixed label keys
    (topology.kubernetes.io/zone), which the renaming that isolates batched states would hide."""
    return any(o["kind"] not in _BATCHED_KINDS for o in state.objects)


def _batch(chunk: Sequence[State], kso: Path) -> list[dict[str, Verdict]]:
    objects: list[dict] = []
    for k, state in enumerate(chunk):
        objects += isolate(state, k)
    results = {r["pod"]: r for r in _run(kso, json.dumps({"apiVersion": "v1", "kind": "List", "items": objects}))}
    out = []
    for k, state in enumerate(chunk):
        ns, name = state.pending.split("/", 1)
        out.append(_per_node(results[f"s{k}-{ns}/{name}"], state.nodes, f"s{k}-"))
    return out


def kso_verdicts_single(state: State, kso: Path) -> dict[str, Verdict]:
    """kso on the state alone (no renaming), for checking the batching."""
    results = {r["pod"]: r for r in _run(kso, dump(admitted(state.objects)))}
    return _per_node(results[state.pending], state.nodes, "")


def kso_pending(objects: Sequence[list[dict]], pods: Sequence[list[str]], nodes: Sequence[list[str]], kso: Path,
                workers: int = 3) -> list[dict[str, dict[str, Verdict]]]:
    """kso on each object list alone: the verdicts of the named pending pods on the named nodes."""
    def one(k: int) -> dict[str, dict[str, Verdict]]:
        results = {r["pod"]: r for r in _run(kso, dump(objects[k]))}
        return {pod: _per_node(results[pod], nodes[k], "") for pod in pods[k]}

    with ThreadPoolExecutor(max_workers=max(1, workers)) as pool:
        return list(pool.map(one, range(len(objects))))


def _per_node(result: dict, nodes: Sequence[str], prefix: str) -> dict[str, Verdict]:
    feasible = set(result.get("feasible") or [])
    reasons = result.get("reasons") or {}
    verdicts: dict[str, Verdict] = {}
    for node in nodes:
        full = prefix + node
        if full in feasible:
            verdicts[node] = None
        elif full in reasons:
            verdicts[node] = parse_reason(reasons[full])
        else:
            raise RuntimeError(f"kso says nothing about node {full}")
    return verdicts


# ---- symreach's side -----------------------------------------------------------------

def symreach_verdicts(state: State) -> dict[str, Verdict]:
    """symreach's first failing plugin for the pending pod on every node, in the loaded σ0."""
    return symreach_answer(state)[0]


def symreach_answer(state: State) -> tuple[dict[str, Verdict], list[str]]:
    """``symreach_verdicts`` and the caveats on the pending pod's type."""
    inst, report = load_kubernetes_documents(copy.deepcopy(state.objects), "<state>")
    name = report.pending.get(state.pending, state.pending)
    return verdicts_at(inst, inst.type_index(name), inst.initial_config(), state.nodes), list(report.caveats.get(name, []))


def verdicts_at(inst, t: int, sigma, nodes: Optional[Sequence[str]] = None) -> dict[str, Verdict]:
    """symreach's first failing plugin for type t on each node (default: all) in configuration sigma."""
    out: dict[str, Verdict] = {}
    for node in nodes if nodes is not None else [n.name for n in inst.nodes]:
        failure = semantics.node_failure(inst, t, inst.node_index(node), sigma)
        out[node] = None if failure is None else (failure.plugin, failure.reasons)
    return out


@dataclass(frozen=True)
class Disagreement:
    state: int
    node: str
    kso: Verdict
    symreach: Verdict

    @property
    def fit(self) -> bool:
        """True when the fit verdicts themselves differ (not only the reason)."""
        return (self.kso is None) != (self.symreach is None)

    @property
    def cls(self) -> str:
        def name(v: Verdict) -> str:
            return "fits" if v is None else f"{v[0]}: {', '.join(v[1])}"
        return f"kso [{name(self.kso)}] vs symreach [{name(self.symreach)}]"


def compare(index: int, kso: dict[str, Verdict], ours: dict[str, Verdict]) -> list[Disagreement]:
    return [Disagreement(index, node, kso[node], ours[node]) for node in kso
            if normalized(kso[node]) != normalized(ours[node])]


def state_yaml(state: State) -> str:
    return dump(state.objects)


def any_state(objects: list[dict[str, Any]], pending: str) -> State:
    """A State from hand-written objects (regression tests)."""
    nodes = [o["metadata"]["name"] for o in objects if o["kind"] == "Node"]
    return State(objects, pending, nodes)
