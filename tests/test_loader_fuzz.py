"""Property: any mutation of a valid file either loads or raises InputError, nothing else."""

import copy
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from symreach.errors import InputError
from symreach.loader import load_document, load_text
from symreach.loader.yaml_source import read_file
from symreach.model import Instance

DATA = Path(__file__).parent / "data" / "loader"
def load_text_data(name):
    return read_file(DATA / name)[0]


NAMES = ("full.yaml", "full.json", "paper.yaml")
TEXTS = [((DATA / name).read_text(), name) for name in NAMES]
DOCS = [load_text_data(name) for name in NAMES]

GARBAGE = st.one_of(
    st.none(), st.booleans(), st.integers(-(2**70), 2**70), st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=12), st.sampled_from(["5x", "-1", "1Gi", "", "Exists", "In", "DoNotSchedule", "NoSchedule",
                                           "n1", "wk-1", "web", "db", "zone", "kubernetes.io/hostname", "0", "Honor"]),
    st.lists(st.integers(), max_size=3), st.dictionaries(st.text(max_size=5), st.integers(), max_size=2),
    # fresh objects each time (st.just would share one mutable object between examples)
    st.builds(dict), st.builds(list), st.builds(lambda: [{}]), st.builds(lambda: {"matchLabels": {}}),
)
# The suite's runs are derandomized (the same examples every run: a fresh random example failing in
# CI would be a flaky test); the ``slow`` variants search fresh random examples, many more of them.
SETTINGS = settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow], derandomize=True)
SEARCH = settings(max_examples=2500, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def paths(value, prefix=()):
    """Every path to a value inside ``value`` (dict keys and list indices)."""
    yield prefix
    if isinstance(value, dict):
        for k, v in value.items():
            yield from paths(v, prefix + (k,))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from paths(v, prefix + (i,))


def get(doc, path):
    for p in path:
        doc = doc[p]
    return doc


@st.composite
def mutated_docs(draw):
    doc = copy.deepcopy(draw(st.sampled_from(DOCS)))
    for _ in range(draw(st.integers(1, 3))):
        all_paths = [p for p in paths(doc) if p]
        if not all_paths:
            break
        path = draw(st.sampled_from(all_paths))
        parent, last = get(doc, path[:-1]), path[-1]
        op = draw(st.sampled_from(["delete", "duplicate", "retype", "rename", "copy-sibling"]))
        if op == "delete":
            del parent[last]
        elif op == "duplicate" and isinstance(parent, list):
            parent.insert(last, copy.deepcopy(parent[last]))
        elif op == "rename" and isinstance(parent, dict):
            parent[draw(st.text(min_size=1, max_size=8))] = parent.pop(last)
        elif op == "copy-sibling" and len(all_paths) > 1:
            other = get(doc, draw(st.sampled_from(all_paths)))
            parent[last] = copy.deepcopy(other)
        else:
            parent[last] = draw(GARBAGE)
    return doc


def check(result_of):
    try:
        inst = result_of()
    except InputError as err:
        assert str(err)
        return
    assert isinstance(inst, Instance)
    hash(inst)
    assert len(inst.static_block) == len(inst.pod_types)
    for (t, n), bound in inst.multiplicity_bound.items():
        assert 0 <= t < len(inst.pod_types) and 0 <= n < len(inst.nodes) and bound >= 0


@SETTINGS
@given(mutated_docs(), st.booleans())
def test_mutated_documents_load_or_raise_input_error(doc, as_text):
    document_loads_or_is_refused(doc, as_text)


@pytest.mark.slow
@SEARCH
@given(mutated_docs(), st.booleans())
def test_mutated_documents_load_or_raise_input_error_searching(doc, as_text):
    document_loads_or_is_refused(doc, as_text)


def document_loads_or_is_refused(doc, as_text: bool) -> None:
    if as_text:
        check(lambda: load_text(yaml.safe_dump(doc, sort_keys=False), "fuzz.yaml"))
    else:
        check(lambda: load_document(doc, "fuzz.yaml"))


@st.composite
def mutated_texts(draw):
    text, name = draw(st.sampled_from(TEXTS))
    for _ in range(draw(st.integers(1, 3))):
        op = draw(st.sampled_from(["truncate", "insert", "delete-line", "duplicate-line", "replace-char"]))
        pos = draw(st.integers(0, max(len(text) - 1, 0)))
        lines = text.splitlines(keepends=True)
        line = draw(st.integers(0, max(len(lines) - 1, 0)))
        if op == "truncate":
            text = text[:pos]
        elif op == "insert":
            text = text[:pos] + draw(st.text(alphabet=":-[]{}&*!|>'\"#,? \n\tab01", max_size=6)) + text[pos:]
        elif op == "delete-line" and lines:
            text = "".join(lines[:line] + lines[line + 1:])
        elif op == "duplicate-line" and lines:
            text = "".join(lines[:line + 1] + lines[line:])
        elif text:
            text = text[:pos] + draw(st.characters()) + text[pos + 1:]
    return text, name


@SETTINGS
@given(mutated_texts())
def test_mutated_texts_load_or_raise_input_error(text_and_name):
    text_loads_or_is_refused(*text_and_name)


@pytest.mark.slow
@SEARCH
@given(mutated_texts())
def test_mutated_texts_load_or_raise_input_error_searching(text_and_name):
    text_loads_or_is_refused(*text_and_name)


def text_loads_or_is_refused(text: str, name: str) -> None:
    check(lambda: load_text(text, "fuzz-" + name))


def test_a_lone_surrogate_is_an_input_error():
    """Found by the search above: a str given in-process (never a file, which is decoded first)
    holding a lone surrogate reached libyaml's encoder as a UnicodeEncodeError."""
    with pytest.raises(InputError, match="lone surrogate at character 0") as err:
        load_text("\ud800 x\nversion: 1\n", "f.yaml")
    assert err.value.line == 1
