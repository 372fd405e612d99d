"""Safe YAML/JSON reading into plain data, with the line of every field.

Why not ``yaml.safe_load``: we need lines for error messages, and we must
refuse hostile inputs before expanding them. So we ``compose`` with the
SafeLoader (never a loader that can build Python objects), measure the
expanded size of the node graph (aliases make it a DAG, or even a cycle),
and only then build dicts, lists and scalars. JSON is read the same way.
"""

from __future__ import annotations

import os
from pathlib import Path as FsPath
from typing import Optional, Union

import yaml
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from symreach.errors import InputError
from symreach.loader.shapes import Path

# Files larger than this are refused before reading (instances are small text).
MAX_FILE_BYTES = 8 * 1024 * 1024
# Refuse documents whose alias-expanded node count exceeds this (alias bombs).
MAX_EXPANDED_NODES = 1_000_000

Lines = dict[Path, int]

# libyaml's safe loader composes ~5x faster; composing builds no Python objects either way.
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_BYTE_OFFSETS = _LOADER is not yaml.SafeLoader  # libyaml reports byte positions

_MAP_TAG = "tag:yaml.org,2002:map"
_SEQ_TAG = "tag:yaml.org,2002:seq"
_MERGE_TAG = "tag:yaml.org,2002:merge"
_STR_TAG = "tag:yaml.org,2002:str"


def read_file(path: Union[str, os.PathLike], max_bytes: int = MAX_FILE_BYTES) -> tuple[object, Lines]:
    """Read one YAML or JSON document from ``path``: (data, lines by field path)."""
    return read_text(read_file_text(path, max_bytes), str(path))


def read_text(text: str, filename: str = "<memory>", max_nodes: int = MAX_EXPANDED_NODES) -> tuple[object, Lines]:
    """Parse exactly one YAML document from ``text``: (data, lines by field path)."""
    documents = read_documents_text(text, filename, max_nodes, at_most=1)
    if not documents:
        raise InputError("the file contains no document", filename)
    return documents[0]


def read_documents_file(path: Union[str, os.PathLike], max_bytes: int = MAX_FILE_BYTES) -> list[tuple[object, Lines]]:
    """Every document of a multi-document YAML file, each as (data, lines)."""
    return read_documents_text(read_file_text(path, max_bytes), str(path))


def read_documents_text(
    text: str, filename: str = "<memory>", max_nodes: int = MAX_EXPANDED_NODES, at_most: Optional[int] = None
) -> list[tuple[object, Lines]]:
    """Every document of ``text`` as (data, lines); ``max_nodes`` bounds all of them together.

    An empty document (``---`` with nothing after it) gives ``None``. With
    ``at_most``, more documents than that is an error naming the first extra one.
    """
    if FsPath(filename).suffix.lower() == ".json":
        # JSON allows tabs between tokens, YAML does not; raw tabs cannot occur
        # inside valid JSON strings, so replacing them keeps values and lines.
        text = text.replace("\t", " ")
    used = 0
    out: list[tuple[object, Lines]] = []
    for root in _compose_all(text, filename, at_most):
        try:
            used += _expanded_size(root, max_nodes - used, filename)
            if used > max_nodes:
                raise InputError(f"the document expands to more than {max_nodes} nodes (alias bomb?)", filename)
            builder = DocumentBuilder(filename)
            out.append((builder.build(root, ()), builder.lines))
        except RecursionError:
            raise InputError("the document is nested too deeply", filename) from None
    return out


def read_file_text(path: Union[str, os.PathLike], max_bytes: int = MAX_FILE_BYTES) -> str:
    """The text of ``path``, refusing files over ``max_bytes`` and non-UTF-8 content."""
    name = str(path)
    try:
        size = os.stat(path).st_size
        if size > max_bytes:
            raise InputError(f"file is too large ({size} bytes; the limit is {max_bytes})", name)
        with open(path, "rb") as handle:
            raw = handle.read(max_bytes + 1)
    except OSError as err:
        raise InputError(f"cannot read file: {err.strerror or err}", name) from None
    if len(raw) > max_bytes:
        raise InputError(f"file is too large (more than {max_bytes} bytes)", name)
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as err:
        raise InputError(f"not UTF-8 text (byte {err.start})", name) from None


def _compose_all(text: str, filename: str, at_most: Optional[int]) -> list[Node]:
    """Compose every document (nodes only: no Python object is built here)."""
    try:
        loader = _LOADER(text)  # the reader may already reject control characters here
    except yaml.reader.ReaderError as err:
        raise _reader_error(err, text, filename) from None
    try:
        documents: list[Node] = []
        while loader.check_node():
            node = loader.get_node()
            if node is None:  # pragma: no cover - check_node guarantees a document
                break
            if at_most is not None and len(documents) >= at_most:
                line = node.start_mark.line + 1
                raise InputError("expected a single YAML document, found several", filename, line)
            documents.append(node)
        return documents
    except yaml.reader.ReaderError as err:
        raise _reader_error(err, text, filename) from None
    except yaml.MarkedYAMLError as err:
        raise yaml_error(err, filename) from None
    except yaml.YAMLError as err:
        raise InputError(f"invalid YAML: {err}", filename) from None
    except RecursionError:
        raise InputError("the document is nested too deeply", filename) from None
    finally:
        loader.dispose()


