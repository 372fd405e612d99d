"""A witness as a bash script an operator can run against the cluster it was exported for.

What makes it safe to run (issue 29, item 2):

- **Context guard.** The script names the kubectl context it was exported
  for and refuses to run (exit 1, before any change) when
  ``kubectl config current-context`` is another; every command also passes
  ``--context`` itself, so a context switched mid-run changes nothing.
- **``--dry-run=server``.** ``./witness.sh --dry-run=server`` (or
  ``DRY_RUN=server``) sends every change as a server-side dry run: the API
  server admits and validates each step, nothing is persisted, and the
  waits for scheduling are skipped.
- **Evictions.** When budgets are respected a deletion is an eviction through the
  Eviction API (``kubectl create --raw .../pods/NAME/eviction -f -`` with a
  ``policy/v1`` Eviction body), which the API server refuses while a
  PodDisruptionBudget would break, exactly the guard the witness was checked
  against. Under the paper's moves it is ``kubectl delete pod``.
- **Controllers' counts.** When the witness removes a pod that a Deployment,
  ReplicaSet or StatefulSet owns, the controller would replace it; the
  script scales the controller down by one right after the eviction
  (``kubectl scale --current-replicas=N --replicas=N-1``): a replacement
  created in between is not ready yet, and a ReplicaSet scaling down removes
  not-ready pods first (a StatefulSet removes its highest ordinal; the
  header says so when that is not the evicted pod).
- **No adoption.** A pod the witness creates gets a ``generateName`` (never
  a controller's pod name) and a controller owner reference to the ConfigMap
  ``symreach-witness`` of its namespace, which the script creates: a
  controller adopts only pods without a controller, so none adopts it,
  whatever its labels (they stay the workload's, which other pods' affinity
  and spread count). Deleting that ConfigMap deletes every pod the script
  created (garbage collection).

Each step keeps its ``# step N: ...`` comment, so ``parse_exported_trace``
reads the steps back.
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping
from typing import Optional, Sequence

from symreach.export.traces import SCRIPT_MARKER as MARKER
from symreach.export.traces import PlannedStep, dump_manifest, header_lines, step_comment
from symreach.model import Instance
from symreach.result import DEPLOY

OWNER = "symreach-witness"
OWNER_UID = "@SYMREACH_OWNER_UID@"
DRY_RUN_UID = "00000000-0000-0000-0000-000000000000"
SCALED_KINDS = ("Deployment", "StatefulSet", "ReplicaSet", "ReplicationController")  # preferred first

_PRELUDE = r'''set -euo pipefail

CONTEXT={context}
DRY_RUN="${{DRY_RUN:-}}"
for arg in "$@"; do
  case "$arg" in
    --dry-run=server|--dry-run) DRY_RUN=server ;;
    *) echo "usage: $0 [--dry-run=server]" >&2; exit 2 ;;
  esac
done
K=(kubectl --context "$CONTEXT")

# Context guard: this script was exported for $CONTEXT and runs nowhere else.
current="$(kubectl config current-context)"
if [ "$current" != "$CONTEXT" ]; then
  echo "symreach: refusing to run: the current kubectl context is '$current'; this script was exported for '$CONTEXT'" >&2
  exit 1
fi

owner() {{  # NS: the uid of ConfigMap {owner}, the owner of the pods this script creates
  if [ -n "$DRY_RUN" ]; then echo {dry_uid}; return; fi
  "${{K[@]}}" -n "$1" get configmap {owner} -o jsonpath='{{.metadata.uid}}' 2>/dev/null ||
    "${{K[@]}}" -n "$1" create configmap {owner} -o jsonpath='{{.metadata.uid}}'
}}

evict() {{  # NS NAME: the Eviction API, refused while a PodDisruptionBudget would break
  local dry=""
  if [ -n "$DRY_RUN" ]; then dry=',"deleteOptions":{{"dryRun":["All"]}}'; fi
  printf '{{"apiVersion":"policy/v1","kind":"Eviction","metadata":{{"name":"%s","namespace":"%s"}}%s}}\n' "$2" "$1" "$dry" |
    "${{K[@]}}" create --raw "/api/v1/namespaces/$1/pods/$2/eviction" -f -
  if [ -z "$DRY_RUN" ]; then "${{K[@]}}" -n "$1" wait --for=delete "pod/$2" --timeout=300s; fi
}}

scale_to() {{  # NS KIND/NAME FROM TO: the controller's count, as the witness changes it
  "${{K[@]}}" -n "$1" scale "$2" --current-replicas="$3" --replicas="$4" ${{DRY_RUN:+--dry-run=server}}
}}

count_on() {{  # NS SELECTOR NODE: how many pods with these labels run on NODE
  "${{K[@]}}" -n "$1" get pods -l "$2" --field-selector "spec.nodeName=$3" -o name | grep -c . || true
}}

newest_on() {{  # NS SELECTOR NODE BEFORE: wait for the controller's new pod on NODE; print its name
  if [ -n "$DRY_RUN" ]; then echo "pod/dry-run"; return; fi
  for _ in $(seq 60); do
    if [ "$(count_on "$1" "$2" "$3")" -gt "$4" ]; then
      "${{K[@]}}" -n "$1" get pods -l "$2" --field-selector "spec.nodeName=$3" \
        --sort-by=.metadata.creationTimestamp -o name | tail -n 1
      return
    fi
    sleep 2
  done
  echo "symreach: the controller's new pod did not land on $3 (the scheduler chose); the witness does not hold from here" >&2
  exit 1
}}

scale_down() {{  # NS KIND/NAME: one replica fewer, so the controller does not replace the evicted pod
  local n
  n="$("${{K[@]}}" -n "$1" get "$2" -o jsonpath='{{.spec.replicas}}')"
  "${{K[@]}}" -n "$1" scale "$2" --current-replicas="$n" --replicas="$((n - 1))" ${{DRY_RUN:+--dry-run=server}}
}}
'''


def controllers_of(workloads: Mapping[str, str]) -> dict[str, str]:
    """Pod type -> ``kind/name`` of the controller that keeps its count (a Deployment before
    its ReplicaSet), from the front end's ``"Kind ns/name" -> type`` table."""
    out: dict[str, tuple[int, str]] = {}
    for key, type_name in workloads.items():
        kind, _, qualified = key.partition(" ")
        if kind not in SCALED_KINDS:
            continue
        rank = SCALED_KINDS.index(kind)
        ref = f"{kind.lower()}/{qualified.split('/', 1)[-1]}"
        if type_name not in out or rank < out[type_name][0]:
            out[type_name] = (rank, ref)
    return {t: ref for t, (_, ref) in out.items()}


