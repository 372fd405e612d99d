"""Witness traces as files a person or a cluster can use.

Formats:

- ``json``: ``[{"op", "pod", "node", "name"}, ...]``: ``check --json``'s steps with the
  pod each one creates or deletes (``namespace/name``).
- ``yaml``: a YAML stream, in trace order, of Pod manifests (deployments);
  each deletion is a comment-only document (``# step 3: delete ...`` with its
  ``kubectl delete`` command), so ``kubectl apply -f`` accepts the file (it
  creates the pods; the ``kubectl`` format replays the steps in order).
- ``kubectl``: a bash script that replays the trace on a real cluster:
  ``kubectl apply`` of a generated Pod (named ``<type>-<k>``) per deployment,
  ``kubectl delete pod`` per deletion.
- ``text``: the steps narrated, with the affinity witness of each deployment
  and the node's use after it.

Every format, and ``check``'s text, names the pod of each step the same way
(``plan_trace``): a deployment creates ``<type>-<k>``; a deletion removes the
pod of that type on that node created last, else an initial pod, by its real
name when the front end knows it (Kubernetes dumps) and otherwise by a
deterministic ``<type>-initial-<k>`` that says it stands for an unnamed pod.

Pinning. A trace says which node each pod lands on. ``spec.nodeName`` would
bypass the kube-scheduler altogether (the kubelet admits the pod without
checking affinity, spread or taints), which proves nothing, so by default the
pod is pinned with required node affinity ``matchFields metadata.name In
[node]`` ANDed into its own node affinity: the scheduler can only choose that
node and must still pass every other filter. With the default
``nodeAffinityPolicy: Honor`` such a pin would shrink a topology-spread
constraint's eligible nodes to one node, so spread constraints of pinned pods
get ``nodeAffinityPolicy: Ignore``, which is exact when the type has no node
selection of its own (otherwise the header says that spread is approximated).
``pin="nodeName"`` writes ``spec.nodeName`` instead.

``parse_exported_trace`` reads the ``yaml``, ``kubectl`` and ``json`` formats
back into steps, so round trips can be checked.
"""

from __future__ import annotations

import functools
import json
import re
import shlex
from collections.abc import Mapping
from typing import Iterable, Optional, Sequence

from symreach import semantics
from symreach.records import record
from symreach.report.narrate import affinity_witnesses
from symreach.model import ANY_HOST_IP, Instance, PodType
from symreach.result import DELETE, DEPLOY, Step

FORMATS = ("json", "yaml", "kubectl", "text")
PARSEABLE_FORMATS = ("json", "yaml", "kubectl")
PINS = ("affinity", "nodeName")
SCRIPT_MARKER = "symreach kubectl script v2"   # export.kubectl_script's second line

PAUSE_IMAGE = "registry.k8s.io/pause:3.10"
CONTAINER_NAME = "main"
TYPE_ANNOTATION = "symreach.io/pod-type"
NODE_ANNOTATION = "symreach.io/node"
STEP_ANNOTATION = "symreach.io/step"
BINDS_ANNOTATION = "symreach.io/binds"
DELETION_KIND = "PodDeletion"
NODE_NAME_FIELD = "metadata.name"
_OVERCOMMITTABLE = ("cpu", "memory", "ephemeral-storage")
_STEP_COMMENT = re.compile(r"#\s*step\s+(\d+):\s*(deploy|delete)\s+(\S+)\s+on\s+(\S+)(?:\s+\(pod\s+\S+\))?")
_DNS_LABEL = re.compile(r"[^a-z0-9.-]+")


@record
class PlannedStep:
    """One step with the concrete pod it creates or deletes."""

    index: int                   # 1-based
    step: Step
    namespace: str
    pod_name: Optional[str]      # None: an initial pod whose name is unknown
    from_initial: bool           # a deletion of a pod of the initial configuration
    labels: Mapping[str, str]
    manifest: Optional[dict]     # deployments only
    shown_name: str = ""         # pod_name, or the stand-in of an unnamed initial pod

    @property
    def qualified(self) -> str:
        """``namespace/name`` of the pod this step creates or deletes, as every format shows it."""
        return f"{self.namespace}/{self.shown_name or self.pod_name}"


# ---- planning -------------------------------------------------------------------

