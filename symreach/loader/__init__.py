"""Front end for instance format v1 (YAML or JSON) -> ``symreach.model.Instance``.

Pipeline: ``yaml_source`` (safe parse, lines) -> ``v1`` (structure, fields)
-> ``resolve`` (labels to index sets) -> ``query``. Every problem surfaces as
one ``InputError`` naming the file, line and field path.
"""

from __future__ import annotations

import os
from typing import Mapping, Optional, Sequence, Union

from symreach.errors import InputError
from symreach.loader.collector import collector_paused
from symreach.loader.groups import attach_groups, split_group_query
from symreach.loader.query import build_query, query_from_document
from symreach.loader.resolve import build_instance
from symreach.loader.v1 import freeze, parse_document, thaw
from symreach.loader.yaml_source import MAX_EXPANDED_NODES, MAX_FILE_BYTES, read_file, read_text
from symreach.model import Instance, Query
from symreach.loader.shapes import FieldError, Path, format_path

__all__ = [
    "InputError", "MAX_EXPANDED_NODES", "MAX_FILE_BYTES", "freeze", "load_document", "load_instance",
    "load_text", "parse_query", "thaw",
]


def load_instance(path: Union[str, os.PathLike]) -> Instance:
    """Load a v1 instance from a YAML or JSON file."""
    with collector_paused():
        data, lines = read_file(path)
        return load_document(data, filename=str(path), lines=lines)


def load_text(text: str, filename: str = "<memory>") -> Instance:
    """Load a v1 instance from YAML/JSON text (tests, generated instances)."""
    with collector_paused():
        data, lines = read_text(text, filename)
        return load_document(data, filename=filename, lines=lines)


def load_document(
    doc: object, filename: str = "<memory>", lines: Optional[Mapping[tuple, int]] = None,
    *, default_hostname: bool = True,
) -> Instance:
    """Check and resolve a parsed v1 document; ``lines`` maps field paths to 1-based lines.

    ``default_hostname=False`` is for documents converted from Kubernetes Nodes,
    which carry exactly the labels the cluster gave them.
    """
    try:
        with collector_paused():
            document = parse_document(doc, default_hostname=default_hostname)
            instance = build_instance(document, filename)
            raw_query, group_target = split_group_query(document.query)
            if document.groups is not None or group_target is not None:
                instance = attach_groups(instance, document.groups, group_target)
            query = query_from_document(instance, raw_query)
    except FieldError as err:
        raise InputError(err.problem, filename, line_of(lines, err.path), format_path(err.path)) from None
    return instance.with_query(query) if query is not None else instance


def parse_query(
    instance: Instance,
    pod: Optional[str],
    node: Optional[str] = None,
    node_selector: Optional[dict[str, str]] = None,
    with_pairs: Sequence[tuple[str, str]] = (),
    *,
    count: Optional[int] = None,
    more: bool = False,
    domain: Optional[tuple[str, str]] = None,
) -> Query:
    """A query from separate values (command-line options, a benchmark's spec).

    An error names the query field (``pod``, ``nodeSelector``, ``with #2``);
    the command line renames it after its option (``cli.options``).
    """

    def locate(part: str, index: Optional[int]) -> Path:
        return ("with", index) if index is not None else (part,)

    try:
        return build_query(instance, pod, node, node_selector, list(with_pairs), locate,
                           count=count, more=more, domain=domain)
    except FieldError as err:
        where = err.path[0] if len(err.path) == 1 else f"{err.path[0]} #{err.path[1] + 1}"
        raise InputError(err.problem, field_path=str(where)) from None


def line_of(lines: Optional[Mapping[tuple, int]], path: Path) -> Optional[int]:
    """The line of ``path`` or of its closest recorded ancestor."""
    if not lines:
        return None
    for end in range(len(path), -1, -1):
        line = lines.get(tuple(path[:end]))
        if line is not None:
            return line
    return None
