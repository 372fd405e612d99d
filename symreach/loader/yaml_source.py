"""Safe YAML/JSON reading into plain data, with the line of every field on request.

Why not ``yaml.safe_load``: we need lines for error messages, we must refuse
hostile inputs before expanding them, and plain scalars must mean what they
mean to ``kubectl`` (``symreach.loader.yaml_scalars``), not to PyYAML's YAML
1.1 resolver. So documents are *composed* by libyaml (``yaml_libyaml``:
PyYAML's C parser when installed; nodes only, never Python objects from
tags) and built there into dicts, lists and scalars, aliases accounted (alias
bombs, a node that contains itself).

Speed: a real cluster dump is tens of megabytes. JSON goes through ``json``;
YAML through libyaml. Recording a line for every field path costs as much as
building the data, so callers that can afford to may read without lines first
and read again with lines only when an error must name one
(``symreach.frontends.k8s_source`` does). Kubernetes YAML read without lines
goes first to ``symreach.loader.yaml_fast`` (rapidyaml), which returns the same
data or declines; libyaml reads whatever it declines.

Start-up: a small hand-written v1 file goes first to ``yaml_simple``, which
returns what libyaml would or declines, so a small ``check`` never imports
PyYAML (``benchmarks/startup.py``).
"""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path as FsPath
from typing import BinaryIO, Optional, Union

from symreach.errors import InputError
from symreach.loader import yaml_simple
from symreach.loader.shapes import Path

# Default input size limit: far above real clusters (a 10,000-pod dump with
# status and managedFields is ~60 MB of YAML); ``--max-input-mb`` changes it.
DEFAULT_MAX_INPUT_MB = 512
MAX_FILE_BYTES = DEFAULT_MAX_INPUT_MB * 1024 * 1024
# Nodes that aliases may add beyond their first copy, over all documents of an input.
MAX_ALIAS_NODES = 1_000_000
MAX_EXPANDED_NODES = MAX_ALIAS_NODES  # the name earlier releases exported

Lines = dict[Path, int]

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
    if not kubectl:  # small hand-written v1 files: no PyYAML when the simple reader can vouch for the result
        simple = yaml_simple.read_document(text, lines)
        if simple is not None:
            return [simple]
    return _yaml_documents(text, filename, max_nodes, at_most, lines, json_keys)


def _yaml_documents(text: str, filename: str, max_nodes: int, at_most: Optional[int], lines: bool,
                    json_keys: bool) -> list[tuple[object, Lines]]:
    from symreach.loader import yaml_libyaml  # imported on use: PyYAML costs more start-up than a small check

    return yaml_libyaml.read_documents(text, filename, max_nodes, at_most, lines, json_keys)


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