def kubectl_script(planned: Sequence[PlannedStep], instance: Instance, pin: str, context: str,
                   evict: bool, controllers: Mapping[str, str],
                   actions: Optional[Sequence[Mapping]] = None) -> str:
    """The script (see the module docstring); ``evict``: deletions go through the Eviction API.

    ``actions``: the witness in operator terms, one per step (``report.operator_steps``'s JSON:
    ``action`` evict | delete | replace | scale | create, ``controller`` "Kind ns/name",
    ``replicas`` {from, to}, ``replaces``). A ``scale`` is ``kubectl scale`` (up: the controller
    creates the pod and the script checks it landed on the step's node; down: the pod gets the
    lowest pod-deletion-cost first), a ``replace`` waits for the controller's new pod on the
    node, an eviction the witness later replaces is not followed by a scale-down."""
    if actions is not None and len(actions) != len(planned):
        raise ValueError(f"{len(actions)} operator actions for {len(planned)} steps")
    by_step = {p.index: dict(a) for p, a in zip(planned, actions or ())}
    replaced = {a.get("replaces") for a in by_step.values() if a.get("action") == "replace"}
    notes = []
    statefulsets = sorted({controllers[p.step.pod] for p in planned if p.step.op != DEPLOY and p.from_initial
                           and controllers.get(p.step.pod, "").startswith("statefulset/")})
    if statefulsets:
        notes.append("scaling a StatefulSet down removes its highest ordinal, which may not be the pod the "
                     "witness evicts: " + ", ".join(statefulsets))
    out = ["#!/usr/bin/env bash", f"# {MARKER}: run with --dry-run=server first"]
    out += [f"# {line}" for line in header_lines(planned, instance, pin, controllers_handled=True)]
    out += [f"# Note: {note}" for note in notes]
    removal = "evictions (Eviction API, PodDisruptionBudgets honoured)" if evict else "kubectl delete pod"
    out += [f"# Deletions are {removal}; a controller's count changes by kubectl scale.",
            f"# Created pods are owned by ConfigMap {OWNER} (no controller adopts them); "
            f"kubectl delete configmap {OWNER} -n NS removes them."]
    out.append(_PRELUDE.format(context=shlex.quote(context), owner=OWNER, dry_uid=DRY_RUN_UID))
    created: dict[str, str] = {}   # planned name -> the shell variable holding the real name
    for p in planned:
        ns = shlex.quote(p.namespace)
        out.append(f"# {step_comment(p)}")
        action = by_step.get(p.index, {})
        if action.get("action") in ("scale", "replace"):
            out += _controller_step(p, ns, action, created)
        elif p.step.op == DEPLOY:
            var = f"POD_{p.index}"
            created[str(p.pod_name)] = var
            out.append(f'uid="$(owner {ns})"')
            out.append(f'{var}="$(sed "s/{OWNER_UID}/$uid/" <<\'EOF\' | "${{K[@]}}" create -f - -o name '
                       '${DRY_RUN:+--dry-run=server}')
            out.append(dump_manifest(_owned(p)).rstrip("\n"))
            out.append("EOF")
            out.append(')"')
            if pin == "affinity":
                out.append(f'if [ -z "$DRY_RUN" ]; then "${{K[@]}}" -n {ns} wait --for=condition=PodScheduled '
                           f'--timeout=120s "${var}"; fi')
        else:
            keep = p.qualified in replaced   # the controller's replacement is a later step
            out += _removal(p, ns, created, evict, {} if keep or action.get("action") == "create" else controllers)
        out.append("")
    return "\n".join(out)


