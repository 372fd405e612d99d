"""DRA's CEL environment, construct by construct, against the kso DRA variant's answers.

``tests/data/dra/cel_environment.json`` holds, for one device, the answer of the variant
(/work/wt/dra-kso/kso, k8s.io/kubernetes v1.35.4) to each expression: true/false (the device
matches or not), ``CEL runtime error: ...`` (the scheduler aborts the pod's cycle) or ``CEL
compile error: ...`` (the API server refuses such a claim, so it cannot exist in a cluster).
Every other answer symreach gives must be the variant's (UNKNOWN for none of them now: the 10
it once answered so, with ``device`` or ``device.attributes`` as a map key, an index or ``[?k]``
by a list, a map or an optional, an ``insert failed`` message naming a list or an optional, are
evaluated; ``tests/test_dra_cel_tail.py`` checks those constructs on 1,166 more). (``%s`` of this
device, which holds a semver and a quantity, is left out here: Go's random map order makes the
variant name either, one run or the next; ``test_dra_cel_tail`` checks symreach admits both.)
The expressions after the first 530 probe the URL library, ``string.format``, the strfmt formats,
RE2 syntax and type names (457 of them random patterns, format strings and URLs, seed 27; the
next 15 case folding beyond Python's simple foldings, the next 181 random folded and Unicode
patterns over Unicode texts, seed 28); then 99 on Go's Unicode 15 tables (scripts, characters
Python 3.11's Unicode 14 leaves unassigned, ``trim``'s White_Space, ``strconv`` digits and float
syntax) and on map keys (double, bool, uint, NaN; cel-go's lookup across numeric types,
repeated keys), 150 random script, category and folding patterns over texts with Unicode
15 characters (seed 29), 16 more on null keys and numeric lookups at the limits, and 8 on
inserting keys (``transformMap``, ``transformMapEntry``: a key ``Find`` finds is an error),
then 157 on the getters' time zones (``±H:M`` offsets of any size and ``strconv.Atoi``'s
messages, IANA names, ``Local``, Go's messages for bad names and files, years 0 and 10000 in
a zone); then 98 on Go's parsers' messages for text outside printable ASCII (``ip``, ``cidr``,
``semver`` and the ``is...`` checks; 71 of them random, seed 32); then 315 on map keys of the
other types: bytes, semvers and formats (Go cannot hash them: cel-go's recovered panic),
durations, addresses, prefixes and types (a Go map compares them by value), ``invalid
qualifier type`` for an index of such a type, lists, maps, quantities and URLs by identity;
then 9 on
``%s`` of ``device``'s maps (``test_dra_cel_device_text`` prints a device without a
semver or a quantity); then 30 on keys by identity (the one object ``cel.bind``, a
comprehension, ``[x][0]``, ``x + []`` or the device's capacity hands on finds its entry; an
equal new one does not); then 37 on ``device.attributes`` and ``device.capacity`` as maps
(``has``, ``in``, ``size``, the macros over their domains, a field as an index, the one empty
map both give for a domain with nothing); then 13 on a duration key in ``insert failed``
(Go's ``Duration.String``); then 26 on optional keys (``optional.none()`` one key, a present
optional a pointer that a variable hands on anew at each read, a list element or map value
not); then 21 more zone names (a NUL, ``.``, a directory, a long name, files that are not
TZif, ``right/`` and ``posix/`` zones, which the pinned database lacks), and 23 on which
list and quantity operations hand
the same object on (``? :``, ``orValue``, a map value, ``[] + x``, an element through
``flatten``, ``sortBy``, ``reverse``, ``distinct``, ``slice``) and which make a new one;
then 20 on timestamp keys (Go compares the instant and the ``*time.Location``: nil for ``Z``,
Local for a zero offset, one shared zone per whole hour from -12 to +14, a new one per parse
otherwise; arithmetic keeps it);
the ``{"z": true}[...]`` ones show a computed text in the variant's ``no such key`` error.
``test_answers_are_the_variant_answers`` re-asks the variant where it is installed. The answers
were taken, and are compared, with the pinned tz database of ``tests/zone_pin.py`` as the
scheduler's, so those that read a zone file are compared on every machine too.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
import yaml

from symreach.frontends import dra_cel, zoneinfo_db
from tests.zone_pin import DATABASE, UNSHARE, variant_command

DATA = json.loads((Path(__file__).parent / "data" / "dra" / "cel_environment.json").read_text())
VARIANT = Path(os.environ.get("KSO_DRA", "/work/wt/dra-kso/kso"))
COMPILE, RUNTIME = "CEL compile error: ", "CEL runtime error: "


@pytest.fixture(autouse=True)
def _pinned_zones():
    """The tz database the answers were taken with, as the scheduler's (``zone_pin``)."""
    with zoneinfo_db.using(DATABASE):
        yield


