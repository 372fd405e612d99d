"""Allocation walks: DRA devices that a witness's steps allocate and free, asked of the kso variant.

A walk starts from a random DRA state (``generators.k8s_dra_states``) with more
pods wanting devices: bare pending pods with claims of their own or shared, and
sometimes a Deployment whose pods take claims from a ResourceClaimTemplate. It
takes up to ``steps`` random moves that the semantics allows, among pods using
claims: deploying a pending pod (or a new pod of the Deployment; where the
scheduler's order of pools and slices decides which devices it takes, one of
those outcomes at random), deleting a running one. After each move the state reached is written as the cluster would
hold it: the pods on their nodes, each claim's ``status.allocation`` as the
group state says the scheduler wrote it (a node-local device pins the node; a
slice's selector otherwise) with ``reservedFor`` its running pods, a claim
deallocated when its last pod went, the Deployment's pods with the claims
generated for them. Then every claim-using pod type that could be scheduled
next (its pending pod; a new pod of the Deployment, its claim created and
unallocated) is asked of the variant, node by node, and compared with
``semantics.node_failure`` on the configuration reached.
"""

from __future__ import annotations

import copy
import random
import re
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Optional

from benchmarks.kso_dra_verdicts import Ours, agrees, judged, kso_error, ours_for
from benchmarks.kso_harness import admitted, kso_pending
from symreach import semantics
from symreach.frontends.kubernetes import load_kubernetes_documents
from symreach.generators.k8s_dra_states import API, MESSAGE_ERRORS, SELECTORS, dra_state
from symreach.generators.k8s_states import State
from symreach.model import Config, Instance

WORK = "work"          # the Deployment whose pods take claims from a template
PODS = "pods of "


@dataclass
class Walk:
    """One walk's input and the states it reached (objects, pending pod -> its type)."""

    objects: list[dict]
    nodes: list[str]
    states: list[tuple[list[dict], dict[str, str], Config]] = field(default_factory=list)
    instance: Optional[Instance] = None
    choices: int = 0   # deletions that chose among pods holding different devices
    deploy_choices: int = 0   # deployments that chose among the devices the scheduler's orders give


def walk_input(rng: random.Random, index: int, errors: bool = False) -> tuple[list[dict], list[str]]:
    """A DRA state with more claim users: 1-2 bare pending pods, sometimes a Deployment. ``errors``:
    some GPUs lose the numa attribute and some requests read it (a CEL runtime error there: the
    scheduler aborts the pod's cycle where that node passes every earlier filter)."""
    state = dra_state(rng, index, plain=True)   # admin access is not written back
    objects = copy.deepcopy(state.objects)
    if errors:
        for o in objects:
            if o["kind"] == "ResourceSlice" and o["spec"]["driver"] == "gpu.example.com":
                for d in o["spec"].get("devices", []):
                    if rng.random() < 0.35:
                        d.get("attributes", {}).pop("numa", None)
    ns = state.pending.split("/", 1)[0]
    shared = [o["metadata"]["name"] for o in objects if o["kind"] == "ResourceClaim" and not
              o["metadata"].get("ownerReferences") and not o["metadata"].get("deletionTimestamp")]
    for j in range(rng.choice((1, 2))):
        name = f"extra{j}"
        entries = [{"name": "g", "resourceClaimName": f"{name}-c"}]
        objects.append({"apiVersion": API, "kind": "ResourceClaim", "metadata": {"name": f"{name}-c", "namespace": ns},
                        "spec": {"devices": {"requests": [_simple(rng, errors)]}}})
        if shared and rng.random() < 0.3:
            entries.append({"name": "s", "resourceClaimName": rng.choice(shared)})
        objects.append({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": ns, "uid": f"uid-{name}"},
                        "spec": {"containers": [{"name": "c", "image": "x"}], "resourceClaims": entries}})
    if rng.random() < 0.6:
        objects.append({"apiVersion": API, "kind": "ResourceClaimTemplate", "metadata": {"name": "wtmpl", "namespace": ns},
                        "spec": {"spec": {"devices": {"requests": [_simple(rng, errors)]}}}})
        objects.append({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": WORK, "namespace": ns},
                        "spec": {"replicas": 1, "selector": {"matchLabels": {"app": WORK}}, "template": {
                            "metadata": {"labels": {"app": WORK}},
                            "spec": {"containers": [{"name": "c", "image": "x"}],
                                     "resourceClaims": [{"name": "g", "resourceClaimTemplateName": "wtmpl"}]}}}})
    return objects, list(state.nodes)


