"""One-safe place/transition nets: the model, a PNML reader and a small JSON form.

This is the input side of the paper's Appendix B reduction
(``reduction_petri.encode_petri``). A net is ordinary (every arc has weight 1)
and its initial marking is a set of places. One-safety itself (no reachable
marking puts two tokens on a place) is a property of the behaviour, not of the
syntax; it is PSPACE-hard to check and is therefore *assumed*, as the MCC
"one-safe" model category guarantees for the nets in ``/work/shared/data/petri``.

Accepted inputs:

- PNML P/T nets as published by the Model Checking Contest
  (``<place id>``, ``<transition id>``, ``<arc source target>`` with an optional
  ``<inscription><text>``, ``<initialMarking><text>``), pages nested or not.
  Coloured (symmetric / high-level) nets, arcs of weight other than 1 and
  initial markings above 1 are refused with an ``InputError`` that names the
  file, the line and the offending element.
- JSON ``{"places": [...], "transitions": [{"name", "pre": [...], "post": [...]}],
  "initial": [...]}``.
"""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
import xml.parsers.expat
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Mapping, Optional

from symreach.errors import InputError

PT_NET_TYPE = "http://www.pnml.org/version-2009/grammar/ptnet"


@dataclass(frozen=True)
class Transition:
    """A transition with its preset and postset (sets of place names)."""

    name: str
    pre: frozenset[str]
    post: frozenset[str]

    @property
    def consumed(self) -> frozenset[str]:
        """Consumed(a) = Pre(a) \\ Post(a) (Appendix B)."""
        return self.pre - self.post

    @property
    def produced(self) -> frozenset[str]:
        """Produced(a) = Post(a) \\ Pre(a)."""
        return self.post - self.pre

    def enabled(self, marking: frozenset[str]) -> bool:
        return self.pre <= marking

    def fire(self, marking: frozenset[str]) -> frozenset[str]:
        """a(M) = (M \\ Pre(a)) ∪ Post(a); the caller checks ``enabled``."""
        return (marking - self.pre) | self.post


@dataclass(frozen=True)
class PetriNet:
    """An ordinary net P = (P, T, Pre, Post, M0) with M0 ⊆ P.

    ``places`` and ``transitions`` keep the declaration order of the input, so
    encodings and reports are deterministic.
    """

    name: str
    places: tuple[str, ...]
    transitions: tuple[Transition, ...]
    initial: frozenset[str]

    def __post_init__(self) -> None:
        known = set(self.places)
        if len(known) != len(self.places):
            raise ValueError(f"net {self.name}: duplicate place names")
        names = [t.name for t in self.transitions]
        if len(set(names)) != len(names):
            raise ValueError(f"net {self.name}: duplicate transition names")
        for t in self.transitions:
            unknown = (t.pre | t.post) - known
            if unknown:
                raise ValueError(f"net {self.name}: transition {t.name} uses unknown "
                                 f"place(s) {sorted(unknown)}")
        if not self.initial <= known:
            raise ValueError(f"net {self.name}: initial marking names unknown "
                             f"place(s) {sorted(self.initial - known)}")

    def transition(self, name: str) -> Transition:
        for t in self.transitions:
            if t.name == name:
                return t
        raise KeyError(name)

    def enabled(self, marking: frozenset[str]) -> list[Transition]:
        return [t for t in self.transitions if t.enabled(marking)]

    def to_json(self) -> dict[str, Any]:
        """The small JSON form (inverse of ``net_from_json``)."""
        order = {p: i for i, p in enumerate(self.places)}

        def ordered(ps: Iterable[str]) -> list[str]:
            return sorted(ps, key=order.__getitem__)

        return {
            "name": self.name,
            "places": list(self.places),
            "transitions": [{"name": t.name, "pre": ordered(t.pre), "post": ordered(t.post)}
                            for t in self.transitions],
            "initial": ordered(self.initial),
        }


# ---------------------------------------------------------------------------
# JSON form
# ---------------------------------------------------------------------------