def _controller_step(p: PlannedStep, ns: str, action: Mapping, created: dict[str, str]) -> list[str]:
    """A step the controller carries out: its count scaled up or down, or its replacement of an evicted pod."""
    kind, _, qualified = str(action.get("controller", "")).partition(" ")
    ref = shlex.quote(f"{kind.lower()}/{qualified.split('/', 1)[-1]}")
    labels = shlex.quote(",".join(f"{k}={v}" for k, v in sorted(p.labels.items())))
    node = shlex.quote(p.step.node)
    replicas = action.get("replicas") or {}
    var = f"POD_{p.index}"
    if p.step.op == DEPLOY:
        created[str(p.pod_name)] = var
        lines = [f"before=\"$(count_on {ns} {labels} {node})\""]
        if action.get("action") == "scale":
            lines.append(f"scale_to {ns} {ref} {int(replicas['from'])} {int(replicas['to'])}")
        lines.append(f'{var}="$(newest_on {ns} {labels} {node} "$before")"')
        return lines
    name = f'"${{{created[str(p.pod_name)]}#pod/}}"' if str(p.pod_name) in created else shlex.quote(str(p.pod_name))
    return [f'"${{K[@]}}" -n {ns} annotate pod/{name} controller.kubernetes.io/pod-deletion-cost=-2147483647 '
            '--overwrite ${DRY_RUN:+--dry-run=server}',
            f"scale_to {ns} {ref} {int(replicas['from'])} {int(replicas['to'])}",
            f'if [ -z "$DRY_RUN" ]; then "${{K[@]}}" -n {ns} wait --for=delete pod/{name} --timeout=300s; fi']


def _owned(p: PlannedStep) -> dict:
    """The step's Pod with a generated name and the witness ConfigMap as its controller."""
    manifest = dict(p.manifest or {})
    metadata = dict(manifest.get("metadata") or {})
    name = metadata.pop("name", None) or "pod"
    generated = {"generateName": f"{str(name).rsplit('-', 1)[0]}-symreach-"}
    metadata = {**generated, **metadata}
    metadata["ownerReferences"] = [{"apiVersion": "v1", "kind": "ConfigMap", "name": OWNER, "uid": OWNER_UID,
                                    "controller": True}]
    manifest["metadata"] = metadata
    return manifest


def _removal(p: PlannedStep, ns: str, created: Mapping[str, str], evict: bool,
             controllers: Mapping[str, str]) -> list[str]:
    """A deletion: of a pod the script created (by the name the API server gave it), or of an initial one."""
    if not p.from_initial and str(p.pod_name) in created:
        name = f'"${{{created[str(p.pod_name)]}#pod/}}"'
    elif p.pod_name:
        name = shlex.quote(p.pod_name)
    else:   # an initial pod known by its node and labels only
        selector = ",".join(f"{k}={v}" for k, v in sorted(p.labels.items()))
        query = f'"${{K[@]}}" -n {ns} get pods --field-selector spec.nodeName={shlex.quote(p.step.node)}'
        if selector:
            query += f" -l {shlex.quote(selector)}"
        name = f'"$({query} -o name | head -n 1 | cut -d/ -f2)"'
    lines = [f"evict {ns} {name}" if evict else
             f'"${{K[@]}}" -n {ns} delete pod {name} --wait=true ${{DRY_RUN:+--dry-run=server}}']
    controller = controllers.get(p.step.pod) if p.from_initial else None
    if controller is not None:
        lines.append(f"scale_down {ns} {shlex.quote(controller)}")
    return lines