def plan_trace(trace: Sequence[Step], instance: Instance, *,
               initial_pod_names: Optional[Mapping[tuple[str, str], Sequence[str]]] = None,
               pin: str = "affinity",
               initial_holdings: Optional[Mapping[tuple[str, str], str]] = None) -> list[PlannedStep]:
    """Give every deployment a unique pod name and every deletion a concrete victim.

    A deletion removes the pod of that type on that node created last in the
    trace, else one of the initial configuration (by name when
    ``initial_pod_names``, e.g. from the Kubernetes front end's report, knows it).
    A deletion naming a holding (``Step.holding``) removes a pod holding that: a created
    pod's holding is the one whose deletion undoes its deployment (``semantics.deletions``),
    an initial pod's is ``initial_holdings`` (type, name) -> holding.
    """
    if pin not in PINS:
        raise ValueError(f"unknown pin {pin!r}; expected one of {', '.join(PINS)}")
    names = dict(initial_pod_names or {})
    live: dict[tuple[str, str], list[tuple[Optional[str], bool, str]]] = {}
    taken: set[tuple[str, str]] = set()
    for (t, n), count in instance.initial.items():
        key = (instance.pod_types[t].name, instance.nodes[n].name)
        known = list(names.get(key, ()))[:count]
        live[key] = [(name, False, name) for name in known] + [(None, False, "")] * (count - len(known))
        taken.update((instance.pod_types[t].namespace, name) for name in known)
    for key, pods in names.items():
        ns = _type(instance, key[0]).namespace if _has_type(instance, key[0]) else ""
        taken.update((ns, name) for name in pods)
    stand_ins: dict[str, int] = {}
    for (t, n) in sorted(instance.initial):  # deterministic stand-ins for the unnamed initial pods
        key = (instance.pod_types[t].name, instance.nodes[n].name)
        live[key] = [(None, False, _fresh_name(instance.pod_types[t], stand_ins, taken, "-initial"))
                     if name is None else (name, mine, shown) for name, mine, shown in live[key]]
    counters: dict[str, int] = {}
    out: list[PlannedStep] = []
    held = {shown: (initial_holdings or {}).get((step_pod, name or ""))
            for (step_pod, _), pods in live.items() for name, _, shown in pods}
    sigma = instance.initial_config() if any(s.holding for s in trace) else None
    for i, step in enumerate(trace, start=1):
        pod_type = _type(instance, step.pod)
        _node_index(instance, step.node)
        key = (step.pod, step.node)
        if step.op == DEPLOY:
            name = _fresh_name(pod_type, counters, taken)
            live.setdefault(key, []).append((name, True, name))
            if sigma is not None:
                sigma, held[name] = _deployed(instance, sigma, step)
            manifest = pod_manifest(pod_type, name, step.node, pin=pin, step=i)
            if step.binds is not None:   # which PV the scheduler took (``Step.binds``), read back below
                manifest["metadata"]["annotations"][BINDS_ANNOTATION] = step.binds
            out.append(PlannedStep(i, step, pod_type.namespace, name, False, dict(pod_type.labels), manifest,
                                   name))
        elif step.op == DELETE:
            pods = live.get(key) or []
            if not pods:
                raise ValueError(f"step {i} deletes a pod of {step.pod} on {step.node}, but none runs there")
            holding = [j for j, (_, _, shown) in enumerate(pods) if held.get(shown) == step.holding]
            pods_held = holding if step.holding and holding else list(range(len(pods)))
            created = [j for j in pods_held if pods[j][1]]
            name, mine, shown = pods.pop(created[-1] if created else pods_held[-1])
            if sigma is not None:
                sigma = semantics.delete(instance, sigma, instance.type_index(step.pod),
                                         instance.node_index(step.node), step.holding)
            out.append(PlannedStep(i, step, pod_type.namespace, name, not mine, dict(pod_type.labels), None,
                                   shown))
        else:
            raise ValueError(f"step {i}: unknown operation {step.op!r}")
    return out


def _deployed(instance: Instance, sigma, step: Step):
    """The configuration after a deployment and what its pod holds: the holding whose deletion gives
    ``sigma`` back (None when none does: its pods are alike)."""
    t, n = instance.type_index(step.pod), instance.node_index(step.node)
    after = semantics.deploy_step(instance, sigma, step)
    return after, next((h for h, back in semantics.deletions(instance, after, t, n) if back == sigma), None)


def _has_type(instance: Instance, name: str) -> bool:
    return any(t.name == name for t in instance.pod_types)


