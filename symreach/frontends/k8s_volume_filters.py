"""The kube-scheduler's volume plugins on one pod spec, node by node (v1.35).

``pod_volumes`` returns what VolumeRestrictions, VolumeBinding and VolumeZone
decide from the volume objects alone, in the scheduler's words:

- a PreFilter rejection, which applies to every node (a claim that does not
  exist, an unbound claim of an Immediate class, a bound claim whose volume is
  missing, a generic ephemeral volume whose claim is not created yet);
- per node, the Filter failure of VolumeBinding (a bound volume's node
  affinity; for a WaitForFirstConsumer claim, no Available PV that could bind
  there and no provisioning allowed there, or not enough CSIStorageCapacity)
  or else VolumeZone (a bound volume's zone/region labels);
- what depends on the other pods and is evaluated by the semantics: the
  ReadWriteOncePod claims (VolumeRestrictions) and the CSI volumes per driver
  that count against a node's attach limit (NodeVolumeLimits).

Static per-node verdicts are exact for the state as given; VolumeBinding's is existential
over the informer's orders (``k8s_volume_matching``: a node passes when some run of
``findMatchingVolumes`` does, as reachability asks of the scheduler; every run, unbounded). A WaitForFirstConsumer
claim becomes bound once a pod using it is scheduled: ``pod_outcomes`` gives what a
deployment binds on a node, ``bound_index`` the volume objects then, and
``k8s_volume_bindings`` explores the joint bindings (v1 ``binds``).
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Iterator, Optional

from symreach import reasons
from symreach.frontends.k8s_volumes import (
    BIND_COMPLETED,
    NO_PROVISIONER,
    SELECTED_NODE,
    VolumeIndex,
    as_dict,
    as_list,
    annotations,
    bound,
)
from symreach.frontends.k8s_volume_matching import (
    ZONE_LABELS,
    Claim,
    Matching,
    Runs,
    SearchBound,
    node_affinity_ok,
    search_caveat,
    storage_of,
)
from symreach.loader.labels import parse_label_selector
from symreach.loader.quantities import QuantityError, parse_quantity
from symreach.loader.shapes import FieldError

VOLUME_RESTRICTIONS = reasons.VOLUME_RESTRICTIONS_PLUGIN
VOLUME_BINDING = reasons.VOLUME_BINDING_PLUGIN
VOLUME_ZONE = reasons.VOLUME_ZONE_PLUGIN
NODE_CONFLICT = reasons.VOLUME_NODE_CONFLICT
BIND_CONFLICT = reasons.VOLUME_BIND_CONFLICT
NOT_ENOUGH_SPACE = reasons.VOLUME_NOT_ENOUGH_SPACE
ZONE_CONFLICT = reasons.VOLUME_ZONE_CONFLICT
UNBOUND_IMMEDIATE = reasons.UNBOUND_IMMEDIATE_CLAIMS
_GA_LABEL = {"failure-domain.beta.kubernetes.io/zone": "topology.kubernetes.io/zone",
             "failure-domain.beta.kubernetes.io/region": "topology.kubernetes.io/region"}

Verdict = tuple[str, tuple[str, ...]]   # (plugin, reasons)
# In-tree sources written into the pod itself: VolumeRestrictions checks the first four for disk
# conflicts (the field naming the disk); NodeVolumeLimits counts the migrated ones as their CSI driver's.
DISK_NAME = {"gcePersistentDisk": "pdName", "awsElasticBlockStore": "volumeID", "iscsi": "iqn", "rbd": "image"}
MIGRATED = {"awsElasticBlockStore": ("ebs.csi.aws.com", "volumeID"), "gcePersistentDisk": ("pd.csi.storage.gke.io", "pdName"),
            "azureDisk": ("disk.csi.azure.com", "diskURI"), "cinder": ("cinder.csi.openstack.org", "volumeID")}
GCE_INLINE_HANDLE = "projects/UNSPECIFIED/zones/UNSPECIFIED/disks/"


@dataclass
class PodVolumes:
    """The volume plugins' view of one pod spec."""

    prefilter: Optional[Verdict] = None
    filters: dict[str, Verdict] = field(default_factory=dict)   # node name -> failure
    claims: list[str] = field(default_factory=list)             # claims the pod uses (its namespace)
    read_write_once_pod: list[str] = field(default_factory=list)
    attach: dict[str, set[str]] = field(default_factory=dict)   # CSI driver -> volume names, counted once per node
    attach_own: dict[str, int] = field(default_factory=dict)    # CSI driver -> the pod's own ephemeral volumes
    disks: list[dict] = field(default_factory=list)             # v1 ``disks`` entries (in-tree, inline)
    caveats: list[str] = field(default_factory=list)
    delayed: list["Claim"] = field(default_factory=list)       # its unbound WaitForFirstConsumer claims
    # nodes where the volume verdict differs between the informer's orders (``_node_verdicts``:
    # the verdict above is existential, exact for reachability; the scheduler's one attempt is random)
    order_dependent: list[str] = field(default_factory=list)
    # nodes refused in every run with reasons that differ between runs: every verdict some run
    # reports (``filters`` holds the input order's, the first)
    runs: dict[str, list[Verdict]] = field(default_factory=dict)
    # nodes where some run passes the volume plugins and others refuse: those runs' refusals (a later
    # plugin's refusal there is one of a set with them: v1 ``otherRunRefusals``)
    passed_runs: dict[str, list[Verdict]] = field(default_factory=dict)


