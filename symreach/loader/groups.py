"""The v1 ``groups:`` section and ``query: {group: ...}`` (SPEC 5.1), checked strictly.

```yaml
groups:
  - name: ml/train                     # unique; a PodGroup, a Workload's pod group or one replica-key slice
    policy: {gang: {minCount: 4}}      # or {basic: {}}; a composite: {gang: {minGroupCount: 2}}
    composite: false                   # true: a CompositePodGroup, whose children name it as parent
    parent: ml/root                    # optional: the composite group above
    members:                           # pending pods in the scheduler's queue order (runs of one type)
      - {pod: launcher, count: 1}
      - {pod: worker, count: 4}
    rejected: "..."                    # optional: why the scheduler refuses the group (front ends set it)
```

Field names follow ``scheduling.k8s.io`` (``minCount``, ``minGroupCount``, ``basic``/``gang``:
exactly one). A pod type belongs to at most one group; its pods that run in
the initial configuration count as the group's running members.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Optional

from symreach.loader.shapes import FieldError, Path, boolean, integer, mapping, sequence, string
from symreach.model import BASIC, GANG, Group, Instance

GROUP_FIELDS = ("name", "policy", "composite", "parent", "members", "rejected")
MAX_MEMBERS = 100_000


def split_group_query(raw: object) -> tuple[object, Optional[str]]:
    """The file's query without its ``group`` field, and that field's value."""
    if not isinstance(raw, dict) or "group" not in raw:
        return raw, None
    rest = {k: v for k, v in raw.items() if k != "group"}
    if rest:
        raise FieldError(("query", next(iter(rest))), "a group query takes no other field")
    return None, string(raw["group"], ("query", "group"))


def attach_groups(inst: Instance, raw: object, target: Optional[str]) -> Instance:
    """The instance with its checked groups (and the file's group target, if any)."""
    groups = tuple(_group(inst, item, ("groups", i)) for i, item in enumerate(sequence(raw, ("groups",))))
    names: dict[str, int] = {}
    owner: dict[int, str] = {}
    for i, g in enumerate(groups):
        if g.name in names:
            raise FieldError(("groups", i, "name"), f"duplicate group name '{g.name}'")
        names[g.name] = i
        for j, (t, _) in enumerate(g.members):
            if owner.get(t, g.name) != g.name:
                raise FieldError(("groups", i, "members", j, "pod"),
                                 f"pod type '{inst.pod_types[t].name}' is already a member of group '{owner[t]}'")
            owner[t] = g.name
    for i, g in enumerate(groups):
        if g.parent is None:
            continue
        parent = names.get(g.parent)
        if parent is None:
            raise FieldError(("groups", i, "parent"), f"unknown group '{g.parent}'{_known(names)}")
        if not groups[parent].composite:
            raise FieldError(("groups", i, "parent"), f"group '{g.parent}' is not composite (composite: true)")
        seen = {g.name}
        up: Optional[str] = g.parent
        while up is not None:
            if up in seen:
                raise FieldError(("groups", i, "parent"), f"the parents of '{g.name}' form a cycle")
            seen.add(up)
            up = groups[names[up]].parent
    if target is not None and target not in names:
        raise FieldError(("query", "group"), f"unknown group '{target}'{_known(names)}")
    return replace(inst, groups=groups, group_target=target)


def _group(inst: Instance, raw: object, path: Path) -> Group:
    body = mapping(raw, path, GROUP_FIELDS, required=("name", "policy"))
    name = string(body["name"], path + ("name",))
    composite = boolean(body.get("composite"), path + ("composite",), False)
    policy, minimum = _policy(body["policy"], path + ("policy",), composite)
    parent = None if body.get("parent") is None else string(body["parent"], path + ("parent",))
    rejected = "" if body.get("rejected") is None else string(body["rejected"], path + ("rejected",))
    types = {t.name: i for i, t in enumerate(inst.pod_types)}
    members = []
    for j, item in enumerate(sequence(body.get("members"), path + ("members",))):
        mpath = path + ("members", j)
        entry = mapping(item, mpath, ("pod", "count"), required=("pod",))
        pod = string(entry["pod"], mpath + ("pod",))
        if pod not in types:
            raise FieldError(mpath + ("pod",), f"unknown pod type '{pod}'{_known(types)}")
        count = 1 if entry.get("count") is None else integer(entry["count"], mpath + ("count",), minimum=1,
                                                              maximum=MAX_MEMBERS)
        members.append((types[pod], count))
    if composite and members:
        raise FieldError(path + ("members",), "a composite group has no pods of its own: its children name it "
                                              "as their parent")
    return Group(name, tuple(members), policy, minimum, parent, composite, rejected)


def _policy(raw: object, path: Path, composite: bool) -> tuple[str, int]:
    """``{basic: {}}`` or ``{gang: {minCount: N}}`` (a composite: ``minGroupCount``); exactly one."""
    body = mapping(raw, path, (BASIC, GANG))
    given = [k for k in (BASIC, GANG) if k in body]
    if len(given) != 1:
        raise FieldError(path, "exactly one of basic and gang must be set")
    if given[0] == BASIC:
        mapping(body[BASIC] if body[BASIC] is not None else {}, path + (BASIC,), ())
        return BASIC, 1
    key = "minGroupCount" if composite else "minCount"
    gang = mapping(body[GANG], path + (GANG,), (key,), required=(key,))
    return GANG, integer(gang[key], path + (GANG, key), minimum=1, maximum=MAX_MEMBERS)


def _known(names: dict) -> str:
    shown = sorted(names)[:10]
    return f" (known: {', '.join(shown)})" if shown else " (the file has no groups)"
