"""zoneinfo_db: the tz database as an input, read as Go 1.25's ``time.LoadLocation`` reads it.

The answers written in are the kso DRA variant's (/work/wt/dra-kso/kso, Go 1.25) for
``{"z": true}[string(timestamp("2024-03-05T03:20:30Z").getHours(NAME))]``, run in a mount
namespace whose ``/usr/share/zoneinfo`` was the pinned database (``zone_pin``) or an empty
directory, with ``ZONEINFO`` set as each case says; the zips were built as ``_zip`` builds them.
"""

from __future__ import annotations

import os
import struct
import zipfile
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from symreach.cli.main import cli
from symreach.frontends import dra_cel, zoneinfo_db
from tests.zone_pin import DATABASE, PINNED

DRIVER = "gpu.example.com"
EXAMPLE = str(Path(__file__).resolve().parents[1] / "examples" / "paper-2.6.yaml")
NAMES = ("Europe/Berlin", "America", "America/New_York/", "zone.tab", "Nowhere/Land", "Asia/Kolkata")
FOUND = {"Europe/Berlin": 4, "Asia/Kolkata": 8}   # getHours there; kso: "no such key: 4"
IS_DIR, NOT_DIR, MALFORMED = "is a directory", "not a directory", "malformed time zone information"


def _zip(path: Path, method: int) -> Path:
    with zipfile.ZipFile(path, "w", method) as z:
        for root, dirs, files in os.walk(PINNED):
            dirs[:] = sorted(d for d in dirs if d != "__pycache__")
            for name in sorted(f for f in files if not f.endswith(".py")):
                z.write(os.path.join(root, name), os.path.relpath(os.path.join(root, name), PINNED))
    return path


def _hours(name: str, database: zoneinfo_db.Database) -> object:
    """The getter's answer: the hour, or the CEL runtime error's message."""
    expression = f'{{"z": true}}[string(timestamp("2024-03-05T03:20:30Z").getHours("{name}"))]'
    with zoneinfo_db.using(database):
        got = dra_cel.evaluate(expression, DRIVER, dra_cel.attribute_values(DRIVER, {}),
                               dra_cel.capacity_values(DRIVER, {}))
        assert zoneinfo_db.used() == [database.describe()]
    assert isinstance(got, dra_cel.CelError), got
    return int(got.message[len("no such key: "):]) if got.message.startswith("no such key: ") else got.message


def _unknown(name: str) -> str:
    return f"unknown time zone {name}"


@pytest.fixture(scope="module")
def zips(tmp_path_factory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("zips")
    (root / "corrupt.zip").write_text("not a zip\n")
    (root / "plain").write_text("a file whose name does not end in .zip\n")
    return {"stored": _zip(root / "pinned.zip", zipfile.ZIP_STORED),
            "deflated": _zip(root / "deflated.zip", zipfile.ZIP_DEFLATED),
            "corrupt": root / "corrupt.zip", "plain": root / "plain", "missing": root / "missing.zip",
            "missing_dir": root / "missing"}


def test_zoneinfo_as_a_zip_and_as_a_directory(zips):
    """ZONEINFO alone (no system directory): the zip has no directories, so no directory errors;
    a ZONEINFO file that does not parse is forgotten (``zone.tab``: unknown, not malformed)."""
    in_zip = zoneinfo_db.Database(str(zips["stored"]), ())
    in_dir = zoneinfo_db.Database(str(PINNED), ())
    want_zip = {**{n: _unknown(n) for n in NAMES}, **FOUND}
    want_dir = {**want_zip, "America": IS_DIR, "America/New_York/": NOT_DIR}
    assert {n: _hours(n, in_zip) for n in NAMES} == want_zip
    assert {n: _hours(n, in_dir) for n in NAMES} == want_dir


def test_zoneinfo_first_then_the_system_directory(zips):
    """A missing ZONEINFO (zip or directory) is passed over; any other error of it is the answer
    unless the system directory has the zone; the system directory's own errors follow."""
    system = {"America": IS_DIR, "America/New_York/": NOT_DIR, "zone.tab": MALFORMED,
              "Nowhere/Land": _unknown("Nowhere/Land"), **FOUND}
    for case in ("missing", "missing_dir"):
        db = zoneinfo_db.Database(str(zips[case]), (str(PINNED),))
        assert {n: _hours(n, db) for n in NAMES} == {**system, "Europe/Berlin": 4}, case
    alone = zoneinfo_db.Database(str(zips["missing"]), ())
    assert {n: _hours(n, alone) for n in NAMES} == {n: _unknown(n) for n in NAMES}
    plain = zoneinfo_db.Database(str(zips["plain"]), (str(PINNED),))
    assert {n: _hours(n, plain) for n in NAMES} == {**{n: NOT_DIR for n in NAMES}, **FOUND}
    corrupt = zoneinfo_db.Database(str(zips["corrupt"]), (str(PINNED),))
    assert {n: _hours(n, corrupt) for n in NAMES} == {**{n: f"corrupt zip file {zips['corrupt']}" for n in NAMES},
                                                      **FOUND}
    deflated = zoneinfo_db.Database(str(zips["deflated"]), (str(PINNED),))
    assert {n: _hours(n, deflated) for n in NAMES} == {
        **system, "zone.tab": f"unsupported compression for zone.tab in {zips['deflated']}", "Europe/Berlin": 4}


def _cut_short(path: Path, directory: bytes) -> Path:
    """A zip whose end record points at ``directory``, a central directory cut short."""
    path.write_bytes(directory + struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, 1, 1, len(directory), 0, 0))
    return path