def pod_claims(index: VolumeIndex, spec: dict, namespace: str, pod_name: Optional[str],
               pod_uid: Optional[str] = None) -> list[Claim]:
    """The claims of a pod's volumes, in order: ``persistentVolumeClaim`` and generic ephemeral volumes.

    A template's (``pod_name`` None) ephemeral claim is taken as created from its volumeClaimTemplate;
    a pod's is ``<pod>-<volume>``, which must be controlled by the pod (its uid; a pod without one
    has ``uid-<namespace>-<name>``, as kso gives it).
    """
    out = []
    for volume in as_list(spec.get("volumes")):
        volume = as_dict(volume)
        source = volume.get("persistentVolumeClaim")
        if isinstance(source, dict) and isinstance(source.get("claimName"), str):
            name = source["claimName"]
            out.append(Claim(name, index.claims.get((namespace, name)), False, namespace))
        elif isinstance(volume.get("ephemeral"), dict):
            template = as_dict(as_dict(volume["ephemeral"]).get("volumeClaimTemplate"))
            if pod_name is None:
                out.append(Claim(f"<pod>-{volume.get('name')}", {"spec": as_dict(template.get("spec"))}, True,
                                  namespace))
            else:
                name = f"{pod_name}-{volume.get('name')}"
                data = index.claims.get((namespace, name))
                uid = pod_uid or f"uid-{namespace}-{pod_name}"
                owned = data is None or any(as_dict(ref).get("controller") is True and as_dict(ref).get("uid") == uid
                                            for ref in as_list(as_dict(data.get("metadata")).get("ownerReferences")))
                out.append(Claim(name, data, True, namespace, owned))
    return out


def pod_volumes(index: VolumeIndex, spec: dict, namespace: str, pod_name: Optional[str],
                nodes: list[dict], pod_uid: Optional[str] = None) -> PodVolumes:
    out = PodVolumes()
    out.disks = inline_disks(spec)
    for driver, name in inline_attachments(spec):
        out.attach.setdefault(driver, set()).add(name)
    claims = pod_claims(index, spec, namespace, pod_name, pod_uid)
    if not claims:
        return out
    unknown = _unknown(index, claims)
    if unknown:
        # A dump without the volume objects (``kubectl get nodes,pods``) is taken as
        # it is (a claim it lacks is missing, as for the scheduler), with a caveat.
        out.caveats.append(unknown)
    out.prefilter = _prefilter(index, claims, f"{namespace}/{pod_name}")
    out.claims = [c.name for c in claims if not c.ephemeral]
    out.read_write_once_pod = [c.name for c in claims if c.data is not None and not c.ephemeral
                               and "ReadWriteOncePod" in as_list(as_dict(c.data.get("spec")).get("accessModes"))]
    for driver, names in _attachments(index, namespace, claims).items():
        shared = {name for name, own in names if not own}
        if shared:
            out.attach.setdefault(driver, set()).update(shared)
        if len(shared) < len(names):
            out.attach_own[driver] = len(names) - len(shared)
    if out.prefilter is not None:
        return out   # such a pod never runs, so it binds nothing
    bound_claims = [c.data for c in claims if c.data is not None and bound(c.data)]
    delayed = [c for c in claims if c.data is not None and not bound(c.data)]
    # VolumeZone reads ``persistentVolumeClaim`` volumes only (``getPersistentVolumeClaimNameFromPod``),
    # not a generic ephemeral volume's claim.
    topologies = _pv_topologies(index, [c.data for c in claims if c.data is not None and bound(c.data)
                                        and not c.ephemeral])
    cut = []
    for node in nodes:
        labels = node.get("labels") or {}
        verdicts, complete = _node_verdicts(index, bound_claims, delayed, topologies, node["name"], labels)
        if len(set(verdicts)) > 1:
            out.order_dependent.append(node["name"])
        if not complete:
            cut.append(node["name"])
        if None not in verdicts:
            out.filters[node["name"]] = verdicts[0]
            if len(verdicts) > 1:
                out.runs[node["name"]] = list(verdicts)
        elif len(verdicts) > 1:
            out.passed_runs[node["name"]] = [v for v in verdicts if v is not None]
    if cut:
        out.caveats.append(search_caveat(delayed, cut))
    out.delayed = delayed
    return out