def _simple(rng: random.Random, errors: bool = False) -> dict:
    """A request that allocates often: one or two devices of an existing class, sometimes All,
    sometimes a GPU selector (``errors``: sometimes one reading numa, or one of ``MESSAGE_ERRORS``,
    whose error text Go's random map order or a pointer picks) or a prioritized list."""
    if rng.random() < 0.1:
        return {"name": "r", "firstAvailable": [{"name": "big", "deviceClassName": "gpu", "count": 2},
                                                 {"name": "one", "deviceClassName": "nic", "count": 1}]}
    cls = rng.choice(("gpu", "gpu", "nic", "any"))
    body: dict = {"deviceClassName": cls}
    if rng.random() < 0.15:
        body["allocationMode"] = "All"
    else:
        body["count"] = rng.choice((1, 1, 2))
    if cls == "gpu" and rng.random() < 0.3:
        body["selectors"] = [{"cel": {"expression": rng.choice(SELECTORS["gpu.example.com"])}}]
    elif cls == "gpu" and errors and rng.random() < 0.4:   # a missing attribute, or an error Go's map order words
        numa = 'device.attributes["gpu.example.com"].numa == 0'
        body["selectors"] = [{"cel": {"expression": rng.choice([numa, numa] + MESSAGE_ERRORS)}}]
    return {"name": "r", "exactly": body}


def walk(objects: list[dict], nodes: list[str], rng: random.Random, steps: int) -> Walk:
    """Random moves among claim users; the Kubernetes objects of each state reached."""
    out = Walk(objects, nodes)
    inst, report = load_kubernetes_documents(copy.deepcopy(objects), "<walk>")
    out.instance = inst
    users = sorted(inst.binding_of) if any(g.holders for g in inst.binding_groups) else []
    if not users:
        return out
    world = _World(inst, report, objects)
    sigma = inst.initial_config()
    for _ in range(steps):
        moves = [("deploy", t, n) for t in users for n in range(len(inst.nodes))
                 if world.may_deploy(t, sigma) and semantics.deploy_failure(inst, t, n, sigma) is None]
        moves += [("delete", t, n) for t in users for n in range(len(inst.nodes))
                  if sigma[inst.pair(t, n)] and semantics.delete_failure(inst, sigma, t, n) is None]
        if not moves:
            break
        op, t, n = rng.choice(moves)
        if op == "deploy":   # the scheduler's order of pools and slices may decide the devices: one of them
            outcomes = semantics.deploys(inst, sigma, t, n)
            out.deploy_choices += len(outcomes) > 1
            after = rng.choice(outcomes)[1] if len(outcomes) > 1 else outcomes[0][1]
        else:   # pods there may hold different devices: the deletion names one holding
            choices = semantics.deletions(inst, sigma, t, n)
            out.choices += len(choices) > 1
            after = rng.choice(choices)[1]
        world.step(op, t, n, sigma, after)
        sigma = after
        out.states.append((world.objects(sigma), world.pending(sigma), sigma))
    return out


