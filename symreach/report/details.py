"""What a failing filter is about, named: the taint, the key, the amounts, the port, the domain.

The kube-scheduler's reason string ("Insufficient cpu") stays verbatim where
it is (tools parse it, the kso agreement compares it); ``details`` gives one
sentence beside each reason that names the object ("requests 1500m, 500m
free of 4000m"). Every figure comes from the executable semantics' own
functions on the same configuration, so a detail never disagrees with the
verdict it explains.
"""

from __future__ import annotations

from typing import Any, Mapping

from symreach import reasons, semantics
from symreach.certify.node_filters import UNSCHEDULABLE_TAINT, requirement_ok, tolerates
from symreach.model import KUBERNETES, PODS_RESOURCE, Config, Instance
from symreach.report.objects import (
    HOSTNAME,
    amount_text,
    domain_text,
    domain_value_text,
    requirement_text,
    spread_text,
    taint_text,
    type_name,
    term_text,
)


def details(inst: Instance, t: int, n: int, sigma: Config, why: tuple[str, ...]) -> tuple[str, ...]:
    """One detail per reason in ``why`` (the reasons of one failing plugin), "" when
    there is nothing to add."""
    return tuple(detail(inst, t, n, sigma, reason) for reason in why)


def detail(inst: Instance, t: int, n: int, sigma: Config, reason: str) -> str:
    """The object behind one reason of Hard(t, n, sigma) or of the Deploy transition."""
    if reason.startswith("Insufficient "):
        return _insufficient(inst, t, n, sigma, reason.removeprefix("Insufficient "))
    handler = _HANDLERS.get(reason)
    return handler(inst, t, n, sigma) if handler is not None else ""


def with_details(reasons_: tuple[str, ...], notes: tuple[str, ...]) -> str:
    """``reason: detail`` for each reason, joined; a reason without detail stands alone."""
    return "; ".join(f"{r}: {d}" if d else r for r, d in zip(reasons_, notes + ("",) * len(reasons_)))


# ---- static filters -------------------------------------------------------------------

def _manifest(inst: Instance, t: int) -> Mapping[str, Any]:
    return inst.pod_types[t].manifest or {}


def _tolerations(inst: Instance, t: int) -> list:
    return [tol for tol in _manifest(inst, t).get("tolerations") or () if isinstance(tol, Mapping)]


def _unschedulable(inst: Instance, t: int, n: int, sigma: Config) -> str:
    return (f"{inst.nodes[n].name} is cordoned (spec.unschedulable) and the pod does not tolerate "
            f"{UNSCHEDULABLE_TAINT}:NoSchedule")


def _node_name(inst: Instance, t: int, n: int, sigma: Config) -> str:
    wanted = _manifest(inst, t).get("nodeName")
    return f"the pod's nodeName is {wanted}" if wanted else ""


def _taints(inst: Instance, t: int, n: int, sigma: Config) -> str:
    node = inst.nodes[n]
    tolerations = _tolerations(inst, t)
    known = inst.pod_types[t].manifest is not None
    bad = [taint for taint in node.taints if taint.effect in ("NoSchedule", "NoExecute")
           and not any(tolerates(tol, taint.key, taint.value, taint.effect) for tol in tolerations)]
    if not bad:
        return ""
    what = ", ".join(taint_text(taint) for taint in bad)
    return f"untolerated taint {what} on {node.name}" if known else f"taints on {node.name}: {what}"


