"""Safe YAML/JSON reading into plain data, with the line of every field on request.

Why not ``yaml.safe_load``: we need lines for error messages, we must refuse
hostile inputs before expanding them, and plain scalars must mean what they
mean to ``kubectl`` (``symreach.loader.yaml_scalars``), not to PyYAML's YAML
1.1 resolver. So documents are *composed* by libyaml (PyYAML's C parser when
installed; nodes only, never Python objects from tags) and built here into
dicts, lists and scalars. Aliases are accounted while building: the nodes an
alias adds beyond its first copy are bounded (alias bombs), a node that
contains itself is refused.

Speed: a real cluster dump is tens of megabytes. JSON goes through ``json``;
YAML through libyaml. Recording a line for every field path costs as much as
building the data, so callers that can afford to may read without lines first
and read again with lines only when an error must name one
(``symreach.frontends.k8s_source`` does). Kubernetes YAML read without lines
goes first to ``symreach.loader.yaml_fast`` (rapidyaml), which returns the same
data or declines; libyaml reads whatever it declines.
"""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path as FsPath
from typing import BinaryIO, Optional, Union

import yaml
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode
from yaml.resolver import BaseResolver

from symreach.errors import InputError
from symreach.loader import yaml_scalars
from symreach.loader.shapes import Path

# Default input size limit: far above real clusters (a 10,000-pod dump with
# status and managedFields is ~60 MB of YAML); ``--max-input-mb`` changes it.
DEFAULT_MAX_INPUT_MB = 512
MAX_FILE_BYTES = DEFAULT_MAX_INPUT_MB * 1024 * 1024
# Nodes that aliases may add beyond their first copy, over all documents of an input.
MAX_ALIAS_NODES = 1_000_000
MAX_EXPANDED_NODES = MAX_ALIAS_NODES  # the name earlier releases exported

Lines = dict[Path, int]

_SEQ_TAG = "tag:yaml.org,2002:seq"
_MAP_TAG = "tag:yaml.org,2002:map"
_STR_TAG = yaml_scalars.STR
_MERGE_TAG = yaml_scalars.MERGE
_SCALAR_TAGS = frozenset({yaml_scalars.STR, yaml_scalars.NULL, yaml_scalars.BOOL, yaml_scalars.INT,
                          yaml_scalars.FLOAT})
_MAYBE_TYPED = yaml_scalars.MAYBE_TYPED | {""}


def may_have_anchors(text: str) -> bool:
    """False only when ``text`` has no anchor, so no alias: an anchor ``&`` follows whitespace,
    a flow indicator or a line start; ``&`` inside words and URLs (``a&b``) is no anchor."""
    at = text.find("&")
    while at != -1:
        if at == 0 or text[at - 1] in " \t\r\n[{,":
            return True
        at = text.find("&", at + 1)
    return False


class KubectlResolver(BaseResolver):
    """Tags plain scalars as go-yaml v2 would (see ``yaml_scalars``); quoted ones are strings."""

    def resolve(self, kind, value, implicit):  # noqa: D102 - PyYAML's interface
        if kind is ScalarNode:
            # Called for every scalar of a dump: most are strings by their first character.
            if implicit[0] and value[:1] in _MAYBE_TYPED:
                return yaml_scalars.resolve_plain(value)[0]
            return _STR_TAG
        return _SEQ_TAG if kind is SequenceNode else _MAP_TAG

    def descend_resolver(self, current_node, current_index):  # noqa: D102 - no path resolvers here
        pass

    def ascend_resolver(self):  # noqa: D102
        pass


if getattr(yaml, "__with_libyaml__", False):
    from yaml._yaml import CParser

    class _KubectlComposer(CParser, KubectlResolver):
        """libyaml's parser and composer (with marks) and kubectl's scalar rules."""

        def __init__(self, stream: str) -> None:
            CParser.__init__(self, stream)
            KubectlResolver.__init__(self)

    _V1Composer: type = yaml.CSafeLoader
    BYTE_OFFSETS = True  # libyaml reports byte positions
else:  # pragma: no cover - PyYAML without libyaml
    from yaml.composer import Composer
    from yaml.parser import Parser
    from yaml.reader import Reader
    from yaml.scanner import Scanner

    class _KubectlComposer(Reader, Scanner, Parser, Composer, KubectlResolver):  # type: ignore[no-redef]
        def __init__(self, stream: str) -> None:
            Reader.__init__(self, stream)
            Scanner.__init__(self)
            Parser.__init__(self)
            Composer.__init__(self)
            KubectlResolver.__init__(self)

    _V1Composer = yaml.SafeLoader
    BYTE_OFFSETS = False


# ---- reading bytes ---------------------------------------------------------------------------------

