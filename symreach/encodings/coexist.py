"""Which affinity witnesses can be present at the moment a pod is deployed.

The may-be-present fixpoint (``preprocess`` step 3) adds ``(t, n)`` once every
affinity term of ``t`` has a witness pair ``(u, m)`` in its domain. A witness
must be *present* when ``t`` is deployed on ``n``, so after the deployment
both pods run together. Some pairs can never run beside ``(t, n)`` whatever
else the configuration holds, because one of the checks of ``Hard(t, n, .)``
that only get worse when pods are added (SPEC 2.2) already fails with that
single pod:

- on the same node (``m == n``): their host ports clash (kubernetes), or
  their requests together exceed ``n``'s capacity (kubernetes also counts the
  ``pods`` unit of each);
- ``t``'s own anti-affinity selects ``u`` in a topology where ``m`` and ``n``
  share a value (a node lacking the key is ignored);
- kubernetes: ``u``'s anti-affinity blocks ``t`` in such a topology (the
  existing pods' check).

*Lemma.* If ``clash(t, n, u, m)``, no reachable configuration in which
``(t, n)`` is deployed contains ``(u, m)``: each check above fails in every
configuration that contains ``(u, m)`` (ports and anti-affinity test the
presence of a pod, capacity sums non-negative requests). So such a pair can
never be the witness that enables deploying ``(t, n)``, and the fixpoint may
ignore it; a typical case is a workload that needs, on its own host, a pod
holding the same host port (a pair the plain fixpoint would keep, leaving a
symbolic engine to prove it impossible on thousands of nodes).

The rule is written from the model here; the may-fixpoint certificate
checker (``symreach.certify.may_fixpoint``) re-derives it from the
executable semantics instead.
"""

from __future__ import annotations

from symreach.model import KUBERNETES, PODS_RESOURCE, Instance, ports_conflict


def clash(inst: Instance, t: int, n: int, u: int, m: int) -> bool:
    """Whether a pod of ``u`` on ``m`` rules out deploying ``t`` on ``n`` (see the lemma)."""
    kube = inst.profile == KUBERNETES
    pod, other = inst.pod_types[t], inst.pod_types[u]
    if m == n and _same_node_clash(inst, t, u, n, kube):
        return True
    for term in pod.anti_affinity:
        if u in term.selects and _share(term.topology.domain_of, n, m):
            return True
    if kube:
        for term in other.anti_affinity:
            if t in term.blocks and _share(term.topology.domain_of, n, m):
                return True
    return False


def _share(domain_of, n: int, m: int) -> bool:
    d = domain_of[n]
    return d is not None and domain_of[m] == d


def _same_node_clash(inst: Instance, t: int, u: int, n: int, kube: bool) -> bool:
    pod, other, node = inst.pod_types[t], inst.pod_types[u], inst.nodes[n]
    if kube:
        if ports_conflict(pod.host_ports, other.host_ports):
            return True
        if PODS_RESOURCE in node.capacity and node.capacity[PODS_RESOURCE] < 2:
            return True
        return any(need > 0 and other.requests.get(r, 0) + need > node.capacity.get(r, 0)
                   for r, need in pod.requests.items() if r != PODS_RESOURCE)
    return any(other.requests.get(r, 0) + pod.requests.get(r, 0) > node.capacity.get(r, 0)
               for r in set(node.capacity) | set(pod.requests))