def _node_affinity(inst: Instance, t: int, n: int, sigma: Config) -> str:
    node = inst.nodes[n]
    manifest = _manifest(inst, t)
    for key, value in (manifest.get("nodeSelector") or {}).items():
        have = node.labels.get(key)
        if have != str(value):
            now = f"{node.name} has {key}={have}" if have is not None else f"{node.name} has no {key} label"
            return f"nodeSelector {key}={value}: {now}"
    affinity = (manifest.get("affinity") or {}).get("nodeAffinity") or {}
    terms = (affinity.get("requiredDuringSchedulingIgnoredDuringExecution") or {}).get("nodeSelectorTerms")
    if not terms:
        return ""
    failing = []
    for term in terms:
        for req in term.get("matchExpressions") or ():
            have = node.labels.get(req.get("key"))
            if not requirement_ok(req, have):
                now = f"{req.get('key')}={have}" if have is not None else f"no {req.get('key')} label"
                failing.append(f"{requirement_text(req)} ({node.name} has {now})")
                break
        else:
            for req in term.get("matchFields") or ():
                if not requirement_ok(req, node.name if req.get("key") == "metadata.name" else None):
                    failing.append(f"{requirement_text(req)} (the node is {node.name})")
                    break
            else:
                if not term.get("matchExpressions") and not term.get("matchFields"):
                    failing.append("an empty term (matches no node)")
    if not failing:
        return ""
    head = "required node affinity" if len(failing) == 1 else f"none of the {len(failing)} required node affinity terms holds"
    return f"{head}: " + "; ".join(failing)


def _prefilter(inst: Instance, t: int, n: int, sigma: Config) -> str:
    return f"the required node affinity's matchFields metadata.name lists do not include {inst.nodes[n].name}"


def _conflict(inst: Instance, t: int, n: int, sigma: Config) -> str:
    return "the metadata.name lists of the required node affinity term(s) name no node in common"


def _max_per_node(inst: Instance, t: int, n: int, sigma: Config) -> str:
    bound = inst.pod_types[t].max_per_node
    return f"maxPerNode {bound}: {sigma[inst.pair(t, n)]} already run on {inst.nodes[n].name}"


# ---- dynamic filters ------------------------------------------------------------------

def _ports(inst: Instance, t: int, n: int, sigma: Config) -> str:
    mine = inst.pod_types[t].host_ports
    for u, other in enumerate(inst.pod_types):
        if not sigma[inst.pair(u, n)]:
            continue
        for a in sorted(mine, key=lambda p: (p.port, p.protocol, p.host_ip)):
            for b in other.host_ports:
                if a.conflicts(b):
                    return f"host port {a.port}/{a.protocol} is held by {type_name(inst, u)} on {inst.nodes[n].name}"
    return ""


def _too_many_pods(inst: Instance, t: int, n: int, sigma: Config) -> str:
    node = inst.nodes[n]
    running = semantics.used(inst, sigma, n, PODS_RESOURCE)
    return f"{running} pods run on {node.name}, which allows {node.capacity.get(PODS_RESOURCE, 0)}"


def _insufficient(inst: Instance, t: int, n: int, sigma: Config, resource: str) -> str:
    node = inst.nodes[n]
    need = semantics.request(inst, t, resource)
    capacity = node.capacity.get(resource, 0)
    free = capacity - semantics.used(inst, sigma, n, resource)
    if capacity == 0:
        return f"requests {amount_text(resource, need)}, {node.name} has none"
    return (f"requests {amount_text(resource, need)}, {amount_text(resource, max(free, 0))} free of "
            f"{amount_text(resource, capacity)} on {node.name}")


def _spread(inst: Instance, t: int, n: int, sigma: Config) -> str:
    kube = inst.profile == KUBERNETES
    for h in inst.pod_types[t].spread:
        what = spread_text(inst, t, h)
        d = h.topology.domain_of[n]
        if d is None:
            return f"{inst.nodes[n].name} has no {h.topology.key} label ({what})"
        if not kube and n not in h.eligible:
            return f"{inst.nodes[n].name} is not eligible for {what}"
        here = semantics.domain_count(inst, sigma, h, d)
        low = semantics.global_min(inst, sigma, h)
        if here + int(h.self_match) - low > h.max_skew:
            mine = " + this pod" if h.self_match else ""
            return (f"{what}: {domain_value_text(h.topology, d)} would have {here}{mine} matching, "
                    f"{_fewest(inst, sigma, h, low)}, so the skew would be {here + int(h.self_match) - low}")
    return ""