def _type(instance: Instance, name: str) -> PodType:
    try:
        return instance.pod_types[instance.type_index(name)]
    except KeyError:
        raise ValueError(f"the trace names pod type {name!r}, which the instance does not have") from None


def _node_index(instance: Instance, name: str) -> int:
    try:
        return instance.node_index(name)
    except KeyError:
        raise ValueError(f"the trace names node {name!r}, which the instance does not have") from None


def _fresh_name(pod_type: PodType, counters: dict[str, int], taken: set[tuple[str, str]], tag: str = "") -> str:
    base = pod_name_base(pod_type.name) + tag
    while True:
        counters[pod_type.name] = counters.get(pod_type.name, 0) + 1
        name = f"{base}-{counters[pod_type.name]}"
        if (pod_type.namespace, name) not in taken:
            taken.add((pod_type.namespace, name))
            return name


def pod_name_base(type_name: str) -> str:
    """A DNS-1123 name stem from a type name: ``shop/web`` -> ``web``, ``ns/ds@node-1`` -> ``ds-node-1``."""
    stem = type_name.split("/", 1)[-1].lower()
    stem = _DNS_LABEL.sub("-", stem).strip("-.") or "pod"
    return stem[:200]


# ---- manifests ----------------------------------------------------------------------

def plain(value: object) -> object:
    """FrozenDicts and tuples (as the loader stores manifests) to dicts and lists."""
    if isinstance(value, Mapping):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    return value


def _amount(resource: str, value: int) -> object:
    from symreach.frontends.k8s_requests import format_amount

    return format_amount(resource, value)


def _human(resource: str, value: int) -> str:
    """Amounts for people: ``1.5`` cpu, ``7.5Gi`` memory."""
    if resource == "cpu":
        return f"{value / 1000:g}"
    if resource in ("memory", "ephemeral-storage") and value >= 2**20:
        return f"{value / 2**30:.2f}Gi" if value >= 2**30 else f"{value / 2**20:.0f}Mi"
    return str(value)


def pod_manifest(pod_type: PodType, name: str, node: str, *, pin: str = "affinity",
                 step: Optional[int] = None) -> dict:
    """A Pod for one deployment of ``pod_type`` on ``node``, from the type's original fields."""
    fields = plain(pod_type.manifest) if pod_type.manifest is not None else {}
    assert isinstance(fields, dict)
    labels = fields.get("labels") or dict(pod_type.labels)
    requests = fields.get("requests") or {k: _amount(k, v) for k, v in sorted(pod_type.requests.items())}
    container: dict = {"name": CONTAINER_NAME, "image": PAUSE_IMAGE}
    if requests:
        resources: dict = {"requests": dict(requests)}
        # Extended resources and hugepages cannot be overcommitted: limits must equal requests.
        limits = {k: v for k, v in requests.items() if k not in _OVERCOMMITTABLE}
        if limits:
            resources["limits"] = limits
        container["resources"] = resources
    ports = fields.get("hostPorts")
    if ports is None:
        ports = [{"port": p.port, "protocol": p.protocol, "hostIP": p.host_ip}
                 for p in sorted(pod_type.host_ports, key=lambda p: (p.port, p.protocol, p.host_ip))]
    if ports:
        container["ports"] = [_container_port(p) for p in ports]
    spec: dict = {"containers": [container]}
    for key in ("nodeSelector", "tolerations", "affinity", "topologySpreadConstraints", "nodeName"):
        if fields.get(key):
            spec[key] = fields[key]
    annotations = {TYPE_ANNOTATION: pod_type.name, NODE_ANNOTATION: node}
    if step is not None:
        annotations[STEP_ANNOTATION] = str(step)
    metadata: dict = {"name": name, "namespace": pod_type.namespace}
    if labels:
        metadata["labels"] = dict(labels)
    metadata["annotations"] = annotations
    if pin == "nodeName":
        spec["nodeName"] = node
    else:
        _pin_by_affinity(spec, node)
    return {"apiVersion": "v1", "kind": "Pod", "metadata": metadata, "spec": spec}