def verdict_fields(found: PodVolumes) -> dict:
    """A pod's volume verdicts and CSI volumes as v1 ``volumes`` fields (``preFilter``,
    ``filter``, ``otherRunRefusals``, ``attach``, ``attachOwn``), those it has."""
    out: dict = {}
    if found.prefilter is not None:
        out["preFilter"] = {"plugin": found.prefilter[0], "reasons": list(found.prefilter[1])}
    if found.filters:
        out["filter"] = [_filter_entry(node, plugin, why, found.runs.get(node, ()))
                         for node, (plugin, why) in found.filters.items()]
    if found.passed_runs:
        out["otherRunRefusals"] = [{"node": node, "plugin": plugin, "reasons": list(why)}
                                   for node, verdicts in found.passed_runs.items() for plugin, why in verdicts]
    if found.attach:
        out["attach"] = {driver: sorted(names) for driver, names in sorted(found.attach.items())}
    if found.attach_own:
        out["attachOwn"] = dict(sorted(found.attach_own.items()))
    return out


def _filter_entry(node: str, plugin: str, why: tuple[str, ...], runs) -> dict:
    """A v1 ``filter`` entry; ``otherRuns``: the other verdicts the scheduler's runs report there."""
    entry: dict = {"node": node, "plugin": plugin, "reasons": list(why)}
    others = [{"plugin": p, "reasons": list(r)} for p, r in runs if (p, r) != (plugin, why)]
    if others:
        entry["otherRuns"] = others
    return entry


def pod_outcomes(index: VolumeIndex, claims: list[Claim], node: str, labels: dict
                 ) -> Iterator[dict[tuple[str, str], str]]:
    """What PreBind may bind a pod's unbound claims to on a node its Filter passed, one entry per
    distinct run of ``FindPodVolumes`` that fits there (``Runs.runs``, every one, lazily: their
    number is the answer's size; the input's order first): claims with a selected node are
    provisioned; the others take the PV their run matched them to (``PV <name>``), else are
    provisioned in the node's topology (``provisioned:<key>=<value>,...``)."""
    if any(annotations(c.data or {}).get(SELECTED_NODE) not in (None, node) for c in claims):
        return   # the fast path: selected for another node
    fixed = [c for c in claims if SELECTED_NODE in annotations(c.data or {})]

    def fits(unmatched: tuple[Claim, ...]) -> bool:
        return not (fixed or unmatched) or check_provisions(index, fixed + list(unmatched), labels) == (True, True)

    seen: list[dict[tuple[str, str], str]] = []
    runs = Runs(index, claims, labels)
    try:
        for run in runs.runs(fits):
            outcome = _outcome(index, claims, labels, run)
            if outcome not in seen:
                seen.append(outcome)
                yield outcome
    except SearchBound:   # pod_volumes says so (a caveat): the input order's run stands for all
        first = runs.first()
        if fits(first.unmatched) and _outcome(index, claims, labels, first) not in seen:
            yield _outcome(index, claims, labels, first)