def _fewest(inst: Instance, sigma: Config, h, low: int) -> str:
    domains = sorted({h.topology.domain_of[m] for m in h.eligible} - {None})
    if len(domains) < h.min_domains:
        return f"only {len(domains)} of minDomains {h.min_domains} domains, so the minimum counts as 0"
    at_low = [h.topology.values[e] for e in domains if semantics.domain_count(inst, sigma, h, e) == low]
    return f"the fewest in a domain is {low} ({', '.join(at_low[:3])}{' ...' if len(at_low) > 3 else ''})"


def _affinity(inst: Instance, t: int, n: int, sigma: Config) -> str:
    terms = inst.pod_types[t].affinity
    kube = inst.profile == KUBERNETES
    node = inst.nodes[n]
    witnesses = semantics.affinity_witness_types(inst, t)
    for term in terms:
        text = term_text(inst, t, term)
        where = domain_text(term.topology, n, inst)
        if not where:
            return f"{node.name} has no {term.topology.key} label (term {text})"
        selects = witnesses if kube else term.selects
        if not semantics.present_on(inst, sigma, selects, term.topology.domain_nodes(n)):
            every = " (and every other term)" if kube and len(terms) > 1 else ""
            elsewhere = _one_on(inst, sigma, selects, range(len(inst.nodes)))
            tail = (f"; {elsewhere} elsewhere, so the self-affinity waiver does not apply" if elsewhere
                    and t in selects else "")
            return f"no pod matching {text}{every} runs {where}{tail}"
    return ""


def _anti_affinity(inst: Instance, t: int, n: int, sigma: Config) -> str:
    for term in inst.pod_types[t].anti_affinity:
        found = _one_on(inst, sigma, term.selects, term.topology.domain_nodes(n))
        if found:
            return f"term {term_text(inst, t, term, anti=True)}: {found}{_same_domain(term.topology, n)}"
    return ""


def _existing_anti_affinity(inst: Instance, t: int, n: int, sigma: Config) -> str:
    for u, other in enumerate(inst.pod_types):
        for term in other.anti_affinity:
            if t not in term.blocks or term.topology.domain_of[n] is None:
                continue
            for m in sorted(term.topology.domain_nodes(n)):
                if sigma[inst.pair(u, m)]:
                    return (f"{type_name(inst, u)} on {inst.nodes[m].name} has anti-affinity "
                            f"{term_text(inst, u, term, anti=True)}{_same_domain(term.topology, n)}")
    return ""


def _same_domain(topology, n: int) -> str:
    """"" over hostname (the node says it), else ``(same zone=eu-west-1b)``."""
    if topology.key == HOSTNAME:
        return ""
    return f" (same {domain_value_text(topology, topology.domain_of[n])})"


def _one_on(inst: Instance, sigma: Config, types, nodes) -> str:
    """"X runs on N" for the first running pod of ``types`` on ``nodes``, else ""."""
    for u in sorted(types):
        for m in sorted(nodes):
            if sigma[inst.pair(u, m)]:
                return f"{type_name(inst, u)} runs on {inst.nodes[m].name}"
    return ""


_HANDLERS = {
    reasons.NODE_UNSCHEDULABLE: _unschedulable,
    reasons.NODE_NAME: _node_name,
    reasons.TAINT_TOLERATION: _taints,
    reasons.NODE_AFFINITY: _node_affinity,
    reasons.PREFILTER_NODE_AFFINITY: _prefilter,
    reasons.NODE_AFFINITY_CONFLICT: _conflict,
    reasons.NODE_PORTS: _ports,
    reasons.TOO_MANY_PODS: _too_many_pods,
    reasons.SPREAD: _spread,
    reasons.SPREAD_MISSING_LABEL: _spread,
    reasons.POD_AFFINITY: _affinity,
    reasons.POD_ANTI_AFFINITY: _anti_affinity,
    reasons.EXISTING_ANTI_AFFINITY: _existing_anti_affinity,
    semantics.REASON_MAX_PER_NODE: _max_per_node,
}