def _reader_error(err: yaml.reader.ReaderError, text: str, filename: str) -> InputError:
    """Control characters and the like; PyYAML reports a position, we report a line."""
    char = err.character
    shown = f"U+{char:04X}" if isinstance(char, int) else repr(char)
    line = None
    if isinstance(err.position, int):
        prefix = text.encode("utf-8")[: err.position] if _BYTE_OFFSETS else text[: err.position]
        line = prefix.count("\n" if isinstance(prefix, str) else b"\n") + 1
    return InputError(f"invalid YAML: character {shown} is not allowed", filename, line)


def yaml_error(err: yaml.MarkedYAMLError, filename: str) -> InputError:
    mark = err.problem_mark or err.context_mark
    line = mark.line + 1 if mark is not None else None
    problem = " ".join(p for p in (err.context, err.problem) if p) or "invalid YAML"
    return InputError(f"invalid YAML: {problem}", filename, line)


def check_size(root: Node, limit: int, filename: str) -> int:
    """The alias-expanded node count of ``root``; refuses cycles and more than ``limit``."""
    total = _expanded_size(root, limit, filename)
    if total > limit:
        raise InputError(f"the document expands to more than {limit} nodes (alias bomb?)", filename)
    return total


def _expanded_size(root: Node, limit: int, filename: str) -> int:
    """Node count with aliases expanded, memoised per node; capped at ``limit + 1``."""
    memo: dict[int, int] = {}
    active: set[int] = set()

    def size(node: Node) -> int:
        key = id(node)
        if key in memo:
            return memo[key]
        if key in active:
            raise InputError("recursive YAML alias (a node contains itself)", filename, node.start_mark.line + 1)
        active.add(key)
        total = 1
        # A scalar child counts 1 (it contains nothing): counted inline, not recursed into.
        if isinstance(node, SequenceNode):
            for child in node.value:
                total += 1 if type(child) is ScalarNode else size(child)
                if total > limit:
                    break
        elif isinstance(node, MappingNode):
            for k, v in node.value:
                total += (1 if type(k) is ScalarNode else size(k)) + (1 if type(v) is ScalarNode else size(v))
                if total > limit:
                    break
        active.discard(key)
        total = min(total, limit + 1)
        memo[key] = total
        return total

    return size(root)


class DocumentBuilder:
    """Builds plain data from composed nodes, recording lines by field path."""

    def __init__(self, filename: str) -> None:
        self.filename = filename
        self.lines: Lines = {}
        self._scalars = yaml.SafeLoader("")  # only its constructor is used, for scalars

    def error(self, node: Node, problem: str) -> InputError:
        return InputError(problem, self.filename, node.start_mark.line + 1)

    def build(self, node: Node, path: Path) -> object:
        self.lines.setdefault(path, node.start_mark.line + 1)
        if isinstance(node, ScalarNode):
            return self.scalar(node)
        if isinstance(node, SequenceNode):
            if node.tag != _SEQ_TAG:
                raise self.error(node, f"unsupported YAML tag {node.tag}")
            return [self.build(child, path + (i,)) for i, child in enumerate(node.value)]
        if isinstance(node, MappingNode):
            return self.mapping(node, path)
        raise self.error(node, "unsupported YAML node")  # pragma: no cover

    def scalar(self, node: ScalarNode) -> object:
        if node.tag == _STR_TAG:
            return node.value  # what the constructor returns for a string, without its bookkeeping
        try:
            return self._scalars.construct_object(node, deep=True)
        except yaml.YAMLError as err:
            problem = getattr(err, "problem", None) or str(err)
            raise self.error(node, f"invalid YAML value: {problem}") from None
        except (ValueError, OverflowError, TypeError) as err:
            raise self.error(node, f"invalid YAML value: {err}") from None

    def mapping(self, node: MappingNode, path: Path) -> dict:
        if node.tag != _MAP_TAG:
            raise self.error(node, f"unsupported YAML tag {node.tag}")
        seen: dict[object, tuple[Node, Node]] = {}
        merges = False
        for key_node, value_node in node.value:
            if key_node.tag == _MERGE_TAG:
                merges = True
                continue
            key = self.key(key_node)
            if key in seen:
                raise self.error(key_node, f"duplicate key {key!r}")
            seen[key] = (key_node, value_node)
        if merges:
            try:
                self._scalars.flatten_mapping(node)  # resolves "<<" merge keys in place
            except yaml.YAMLError as err:
                raise self.error(node, f"invalid merge key: {getattr(err, 'problem', err)}") from None
            last: dict = {}  # explicit keys come after merged ones and override them
            for key_node, value_node in node.value:
                last[self.key(key_node)] = (key_node, value_node)
        else:
            last = seen  # without merge keys, flattening changes nothing
        out: dict = {}
        for key, (key_node, value_node) in last.items():
            self.lines[path + (key,)] = key_node.start_mark.line + 1
            out[key] = self.build(value_node, path + (key,))
        return out

    def key(self, node: Node) -> object:
        if not isinstance(node, ScalarNode):
            raise self.error(node, "mapping keys must be plain scalars")
        key = self.scalar(node)
        try:
            hash(key)
        except TypeError:  # pragma: no cover - scalars are hashable
            raise self.error(node, "mapping keys must be plain scalars") from None
        return key