def _pin_by_affinity(spec: dict, node: str) -> None:
    requirement = {"key": NODE_NAME_FIELD, "operator": "In", "values": [node]}
    affinity = spec.setdefault("affinity", {})
    node_affinity = affinity.setdefault("nodeAffinity", {})
    required = node_affinity.get("requiredDuringSchedulingIgnoredDuringExecution") or {}
    terms = [t for t in required.get("nodeSelectorTerms") or [] if isinstance(t, dict)]
    if not terms:
        terms = [{}]
    pinned = []
    for term in terms:
        term = dict(term)
        fields = [r for r in term.get("matchFields") or [] if r != requirement]
        term["matchFields"] = fields + [requirement]
        pinned.append(term)
    node_affinity["requiredDuringSchedulingIgnoredDuringExecution"] = {"nodeSelectorTerms": pinned}
    for constraint in spec.get("topologySpreadConstraints") or []:
        if isinstance(constraint, dict) and constraint.get("whenUnsatisfiable", "DoNotSchedule") == "DoNotSchedule":
            constraint["nodeAffinityPolicy"] = "Ignore"


def _spread_approximated(pod_type: PodType, pin: str) -> bool:
    """Whether pinning changes the eligible nodes of the type's spread constraints."""
    if pin != "affinity" or not pod_type.spread or pod_type.manifest is None:
        return False
    fields = plain(pod_type.manifest)
    assert isinstance(fields, dict)
    own_affinity = ((fields.get("affinity") or {}).get("nodeAffinity") or {}).get(
        "requiredDuringSchedulingIgnoredDuringExecution")
    return bool(fields.get("nodeSelector") or own_affinity)


# ---- formats --------------------------------------------------------------------------

def export_trace(trace: Sequence[Step], instance: Instance, fmt: str, *,
                 initial_pod_names: Optional[Mapping[tuple[str, str], Sequence[str]]] = None,
                 pin: str = "affinity", initial_holdings: Optional[Mapping[tuple[str, str], str]] = None) -> str:
    """The trace in format ``fmt`` (one of ``FORMATS``), as text ending in a newline."""
    if fmt not in FORMATS:
        raise ValueError(f"unknown trace format {fmt!r}; expected one of {', '.join(FORMATS)}")
    planned = plan_trace(trace, instance, initial_pod_names=initial_pod_names, pin=pin,
                         initial_holdings=initial_holdings)
    if fmt == "json":
        return json.dumps([{**p.step.to_json(), "name": p.qualified} for p in planned], indent=2) + "\n"
    if fmt == "yaml":
        return _yaml_stream(planned, instance, pin)
    if fmt == "kubectl":
        return _kubectl_script(planned, instance, pin)
    return _narrate(planned, instance)


def _caveats(planned: Sequence[PlannedStep], instance: Instance, pin: str, controllers_handled: bool = False
             ) -> list[str]:
    notes = []
    types = {p.step.pod for p in planned if p.step.op == DEPLOY}
    missing = sorted(t for t in types if _type(instance, t).manifest is None)
    if missing:
        notes.append("these pod types carry no original fields, so their affinity, tolerations and spread "
                     "are missing from the manifests: " + ", ".join(missing))
    approx = sorted(t for t in types if _spread_approximated(_type(instance, t), pin))
    if approx:
        notes.append("pinning by node affinity changes which nodes count for the topology spread of: "
                     + ", ".join(approx))
    if pin == "nodeName":
        notes.append("pods are pinned with spec.nodeName, which bypasses the kube-scheduler: nothing but "
                     "the kubelet's admission checks these placements")
    if controllers_handled:   # export.kubectl_script: owned pods, scaled controllers
        return notes
    if any(p.labels for p in planned if p.step.op == DEPLOY):
        notes.append("the pods created here carry their workload's labels, so a ReplicaSet or StatefulSet "
                     "whose selector matches them may adopt (and scale away) them; pause such controllers "
                     "or replay in a copy of the namespaces")
    if any(p.from_initial for p in planned):
        notes.append("deleting a pod that a controller owns makes the controller create a replacement; "
                     "scale the workload down first if it must stay gone")
    return notes


def header_lines(planned: Sequence[PlannedStep], instance: Instance, pin: str,
                 controllers_handled: bool = False) -> list[str]:
    """The comment lines every script and stream starts with: what the trace is, how pods are
    pinned, and what the replay cannot reproduce (``controllers_handled``: the script itself
    keeps controllers from adopting or replacing pods, so those notes are left out)."""
    deploys = sum(1 for p in planned if p.step.op == DEPLOY)
    lines = [f"symreach witness trace: {len(planned)} steps ({deploys} deployments, "
             f"{len(planned) - deploys} deletions) from the initial configuration of {instance.source}"]
    if pin == "affinity":
        lines.append("Each pod is pinned to its node by required node affinity on metadata.name, so the")
        lines.append("kube-scheduler still applies every other filter to it.")
    lines += [f"Note: {note}" for note in _caveats(planned, instance, pin, controllers_handled)]
    return lines