def _outcome(index: VolumeIndex, claims: list[Claim], labels: dict, run: Matching) -> dict[tuple[str, str], str]:
    outcome = {(c.namespace, c.name): f"PV {pv}" for c, pv in run.chosen}
    for c in claims:
        if (c.namespace, c.name) not in outcome:
            outcome[(c.namespace, c.name)] = "provisioned:" + ",".join(
                f"{key}={labels[key]}" for key in provision_keys(index, c, labels))
    return outcome


def candidate_volumes(index: VolumeIndex, c: "Claim") -> bool:
    """Whether some Available PV without a claimRef is of the claim's class (one it could take)."""
    cls = index.claim_class(c.data or {})
    return any((as_dict(pv.get("spec")).get("storageClassName") or "") == cls
               and not as_dict(pv.get("spec")).get("claimRef") and as_dict(pv.get("status")).get("phase") == "Available"
               for pv in index.volumes.values())


def provision_keys(index: VolumeIndex, c: Claim, labels: dict) -> list[str]:
    storage_class = index.classes.get(index.claim_class(c.data or {})) or {}
    keys = sorted({as_dict(e).get("key") for term in as_list(storage_class.get("allowedTopologies"))
                   for e in as_list(as_dict(term).get("matchLabelExpressions"))} - {None})
    keys = keys or ["topology.kubernetes.io/zone"]
    return [key for key in keys if isinstance(key, str) and key in labels]


def bound_index(index: VolumeIndex, joint: dict[tuple[str, str], str]) -> VolumeIndex:
    """The volume objects once each claim of ``joint`` is bound to its outcome (``bound_volume``)."""
    out = copy.copy(index)
    out.claims = dict(index.claims)
    out.volumes = dict(index.volumes)
    for (namespace, name), outcome in joint.items():
        if outcome.startswith("taken:"):   # PVs generic ephemeral claims took (``k8s_volume_bindings``)
            for pv in outcome[6:].split(","):
                out.volumes[pv] = taken_volume(out.volumes[pv])
            continue
        data = index.claims[(namespace, name)]
        claim, pv_name, volume = bound_volume(data, namespace, name, outcome, out.volumes,
                                              index.classes.get(index.claim_class(data)))
        out.claims[(namespace, name)] = claim
        out.volumes[pv_name] = volume
    out.kinds = index.kinds | {"PersistentVolume"}
    return out


def taken_volume(volume: dict) -> dict:
    """A PV an ephemeral claim took, once the claim went with its pod: Released, still claimed."""
    out = copy.deepcopy(volume)
    out.setdefault("spec", {})["claimRef"] = {"kind": "PersistentVolumeClaim", "namespace": "(ephemeral)",
                                              "name": "(deleted with its pod)"}
    out["status"] = dict(as_dict(out.get("status")), phase="Released")
    return out


def bound_volume(claim: dict, namespace: str, claim_name: str, outcome: str, volumes: dict[str, dict],
                 storage_class: Optional[dict]) -> tuple[dict, str, dict]:
    """(claim, PV name, PV) once the claim is bound to ``outcome``, as the PV controller completes
    the binding; for provisioning, a PV with node affinity to the outcome's topology and the CSI
    volume NodeVolumeLimits counted while unbound (``csi_volume``). Copies; the inputs are kept."""
    claim = copy.deepcopy(claim)
    spec = as_dict(claim.get("spec"))
    if outcome.startswith("PV "):
        name = outcome[3:]
        volume = copy.deepcopy(volumes[name])
    else:
        name = f"provisioned-{namespace}-{claim_name}"
        terms = [{"key": k, "operator": "In", "values": [v]} for k, v in
                 (pair.split("=", 1) for pair in outcome.partition(":")[2].split(",") if pair)]
        volume = {"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": name}, "spec": {
            "capacity": {"storage": as_dict(as_dict(spec.get("resources")).get("requests")).get("storage", "0")},
            "accessModes": as_list(spec.get("accessModes")),
            "storageClassName": as_dict(as_dict(storage_class).get("metadata")).get("name", "")}}
        provisioner = as_dict(storage_class).get("provisioner")
        if provisioner:
            volume["spec"]["csi"] = {"driver": provisioner, "volumeHandle": f"<unbound>-{namespace}/{claim_name}"}
        if terms:
            volume["spec"]["nodeAffinity"] = {"required": {"nodeSelectorTerms": [{"matchExpressions": terms}]}}
    volume.setdefault("spec", {})["claimRef"] = {"kind": "PersistentVolumeClaim", "namespace": namespace,
                                                 "name": claim_name}
    volume["status"] = dict(as_dict(volume.get("status")), phase="Bound")
    claim["spec"] = dict(spec, volumeName=name)
    meta = claim.setdefault("metadata", {})
    meta["annotations"] = dict(annotations(claim), **{BIND_COMPLETED: "yes"})
    meta["annotations"].pop(SELECTED_NODE, None)
    return claim, name, volume