def test_a_zip_go_panics_on_aborts_the_whole_evaluation(tmp_path):
    """Go slices past the end of a central directory cut short: a runtime panic that cel-go's
    ``Eval`` recovers as the expression's error, which ``||`` does not absorb (unlike a CEL
    error), and no later source is tried. kso, ZONEINFO each of these zips, the pinned database
    or an empty directory as /usr/share/zoneinfo, Asia/Tokyo looked up."""
    head = struct.pack("<I", 0x02014B50)
    names = bytearray(head + bytes(42) + b"Asia/Tokyo")
    names[28:32] = struct.pack("<HH", 10, 5)   # namelen 10, xlen 5: past the 56 bytes
    namelen = bytearray(head + bytes(42))
    namelen[28:30] = struct.pack("<H", 10)
    zips = {"[24:20]": _cut_short(tmp_path / "a.zip", head + bytes(16)),
            "[:56] with capacity 46": _cut_short(tmp_path / "b.zip", bytes(namelen)),
            "[61:56]": _cut_short(tmp_path / "c.zip", bytes(names))}
    tokyo = 'timestamp("2024-03-05T03:20:30Z").getHours("Asia/Tokyo") == 12'
    for bounds, path in zips.items():
        with zoneinfo_db.using(zoneinfo_db.Database(str(path), (str(PINNED),))):
            got = {e: dra_cel.evaluate(e, DRIVER, {}, {}) for e in (
                tokyo + " || true", "true || " + tokyo, f"[1, 2].exists(x, x == 2 || {tokyo})",
                '{"a": 1}["b"] == 1 || true')}
        panic = dra_cel.CelError(f"internal error: runtime error: slice bounds out of range {bounds}")
        assert list(got.values()) == [panic, True, panic, True], bounds


def test_the_default_is_go_s_lookup_on_this_machine(monkeypatch, zips):
    monkeypatch.setenv("ZONEINFO", str(zips["stored"]))
    assert zoneinfo_db.current() == zoneinfo_db.Database(str(zips["stored"]), zoneinfo_db.GO_ZONE_DIRS)
    assert _hours("Asia/Kolkata", zoneinfo_db.current()) == 8
    monkeypatch.delenv("ZONEINFO")
    assert zoneinfo_db.current() == zoneinfo_db.Database("", zoneinfo_db.GO_ZONE_DIRS)


def test_the_scheduler_database_is_read_as_its_usr_share_zoneinfo(tmp_path):
    """``--zoneinfo``: the image's directory, nothing of this machine (``right/UTC`` is not in the
    pinned package), Go's path in the messages (kso: ``/usr/share/zoneinfo//Big``)."""
    assert {n: _hours(n, DATABASE) for n in NAMES + ("right/UTC",)} == {
        "America": IS_DIR, "America/New_York/": NOT_DIR, "zone.tab": MALFORMED, "right/UTC": _unknown("right/UTC"),
        "Nowhere/Land": _unknown("Nowhere/Land"), **FOUND}
    (tmp_path / "Big").write_bytes(bytes((10 << 20) + 1))
    (tmp_path / "Edge").write_bytes(bytes(10 << 20))
    big = zoneinfo_db.Database.of(str(tmp_path))
    assert (_hours("Big", big), _hours("Edge", big)) == ("time: file /usr/share/zoneinfo//Big is too large",
                                                         MALFORMED)
    (tmp_path / "Europe").mkdir()
    (tmp_path / "Europe" / "Berlin").write_bytes((PINNED / "Europe" / "Berlin").read_bytes())
    (tmp_path / "Link").symlink_to("Europe/Berlin")
    (tmp_path / "localtime").symlink_to("/etc/localtime")   # as in Debian's tzdata, distroless's
    (tmp_path / "Up").symlink_to("../elsewhere")
    assert _hours("Link", big) == 4
    with zoneinfo_db.using(big):   # the container's /etc is not an input: marked, not answered
        assert [dra_cel.evaluate(f'timestamp("2024-03-05T03:20:30Z").getHours("{n}") == 4', DRIVER, {}, {})
                for n in ("localtime", "Up", "Up/x")] == [dra_cel.UNKNOWN] * 3