@functools.cache
def _no_alias_dumper() -> type:
    import yaml  # imported on use: PyYAML costs more start-up than a small check

    class NoAliasDumper(yaml.SafeDumper):
        """Manifests share label dicts; anchors (``&id001``) would confuse readers and tools."""

        def ignore_aliases(self, data: object) -> bool:
            return True
    return NoAliasDumper


def dump_manifest(data: object) -> str:
    import yaml

    return yaml.dump(data, Dumper=_no_alias_dumper(), sort_keys=False, default_flow_style=False)


def _delete_command(p: PlannedStep) -> str:
    ns = shlex.quote(p.namespace)
    if p.pod_name:
        return f"kubectl delete pod -n {ns} {shlex.quote(p.pod_name)} --wait=true"
    selector = ",".join(f"{k}={v}" for k, v in sorted(p.labels.items()))
    query = f"kubectl get pods -n {ns} --field-selector spec.nodeName={shlex.quote(p.step.node)}"
    if selector:
        query += f" -l {shlex.quote(selector)}"
    return f'kubectl delete -n {ns} --wait=true "$({query} -o name | head -n 1)"'


def _yaml_stream(planned: Sequence[PlannedStep], instance: Instance, pin: str) -> str:
    header = header_lines(planned, instance, pin)
    header.append("Deletions are comments (kubectl apply -f only creates the pods); to replay the steps")
    header.append("in order use the kubectl script format (trace format kubectl).")
    parts = ["".join(f"# {line}\n" for line in header)]
    for p in planned:
        comment = f"# {step_comment(p)}\n"
        if p.step.op == DEPLOY:
            body = dump_manifest(p.manifest)
        else:
            origin = " (running from the start)" if p.from_initial else ""
            body = f"# {_delete_command(p)}{origin}\n"
        parts.append("---\n" + comment + body)
    return "".join(parts)


def step_comment(p: PlannedStep) -> str:
    """``step 3: delete web on wk-1 (pod shop/web-2)``: the line both parsers read back."""
    return f"step {p.index}: {p.step.op} {p.step.pod} on {p.step.node} (pod {p.qualified})"


def step_names(trace: Sequence[Step], instance: Instance,
               initial_pod_names: Optional[Mapping[tuple[str, str], Sequence[str]]] = None,
               initial_holdings: Optional[Mapping[tuple[str, str], str]] = None) -> list[str]:
    """``namespace/name`` of the pod each step creates or deletes, as the export formats name them."""
    return [p.qualified for p in plan_trace(trace, instance, initial_pod_names=initial_pod_names,
                                            initial_holdings=initial_holdings)]


def _kubectl_script(planned: Sequence[PlannedStep], instance: Instance, pin: str) -> str:
    out = ["#!/usr/bin/env bash"]
    out += [f"# {line}" for line in header_lines(planned, instance, pin)]
    out += ["set -euo pipefail", ""]
    for p in planned:
        ns = shlex.quote(p.namespace)
        out.append(f"# {step_comment(p)}")
        if p.step.op == DEPLOY:
            out.append("kubectl apply -f - <<'EOF'")
            out.append(dump_manifest(p.manifest).rstrip("\n"))
            out.append("EOF")
            if pin == "affinity":
                out.append(f"kubectl wait --for=condition=PodScheduled --timeout=120s -n {ns} "
                           f"pod/{shlex.quote(str(p.pod_name))}")
        else:
            out.append(_delete_command(p))
        out.append("")
    return "\n".join(out)


# ---- narration --------------------------------------------------------------------------