def _symreach(expression: str) -> dra_cel.Outcome:
    attributes = dra_cel.attribute_values(DATA["driver"], DATA["attributes"])
    capacity = dra_cel.capacity_values(DATA["driver"], DATA["capacity"])
    return dra_cel.evaluate(expression, DATA["driver"], attributes, capacity)


def _want(answer: object) -> object:
    if isinstance(answer, str) and answer.startswith(RUNTIME):
        return dra_cel.CelError(answer[len(RUNTIME):])
    return answer


def test_symreach_gives_the_variant_answer_or_marks_it():
    """Every answer, with the tz database the answers were taken with (``zone_pin``) as the
    scheduler's: those that look a zone name up in it are compared on every machine too."""
    agree, marked, refused, zoned = [], [], [], []
    for expression, answer in DATA["answers"]:
        if isinstance(answer, str) and answer.startswith(COMPILE):
            refused.append(expression)
            continue
        zoneinfo_db.use(DATABASE)   # (forgets the lookups before)
        got = _symreach(expression)
        zoned += [expression] if zoneinfo_db.used() else []
        if got == dra_cel.UNKNOWN:
            marked.append(expression)
        else:
            assert got == _want(answer), expression
            agree.append(expression)
    assert len(DATA["answers"]) == 2866
    assert (len(agree), len(marked), len(refused)) == (2715, 0, 151), marked
    assert len(zoned) == 79   # look a name up in the database (77 open a file; 2 have a NUL)


def test_the_first_530_all_agree():
    """The expressions the environment was first measured on: every one evaluated now (the URL
    library, ``string.format``, the strfmt formats, RE2's syntax, dotted type names included)."""
    checked = 0
    for expression, answer in DATA["answers"][:530]:
        if isinstance(answer, str) and answer.startswith(COMPILE):
            continue
        assert _symreach(expression) == _want(answer), expression
        checked += 1
    assert checked == 494


def _state(expression: str) -> str:
    device = {"name": "g0", "attributes": DATA["attributes"], "capacity": DATA["capacity"]}
    docs = [
        {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"},
         "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "10"}}},
        {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "gpu"},
         "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{DATA["driver"]}"'}}]}},
        {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": "s"},
         "spec": {"driver": DATA["driver"], "nodeName": "n1", "devices": [device],
                  "pool": {"name": "n1", "generation": 1, "resourceSliceCount": 1}}},
        {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
         "metadata": {"name": "c1", "namespace": "default"},
         "spec": {"devices": {"requests": [{"name": "r", "exactly": {
             "deviceClassName": "gpu", "selectors": [{"cel": {"expression": expression}}]}}]}}},
        {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p1", "namespace": "default"},
         "spec": {"containers": [{"name": "c", "image": "x"}],
                  "resourceClaims": [{"name": "g", "resourceClaimName": "c1"}]}},
    ]
    return yaml.safe_dump_all(docs)


def variant_answer(expression: str, state_file: Path) -> object:
    """The variant's answer for one expression (one node, one device, one pod claiming it)."""
    state_file.write_text(_state(expression))
    out = subprocess.run(variant_command(VARIANT, state_file), capture_output=True, text=True, timeout=120)
    if out.returncode != 0:
        return out.stderr.strip().split(": selector #0: ", 1)[-1]
    verdict = json.loads(out.stdout)
    if verdict.get("feasible") == ["n1"]:
        return True
    reason = (verdict.get("reasons") or {}).get("n1")
    return False if reason == "DynamicResources: cannot allocate all claims" else reason


@pytest.mark.slow
@pytest.mark.skipif(not VARIANT.exists(), reason="the kso DRA variant is not built here")
@pytest.mark.skipif(UNSHARE is None, reason="the variant reads the pinned tz database in a mount namespace")
def test_answers_are_the_variant_answers(tmp_path):
    for expression, answer in DATA["answers"]:
        assert variant_answer(expression, tmp_path / "s.yaml") == answer, expression
