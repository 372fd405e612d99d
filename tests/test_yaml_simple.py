"""The small-file YAML reader against the libyaml reader: same data and lines, or it declines.

``yaml_simple.read_document`` may decline any text (libyaml then reads it);
whenever it does not, its data (with types: ``True`` is not ``1``) and its
lines must be exactly what ``yaml_libyaml`` builds for format v1, and libyaml
must accept the text. Compared on every YAML file of the repository, on a
table of tricky scalars in every position, on generated documents and on
mutants of them (whatever libyaml refuses must be declined). Each test
asserts how many texts the simple reader really read.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Optional

import pytest

from symreach.errors import InputError
from symreach.loader import yaml_libyaml, yaml_simple, yaml_source

REPO = Path(__file__).resolve().parent.parent

TOKENS = [
    "a", "n1", "kubernetes.io/hostname", "zone-a", "500m", "2Gi", "128Mi", "1", "0", "-0", "+7", "-12", "12",
    "007", "0755", "0x1F", "0b101", "1_000", "1e3", "1.5", "1.", ".5", "-.5", ".inf", ".NaN", "1:20",
    "2024-01-01", "2024-01-01T10:00:00Z", "10.0.0.1", "yes", "Yes", "YES", "no", "No", "NO", "on", "On", "ON",
    "off", "OFF", "y", "Y", "n", "N", "true", "True", "TRUE", "false", "False", "null", "Null", "NULL", "~",
    "~x", "=", "=x", "<<", "<", "-x", "-bar", ".hidden", "a b", "a  b", "a:b", "http://x/y", "a#b", "x!",
    "a,b", "a]", "12345678901234567890123", "NoSchedule", "app", "-", ":x", "?x", "%x", "@x", "`x", "!x",
    "&x", "*x", "|", ">", "a'b", 'a"b', "a\\b",
]


def reference(text: str) -> object:
    """(data, lines) from libyaml as format v1 reads it, or the InputError it raises."""
    try:
        docs = yaml_libyaml.read_documents(text, "x.yaml", yaml_source.MAX_ALIAS_NODES, 1, True, False)
    except InputError as err:
        return err
    return docs[0] if docs else None


def typed(value: object) -> object:
    """``value`` with the type of every scalar beside it: equal only when the types agree too."""
    if isinstance(value, dict):
        return [(typed(k), typed(v)) for k, v in value.items()]  # order too
    if isinstance(value, list):
        return [typed(v) for v in value]
    return (type(value).__name__, value)


def agree(text: str) -> bool:
    """Assert the contract on ``text``; True when the simple reader read it rather than declined."""
    simple = yaml_simple.read_document(text)
    if simple is None:
        return False
    slow = reference(text)
    assert not isinstance(slow, InputError) and slow is not None, f"libyaml refuses ({slow}): {text!r}"
    assert typed(simple[0]) == typed(slow[0]), text
    assert simple[1] == slow[1], text
    assert yaml_simple.read_document(text, lines=False) == (simple[0], {})
    return True


def test_every_yaml_file_reads_the_same() -> None:
    roots = [REPO / "examples", REPO / "tests" / "data", REPO / "benchmarks"]
    files = sorted(p for root in roots for p in root.rglob("*.y*ml") if p.is_file())
    assert len(files) > 20
    read = sum(agree(p.read_bytes().decode("utf-8-sig", errors="replace")) for p in files)
    assert read >= 15, f"the simple reader read only {read} of {len(files)} files"


def test_paper_example_takes_the_simple_path() -> None:
    text = (REPO / "examples" / "paper-2.6.yaml").read_text()
    assert agree(text)


def test_tricky_scalars_in_every_position() -> None:
    read = 0
    for token in TOKENS:
        for text in (f"k: {token}\n", f"- {token}\n- x\n", f"{token}: v\n", f"k: [{token}, x]\n",
                     f"k: {{a: {token}}}\n", f"k: {{{token}: 1}}\n", f"k: '{token}'\n", f'k: "{token}"\n',
                     f"k:\n  - {token}  # c\n", f"k: {token} # c\n", f"k: {token}#c\n", f"a:\n- {token}\nb: 1\n"):
            read += agree(text)
    assert read >= 400, read


@pytest.mark.parametrize("text", [
    "a:\n  x\nb: 1\n", "a:\n    - x\n    - y\nb: 1\n", "- a:\n  - b\n- c\n", "- {a: 1}\n- [x, {y: z}]\n",
    "a: {b : 1, c: [1, 2, []], d: {}}\n", "a:   x   \n", "a: x  y # c\n", "k: 'it''s'\n", "- - a\n  - b\n- c\n",
    "a:\n  b:\n    c: 1\n  d: 2\ne: 3\n", "a: -1\nb: +2\nc: -bar\n", "name: a\n# c\n\n  # indented\nx: y\n",
    "a: 'x # y'\n", 'a: "x # y" # z\n', "a:\n- 1\n- 2\n", "a: 1 \n", "a:\n\n  b: 1\n",
])
def test_hand_written_shapes_are_read(text: str) -> None:
    assert agree(text)


@pytest.mark.parametrize("text", [
    "- \n", "a: &x {b: 1}\nc: *x\n", "a: !!str 1\n", "%YAML 1.1\n---\na: 1\n", "---\na: 1\n", "a: 1\n---\nb: 2\n",
    "a:\tb\n", "a: 1\na: 2\n", "1: a\n1: b\n", "a: |\n  x\n", "a: >\n  x\n", "a: b\n  c\n", "a: 'x\n  y'\n",
    'a: "x\\ny"\n', "'a': 1\n", "? a\n: 1\n", "a: [1, 2\n", "a: b: c\n", "<<: {a: 1}\n", "a: é\n",
    "a: 1\r\nb: 2\r\n", "  a: 1\n", "a:\n  b: 1\n c: 2\n", "- a\n -b\n", "a: [x, ]\n", "a: {x}\n", "a: {x:1}\n",
    "-\n  a: 1\n", "a: 0x10\n", "a: 1.5\n", "a: 2024-01-01\n", "", "# only a comment\n",
])
def test_declines(text: str) -> None:
    assert yaml_simple.read_document(text) is None


# ---- generated documents and their mutants ------------------------------------------------------------

def scalar(rnd: random.Random, flow: bool) -> str:
    style = rnd.random()
    if style < 0.6:
        return rnd.choice([t for t in TOKENS if not (flow and set(t) & set(",[]{}:#"))])
    text = "".join(rnd.choice("ab1 -:#,'\"[]") for _ in range(rnd.randint(0, 6)))
    return "'" + text.replace("'", "''") + "'" if style < 0.8 else '"' + text.replace('"', "'") + '"'


def flow(rnd: random.Random, depth: int = 0) -> str:
    if depth >= 2 or rnd.random() < 0.5:
        return scalar(rnd, True)
    if rnd.random() < 0.5:
        return "[" + ", ".join(flow(rnd, depth + 1) for _ in range(rnd.randint(0, 3))) + "]"
    keys = rnd.sample(["a", "b", "cpu", "app", "yes", "1"], rnd.randint(0, 3))
    return "{" + ", ".join(f"{k}: {flow(rnd, depth + 1)}" for k in keys) + "}"


def block(rnd: random.Random, indent: int, depth: int, step: int) -> list[str]:
    pad, lines = " " * indent, []
    mapping = rnd.random() < 0.6
    heads = ([k + ":" for k in rnd.sample(["a", "b", "name", "labels", "yes", "1", "my key", "x.y/z"],
                                          rnd.randint(1, 4))] if mapping else ["-"] * rnd.randint(1, 3))
    for head in heads:
        comment = rnd.choice(["", "", "", "  # note", " # a: b"])
        kind = rnd.randint(0, 3 if depth < 3 else 1)
        if kind == 0:
            lines.append(f"{pad}{head} {scalar(rnd, False)}{comment}")
        elif kind == 1:
            lines.append(f"{pad}{head} {flow(rnd)}{comment}")
        elif head == "-" and kind == 2:  # a compact mapping in the item
            inner = block(rnd, indent + 2, depth + 1, step)
            if inner and inner[0].lstrip().startswith(("- ", "-")) is False:
                lines.append(f"{pad}- {inner[0].lstrip()}")
                lines += inner[1:]
            else:
                lines.append(f"{pad}-{comment}")
                lines += inner
        else:
            lines.append(f"{pad}{head}{comment}")
            same_indent = head != "-" and rnd.random() < 0.3
            lines += block(rnd, indent if same_indent else indent + step, depth + 1, step) \
                if not same_indent else [f"{pad}- {scalar(rnd, False)}"]
        if rnd.random() < 0.1:
            lines.append(rnd.choice([f"{pad}# a comment", ""]))
    return lines


def document(rnd: random.Random) -> str:
    return "\n".join(block(rnd, 0, 0, rnd.choice([2, 2, 4]))) + rnd.choice(["\n", "", "\n\n"])


def mutant(rnd: random.Random, text: str) -> Optional[str]:
    chars = list(text)
    for _ in range(rnd.randint(1, 3)):
        if not chars:
            return None
        at = rnd.randrange(len(chars))
        op = rnd.random()
        if op < 0.4:
            del chars[at]
        else:
            chars.insert(at, rnd.choice([" ", "  ", ":", "-", "- ", "#", "'", '"', "\n", "[", "}", ",", "\n  "]))
    return "".join(chars)


def test_generated_documents_read_the_same() -> None:
    rnd = random.Random(31)
    read = sum(agree(document(rnd)) for _ in range(1500))
    assert read >= 250, read


def test_mutants_are_read_the_same_or_declined() -> None:
    rnd = random.Random(32)
    read = 0
    for _ in range(3000):
        text = mutant(rnd, document(rnd))
        if text is not None:
            read += agree(text)
    assert read >= 200, read