def _narrate(planned: Sequence[PlannedStep], instance: Instance) -> str:
    sigma = list(instance.initial_config())
    pods = sum(sigma)
    lines = [f"Witness: {len(planned)} steps from the initial configuration "
             f"({pods} pods on {len(instance.nodes)} nodes)."]
    for p in planned:
        t = instance.type_index(p.step.pod)
        n = instance.node_index(p.step.node)
        if p.step.op == DEPLOY:
            why = _affinity_witnesses(instance, sigma, t, n)
            sigma[instance.pair(t, n)] += 1
            text = f"deploy {p.step.pod} on {p.step.node} as {p.qualified}"
            if why:
                text += f"; its pod affinity is met by {why}"
        else:
            sigma[instance.pair(t, n)] -= 1
            origin = ", running from the start" if p.from_initial else ""
            text = f"delete {p.qualified} ({p.step.pod}{origin}) from {p.step.node}"
        lines.append(f"{p.index:3d}. {text}")
        lines.append(f"     {p.step.node} now uses {_usage(instance, sigma, n)}")
    if planned:
        last = planned[-1].step
        lines.append(f"Target reached: {last.pod} runs on {last.node}." if last.op == DEPLOY
                     else "End of trace.")
    return "\n".join(lines) + "\n"


def _affinity_witnesses(instance: Instance, sigma: Sequence[int], t: int, n: int) -> str:
    return ", ".join(w.removeprefix("affinity witness ") for w in affinity_witnesses(instance, t, n, sigma))


def _usage(instance: Instance, sigma: Sequence[int], n: int) -> str:
    node = instance.nodes[n]
    used: dict[str, int] = {}
    pods = 0
    for t, pod_type in enumerate(instance.pod_types):
        count = sigma[instance.pair(t, n)]
        if not count:
            continue
        pods += count
        for resource, amount in pod_type.requests.items():
            used[resource] = used.get(resource, 0) + amount * count
    parts = []
    # every resource some pod type requests, so a use that drops to zero is shown as 0
    requested = {r for pod_type in instance.pod_types for r in pod_type.requests}
    for resource in sorted(set(used) | requested | ({"pods"} if "pods" in node.capacity else set())):
        amount = pods if resource == "pods" else used.get(resource, 0)
        cap = node.capacity.get(resource)
        shown = _human(resource, amount)
        parts.append(f"{resource} {shown}/{_human(resource, cap)}" if cap is not None else f"{resource} {shown}")
    return ", ".join(parts) if parts else "nothing"


# ---- parsing back ---------------------------------------------------------------------

def parse_exported_trace(text: str, fmt: str) -> list[Step]:
    """The steps of a trace exported as ``json``, ``yaml`` or ``kubectl``."""
    if fmt == "json":
        return [Step(item["op"], item["pod"], item["node"], binds=item.get("binds"), holding=item.get("holding") or None)
                for item in json.loads(text)]
    if fmt == "yaml":
        return _parse_yaml(text)
    if fmt == "kubectl":
        return _parse_kubectl(text)
    raise ValueError(f"cannot parse trace format {fmt!r}; expected one of {', '.join(PARSEABLE_FORMATS)}")


def _manifest_step(manifest: object) -> Step:
    if not isinstance(manifest, dict) or manifest.get("kind") != "Pod":
        raise ValueError("expected a Pod manifest")
    meta = manifest.get("metadata") or {}
    annotations = meta.get("annotations") or {}
    pod_type = annotations.get(TYPE_ANNOTATION)
    if not pod_type:
        raise ValueError(f"Pod {meta.get('name')!r} has no {TYPE_ANNOTATION} annotation")
    node = pinned_node(manifest)
    if node is None:
        raise ValueError(f"Pod {meta.get('name')!r} is not pinned to a node")
    if annotations.get(NODE_ANNOTATION) not in (None, node):
        raise ValueError(f"Pod {meta.get('name')!r} is pinned to {node} but annotated "
                         f"{annotations.get(NODE_ANNOTATION)}")
    return Step(DEPLOY, pod_type, node, binds=annotations.get(BINDS_ANNOTATION))


def pinned_node(manifest: dict) -> Optional[str]:
    """The node a Pod can only run on: ``spec.nodeName``, or a metadata.name In [node] in every term."""
    spec = manifest.get("spec") or {}
    if spec.get("nodeName"):
        return str(spec["nodeName"])
    required = (((spec.get("affinity") or {}).get("nodeAffinity") or {})
                .get("requiredDuringSchedulingIgnoredDuringExecution") or {})
    nodes: set[str] = set()
    terms = required.get("nodeSelectorTerms") or []
    for term in terms:
        names = [r["values"][0] for r in term.get("matchFields") or []
                 if r.get("key") == NODE_NAME_FIELD and r.get("operator") == "In" and len(r.get("values") or []) == 1]
        if not names:
            return None
        nodes.update(names)
    return nodes.pop() if len(nodes) == 1 else None