def _unknown(index: VolumeIndex, claims: list[Claim]) -> str:
    """Why the input cannot decide this pod's volumes (a kind it has none of), or ""."""
    if not index.kinds and any(c.data is None for c in claims):
        return ("the input has no volume objects: its claims are taken as missing (if the cluster has them, "
                "dump them too: kubectl get pvc,pv,storageclasses,csinodes)")
    if "PersistentVolume" not in index.kinds and any(c.data is not None and as_dict(c.data.get("spec")).get(
            "volumeName") for c in claims):
        return "the input has no PersistentVolumes: the volumes of its bound claims are taken as missing"
    if "StorageClass" not in index.kinds and any(c.data is not None and not bound(c.data) for c in claims):
        return "the input has no StorageClasses: its unbound claims are taken as binding immediately"
    return ""


def _prefilter(index: VolumeIndex, claims: list[Claim], pod: str) -> Optional[Verdict]:
    """PreFilter rejections, in plugin order: VolumeRestrictions, VolumeBinding (``podHasPVCs`` per
    volume: not created, lost, being deleted, an ephemeral claim not the pod's), VolumeZone."""
    for c in claims:
        if c.data is None and not c.ephemeral:
            return VOLUME_RESTRICTIONS, (f'persistentvolumeclaim "{c.name}" not found',)
    for c in claims:
        if c.data is None:
            return VOLUME_BINDING, (f'waiting for ephemeral volume controller to create the persistentvolumeclaim "{c.name}"',)
        if as_dict(c.data.get("status")).get("phase") == "Lost":
            volume = as_dict(c.data.get("spec")).get("volumeName") or ""
            return VOLUME_BINDING, (f'persistentvolumeclaim "{c.name}" bound to non-existent persistentvolume "{volume}"',)
        if as_dict(c.data.get("metadata")).get("deletionTimestamp"):
            return VOLUME_BINDING, (f'persistentvolumeclaim "{c.name}" is being deleted',)
        if not c.owned:
            return VOLUME_BINDING, (f"PVC {c.namespace}/{c.name} was not created for pod {pod} (pod is not owner)",)
    for c in claims:
        assert c.data is not None
        if not bound(c.data) and (not index.delayed(c.data) or as_dict(c.data.get("spec")).get("volumeName")):
            return VOLUME_BINDING, (UNBOUND_IMMEDIATE,)
    for c in claims:
        assert c.data is not None
        name = as_dict(c.data.get("spec")).get("volumeName")
        if bound(c.data) and name not in index.volumes:
            return VOLUME_ZONE, (f'persistentvolume "{name}" not found',)
    return None


def _node_verdicts(index: VolumeIndex, bound_claims: list[dict], delayed: list[Claim],
                   topologies: list[tuple[str, frozenset[str]]], node: str, labels: dict
                   ) -> tuple[list[Optional[Verdict]], bool]:
    """VolumeBinding's Filter (``FindPodVolumes``), then VolumeZone's, on this node: the distinct
    verdicts over the informer's orders (every one), the input order's first (None: that run fits;
    VolumeZone speaks only in a run VolumeBinding passes); and False past the search guard (then
    the input order's only). Existential: the node fits when some run does; else each verdict is
    one the scheduler's single attempt may report, and no other."""
    node_conflict = any(not node_affinity_ok(index.volumes[as_dict(c.get("spec"))["volumeName"]], labels)
                        for c in bound_claims)
    zone_ok = _zone_ok(topologies, labels)
    found: list[Optional[Verdict]] = []
    verdicts, complete = _binding_verdicts(index, delayed, node, labels)
    for bind_ok, enough in verdicts:
        reasons = ((NODE_CONFLICT,) if node_conflict else ()) + (() if bind_ok else (BIND_CONFLICT,)) + \
                  (() if enough else (NOT_ENOUGH_SPACE,))
        verdict = (VOLUME_BINDING, reasons) if reasons else None if zone_ok else (VOLUME_ZONE, (ZONE_CONFLICT,))
        if verdict not in found:
            found.append(verdict)
    return found, complete