class _World:
    """The cluster's objects following the semantics' configuration and allocation state."""

    def __init__(self, inst: Instance, report, objects: list[dict]) -> None:
        self.inst = inst
        self.base = copy.deepcopy(objects)
        self.ns = next((o["metadata"]["namespace"] for o in objects if o["kind"] == "Deployment"
                        and o["metadata"]["name"] == WORK), "")
        self.type_of_pod = dict(report.pending) | dict(report.attachments)
        self.placed: dict[str, str] = {}          # pod "ns/name" -> node (moved by the walk)
        self.gone: set[str] = set()               # pods the walk deleted
        self.work: dict[str, tuple[str, str]] = {}   # Deployment pod name -> (node, its holding entry)
        self.made = 0
        group = next(g for g in inst.binding_groups if g.holders)
        self.group = group
        self.slots = [inst.bindings[b].claim for b in group.claims]

    def type_name(self, t: int) -> str:
        return self.inst.pod_types[t].name

    def may_deploy(self, t: int, sigma: Config) -> bool:
        """A bare pending pod runs once; a Deployment's type any number of times."""
        if self.type_name(t).endswith("/" + WORK):
            return True
        pods = [p for p, name in self.type_of_pod.items() if name == self.type_name(t)]
        return any(p not in self.placed and not self._running_in_input(p) for p in pods) or \
            any(p in self.gone for p in pods)

    def _running_in_input(self, pod: str) -> bool:
        return any(o["kind"] == "Pod" and _key(o) == pod and o["spec"].get("nodeName") for o in self.base)

    def _values(self, sigma: Config) -> list[Optional[str]]:
        s = semantics.group_state(self.inst, sigma, self.inst.binding_of[next(iter(self.group.users))])
        out = []
        for b, e in zip(self.group.claims, self.group.states[s]):
            binding = self.inst.bindings[b]
            value = binding.initial if e == 0 else binding.outcomes[e - 1]
            out.append(None if value == "(unallocated)" else value)
        return out

    def step(self, op: str, t: int, n: int, before: Config, after: Config) -> None:
        name, node = self.type_name(t), self.inst.nodes[n].name
        if name.endswith("/" + WORK):
            if op == "deploy":
                self.made += 1
                self.work[f"{WORK}-{self.made}"] = (node, "")
            else:
                del self.work[next(p for p, (m, _) in self.work.items() if m == node)]
        else:
            pod = next(p for p, tn in self.type_of_pod.items() if tn == name)
            if op == "deploy":
                self.placed[pod] = node
                self.gone.discard(pod)
            else:
                self.gone.add(pod)
                self.placed.pop(pod, None)
        work = PODS + f"{self.ns}/{WORK}"
        if work in self.slots:   # holdings are canonical, any step may rename them: hand them out again
            now = _entries(self._values(after)[self.slots.index(work)])
            left = {m: [e for e in now if e.partition(": ")[0] == m] for m in {m for m, _ in self.work.values()}}
            for p, (m, _) in sorted(self.work.items()):
                self.work[p] = (m, left[m].pop(0) if left[m] else f"{m}: ")

    def objects(self, sigma: Config) -> list[dict]:
        values = self._values(sigma)
        out = []
        running: dict[str, list[str]] = {}    # claim "ns/name" -> pods reserving it
        pods = []
        for o in copy.deepcopy(self.base):
            if o["kind"] == "Deployment" and o["metadata"]["name"] == WORK:
                continue
            if o["kind"] == "Pod":
                key = _key(o)
                if key in self.gone:
                    continue
                if key in self.placed:
                    o["spec"]["nodeName"] = self.placed[key]
                pods.append(o)
            out.append(o)
        for name, (node, entry) in self.work.items():
            pod = _work_pod(name, self.ns, node)
            pods.append(pod)
            out += [pod, self._work_claim(name, self.ns, entry)]
        for pod in pods:
            if pod["spec"].get("nodeName"):
                for claim in _claims_of(pod):
                    running.setdefault(claim, []).append(pod["metadata"]["name"])
        gone_claims = {f"{_key(o).split('/')[0]}/{c}" for o in self.base if o["kind"] == "Pod" and _key(o) in self.gone
                       for c in _owned(o)}
        final = []
        for o in out:
            if o["kind"] != "ResourceClaim":
                final.append(o)
                continue
            key = _key(o)
            if key in gone_claims:
                continue   # a deleted pod's own claim goes with it
            if key in self.slots:   # devices of a kind are renamed canonically: every slot as the state says
                value = values[self.slots.index(key)]
                status = o.setdefault("status", {})
                status.pop("allocation", None)
                if value is not None:
                    status["allocation"] = self._allocation(value, o, True)
            reserved = running.get(key, [])
            if (o.get("status") or {}).get("allocation") is not None or reserved:
                o.setdefault("status", {})["reservedFor"] = [
                    {"resource": "pods", "name": p, "uid": _uid(out, key.split("/")[0], p)} for p in reserved]
            final.append(o)
        return final

    def pending(self, sigma: Config) -> dict[str, str]:
        """Pending pod "ns/name" -> its type, for every claim user that could be scheduled next."""
        out = {}
        for pod, name in self.type_of_pod.items():
            t = self.inst.type_ids.get(name)
            if t is not None and t in self.inst.binding_of and pod not in self.placed and pod not in self.gone \
                    and not self._running_in_input(pod):
                out[pod] = name
        work = f"{self.ns}/{WORK}"
        if self.ns and work in self.inst.type_ids:
            out[f"{self.ns}/{WORK}-next"] = work
        return out

    def _work_claim(self, pod: str, ns: str, entry: Optional[str]) -> dict:
        template = next(o for o in self.base if o["kind"] == "ResourceClaimTemplate" and o["metadata"]["name"] == "wtmpl")
        claim = {"apiVersion": API, "kind": "ResourceClaim",
                 "metadata": {"name": f"{pod}-g", "namespace": ns, "ownerReferences": [
                     {"apiVersion": "v1", "kind": "Pod", "name": pod, "uid": f"uid-{pod}", "controller": True}]},
                 "spec": copy.deepcopy(template["spec"]["spec"])}
        if entry is not None and entry.partition(": ")[2]:
            claim["status"] = {"allocation": self._allocation(entry, claim)}
        return claim

    def _allocation(self, value: str, claim: dict, claim_slot: bool = False) -> dict:
        """``status.allocation`` from an outcome ``<where>: driver/pool/device, ...`` (``k8s_dra_state``). A claim
        slot's ``where`` is a node only when its allocation pins one (``k8s_dra_state._where``; the input's
        allocations always do): pinned back so; a pod slot's is the pod's node."""
        where, _, devices = value.partition(": ")
        requests = (claim.get("spec") or {}).get("devices", {}).get("requests") or [{"name": "r"}]
        results = []
        for d in devices.split(", ") if devices else []:
            driver, pool, device = d.split("/")
            results.append({"request": _request_name(requests[0]), "driver": driver, "pool": pool, "device": device})
        out: dict = {"devices": {"results": results}}
        node_names = {o["metadata"]["name"] for o in self.base if o["kind"] == "Node"}
        if where in node_names and (claim_slot or self._pinned(results)):
            out["nodeSelector"] = {"nodeSelectorTerms": [{"matchFields": [
                {"key": "metadata.name", "operator": "In", "values": [where]}]}]}
        elif where != "every node":
            selector = self._slice_selector(results)
            if selector is not None:
                out["nodeSelector"] = selector
        return out

    def _slices_of(self, results: list[dict]) -> list[dict]:
        out = []
        for r in results:
            for o in self.base:
                spec = o.get("spec") or {}
                if o["kind"] == "ResourceSlice" and spec.get("driver") == r["driver"] and \
                        (spec.get("pool") or {}).get("name") == r["pool"] and \
                        any(d.get("name") == r["device"] for d in spec.get("devices") or []):
                    out.append(spec)
        return out

    def _pinned(self, results: list[dict]) -> bool:
        """A device of a node-local slice, or one a per-device-node-selection slice puts on a node (the input's
        allocations carry that pin: the walk must write it back so)."""
        devices = {r["device"] for r in results}
        return any(s.get("nodeName") or any(d.get("nodeName") for d in s.get("devices") or [] if d.get("name") in devices)
                   for s in self._slices_of(results))

    def _slice_selector(self, results: list[dict]) -> Optional[dict]:
        for s in self._slices_of(results):
            if s.get("nodeSelector") is not None:
                return copy.deepcopy(s["nodeSelector"])
        return None


