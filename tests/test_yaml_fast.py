"""The fast YAML reader (rapidyaml) against the libyaml reader: same data, or the fast reader declines.

``yaml_fast.read_documents`` may decline any input (the libyaml reader then
reads it); whenever it does not, its data must be exactly what the libyaml
reader builds (``read_documents_text(..., kubectl=True)`` with lines, which
never takes the fast path), and the libyaml reader must accept the input.
Compared on every YAML file of the repository and the shared data, on a
table of tricky scalars, on generated YAML and on mutated YAML (what ryml
accepts but libyaml refuses must be declined).
"""

from __future__ import annotations

import math
import random
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from benchmarks.shared_data import K8S_DIR
from symreach.errors import InputError
from symreach.loader import yaml_fast, yaml_source

pytestmark = pytest.mark.skipif(not yaml_fast.AVAILABLE, reason="rapidyaml (ryml) is not installed")

REPO = Path(__file__).resolve().parent.parent


def reference(text: str):
    """The libyaml reader's documents, or the InputError it raises."""
    try:
        return [data for data, _ in yaml_source.read_documents_text(text, "x.yaml", lines=True, kubectl=True)]
    except InputError as err:
        return err


def same(a: object, b: object) -> bool:
    """Equal data of equal types (``True`` is not ``1``, ``1.0`` is not ``1``, NaN is NaN)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return list(a) == list(b) and all(same(a[k], b[k]) for k in a)  # order too
    if isinstance(a, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if isinstance(a, float) and math.isnan(a):
        return math.isnan(b)
    return a == b


def agree(text: str) -> bool:
    """Assert the contract on ``text``; True when the fast reader read it (rather than declined)."""
    fast = yaml_fast.read_documents(text)
    if fast is None:
        return False
    slow = reference(text)
    assert not isinstance(slow, InputError), f"fast reader accepted what libyaml refuses ({slow}): {text!r}"
    assert same(fast, slow), f"{text!r}\nfast: {fast!r}\nlibyaml: {slow!r}"
    return True


# ---- every YAML file we have ----------------------------------------------------------------------

def corpus() -> list[Path]:
    roots = [REPO / "tests" / "data", REPO / "examples", K8S_DIR]
    return sorted(p for root in roots if root.is_dir() for p in root.rglob("*")
                  if p.suffix in (".yaml", ".yml") and p.is_file())


def test_every_yaml_file_reads_the_same():
    files = corpus()
    assert len(files) > 20
    fast = 0
    for path in files:
        text = path.read_bytes().decode("utf-8-sig", errors="replace")
        fast += agree(text)
    # Most real files have nothing unusual: the fast reader must actually read them.
    assert fast >= len(files) // 2, f"the fast reader read only {fast} of {len(files)} files"


# ---- scalars ---------------------------------------------------------------------------------------

TOKENS = [
    "=", "yes", "Yes", "YES", "no", "No", "on", "On", "OFF", "off", "y", "Y", "n", "N", "true", "True", "TRUE",
    "false", "False", "FALSE", "null", "Null", "NULL", "~", "", "0755", "00", "0", "-0", "+0", "0x1F", "0X1f",
    "0o17", "0b101", "1e3", "1E3", "1e+3", "-1.5e-3", "1.", "0.", ".5", "-.5", "+7", "+1.5", "12", "-12",
    "1_000", "1__0", "_1", "2024-01-01", "2024-01-01T10:00:00Z", "-", "a-b", ".inf", "-.Inf", "+.INF", ".NaN",
    ".nan", "inf", "-inf", "nan", "NaN", "Infinity", "12:30", "1:20", "10.0.0.1", "100m", "128Mi", "abc",
    "123456789012345678901234567890", "18446744073709551615", "18446744073709551616", "9223372036854775807",
    "-9223372036854775808", "-9223372036854775809", "1e400", "0.0", "00.5", "1.2.3", "a b", "a#b", "é", "😀",
    ".", "..", "...x", "<", "<<",
]


@pytest.mark.parametrize("token", TOKENS)
def test_tricky_scalars_as_values_keys_and_items(token):
    for text in (f"k: {token}\n", f"- {token}\n- x\n", f"{token}: v\n", f"k: [{token}, x]\n", f"k: {{a: {token}}}\n",
                 f"k: '{token}'\n", f'k: "{token}"\n', f"'{token}': v\n", f"k: |\n  {token}\n", f"--- {token}\n"):
        agree(text)


def test_the_fast_reader_reads_kubernetes_scalars_as_kubectl():
    text = ("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  labels: {release-date: 2024-01-01, op: =}\n"
            "data:\n  a: yes\n  b: \"True\"\n  c: 0755\n  d: ~\n  e: 1e3\n  f: '12'\n  g: inf\n")
    assert agree(text)
    doc = yaml_fast.read_documents(text)[0]
    assert doc["metadata"]["labels"] == {"release-date": "2024-01-01", "op": "="}
    assert doc["data"] == {"a": True, "b": "True", "c": 493, "d": None, "e": 1000.0, "f": "12", "g": "inf"}


# ---- what the fast reader leaves to libyaml --------------------------------------------------------

@pytest.mark.parametrize("text", [
    "a: &x {b: 1}\nc: *x\n",              # anchors and aliases (the alias budget is libyaml's)
    "a: !!str 1\n",                       # tags
    "%YAML 1.1\n---\na: 1\n",             # directives
    "a:\tb\n",                            # tabs
    "a: 1\na: 2\n",                       # duplicate keys: libyaml names the line
    "true: 1\n'true': 2\n",               # keys that mean the same
    "<<: {a: 1}\nb: 2\n",                 # merge keys
    "~: 1\n",                             # a null key
    "a: [1, 2\n",                         # errors
    "a: b\x01\n",                         # characters libyaml refuses
    "a: b\u2028c\n",                      # a line break to YAML 1.1 only
    "[" * 70 + "]" * 70 + "\n",           # deep nesting: libyaml's depth guard decides
    "...\n",                              # a document end without a document
    "a: ]x\n", "- @x\n", "`b: 1\n",       # indicators libyaml refuses at the start of a plain scalar
    "---\r=\r\n",                        # a lone CR: a line break to libyaml only
    "a:\n  - {}  - =\n",                  # an entry after a flow collection on the same line
    "[:", "a: {b: 1, : 2}\n",             # an empty key in a flow collection
    "'00'!\n", "\"a\" !x\n",                # a node property right after a quoted scalar
    "---\n- ['0000', {?a: =}]\n",          # ``?`` in a flow collection: always libyaml's key indicator
    "---\n- [=, {name:, =}]\n",             # ``:`` before a flow indicator: libyaml refuses it
    "- [{a\":, b}]\n",                       # ... also after a plain scalar ending in a quote
])
def test_declines(text):
    assert yaml_fast.read_documents(text) is None
    assert not agree(text)


def test_ryml_errors_do_not_reach_stderr(capfd):
    assert yaml_fast.read_documents("a: [1, 2\n") is None
    assert yaml_fast.read_documents("[" * 70 + "]" * 70) is None
    out, err = capfd.readouterr()
    assert out == "" and err == ""


def test_unusual_is_conservative_about_node_properties():
    assert yaml_fast.unusual("a: &x 1\n") and yaml_fast.unusual("- *x\n") and yaml_fast.unusual("--- !t\n")
    assert yaml_fast.unusual("a: [&x 1]\n") and yaml_fast.unusual("a:\n  &x b\n")
    assert not yaml_fast.unusual("a: b && c\nd: 'e*'\nf: x!\n")


def test_the_kubernetes_reader_takes_the_fast_path(monkeypatch):
    calls = []
    original = yaml_fast.read_documents

    def spy(text):
        calls.append(text)
        return original(text)

    monkeypatch.setattr(yaml_fast, "read_documents", spy)
    docs = yaml_source.read_documents_text("kind: Pod\nmetadata: {name: a}\n", "x.yaml", lines=False, kubectl=True)
    assert calls and docs == [({"kind": "Pod", "metadata": {"name": "a"}}, {})]
    calls.clear()
    yaml_source.read_documents_text("kind: Pod\n", "x.yaml", lines=True, kubectl=True)  # lines: libyaml
    yaml_source.read_documents_text("version: 1\n", "x.yaml", lines=False)                # format v1: libyaml
    assert not calls


# ---- generated YAML --------------------------------------------------------------------------------

TEXT_CHARS = st.sampled_from(list("abcxyz019 -:#'\"\\,[]{}&*!%@`|>?.~=_é😀\t¶"))  # ¶: a line break
KEYS = st.one_of(st.sampled_from(["a", "b", "name", "yes", "1", "0x10", "true", "~", "k:v", "-x", "é"]),
                 st.text(st.sampled_from(list("abz09_-.")), min_size=1, max_size=6))


@st.composite
def scalar(draw, flow: bool = False, block_ok: bool = True) -> str:
    """One scalar in a random style: plain (a tricky token), single or double quoted, or a block scalar."""
    styles = ["plain", "plain", "squo", "dquo"] + (["block"] if block_ok and not flow else [])
    style = draw(st.sampled_from(styles))
    if style == "plain":
        return draw(st.sampled_from([t for t in TOKENS if t and not (flow and any(c in t for c in ",[]{}"))]))
    text = draw(st.text(TEXT_CHARS, max_size=12))
    if style == "squo":
        return "'" + text.replace("'", "''").replace("¶", " ") + "'"
    if style == "dquo":
        return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("¶", "\\n") + '"'
    return "BLOCK" + draw(st.sampled_from(["|", "|-", "|+", ">", ">-", ">+"])) + "\x00" + text


def render_scalar(token: str, indent: int) -> str:
    """A scalar after ``key: `` or ``- ``; block scalars continue on indented lines."""
    if not token.startswith("BLOCK"):
        return token
    header, text = token[5:].split("\x00", 1)
    lines = text.split("¶")
    pad = " " * (indent + 2)
    return header + "".join("\n" + (pad + line if line.strip() else "") for line in lines)


@st.composite
def flow_value(draw, depth: int = 0) -> str:
    if depth >= 2 or draw(st.booleans()):
        return draw(scalar(flow=True))
    if draw(st.booleans()):
        items = draw(st.lists(flow_value(depth + 1), max_size=3))
        return "[" + ", ".join(items) + "]"
    keys = draw(st.lists(KEYS, max_size=3, unique=True))
    return "{" + ", ".join(f"{k}: {draw(flow_value(depth + 1))}" for k in keys) + "}"


@st.composite
def block(draw, indent: int = 0, depth: int = 0) -> str:
    """A block mapping or sequence at ``indent``, each line ending in a newline."""
    pad = " " * indent
    comment = lambda: draw(st.sampled_from(["", "", "", "  # note", " #: x"]))  # noqa: E731
    if draw(st.booleans()):  # a mapping: one head per key; else a sequence of "-" heads
        heads = [f"{key}:" for key in draw(st.lists(KEYS, min_size=1, max_size=4, unique=True))]
    else:
        heads = ["-"] * draw(st.integers(1, 4))
    lines = []
    for head in heads:
        choice = draw(st.integers(0, 3 if depth < 3 else 1))
        if choice == 0:
            lines.append(f"{pad}{head} {render_scalar(draw(scalar()), indent)}{comment()}\n")
        elif choice == 1:
            lines.append(f"{pad}{head} {draw(flow_value())}{comment()}\n")
        else:
            lines.append(f"{pad}{head}{comment()}\n" + draw(block(indent + 2, depth + 1)))
        if draw(st.integers(0, 9)) == 0:
            lines.append(draw(st.sampled_from([f"{pad}# a comment\n", "\n"])))
    return "".join(lines)


@st.composite
def stream(draw) -> str:
    docs = draw(st.lists(st.one_of(block(), st.just(""), scalar(block_ok=False)), min_size=1, max_size=3))
    parts = []
    for i, doc in enumerate(docs):
        if i or draw(st.booleans()):
            parts.append(draw(st.sampled_from(["---\n", "--- # doc\n"])))
        parts.append(doc if doc.endswith("\n") or not doc else doc + "\n")
        if draw(st.integers(0, 4)) == 0:
            parts.append("...\n")
    text = "".join(parts)
    if draw(st.booleans()):
        text = text.replace("\n", "\r\n")
    return text


# The suite's runs are derandomized (the same examples every run: a new random example failing in CI
# would be a flaky test); the ``slow`` variants search fresh random examples, many more of them.
FIXED = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow], derandomize=True)
SEARCH = settings(max_examples=3000, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@FIXED
@given(stream())
def test_generated_yaml_reads_the_same(text):
    agree(text)


@pytest.mark.slow
@SEARCH
@given(stream())
def test_generated_yaml_reads_the_same_searching(text):
    agree(text)


@FIXED
@given(stream(), st.randoms(use_true_random=False))
def test_mutated_yaml_is_never_read_differently(text, rnd: random.Random):
    """ryml is more lenient than libyaml in places: whatever it accepts and libyaml refuses must be declined."""
    mutated_agrees(text, rnd)


@pytest.mark.slow
@SEARCH
@given(stream(), st.randoms(use_true_random=False))
def test_mutated_yaml_is_never_read_differently_searching(text, rnd: random.Random):
    mutated_agrees(text, rnd)


def mutated_agrees(text: str, rnd: random.Random) -> None:
    chars = list(text)
    for _ in range(rnd.randint(1, 3)):
        at = rnd.randrange(len(chars) + 1)
        if chars and rnd.random() < 0.5:
            del chars[min(at, len(chars) - 1)]
        else:
            chars.insert(at, rnd.choice(list(" -:#'\"[]{},?|>\n&*!%@`") + ["  "]))
    agree("".join(chars))


def test_generated_yaml_is_mostly_read_by_the_fast_reader():
    """The generators above must exercise the fast reader, not only its declining."""
    read = 0
    rnd = random.Random(7)
    for i in range(200):
        keys = [rnd.choice(["a", "b", "yes", "1", "name", "é"]) + str(j) for j in range(3)]
        vals = [rnd.choice(TOKENS) or "x" for _ in keys]
        text = "".join(f"{k}: {v}\n" for k, v in zip(keys, vals)) + (f"l:\n- {rnd.choice(TOKENS) or 'x'}\n")
        read += agree(text)
    assert read >= 100


def test_a_benchmark_dump_is_read_by_the_fast_reader_and_the_same():
    """The dumps of ``benchmarks/k8s_dump_scale.py`` (status, managedFields, long wrapped messages)."""
    import yaml

    from benchmarks.k8s_dump_scale import build_dump

    text = yaml.dump(build_dump(60), Dumper=getattr(yaml, "CSafeDumper", yaml.SafeDumper), sort_keys=False)
    assert agree(text)


# ---- the hook-free path (no per-mapping repair) ---------------------------------------------------

def took_hook_free_path(text: str, monkeypatch) -> bool:
    """Read ``text`` (agreeing with libyaml): whether the fast reader read it without the repairing hook
    (False when it declined or repaired)."""
    calls = []
    original = yaml_fast._Reader.mapping
    monkeypatch.setattr(yaml_fast._Reader, "mapping", lambda self, pairs: calls.append(1) or original(self, pairs))
    read = agree(text)
    monkeypatch.undo()
    return read and not calls


def test_a_kubectl_dump_needs_no_repair(monkeypatch):
    """kubectl quotes every string that would otherwise be typed (``status: "True"``, ``"0755"``)."""
    import yaml

    from benchmarks.k8s_dump_scale import build_dump

    text = yaml.dump(build_dump(60), Dumper=getattr(yaml, "CSafeDumper", yaml.SafeDumper), sort_keys=False)
    assert '"True"' in text or "'True'" in text
    assert took_hook_free_path(text, monkeypatch)


@pytest.mark.parametrize("plain", ["yes", "True", "~", "0755", "0x1F", "1_000", "inf", "-.Inf", ".NaN", "Off"])
def test_a_plain_typed_scalar_beside_its_quoted_twin_is_repaired(plain, monkeypatch):
    """The same text quoted elsewhere must not let the plain one pass as a string."""
    for text in (f'a: "{plain}"\nb: {plain}\n', f"a: '{plain}'\nb:\n- {plain}\n", f'a: "{plain}"\n{plain}: v\n',
                 f'a: ["{plain}", {plain}]\n', f'a: "{plain}"\nb: {plain}  # note\n'):
        assert not took_hook_free_path(text, monkeypatch), text


@pytest.mark.parametrize("text", [
    'a: "yes"\nb: "0755"\nc: "True"\nd: "~"\n',  # quoted only
    'a: "1"\nb: 1\n"2": x\n',                     # ryml writes a plain 1 bare: a JSON string "1" was quoted
    'a: "True"\nmessage: it is True that\n',      # inside a longer plain scalar
    'a: ""\nb: 2\n',                              # an empty quoted value (an empty plain one is null)
])
def test_quoted_typed_looking_strings_take_the_hook_free_path(text, monkeypatch):
    assert took_hook_free_path(text, monkeypatch)


def test_plain_empty_keys_and_refused_starts_are_left_to_the_repairing_path(monkeypatch):
    assert not took_hook_free_path('a: ""\n"": x\n', monkeypatch)  # an empty key: plain ones are null keys
    assert yaml_fast.read_documents('a: "@x"\nb: @y\n') is None  # libyaml refuses a plain @y: declined


def test_an_empty_block_scalar_before_a_document_marker_is_left_to_libyaml():
    """Found by the mutation test: ryml read ``'|-\\n---\\n'`` as ``['---']``, libyaml as ``['', None]``."""
    from symreach.loader.yaml_fast import read_documents

    for text in ("|-\n---\n", "a: >\n\n---\nb: 1\n", "a: |+ # c\n...\n"):
        assert read_documents(text) is None, text