def read_file(path: Union[str, os.PathLike], max_bytes: int = MAX_FILE_BYTES) -> tuple[object, Lines]:
    """Read one YAML or JSON document from ``path``: (data, lines by field path)."""
    return read_text(read_file_text(path, max_bytes), str(path))


def read_text(text: str, filename: str = "<memory>", max_nodes: int = MAX_ALIAS_NODES) -> tuple[object, Lines]:
    """Parse exactly one YAML document from ``text``: (data, lines by field path)."""
    documents = read_documents_text(text, filename, max_nodes, at_most=1)
    if not documents:
        raise InputError("the file contains no document", filename)
    return documents[0]


def read_documents_file(path: Union[str, os.PathLike], max_bytes: int = MAX_FILE_BYTES) -> list[tuple[object, Lines]]:
    """Every document of a multi-document YAML file, each as (data, lines)."""
    return read_documents_text(read_file_text(path, max_bytes), str(path))


class InputTooLarge(InputError):
    """An input over the size limit: the caller that sets the limit says how to raise it."""


def read_file_text(path: Union[str, os.PathLike], max_bytes: int = MAX_FILE_BYTES) -> str:
    """The text of ``path`` (a file or a named pipe, read once), refusing more than ``max_bytes``."""
    name = str(path)
    try:
        info = os.stat(path)
        if stat.S_ISDIR(info.st_mode):
            raise InputError("is a directory", name)
        if stat.S_ISREG(info.st_mode) and info.st_size > max_bytes:
            raise InputTooLarge(_too_large(max_bytes, info.st_size), name)
        with open(path, "rb") as handle:
            raw = handle.read(min(max_bytes, info.st_size) + 1) if stat.S_ISREG(info.st_mode) \
                else read_capped(handle, max_bytes)
    except OSError as err:
        raise InputError(f"cannot read file: {err.strerror or err}", name) from None
    return decode_text(raw, name, max_bytes)


def read_capped(stream: BinaryIO, max_bytes: int) -> bytes:
    """A pipe's bytes up to one past ``max_bytes``, in chunks: a single ``read(max_bytes + 1)``
    allocates that much up front, which overflows for a ``--max-input-mb`` beyond the
    address space (such a limit means no limit)."""
    chunks, total = [], 0
    while total <= max_bytes:
        chunk = stream.read(min(_CHUNK, max_bytes + 1 - total))
        if not chunk:
            break
        chunks.append(chunk)
        total += len(chunk)
    return b"".join(chunks)


_CHUNK = 1 << 24


def read_stream_text(stream: BinaryIO, name: str = "<stdin>", max_bytes: int = MAX_FILE_BYTES) -> str:
    """All of a binary stream (standard input), read once, refusing more than ``max_bytes``."""
    try:
        raw = read_capped(stream, max_bytes)
    except OSError as err:
        raise InputError(f"cannot read: {err.strerror or err}", name) from None
    return decode_text(raw, name, max_bytes)


def decode_text(raw: bytes, name: str, max_bytes: int) -> str:
    """UTF-8 (with or without BOM) text, or one clear error."""
    if len(raw) > max_bytes:
        raise InputTooLarge(_too_large(max_bytes), name)
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as err:
        raise InputError(f"not UTF-8 text (byte {err.start})", name) from None


def _too_large(max_bytes: int, size: Optional[int] = None) -> str:
    mb = max_bytes / (1024 * 1024)
    got = f"{size} bytes" if size is not None else "more"
    return f"input is too large ({got}; the limit is {max_bytes} bytes = {mb:g} MiB)"


# ---- parsing ---------------------------------------------------------------------------------------

def is_json_text(text: str, filename: str) -> bool:
    """JSON by suffix, or text that starts like JSON (``kubectl get -o json`` on standard input)."""
    if FsPath(filename).suffix.lower() == ".json":
        return True
    head = text.lstrip()[:1]
    return head in ("{", "[")