def net_from_json(data: Any, filename: str = "<memory>") -> PetriNet:
    """Build a net from ``{places, transitions: [{name, pre, post}], initial}``."""

    def fail(path: str, problem: str) -> InputError:
        return InputError(problem, filename, None, path)

    if not isinstance(data, Mapping):
        raise fail("(top)", "expected an object with places, transitions, initial")
    unknown = set(data) - {"name", "places", "transitions", "initial"}
    if unknown:
        raise fail(sorted(unknown)[0], "unknown field")
    places = data.get("places")
    if not isinstance(places, list) or not all(isinstance(p, (str, int)) for p in places):
        raise fail("places", "expected a list of place names")
    places_s = [str(p) for p in places]
    seen: set[str] = set()
    for i, p in enumerate(places_s):
        if p in seen:
            raise fail(f"places[{i}]", f"duplicate place {p!r}")
        seen.add(p)

    def place_list(value: Any, path: str) -> frozenset[str]:
        if not isinstance(value, list):
            raise fail(path, "expected a list of place names")
        out: set[str] = set()
        for i, p in enumerate(value):
            ps = str(p)
            if ps not in seen:
                raise fail(f"{path}[{i}]", f"unknown place {ps!r}")
            if ps in out:
                raise fail(f"{path}[{i}]", f"place {ps!r} listed twice (arc weight 2 is not "
                                            "allowed in a one-safe ordinary net)")
            out.add(ps)
        return frozenset(out)

    raw_ts = data.get("transitions")
    if not isinstance(raw_ts, list):
        raise fail("transitions", "expected a list of {name, pre, post}")
    transitions: list[Transition] = []
    tnames: set[str] = set()
    for i, t in enumerate(raw_ts):
        path = f"transitions[{i}]"
        if not isinstance(t, Mapping):
            raise fail(path, "expected an object {name, pre, post}")
        extra = set(t) - {"name", "pre", "post"}
        if extra:
            raise fail(f"{path}.{sorted(extra)[0]}", "unknown field")
        if "name" not in t:
            raise fail(f"{path}.name", "missing")
        name = str(t["name"])
        if name in tnames:
            raise fail(f"{path}.name", f"duplicate transition {name!r}")
        tnames.add(name)
        transitions.append(Transition(name, place_list(t.get("pre", []), f"{path}.pre"),
                                      place_list(t.get("post", []), f"{path}.post")))
    initial = place_list(data.get("initial", []), "initial")
    return PetriNet(str(data.get("name", Path(filename).stem if filename != "<memory>" else "net")),
                    tuple(places_s), tuple(transitions), initial)


# ---------------------------------------------------------------------------
# PNML
# ---------------------------------------------------------------------------

def _parse_with_lines(text: bytes, filename: str) -> tuple[ET.Element, dict[int, int]]:
    """Parse XML into an ElementTree, remembering each element's line.

    ``xml.etree``'s C parser does not expose line numbers, so we drive an
    ``ElementTree.TreeBuilder`` from expat ourselves (namespaces as ``{uri}tag``).
    """
    builder = ET.TreeBuilder()
    lines: dict[int, int] = {}
    parser = xml.parsers.expat.ParserCreate(namespace_separator="}")

    def qname(tag: str) -> str:
        return "{" + tag if "}" in tag else tag

    def start(tag: str, attrs: dict[str, str]) -> None:
        el = builder.start(qname(tag), {qname(k): v for k, v in attrs.items()})
        lines[id(el)] = parser.CurrentLineNumber

    parser.StartElementHandler = start
    parser.EndElementHandler = lambda tag: builder.end(qname(tag))
    parser.CharacterDataHandler = builder.data
    try:
        parser.Parse(text, True)
    except xml.parsers.expat.ExpatError as exc:
        raise InputError("not well-formed XML: " + xml.parsers.expat.ErrorString(exc.code),
                         filename, exc.lineno) from None
    return builder.close(), lines


def _local(tag: str) -> str:
    return tag.rsplit("}", 1)[-1]


def _text_of(el: Optional[ET.Element]) -> Optional[str]:
    """The content of the ``<text>`` child of a PNML label, stripped."""
    if el is None:
        return None
    for child in el:
        if _local(child.tag) == "text":
            return (child.text or "").strip()
    return None


def _child(el: ET.Element, name: str) -> Optional[ET.Element]:
    for child in el:
        if _local(child.tag) == name:
            return child
    return None


