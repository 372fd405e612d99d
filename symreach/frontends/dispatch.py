"""One entry point for every input file: sniff its kind, hand it to its front end.

Front ends all end in the same normalized ``Instance``; this module only
decides which one reads the file, by the top-level keys of the first YAML
document (read as parser events, so nothing is constructed or expanded).
"""

from __future__ import annotations

from pathlib import Path

import yaml

from symreach.errors import InputError
from symreach.model import Instance

_SNIFF_BYTES = 1 << 16


def input_kind(path: Path) -> str:
    """``"v1"`` for symreach instances, ``"kubernetes"`` for manifests and dumps."""
    try:
        with open(path, "rb") as handle:
            head = handle.read(_SNIFF_BYTES).decode("utf-8", errors="replace")
    except OSError as exc:
        raise InputError(f"cannot read file: {exc.strerror}", filename=str(path)) from None
    keys = _top_level_keys(head)
    if "version" in keys and "apiVersion" not in keys:
        return "v1"
    if keys & {"apiVersion", "kind", "items", "metadata", "spec"}:
        return "kubernetes"
    return "v1"  # let the strict v1 loader name what is wrong


def _top_level_keys(text: str) -> set[str]:
    keys: set[str] = set()
    depth = 0
    expect_key = False
    try:
        for event in yaml.parse(text, Loader=yaml.SafeLoader):
            if isinstance(event, (yaml.MappingStartEvent, yaml.SequenceStartEvent)):
                depth += 1
                expect_key = isinstance(event, yaml.MappingStartEvent) and depth == 1
                continue
            if isinstance(event, (yaml.MappingEndEvent, yaml.SequenceEndEvent)):
                depth -= 1
                expect_key = depth == 1
                if depth == 0:
                    break
                continue
            if depth == 1 and isinstance(event, yaml.ScalarEvent):
                if expect_key:
                    keys.add(event.value)
                expect_key = not expect_key
            elif depth == 1 and isinstance(event, yaml.AliasEvent):
                expect_key = not expect_key
    except yaml.YAMLError:
        pass  # truncated sniff window or bad YAML: the real loader reports it
    return keys


def load_any(path: Path) -> Instance:
    return load_with_context(path)[0]


def load_with_context(path: Path) -> tuple[Instance, dict]:
    """The instance and what its front end knows beyond the model.

    For Kubernetes input the context holds ``initial_pod_names`` (the real
    names of running pods, so exported deletions name them) and the front
    end's ``report``.
    """
    if input_kind(Path(path)) == "kubernetes":
        from symreach.frontends.kubernetes import load_kubernetes_with_report

        instance, report = load_kubernetes_with_report(path)
        return instance, {"initial_pod_names": report.initial_pod_names, "report": report}
    from symreach.loader import load_instance

    return load_instance(path), {}


def resolve_pod(instance: Instance, name: str) -> int:
    """A pod type by exact name, or by unique suffix after ``namespace/``."""
    names = [t.name for t in instance.pod_types]
    if name in names:
        return names.index(name)
    matches = [i for i, n in enumerate(names) if n.split("/", 1)[-1] == name]
    if len(matches) == 1:
        return matches[0]
    hint = "ambiguous" if matches else "unknown"
    raise InputError(f"{hint} pod type {name!r}; known: {', '.join(names[:20])}", field_path="--pod")