def read_documents_text(
    text: str, filename: str = "<memory>", max_nodes: int = MAX_ALIAS_NODES, at_most: Optional[int] = None,
    *, lines: bool = True, kubectl: bool = False,
) -> list[tuple[object, Lines]]:
    """Every document of ``text`` as (data, lines); an empty document (``---`` alone) gives None.

    ``max_nodes`` bounds what aliases add, over all documents together. With
    ``at_most``, more documents than that is an error naming the first extra
    one. ``lines=False`` records no lines (fast). ``kubectl=True`` reads
    Kubernetes objects as kubectl does: go-yaml v2 scalars
    (``symreach.loader.yaml_scalars``) and mapping keys turned into JSON
    strings. Format v1 keeps PyYAML's YAML 1.1 reading (``name: n`` is the
    string "n" there, as PyYAML itself writes it).
    """
    json_keys = kubectl
    if is_json_text(text, filename):
        data = _json_document(text, filename, strict_json=FsPath(filename).suffix.lower() == ".json")
        if data is not _NOT_JSON:
            if not lines:
                return [(data, {})]
            try:  # JSON is YAML (once tabs between tokens are spaces): compose it again for lines
                return _yaml_documents(text.replace("\t", " "), filename, max_nodes, at_most, True, json_keys)
            except InputError:
                return [(data, {})]
    if not lines and kubectl:  # big dumps: rapidyaml when it can vouch for the result, else libyaml below
        from symreach.loader import yaml_fast  # imported on use: rapidyaml's library costs start-up

        fast = yaml_fast.read_documents(text)
        if fast is not None and (at_most is None or len(fast) <= at_most):
            return [(doc, {}) for doc in fast]
    return _yaml_documents(text, filename, max_nodes, at_most, lines, json_keys)


_NOT_JSON = object()


def _json_document(text: str, filename: str, strict_json: bool) -> object:
    try:
        return json.loads(text, object_pairs_hook=_json_object)
    except json.JSONDecodeError as err:
        if not strict_json:
            return _NOT_JSON  # YAML that starts like JSON: the YAML reader decides
        raise InputError(f"invalid JSON: {err.msg} (column {err.colno})", filename, err.lineno) from None
    except _DuplicateKey as err:
        raise InputError(f"duplicate key {err.args[0]!r}", filename) from None
    except RecursionError:
        raise InputError("the document is nested too deeply", filename) from None


class _DuplicateKey(ValueError):
    pass


def _json_object(pairs: list[tuple[str, object]]) -> dict:
    out = dict(pairs)
    if len(out) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise _DuplicateKey(key)
            seen.add(key)
    return out


def _yaml_documents(text: str, filename: str, max_nodes: int, at_most: Optional[int], lines: bool,
                    json_keys: bool) -> list[tuple[object, Lines]]:
    budget = _AliasBudget(max_nodes, filename) if may_have_anchors(text) else None
    out: list[tuple[object, Lines]] = []
    for root in _compose_all(text, filename, at_most, json_keys):
        builder = DocumentBuilder(filename, lines=lines, kubectl=json_keys, budget=budget)
        try:
            out.append((builder.build(root, ()), builder.lines))
        except RecursionError:
            raise InputError("the document is nested too deeply", filename,
                             root.start_mark.line + 1) from None
    return out


def _compose_all(text: str, filename: str, at_most: Optional[int], kubectl: bool) -> list[Node]:
    """Compose every document (nodes only: no Python object is built here)."""
    try:
        loader = (_KubectlComposer if kubectl else _V1Composer)(text)  # the reader may already reject control characters here
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
        prefix = text.encode("utf-8")[: err.position] if BYTE_OFFSETS else text[: err.position]
        line = prefix.count("\n" if isinstance(prefix, str) else b"\n") + 1
    return InputError(f"invalid YAML: character {shown} is not allowed", filename, line)


def yaml_error(err: yaml.MarkedYAMLError, filename: str) -> InputError:
    mark = err.problem_mark or err.context_mark
    line = mark.line + 1 if mark is not None else None
    problem = " ".join(p for p in (err.context, err.problem) if p) or "invalid YAML"
    if "maximum nesting depth" in problem:  # libyaml >= 0.2.5 (PyYAML 6.0.4 wheels) has its own depth limit
        return InputError("the document is nested too deeply", filename, line)
    return InputError(f"invalid YAML: {problem}", filename, line)


# ---- alias accounting ------------------------------------------------------------------------------

class _AliasBudget:
    """Nodes added by aliases beyond their first copy, bounded over all documents of one input."""

    def __init__(self, limit: int, filename: str) -> None:
        self.limit = limit
        self.used = 0
        self.filename = filename
        self.sizes: dict[int, int] = {}

    def charge(self, node: Node) -> None:
        self.used += _expanded_size(node, self.limit - self.used, self.filename, self.sizes)
        if self.used > self.limit:
            raise InputError(f"the document expands to more than {self.limit} nodes through aliases (alias bomb?)",
                             self.filename, node.start_mark.line + 1)


def _expanded_size(root: Node, limit: int, filename: str, memo: dict[int, int]) -> int:
    """Node count with aliases expanded, memoised per node; capped at ``limit + 1``."""
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
        total = min(total, max(limit, 0) + 1)
        memo[key] = total
        return total

    return size(root)


# ---- building data ---------------------------------------------------------------------------------