def _binding_verdicts(index: VolumeIndex, delayed: list[Claim], node: str, labels: dict
                      ) -> tuple[list[tuple[bool, bool]], bool]:
    """``findMatchingVolumes`` then ``checkVolumeProvisions`` on the claims left and those with a
    selected node, over every run (``Runs.unmatched``: the claims a run leaves are all it reads):
    the distinct (claims can be bound or provisioned, enough capacity), the input order's first;
    and False past the search guard (``SearchBound``: the input order's run's alone)."""
    if not delayed:
        return [(True, True)], True
    if any(annotations(c.data or {}).get(SELECTED_NODE) not in (None, node) for c in delayed):
        return [(False, True)], True   # the fast path: selected for another node
    fixed = [c for c in delayed if SELECTED_NODE in annotations(c.data or {})]
    runs = Runs(index, delayed, labels)
    try:
        left, complete = runs.unmatched(), True
    except SearchBound:
        left, complete = [runs.first().unmatched], False
    out: list[tuple[bool, bool]] = []
    for unmatched in left:
        found = check_provisions(index, fixed + list(unmatched), labels) if fixed or unmatched else (True, True)
        if found not in out:
            out.append(found)
    return out, complete


def check_provisions(index: VolumeIndex, claims: list[Claim], labels: dict) -> tuple[bool, bool]:
    """``checkVolumeProvisions``: (provisioning possible here, enough storage capacity)."""
    for c in claims:
        claim = c.data or {}
        storage_class = index.classes.get(index.claim_class(claim))
        if storage_class is None:
            return False, True
        provisioner = storage_class.get("provisioner") or ""
        if provisioner in ("", NO_PROVISIONER):
            return False, True
        if not _topology_ok(storage_class.get("allowedTopologies"), labels):
            return False, True
        if not _enough_capacity(index, provisioner, claim, storage_class, labels):
            return True, False
    return True, True


def _topology_ok(terms: object, labels: dict) -> bool:
    """``MatchTopologySelectorTerms``: no terms, or one whose every expression the node's labels meet."""
    if not isinstance(terms, list) or not terms:
        return True
    for term in terms:
        exprs = as_list(as_dict(term).get("matchLabelExpressions"))
        if all(isinstance(as_dict(e).get("key"), str) and labels.get(as_dict(e)["key"]) in as_list(as_dict(e).get("values"))
               for e in exprs):
            return True
    return False


def _enough_capacity(index: VolumeIndex, provisioner: str, claim: dict, storage_class: dict, labels: dict) -> bool:
    requests = as_dict(as_dict(as_dict(claim.get("spec")).get("resources")).get("requests"))
    if "storage" not in requests:
        return True
    driver = index.csi_drivers.get(provisioner)
    if driver is None or as_dict(driver.get("spec")).get("storageCapacity") is not True:
        return True
    size = storage_of(claim, "resources", "requests", "storage")
    name = as_dict(storage_class.get("metadata")).get("name")
    for capacity in index.capacities:
        limit = capacity.get("maximumVolumeSize", capacity.get("capacity"))
        if capacity.get("storageClassName") != name or limit is None or capacity.get("nodeTopology") is None:
            continue
        try:
            fits = parse_quantity(limit, "storage") >= size
            reaches = parse_label_selector(capacity["nodeTopology"]).matches(labels)
        except (QuantityError, FieldError):
            continue
        if fits and reaches:
            return True
    return False


def _pv_topologies(index: VolumeIndex, bound_claims: list[dict]) -> list[tuple[str, frozenset[str]]]:
    """VolumeZone: the zone/region labels of the bound volumes (values split on ``__``)."""
    out = []
    for claim in bound_claims:
        pv = index.volumes[as_dict(claim.get("spec"))["volumeName"]]
        pv_labels = as_dict(as_dict(pv.get("metadata")).get("labels"))
        for key in ZONE_LABELS:
            if key in pv_labels:
                out.append((key, frozenset(str(pv_labels[key]).split("__"))))
    return out


