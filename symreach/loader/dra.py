"""A pod type's ``dra`` (format v1, kubernetes profile): what DynamicResources decided.

The Kubernetes front end runs the plugin's PreFilter and Filter on the
resource.k8s.io objects (``frontends.k8s_dra``) and writes the outcome here,
so the model needs no notion of devices:

    dra:
      preFilter: {plugin: DynamicResources, reasons: ['could not find ResourceClaim "default/gpu"']}
      filter: [{node: n2, plugin: DynamicResources, reasons: [cannot allocate all claims]}]
      allocates: true          # scheduling the pod allocates devices to a claim
      claims: [gpu]            # the ResourceClaims it uses (named, or generated for it), in its namespace

DynamicResources is the last Filter plugin of the v1.35 profile and its
PreFilter the last PreFilter: a PreFilter rejection blocks every node but
those an earlier PreFilter rejection (NodeAffinity's, a volume plugin's)
already blocks; a Filter failure blocks its node and is reported only when
every other plugin passes there (``Instance.volume_failures`` with
``AFTER_ALL``). ``allocates`` and ``claims`` do not change the verdicts;
they say which types read device allocation (the front end's caveats).
"""

from __future__ import annotations

from typing import Optional

from symreach.loader.shapes import FieldError, Path, boolean, mapping, sequence, string, string_list
from symreach.records import record

PLUGIN = "DynamicResources"
DRA_FIELDS = ("preFilter", "filter", "allocates", "claims")


@record
class DraSpec:
    prefilter: Optional[tuple[str, tuple[str, ...]]] = None
    filters: tuple[tuple[str, str, tuple[str, ...]], ...] = ()   # (node, plugin, reasons)
    allocates: bool = False
    claims: tuple[str, ...] = ()


def parse_dra(raw: object, path: Path, node_names: set[str]) -> DraSpec:
    if raw is None:
        return DraSpec()
    body = mapping(raw, path, DRA_FIELDS)
    prefilter = None
    if body.get("preFilter") is not None:
        where = path + ("preFilter",)
        prefilter = _verdict(mapping(body["preFilter"], where, ("plugin", "reasons"), required=("plugin", "reasons")),
                             where)
    filters = tuple(_entry(item, path + ("filter", i), node_names)
                    for i, item in enumerate(sequence(body.get("filter"), path + ("filter",))))
    nodes = [node for node, _, _ in filters]
    if len(set(nodes)) != len(nodes):
        raise FieldError(path + ("filter",), "a node is listed twice")
    if prefilter is not None and filters:
        raise FieldError(path + ("filter",), "a PreFilter rejection leaves no Filter verdicts")
    return DraSpec(prefilter, filters, boolean(body.get("allocates"), path + ("allocates",), False),
                   tuple(string_list(body.get("claims"), path + ("claims",))))


def _entry(raw: object, where: Path, node_names: set[str]) -> tuple[str, str, tuple[str, ...]]:
    """One ``filter`` item: (node, plugin, reasons)."""
    entry = mapping(raw, where, ("node", "plugin", "reasons"), required=("node", "plugin", "reasons"))
    if string(entry["node"], where + ("node",)) not in node_names:
        raise FieldError(where + ("node",), f"unknown node '{entry['node']}'")
    return (entry["node"], *_verdict(entry, where))


def _verdict(raw: dict, path: Path) -> tuple[str, tuple[str, ...]]:
    plugin = string(raw.get("plugin"), path + ("plugin",))
    if plugin != PLUGIN:
        raise FieldError(path + ("plugin",), f"expected {PLUGIN}, got '{plugin}'")
    reasons = tuple(string_list(raw.get("reasons"), path + ("reasons",)))
    if not reasons:
        raise FieldError(path + ("reasons",), "at least one reason is needed")
    return plugin, reasons
