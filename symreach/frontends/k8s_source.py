"""Reading Kubernetes YAML/JSON safely, and telling Kubernetes documents from v1 instances.

Dumps hold many documents (``---``) or one ``kind: List``; the v1 reader in
``symreach.loader.yaml_source`` reads exactly one, so this module composes a
stream with the same safe pieces: the SafeLoader, the 8 MiB file limit, an
alias-expansion budget checked before anything is built, and field -> line maps.
"""

from __future__ import annotations

import os
from typing import Union

import yaml

from symreach.errors import InputError
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


def read_documents(path: Union[str, os.PathLike]) -> tuple[list[object], list[Lines]]:
    """All YAML documents of ``path`` as plain data, each with its field -> line map.

    Safe by construction: composed with the SafeLoader, size-limited (8 MiB),
    and every document's alias-expanded size is measured before it is built.
    """
    from symreach.loader import yaml_source

    name = str(path)
    text = yaml_source.read_file_text(path)
    if name.lower().endswith(".json"):
        # ``kubectl get -o json`` output is YAML except that JSON allows tabs between
        # tokens; raw tabs cannot occur inside JSON strings, so this keeps values and lines.
        text = text.replace("\t", " ")
    return read_documents_text(text, name)


def read_documents_text(text: str, filename: str = "<memory>") -> tuple[list[object], list[Lines]]:
    """Like ``read_documents`` for text already in memory."""
    from symreach.loader import yaml_source

    budget = yaml_source.MAX_EXPANDED_NODES
    docs: list[object] = []
    all_lines: list[Lines] = []
    loader = yaml.SafeLoader(text)
    try:
        while loader.check_node():
            node = loader.get_node()
            if node is None:  # pragma: no cover - check_node guarantees a document
                break
            yaml_source.check_size(node, budget, filename)
            builder = yaml_source.DocumentBuilder(filename)
            docs.append(builder.build(node, ()))
            all_lines.append(builder.lines)
            budget -= max(1, len(builder.lines))
            if budget <= 0:
                raise InputError("the documents expand to more than "
                                 f"{yaml_source.MAX_EXPANDED_NODES} nodes in total (alias bomb?)", filename)
    except yaml.MarkedYAMLError as err:
        raise yaml_source.yaml_error(err, filename) from None
    except yaml.YAMLError as err:
        raise InputError(f"invalid YAML: {err}", filename) from None
    except RecursionError:
        raise InputError("the document is nested too deeply", filename) from None
    finally:
        loader.dispose()
    return docs, all_lines