def _zone_ok(topologies: list[tuple[str, frozenset[str]]], labels: dict) -> bool:
    if not topologies or not any(key in labels for key in ZONE_LABELS):
        return True
    for key, values in topologies:
        value = labels.get(key, labels.get(_GA_LABEL.get(key, key)))
        if value is None or value not in values:
            return False
    return True


def inline_disks(spec: dict) -> list[dict]:
    """The pod's in-tree disks VolumeRestrictions compares (``isVolumeConflict``), as v1 ``disks``."""
    out = []
    for volume in as_list(spec.get("volumes")):
        for kind, key in DISK_NAME.items():
            source = as_dict(as_dict(volume).get(kind))
            if kind not in as_dict(volume) or not isinstance(source.get(key), str):
                continue
            name = source[key] if kind != "rbd" else f"{source.get('pool') or 'rbd'}/{source[key]}"
            disk = {"kind": kind, "name": name, "readOnly": source.get("readOnly") is True}
            if kind == "rbd":
                disk["monitors"] = sorted(m for m in as_list(source.get("monitors")) if isinstance(m, str))
            out.append(disk)
    return out


def inline_attachments(spec: dict) -> list[tuple[str, str]]:
    """NodeVolumeLimits' (driver, unique name) of the pod's migrated in-tree volumes
    (``checkAttachableInlineVolume``: counted as their CSI driver's where the node has a CSINode)."""
    out = []
    for volume in as_list(spec.get("volumes")):
        for kind, (driver, key) in MIGRATED.items():
            handle = as_dict(as_dict(volume).get(kind)).get(key)
            if isinstance(handle, str) and handle:
                out.append((driver, f"{driver}/{_migrated_handle(kind, handle)}"))
    return out


def _migrated_handle(kind: str, handle: str) -> str:
    if kind == "gcePersistentDisk":
        return GCE_INLINE_HANDLE + handle
    if kind == "awsElasticBlockStore" and handle.startswith("aws://"):
        return handle.rstrip("/").rsplit("/", 1)[-1]   # aws://zone/vol-1 -> vol-1
    return handle


def csi_volume(index: VolumeIndex, namespace: str, claim_name: str, claim: dict) -> tuple[str, str]:
    """NodeVolumeLimits' (driver, volume handle) of a claim; ("", "") when it does not count.
    A PV with an in-tree awsElasticBlockStore source counts as ebs.csi.aws.com's (migration)."""
    name = as_dict(claim.get("spec")).get("volumeName")
    pv = index.volumes.get(name) if name else None
    if pv is not None:
        pv_spec = as_dict(pv.get("spec"))
        ebs = as_dict(pv_spec.get("awsElasticBlockStore")).get("volumeID")
        if isinstance(ebs, str) and ebs and "csi" not in pv_spec:
            return MIGRATED["awsElasticBlockStore"][0], _migrated_handle("awsElasticBlockStore", ebs)
        csi = as_dict(pv_spec.get("csi"))
        return (csi.get("driver") or "", csi.get("volumeHandle") or "") if csi else ("", "")
    storage_class = index.classes.get(index.claim_class(claim))
    if storage_class is None or not storage_class.get("provisioner"):
        return "", ""
    return storage_class["provisioner"], f"<unbound>-{namespace}/{claim_name}"


def own_volumes(index: VolumeIndex, spec: dict, namespace: str, pod_name: str) -> dict[str, set[str]]:
    """A running pod's generic ephemeral CSI volumes per driver: its own, counted per pod
    (``PodVolumes.attach_own``), so a VolumeAttachment naming one must not count it again."""
    out: dict[str, set[str]] = {}
    for driver, names in _attachments(index, namespace, pod_claims(index, spec, namespace, pod_name)).items():
        mine = {name for name, own in names if own}
        if mine:
            out[driver] = mine
    return out


def _attachments(index: VolumeIndex, namespace: str, claims: list[Claim]) -> dict[str, set[tuple[str, bool]]]:
    """Per driver, (volume name, whether it is the pod's own generic ephemeral volume)."""
    out: dict[str, set[tuple[str, bool]]] = {}
    for c in claims:
        if c.data is not None:
            driver, handle = csi_volume(index, namespace, c.name, c.data)
            if driver:
                out.setdefault(driver, set()).add((f"{driver}/{handle}", c.ephemeral))
    return out