class DocumentBuilder:
    """Builds plain data from composed nodes, recording lines by field path when asked."""

    def __init__(self, filename: str, *, lines: bool = True, kubectl: bool = False,
                 budget: Optional[_AliasBudget] = None) -> None:
        self.filename = filename
        self.lines: Lines = {}
        self.track_lines = lines
        self.kubectl = kubectl
        self._constructor = None if kubectl else yaml.SafeLoader("")  # v1: PyYAML's scalar constructors
        self.budget = budget
        self._seen: set[int] = set()
        self._active: set[int] = set()

    def error(self, node: Node, problem: str) -> InputError:
        return InputError(problem, self.filename, node.start_mark.line + 1)

    def build(self, node: Node, path: Path = ()) -> object:
        if self.track_lines:
            self.lines.setdefault(path, node.start_mark.line + 1)
        if type(node) is ScalarNode:
            return node.value if node.tag == _STR_TAG else self.scalar(node)
        budget = self.budget
        if budget is not None:
            key = id(node)
            if key in self._seen:
                if key in self._active:
                    raise self.error(node, "recursive YAML alias (a node contains itself)")
                budget.charge(node)
            self._seen.add(key)
            self._active.add(key)
        if isinstance(node, SequenceNode):
            if node.tag != _SEQ_TAG:
                raise self.error(node, f"unsupported YAML tag {node.tag}")
            if self.track_lines:
                out: object = [self.build(child, path + (i,)) for i, child in enumerate(node.value)]
            else:
                out = [self.build(child) for child in node.value]
        elif isinstance(node, MappingNode):
            out = self.mapping(node, path)
        else:  # pragma: no cover
            raise self.error(node, "unsupported YAML node")
        if budget is not None:
            self._active.discard(id(node))
        return out

    def scalar(self, node: ScalarNode) -> object:
        tag = node.tag
        if tag == _STR_TAG:
            return node.value
        if self._constructor is not None:
            try:
                return self._constructor.construct_object(node, deep=True)
            except yaml.YAMLError as err:
                problem = getattr(err, "problem", None) or str(err)
                raise self.error(node, f"invalid YAML value: {problem}") from None
            except (ValueError, OverflowError, TypeError) as err:
                raise self.error(node, f"invalid YAML value: {err}") from None
        if tag not in _SCALAR_TAGS:
            raise self.error(node, f"unsupported YAML tag {tag}")
        resolved, value = yaml_scalars.resolve_plain(node.value)
        if resolved != tag:  # an explicit tag the text does not fit, e.g. !!int abc
            raise self.error(node, f"invalid YAML value: cannot read {node.value!r} as {tag.rsplit(':', 1)[-1]}")
        return value

    def mapping(self, node: MappingNode, path: Path) -> dict:
        if node.tag != _MAP_TAG:
            raise self.error(node, f"unsupported YAML tag {node.tag}")
        out: dict = {}
        track = self.track_lines
        for key_node, _ in node.value:
            if key_node.tag == _MERGE_TAG:
                pairs = self.merged(node)
                break
        else:
            pairs = node.value
        for key_node, value_node in pairs:
            key = key_node.value if key_node.tag == _STR_TAG and type(key_node) is ScalarNode else self.key(key_node)
            if key in out:
                raise self.error(key_node, f"duplicate key {key!r}")
            if track:
                sub = path + (key,)
                self.lines[sub] = key_node.start_mark.line + 1
                out[key] = self.build(value_node, sub)
            else:
                out[key] = self.build(value_node)
        return out

    def merged(self, node: MappingNode) -> list[tuple[Node, Node]]:
        """The pairs after resolving ``<<`` merge keys: explicit keys override merged ones."""
        explicit: dict[object, Node] = {}
        for key_node, _ in node.value:
            if key_node.tag != _MERGE_TAG:
                key = self.key(key_node)
                if key in explicit:
                    raise self.error(key_node, f"duplicate key {key!r}")
                explicit[key] = key_node
        try:
            yaml.SafeLoader("").flatten_mapping(node)  # resolves "<<" merge keys in place
        except yaml.YAMLError as err:
            raise self.error(node, f"invalid merge key: {getattr(err, 'problem', err)}") from None
        last: dict[object, tuple[Node, Node]] = {}
        for key_node, value_node in node.value:
            last[self.key(key_node)] = (key_node, value_node)
        return list(last.values())

    def key(self, node: Node) -> object:
        if not isinstance(node, ScalarNode):
            raise self.error(node, "mapping keys must be plain scalars")
        key = self.scalar(node)
        if self.kubectl and not isinstance(key, str):
            as_json = yaml_scalars.json_key(key)
            if as_json is None:
                raise self.error(node, f"unsupported mapping key {node.value!r} (JSON keys are strings)")
            return as_json
        return key