def _parse_yaml(text: str) -> list[Step]:
    """Pod documents are deployments; a comment-only document whose step
    comment says ``delete`` is a deletion (older files: ``PodDeletion`` objects)."""
    import yaml  # imported on use: PyYAML costs more start-up than a small check

    steps = []
    for chunk in re.split(r"^---[ \t]*$", text, flags=re.MULTILINE):
        doc = yaml.safe_load(chunk)
        if doc is None:
            for line in chunk.splitlines():
                match = _STEP_COMMENT.fullmatch(line.strip())
                if match and match.group(2) == DELETE:
                    steps.append(Step(DELETE, match.group(3), match.group(4)))
            continue
        if isinstance(doc, dict) and doc.get("kind") == DELETION_KIND:
            spec = doc.get("spec") or {}
            steps.append(Step(DELETE, str(spec["podType"]), str(spec["node"])))
        else:
            steps.append(_manifest_step(doc))
    return steps


def _parse_kubectl(text: str) -> list[Step]:
    lines = text.splitlines()
    if len(lines) > 1 and SCRIPT_MARKER in lines[1]:   # the guarded script: its step comments say it all
        return [Step(m.group(2), m.group(3), m.group(4)) for m in map(_STEP_COMMENT.fullmatch, lines) if m]
    import yaml  # imported on use: PyYAML costs more start-up than a small check

    steps: list[Step] = []
    created: dict[tuple[str, str], Step] = {}
    declared: Optional[Step] = None
    i = 0
    while i < len(lines):
        line = lines[i].strip()
        i += 1
        match = _STEP_COMMENT.fullmatch(line)
        if match:
            declared = Step(match.group(2), match.group(3), match.group(4))
            continue
        if line.startswith("kubectl apply -f - <<'EOF'"):
            block = []
            while i < len(lines) and lines[i] != "EOF":
                block.append(lines[i])
                i += 1
            i += 1
            manifest = yaml.safe_load("\n".join(block))
            step = _manifest_step(manifest)
            meta = manifest.get("metadata") or {}
            created[(str(meta.get("namespace", "default")), str(meta.get("name")))] = step
            steps.append(_agree(step, declared))
            declared = None
        elif line.startswith("kubectl delete pod "):
            namespace, name = _delete_target(shlex.split(line)[3:])
            if (namespace, name) in created:
                step = Step(DELETE, created[(namespace, name)].pod, created[(namespace, name)].node)
                steps.append(_agree(step, declared))
            elif declared is not None and declared.op == DELETE:
                steps.append(declared)  # an initial pod, known by name only
            else:
                raise ValueError(f"deletion of pod {namespace}/{name} that the script did not create "
                                 "and no step comment describes")
            declared = None
        elif line.startswith("kubectl delete -n "):
            if declared is None or declared.op != DELETE:
                raise ValueError(f"selector deletion without a step comment: {line}")
            if f"spec.nodeName={shlex.quote(declared.node)}" not in line:
                raise ValueError(f"selector deletion does not select node {declared.node}: {line}")
            steps.append(declared)
            declared = None
    return steps


def _delete_target(args: Iterable[str]) -> tuple[str, str]:
    namespace = "default"
    name = None
    items = list(args)
    j = 0
    while j < len(items):
        arg = items[j]
        if arg in ("-n", "--namespace"):
            namespace = items[j + 1]
            j += 2
            continue
        if arg.startswith("--namespace="):
            namespace = arg.split("=", 1)[1]
        elif not arg.startswith("-") and name is None:
            name = arg
        j += 1
    if name is None:
        raise ValueError("kubectl delete pod without a pod name")
    return namespace, name


def _agree(step: Step, declared: Optional[Step]) -> Step:
    if declared is not None and declared != step:
        raise ValueError(f"the step comment says {declared.op} {declared.pod} on {declared.node}, "
                         f"but the command does {step.op} {step.pod} on {step.node}")
    return step


def _container_port(port: dict) -> dict:
    """A container port that holds the host port as the model does (address included)."""
    out = {"containerPort": port["port"], "hostPort": port["port"], "protocol": port.get("protocol") or "TCP"}
    if port.get("hostIP") and port["hostIP"] != ANY_HOST_IP:
        out["hostIP"] = port["hostIP"]
    return out