def _request_name(request: dict) -> str:
    if request.get("firstAvailable"):
        return f"{request['name']}/{request['firstAvailable'][0].get('name')}"
    return str(request.get("name"))


def _entries(value: Optional[str]) -> list[str]:
    return value.split(" | ") if value and value != "(unallocated)" else []


def _key(o: dict) -> str:
    return f"{o['metadata'].get('namespace') or 'default'}/{o['metadata']['name']}"


def _uid(objects: list[dict], ns: str, pod: str) -> str:
    for o in objects:
        if o["kind"] == "Pod" and _key(o) == f"{ns}/{pod}":
            return str(o["metadata"].get("uid") or f"uid-{pod}")
    return f"uid-{pod}"


def _claims_of(pod: dict) -> list[str]:
    ns = pod["metadata"].get("namespace") or "default"
    out = []
    statuses = {s.get("name"): s.get("resourceClaimName") for s in (pod.get("status") or {}).get("resourceClaimStatuses") or []}
    for e in pod["spec"].get("resourceClaims") or []:
        name = e.get("resourceClaimName") or statuses.get(e.get("name"))
        if name:
            out.append(f"{ns}/{name}")
    return out


def _owned(pod: dict) -> list[str]:
    statuses = (pod.get("status") or {}).get("resourceClaimStatuses") or []
    return [s["resourceClaimName"] for s in statuses if s.get("resourceClaimName")]


