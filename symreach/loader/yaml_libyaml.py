"""Safe YAML reading through libyaml (PyYAML's C parser): compose nodes, build plain data, lines.

The reader behind ``yaml_source`` for every YAML text the faster readers
(``yaml_simple`` for small v1 files, ``yaml_fast`` for big Kubernetes dumps)
decline. Documents are *composed* (nodes only, never Python objects from
tags) and built here into dicts, lists and scalars; aliases are accounted
while building (alias bombs, a node that contains itself). Imported on use:
PyYAML's import alone costs more than a small ``check``.
"""

from __future__ import annotations

from typing import Optional

import yaml
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode
from yaml.resolver import BaseResolver

from symreach.errors import InputError
from symreach.loader import yaml_scalars
from symreach.loader.shapes import Path

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


# ---- composing ------------------------------------------------------------------------------------

def read_documents(text: str, filename: str, max_nodes: int, at_most: Optional[int], lines: bool,
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
    except UnicodeEncodeError as err:  # a str with a lone surrogate (text given in-process, not a file)
        raise InputError(f"not Unicode text (a lone surrogate at character {err.start})", filename,
                         text.count("\n", 0, err.start) + 1) from None
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
