"""One entry point for every input: read the arguments, tell their kind, hand them to a front end.

The arguments of ``check``/``explain``/``matrix``/... are files, directories
(read recursively: every ``*.yaml``, ``*.yml`` and ``*.json``) and ``-`` for
standard input. Each input is read into memory exactly once, so a pipe or a
named pipe works like a file, and the kind is decided on that text:

- one symreach instance (format v1) must be the only input;
- Kubernetes manifests and dumps from any number of inputs are read together
  as one cluster (nodes from one file, workloads from a directory ...).

The kind is sniffed from the top-level keys of the first document without a
YAML parser (a line scan; JSON is parsed by ``json``), so a pathological file
costs nothing before the real reader refuses it with a clear message.
Kubernetes input is read first without field lines (about twice as fast);
only when the conversion fails is it read again with lines, so the error
names the line.

Loading is a phase of the run: it polls the ``RunContext`` between inputs
and the converter between objects (a deadline that passed or a cancelled
run ends it with ``LimitReached`` before the next one is read).
"""

from __future__ import annotations

import os
import re
import sys
from dataclasses import field
from pathlib import Path
from typing import BinaryIO, Callable, Iterator, Optional, Sequence, Union

from symreach.search_budget import BudgetLike
from symreach.errors import InputError
from symreach.loader import yaml_source
from symreach.loader.collector import collector_paused
from symreach.model import Instance
from symreach.records import record
from symreach.run import RunContext

SUFFIXES = (".yaml", ".yml", ".json")
PHASE = "loading"
STDIN = "-"

PathArg = Union[str, os.PathLike]


@record(frozen=False)
class Source:
    """One input read into memory: its name (a path or ``<stdin>``) and its text."""

    name: str
    text: str


@record(frozen=False)
class Loaded:
    """An instance with what its front end knows beyond the model."""

    instance: Instance
    kind: str                                 # "v1" or "kubernetes"
    names: list[str]                          # the inputs read, in order
    context: dict = field(default_factory=dict)

    @property
    def report(self):
        """The Kubernetes front end's ``Report`` (None for v1 instances)."""
        return self.context.get("report")


# ---- arguments -> sources --------------------------------------------------------------------------

def expand_inputs(args: Sequence[PathArg]) -> list[str]:
    """Files in argument order; a directory contributes its YAML/JSON files, recursively and sorted."""
    if not args:
        raise InputError("no input given (a file, a directory, or - for standard input)")
    out: list[str] = []
    for arg in args:
        name = os.fspath(arg)
        if name == STDIN:
            if STDIN in out:
                raise InputError("standard input (-) given twice")
            out.append(STDIN)
        elif os.path.isdir(name):
            found = sorted(str(p) for p in Path(name).rglob("*")
                           if p.suffix.lower() in SUFFIXES and p.is_file())
            if not found:
                raise InputError(f"no {', '.join(SUFFIXES)} file in this directory", name)
            out.extend(found)
        else:
            out.append(name)
    return out


def read_sources(args: Sequence[PathArg], max_bytes: int = yaml_source.MAX_FILE_BYTES,
                 stdin: Optional[BinaryIO] = None, run: Optional[RunContext] = None) -> list[Source]:
    """Each input's text, read once (``-`` is standard input)."""
    sources = []
    for name in expand_inputs(args):
        if run is not None:
            run.check(PHASE)
        if name == STDIN:
            stream = stdin if stdin is not None else getattr(sys.stdin, "buffer", None)
            if stream is None:  # started with standard input closed (``<&-``)
                raise InputError("standard input is closed: give a file, or pipe the input to -", "<stdin>")
            sources.append(Source("<stdin>", yaml_source.read_stream_text(stream, "<stdin>", max_bytes)))
        else:
            sources.append(Source(name, yaml_source.read_file_text(name, max_bytes)))
    return sources


# ---- sniffing --------------------------------------------------------------------------------------

_KUBERNETES_KEYS = frozenset({"apiVersion", "kind", "items", "metadata", "spec"})
_TOP_KEY = re.compile(r"""(?:"([^"]*)"|'([^']*)'|([^\s#'"\-?:\[\]{},&*!|>%@`][^:#]*?))\s*:(?:\s|$)""")