def read_pnml(source: str | Path | bytes, filename: Optional[str] = None) -> PetriNet:
    """Read a one-safe ordinary P/T net from PNML (a path, or the bytes of a file)."""
    if isinstance(source, bytes):
        data = source
        fname = filename or "<memory>"
    else:
        fname = filename or str(source)
        try:
            data = Path(source).read_bytes()
        except OSError as exc:
            raise InputError(f"cannot read: {exc.strerror}", fname) from None
    root, lines = _parse_with_lines(data, fname)

    def fail(el: ET.Element, what: str, problem: str) -> InputError:
        return InputError(problem, fname, lines.get(id(el)), what)

    if _local(root.tag) != "pnml":
        raise fail(root, f"<{_local(root.tag)}>", "expected a <pnml> document")
    nets = [el for el in root if _local(el.tag) == "net"]
    if len(nets) != 1:
        raise fail(root, "pnml", f"expected exactly one <net>, found {len(nets)}")
    net_el = nets[0]
    net_id = net_el.get("id", "net")
    net_type = net_el.get("type", "")
    if net_type != PT_NET_TYPE:
        kind = ("a coloured (symmetric/high-level) net"
                if "symmetric" in net_type or "highlevel" in net_type else "not a P/T net")
        raise fail(net_el, f'net id="{net_id}" type', f"{net_type!r} is {kind}; only "
                   f"ordinary P/T nets ({PT_NET_TYPE}) are supported")

    places: list[str] = []
    initial: set[str] = set()
    transitions: list[str] = []
    kinds: dict[str, str] = {}
    arcs: list[ET.Element] = []
    for el in net_el.iter():
        tag = _local(el.tag)
        if tag in ("declaration", "type", "hlinitialMarking", "hlinscription"):
            raise fail(el, f"<{tag}>", "coloured-net element; only ordinary P/T nets "
                       "are supported")
        if tag not in ("place", "transition", "arc"):
            continue
        ident = el.get("id")
        if ident is None:
            raise fail(el, f"<{tag}>", "missing id attribute")
        if tag == "arc":
            arcs.append(el)
            continue
        if ident in kinds:
            raise fail(el, f'{tag} id="{ident}"', f"duplicate id (already a {kinds[ident]})")
        kinds[ident] = tag
        if tag == "transition":
            transitions.append(ident)
            continue
        places.append(ident)
        marking = _text_of(_child(el, "initialMarking"))
        if marking is None or marking == "":
            continue
        try:
            tokens = int(marking)
        except ValueError:
            raise fail(el, f'place id="{ident}" initialMarking', f"{marking!r} is not an "
                       "integer") from None
        if tokens < 0 or tokens > 1:
            raise fail(el, f'place id="{ident}" initialMarking', f"{tokens} tokens; a one-safe "
                       "net has initial markings 0 or 1")
        if tokens == 1:
            initial.add(ident)

    pre: dict[str, set[str]] = {t: set() for t in transitions}
    post: dict[str, set[str]] = {t: set() for t in transitions}
    for arc in arcs:
        aid = arc.get("id")
        src, tgt = arc.get("source"), arc.get("target")
        what = f'arc id="{aid}"'
        if src not in kinds or tgt not in kinds:
            missing = src if src not in kinds else tgt
            raise fail(arc, what, f"unknown node {missing!r}")
        weight_text = _text_of(_child(arc, "inscription"))
        if weight_text not in (None, ""):
            try:
                weight = int(weight_text)
            except ValueError:
                raise fail(arc, f"{what} inscription", f"{weight_text!r} is not an "
                           "integer") from None
            if weight != 1:
                raise fail(arc, f"{what} inscription", f"weight {weight}; only arcs of "
                           "weight 1 are supported (one-safe ordinary nets)")
        if kinds[src] == "place" and kinds[tgt] == "transition":
            bucket, place, trans = pre, src, tgt
        elif kinds[src] == "transition" and kinds[tgt] == "place":
            bucket, place, trans = post, tgt, src
        else:
            raise fail(arc, what, f"connects two {kinds[src]}s")
        assert place is not None and trans is not None
        if place in bucket[trans]:
            raise fail(arc, what, "parallel arc (total weight 2) between "
                       f"{src!r} and {tgt!r}")
        bucket[trans].add(place)

    return PetriNet(net_id, tuple(places),
                    tuple(Transition(t, frozenset(pre[t]), frozenset(post[t]))
                          for t in transitions),
                    frozenset(initial))


def read_net(path: str | Path) -> PetriNet:
    """Read a net from ``.pnml`` (PNML) or ``.json`` (the small JSON form)."""
    p = Path(path)
    if p.suffix.lower() == ".json":
        from symreach.loader.yaml_source import read_file_text

        try:
            data = json.loads(read_file_text(p))
        except json.JSONDecodeError as exc:
            raise InputError(f"invalid JSON: {exc.msg}", str(p), exc.lineno) from None
        return net_from_json(data, str(p))
    return read_pnml(p)