def _state(expression: str) -> str:
    """One node with one device; a pod whose claim's selector is ``expression``."""
    return yaml.safe_dump_all([
        {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"},
         "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "10"}}},
        {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "gpu"},
         "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{DRIVER}"'}}]}},
        {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": "s"},
         "spec": {"driver": DRIVER, "nodeName": "n1", "devices": [{"name": "g0"}],
                  "pool": {"name": "n1", "generation": 1, "resourceSliceCount": 1}}},
        {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": {"name": "c1", "namespace": "default"},
         "spec": {"devices": {"requests": [{"name": "r", "exactly": {
             "deviceClassName": "gpu", "selectors": [{"cel": {"expression": expression}}]}}]}}},
        {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p1", "namespace": "default"},
         "spec": {"containers": [{"name": "c", "image": "x"}],
                  "resourceClaims": [{"name": "g", "resourceClaimName": "c1"}]}},
    ])


def test_cli_zoneinfo_decides_a_zone_dependent_verdict(tmp_path, zips):
    """The selector holds in Asia/Kolkata (08:50), not in UTC. kso with the pinned database fits
    the pod on n1; with a database lacking the zone: ``CEL runtime error: unknown time zone
    Asia/Kolkata`` aborts the cycle (kso exits 2 with that message), so it never runs."""
    state = tmp_path / "zone.yaml"
    state.write_text(_state('timestamp("2024-03-05T03:20:30Z").getHours("Asia/Kolkata") == 8'))
    lacking = tmp_path / "lacking"
    (lacking / "Europe").mkdir(parents=True)
    (lacking / "Europe" / "Berlin").write_bytes((PINNED / "Europe" / "Berlin").read_bytes())
    runner = CliRunner()
    target = ["check", str(state), "--pod", "default/p1", "--node", "n1", "--quiet"]
    answers = {}
    for label, path in (("pinned", PINNED), ("zip", zips["stored"]), ("lacking", lacking)):
        out = runner.invoke(cli, target + ["-o", "json", "--zoneinfo", str(path)])
        doc = yaml.safe_load(out.output)
        answers[label] = (out.exit_code, doc["verdict"], doc["zoneinfo"])
    assert answers == {
        "pinned": (0, "deployable", f"{PINNED}, IANA 2025b (--zoneinfo)"),
        "zip": (0, "deployable", f"{zips['stored']} (--zoneinfo)"),
        "lacking": (1, "not-deployable", f"{lacking} (--zoneinfo)")}
    text = runner.invoke(cli, target + ["--zoneinfo", str(lacking)]).output
    assert text.splitlines()[-1] == f"  zoneinfo: time zones read from {lacking} (--zoneinfo)"
    why = runner.invoke(cli, ["explain", str(state), "--zoneinfo", str(lacking)]).output
    assert "CEL runtime error: unknown time zone Asia/Kolkata" in why
    assert why.splitlines()[-2] == f"zoneinfo: time zones read from {lacking} (--zoneinfo)"
    grid = runner.invoke(cli, ["matrix", str(state), "--zoneinfo", str(lacking)]).output
    assert grid.splitlines()[-2] == f"zoneinfo: time zones read from {lacking} (--zoneinfo)"
    cert = tmp_path / "cert.json"
    assert runner.invoke(cli, target + ["--zoneinfo", str(lacking), "--cert-out", str(cert)]).exit_code == 1
    certify = ["certify", str(state), str(cert), "--pod", "default/p1", "--node", "n1", "--quiet", "--zoneinfo"]
    assert runner.invoke(cli, certify + [str(lacking)]).exit_code == 0
    assert runner.invoke(cli, certify + [str(PINNED)]).exit_code == 1   # another instance: refused
    plain = runner.invoke(cli, ["check", EXAMPLE, "-o", "json"])
    assert yaml.safe_load(plain.output)["zoneinfo"] is None   # no zone read


@pytest.mark.parametrize("given, problem", [
    ("missing", "no such file or directory"),
    ("plain", "not a directory (Go reads a file as a zip only when its name ends in .zip)"),
])
def test_cli_refuses_a_zoneinfo_that_cannot_be_a_database(zips, given, problem):
    out = CliRunner().invoke(cli, ["check", EXAMPLE, "--zoneinfo", str(zips[given])])
    assert out.exit_code == 2
    assert f"--zoneinfo {zips[given]}: {problem}" in out.output


def test_dask_workers_that_load_the_input_read_the_client_s_database(tmp_path):
    """``matrix --executor dask -o csv``: the workers alone load the input, with the run's
    ``--zoneinfo`` (not their own default, which has Asia/Kolkata here and would fit the pod)."""
    pytest.importorskip("distributed")
    from distributed import Client

    from tests.dask_cluster import running

    state = tmp_path / "zone.yaml"
    state.write_text(_state('timestamp("2024-03-05T03:20:30Z").getHours("Asia/Kolkata") == 8'))
    lacking = tmp_path / "lacking"
    lacking.mkdir()
    with running() as cluster:
        cluster.add_workers(1)
        with Client(cluster.address, timeout=30) as client:
            cluster.wait_for(1, client)
        rows = {}
        for label, path in (("pinned", PINNED), ("lacking", lacking)):
            out = CliRunner().invoke(cli, ["matrix", str(state), "-o", "csv", "--zoneinfo", str(path),
                                           "--executor", "dask", "--scheduler", cluster.address])
            assert out.exit_code == 0, out.output
            rows[label] = out.stdout.splitlines()[1].split(",")[:3]
    assert rows == {"pinned": ["default/p1", "n1", "deployable"], "lacking": ["default/p1", "n1", "not-deployable"]}