def source_kind(source: Source) -> str:
    """``"v1"``, ``"kubernetes"`` or ``"empty"`` (no document), from the first document's top-level keys."""
    text = source.text
    if yaml_source.is_json_text(text, source.name):
        head = text.lstrip()
        if head.startswith("["):
            return "kubernetes"
        keys = _json_top_keys(head)
    else:
        keys = _yaml_top_keys(text)
        if keys is not None and not keys:  # flow style ({apiVersion: v1, ...}): parse it, in C
            keys = _parsed_top_keys(source)
    if keys is None:
        return "empty"
    if "version" in keys and "apiVersion" not in keys:
        return "v1"
    if keys & _KUBERNETES_KEYS:
        return "kubernetes"
    return "v1"  # let the strict v1 loader name what is wrong


def _yaml_top_keys(text: str) -> Optional[set[str]]:
    """Keys at column 0 of the first document; stops early at a Kubernetes key. None: no content."""
    keys: set[str] = set()
    content = False
    for line in _lines(text):
        if not line or line[0] in " \t#":
            continue
        if line.startswith("---"):
            if content:
                break
            content = content or bool(line[3:].strip(" \t").split("#", 1)[0])
            continue
        if line.startswith("%") or line.startswith("..."):
            continue
        content = True
        match = _TOP_KEY.match(line)
        if match is None:
            continue  # flow style, a sequence, a scalar: not a key line
        key = next(g for g in match.groups() if g is not None)
        keys.add(key)
        if key in ("apiVersion", "kind"):
            break
    return keys if content else None


def _lines(text: str) -> Iterator[str]:
    """The lines of ``text`` one at a time (``splitlines`` would split a 50 MB dump to read its first keys).

    Line breaks as YAML's: LF, CRLF and a lone CR."""
    start, end = 0, len(text)
    while start < end:
        brk = _LINE_BREAK.search(text, start)
        if brk is None:
            yield text[start:]
            return
        yield text[start:brk.start()]
        start = brk.end()


_LINE_BREAK = re.compile(r"\r\n?|\n")


def _parsed_top_keys(source: Source) -> set[str]:
    """Top-level keys of the first document, parsed by libyaml (no lines, nothing retained)."""
    try:
        docs = yaml_source.read_documents_text(source.text, source.name, lines=False, kubectl=True)
    except InputError:
        return set()  # the real reader reports it
    first = next((d for d, _ in docs if d is not None), None)
    return {k for k in first if isinstance(k, str)} if isinstance(first, dict) else set()


def _json_top_keys(text: str) -> set[str]:
    """Top-level keys of a JSON object, up to ``apiVersion``: kubectl writes ``apiVersion``
    first, so a 100 MB ``kind: List`` is not parsed here just to be parsed again by the reader."""
    import json
    from json.decoder import scanstring

    decoder = json.JSONDecoder()
    keys: set[str] = set()
    try:
        at = _json_skip(text, 0)
        if text[at] != "{":
            return set()
        at = _json_skip(text, at + 1)
        while text[at] != "}":
            if text[at] != '"':
                return set()  # the real reader reports it
            key, at = scanstring(text, at + 1)
            keys.add(key)
            if key == "apiVersion":  # decides the kind whatever follows
                return keys
            at = _json_skip(text, at)
            if text[at] != ":":
                return set()
            _, at = decoder.raw_decode(text, _json_skip(text, at + 1))
            at = _json_skip(text, at)
            if text[at] == ",":
                at = _json_skip(text, at + 1)
                if text[at] != '"':
                    return set()  # a trailing comma
            elif text[at] != "}":
                return set()
    except (ValueError, IndexError, RecursionError):
        return set()  # the real reader reports it
    return keys


def _json_skip(text: str, at: int) -> int:
    """The index of the next character that is not JSON white space."""
    while text[at] in " \t\r\n":
        at += 1
    return at


# ---- loading ---------------------------------------------------------------------------------------

