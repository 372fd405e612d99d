"""Reading Kubernetes YAML/JSON safely and fast, and telling Kubernetes documents from v1 instances.

Dumps hold many documents (``---``) or one ``kind: List``; this module reads
a whole stream with the pieces of ``symreach.loader.yaml_source``: libyaml
composition with kubectl's scalar rules, ``json`` for JSON, the input size
limit, and the alias budget checked while building. Reading without field
lines is about twice as fast, so ``read_documents_text(..., lines=False)`` is
the first pass of ``symreach.frontends.dispatch``; lines are read again only
when an error must name one.
"""

from __future__ import annotations

import os
from typing import Union

from symreach.loader import yaml_source
from symreach.loader.shapes import Path

Lines = dict[Path, int]


def _is_object(data: object) -> bool:
    return isinstance(data, dict) and "version" not in data and ("kind" in data or "apiVersion" in data)


def is_kubernetes_document(data: object) -> bool:
    """True for a Kubernetes object, a ``kind: List``, or a list of documents that are such."""
    if isinstance(data, list):
        docs = [d for d in data if d is not None]
        return bool(docs) and all(_is_object(d) for d in docs)
    return _is_object(data)


def read_documents(path: Union[str, os.PathLike], *, lines: bool = True,
                   max_bytes: int = yaml_source.MAX_FILE_BYTES) -> tuple[list[object], list[Lines]]:
    """All YAML documents (or the one JSON document) of ``path``, each with its field -> line map."""
    name = str(path)
    return read_documents_text(yaml_source.read_file_text(path, max_bytes), name, lines=lines)


def read_documents_text(text: str, filename: str = "<memory>", *,
                        lines: bool = True) -> tuple[list[object], list[Lines]]:
    """Like ``read_documents`` for text already in memory (standard input, a pipe)."""
    pairs = yaml_source.read_documents_text(text, filename, lines=lines, kubectl=True)
    return [data for data, _ in pairs], [doc_lines for _, doc_lines in pairs]