def _work_pod(name: str, ns: str, node: Optional[str]) -> dict:
    pod = {"apiVersion": "v1", "kind": "Pod",
           "metadata": {"name": name, "namespace": ns, "uid": f"uid-{name}", "labels": {"app": WORK}},
           "spec": {"containers": [{"name": "c", "image": "x"}],
                    "resourceClaims": [{"name": "g", "resourceClaimTemplateName": "wtmpl"}]},
           "status": {"resourceClaimStatuses": [{"name": "g", "resourceClaimName": f"{name}-g"}]}}
    if node:
        pod["spec"]["nodeName"] = node
    return pod


def with_next_work_pod(objects: list[dict], ns: str) -> list[dict]:
    """The objects and a new pending pod of the Deployment with its claim created, unallocated."""
    name = f"{WORK}-next"
    claim = {"apiVersion": API, "kind": "ResourceClaim",
             "metadata": {"name": f"{name}-g", "namespace": ns, "ownerReferences": [
                 {"apiVersion": "v1", "kind": "Pod", "name": name, "uid": f"uid-{name}", "controller": True}]},
             "spec": copy.deepcopy(next(o for o in objects if o["kind"] == "ResourceClaimTemplate"
                                        and o["metadata"]["name"] == "wtmpl")["spec"]["spec"])}
    return objects + [_work_pod(name, ns, None), claim]


@dataclass(frozen=True)
class Asked:
    """One node verdict of a walked state: the variant's, symreach's (in the variant's shape: an aborted
    cycle is the error on every node, ``kso_dra_verdicts``), the input allocation's, and whether the
    variant's is another run's outcome that symreach lists (the random order of pools and slices)."""

    state: int
    pod: str
    node: str
    kso: object
    symreach: object
    static: object
    other: bool = False
    blocked: bool = False   # symreach: the pod would fit but for the abort
    patterned: bool = False   # kso's text agrees only by a marked reason's pattern (``reasons.marked_reason``)