def load_inputs(args: Union[PathArg, Sequence[PathArg]], max_bytes: int = yaml_source.MAX_FILE_BYTES,
                stdin: Optional[BinaryIO] = None, namespace: str = "default",
                run: Optional[RunContext] = None,
                on_sources: Optional[Callable[[list[Source]], None]] = None,
                budget: BudgetLike = None) -> Loaded:
    """Read every input once and load them as one instance; ``namespace`` is the
    namespace of Kubernetes objects that name none (``kubectl apply -n``).
    ``on_sources`` is given the text read before it is parsed (Dask workers parse it too).
    ``budget``: the Kubernetes front end's search budget (``symreach.search_budget``; None: the active one)."""
    if isinstance(args, (str, os.PathLike)):
        args = [args]
    run = run if run is not None else RunContext()
    run.check(PHASE)
    sources = read_sources(args, max_bytes, stdin, run)
    if on_sources is not None:
        on_sources(sources)
    return load_sources(sources, namespace, run, budget)


def load_sources(sources: list[Source], namespace: str = "default", run: Optional[RunContext] = None,
                 budget: BudgetLike = None) -> Loaded:
    """The inputs' text (``read_sources``) as one instance."""
    run = run if run is not None else RunContext()
    kinds = [source_kind(s) for s in sources]
    names = [s.name for s in sources]
    v1 = [s for s, k in zip(sources, kinds) if k == "v1"]
    if v1 and len(sources) > 1:
        raise InputError("a symreach instance (format v1) must be the only input", v1[0].name)
    if v1 or all(k == "empty" for k in kinds):
        from symreach.loader import load_text

        run.check(PHASE)
        return Loaded(load_text(sources[0].text, sources[0].name), "v1", names)
    instance, report = load_kubernetes_sources([s for s, k in zip(sources, kinds) if k != "empty"], namespace, run,
                                               budget)
    context = {"initial_pod_names": report.initial_pod_names, "initial_holdings": report.initial_holdings,
               "report": report}
    return Loaded(instance, "kubernetes", names, context)


def load_kubernetes_sources(sources: Sequence[Source], namespace: str = "default",
                            run: Optional[RunContext] = None, budget: BudgetLike = None):
    """Kubernetes documents of several sources as one cluster: (instance, report).

    Read without lines first; if the conversion or the model refuses the
    input, read again with lines and convert again, so the error has a line.
    """
    from symreach.frontends.k8s_source import read_documents_text
    from symreach.frontends.kubernetes import load_kubernetes_documents

    def convert(lines: bool):
        docs: list[object] = []
        all_lines: list[dict] = []
        doc_files: list[tuple[str, int]] = []
        for source in sources:
            if run is not None:
                run.check(PHASE)
            source_docs, source_lines = read_documents_text(source.text, source.name, lines=lines)
            docs.extend(source_docs)
            all_lines.extend(source_lines)
            doc_files.extend((source.name, i) for i in range(len(source_docs)))
        name = sources[0].name if len(sources) == 1 else f"{len(sources)} inputs"
        return load_kubernetes_documents(docs, name, all_lines, doc_files, default_namespace=namespace, run=run,
                                         budget=budget)

    try:
        with collector_paused():
            return convert(lines=False)
    except InputError as first:
        if first.line is not None:
            raise
        try:
            convert(lines=True)
        except InputError as located:
            raise located from None
        raise  # pragma: no cover - the same input read with lines cannot load


def load_any(path: Union[PathArg, Sequence[PathArg]]) -> Instance:
    return load_inputs(path).instance


def resolve_pod(instance: Instance, name: str) -> int:
    """A pod type by exact name, or by unique suffix after ``namespace/``."""
    names = [t.name for t in instance.pod_types]
    if name in names:
        return names.index(name)
    matches = [i for i, n in enumerate(names) if n.split("/", 1)[-1] == name]
    if len(matches) == 1:
        return matches[0]
    hint = "ambiguous" if matches else "unknown"
    raise InputError(f"{hint} pod type {name!r}; known: {', '.join(names[:20])}", field_path="pod")