def walk_verdicts(rng: random.Random, walks: int, steps: int, kso, workers: int, errors: bool = False,
                  counts: Optional[dict] = None
                  ) -> tuple[list[list[dict]], list[Asked]]:
    """Run the walks; every state reached (its objects) and every node verdict asked there.
    ``counts`` gets ``choices``: deletions among pods holding different devices, and ``deploy choices``:
    deployments among several outcomes (picked at random, the state written is the one picked)."""
    asked: list[tuple] = []
    for i in range(walks):
        w = walk(*walk_input(rng, i, errors), rng, steps)
        if counts is not None:
            counts["choices"] = counts.get("choices", 0) + w.choices
            counts["deploy choices"] = counts.get("deploy choices", 0) + w.deploy_choices
        for state, pending, sigma in w.states:
            if not pending:
                continue
            ns = next((p.split("/")[0] for p in pending if p.endswith(f"/{WORK}-next")), None)
            asked.append((w, admitted(with_next_work_pod(state, ns) if ns else state), pending, sigma))
    with ThreadPoolExecutor(max_workers=max(1, workers)) as pool:
        answers = list(pool.map(lambda a: _kso_each(a[1], list(a[2]), a[0].nodes, kso), asked))
    answers = [{pod: {node: _unnamed(v) for node, v in got.items()} for pod, got in theirs.items()} for theirs in answers]
    rows = []
    for k, ((w, objects, pending, sigma), theirs) in enumerate(zip(asked, answers)):
        inst = w.instance
        before = tuple(sigma[:inst.num_pairs]) + (0,) * (len(sigma) - inst.num_pairs)   # the input's allocation
        for pod, type_name in pending.items():
            t = inst.type_index(type_name)
            reported = next(iter(theirs[pod].values()), None)
            ours = _unnamed_ours(ours_for(inst, t, sigma, State(objects, pod, w.nodes), [], reported))
            left = {d.node for d in judged(theirs[pod], ours, k)[0]}
            by_text = {d.node for d in judged(theirs[pod], ours, k, True)[0]} - left
            for node, verdict in theirs[pod].items():
                n = inst.node_index(node)
                own = agrees(ours.verdicts[node], verdict)
                rows.append(Asked(k, pod, node, verdict, ours.verdicts[node],
                                  _verdict(semantics.node_failure(inst, t, n, before)),
                                  not own and node not in left, node in ours.blocked, node in by_text))
    return [a[1] for a in asked], rows


def _kso_each(objects: list[dict], pods: list[str], nodes: list[str], kso) -> dict[str, dict]:
    """The variant's verdicts for each pending pod; it stops on an allocator error, so then each pod is
    asked alone (the others left out), an error being that error on every node."""
    try:
        return kso_pending([objects], [pods], [nodes], kso, 1)[0]
    except RuntimeError as exc:
        if len(pods) == 1:
            error = kso_error(str(exc))
            return {pods[0]: {node: error for node in nodes}}
    out = {}
    for pod in pods:
        alone = [o for o in objects if not (o["kind"] == "Pod" and _key(o) in pods and _key(o) != pod
                                            and not o["spec"].get("nodeName"))]
        out[pod] = kso_error_of(pod, alone, nodes, kso)
    return out


def kso_error_of(pod: str, objects: list[dict], nodes: list[str], kso) -> dict:
    try:
        return kso_pending([objects], [[pod]], [nodes], kso, 1)[0][pod]
    except RuntimeError as exc:
        error = kso_error(str(exc))
        return {node: error for node in nodes}


def _unnamed(verdict):
    """An error naming the new Deployment pod's claim in symreach's words: the resourceclaim controller
    names a generated claim ``<pod>-<entry>-<random>``, which a pod template's type cannot know, so
    symreach says "(not created yet, from a ResourceClaimTemplate)"; the walk named it ``work-next-g``."""
    if verdict is None:
        return verdict
    return (verdict[0], (_unnamed_text(verdict[1][0]),) + tuple(verdict[1][1:]))


def _unnamed_text(text: str) -> str:
    return re.sub(rf"claim [^ ]+/{WORK}-next-g", "claim (not created yet, from a ResourceClaimTemplate)", text)


def _unnamed_ours(ours: Ours) -> Ours:
    """symreach's other runs' outcomes (``Ours.possible``, ``Ours.errors``) in the words kso's answer is put
    in (``_unnamed``): they come from the objects written for kso (``kso_dra_verdicts.pod_orders``), which
    name the new pod's claim ``work-next-g``, so an abort on another order's error would otherwise not
    match kso's renamed one."""
    ours.possible = {node: {_unnamed(v) for v in outcomes} for node, outcomes in ours.possible.items()}
    ours.errors = {_unnamed_text(e) for e in ours.errors}
    return ours


def _verdict(failure) -> object:
    return None if failure is None else (failure.plugin, failure.reasons)
