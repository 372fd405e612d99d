"""Writing what commands produce: YAML/JSON documents, traces, certificates.

Every file is written atomically (a temporary file in the same directory,
then ``os.replace``), so a reader never sees half a file; devices and pipes
(``/dev/stdout``, a FIFO) are written in place and never replaced. A command
with a verdict prints the verdict first and writes its files afterwards
(``emit_verdict``): a file that cannot be written is one error line naming
its path, and the verdict and its exit status stand.
"""

from __future__ import annotations

import json
import os
import stat
import sys
import tempfile
from pathlib import Path
from typing import Any, Callable, NoReturn, Optional, Sequence, Union

import click
import yaml

from symreach.cli import process
from symreach.errors import InputError
from symreach.result import Result

Data = Union[str, bytes]
PendingOutput = tuple[Path, Callable[[], Data]]


class _Dumper(getattr(yaml, "CSafeDumper", yaml.SafeDumper)):  # type: ignore[misc]
    """Safe dumper that never writes anchors or aliases."""

    def ignore_aliases(self, data: Any) -> bool:
        return True


def dump_yaml(doc: Any) -> str:
    """Deterministic YAML (key order kept, no anchors/aliases)."""
    return yaml.dump(doc, Dumper=_Dumper, sort_keys=False, default_flow_style=False,
                     allow_unicode=True)


def write_atomic(path: Path, data: Data) -> None:
    """Write ``data`` to ``path`` so that it is either complete or absent.
    Raises ``OSError`` (the caller names the path)."""
    raw = data.encode() if isinstance(data, str) else data
    try:
        mode = os.stat(path).st_mode
    except (FileNotFoundError, NotADirectoryError):
        mode = None
    if mode is not None and not stat.S_ISREG(mode) and not stat.S_ISDIR(mode):
        with open(path, "wb") as handle:  # a device or a pipe: never replace it
            handle.write(raw)
        return
    directory = path.parent if str(path.parent) else Path(".")
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=directory)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(raw)
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def write_error(path: Path, exc: OSError) -> str:
    return f"cannot write {path}: {exc.strerror or exc}"


def write_or_fail(path: Path, data: Data) -> None:
    """A command whose product is the file: failing to write it is an error (exit 2)."""
    try:
        write_atomic(path, data)
    except OSError as exc:
        raise InputError(write_error(path, exc)) from None


def write_document(doc: Any, out: Optional[Path], as_json: bool = False) -> None:
    """``doc`` as YAML (or JSON) to ``out``, or to stdout when ``out`` is None."""
    text = json.dumps(doc, indent=2) + "\n" if as_json else dump_yaml(doc)
    if out is None:
        click.echo(text, nl=False)
        return
    write_or_fail(out, text)


output_option = click.option("-o", "--output", "out", type=click.Path(dir_okay=False, path_type=Path),
                             help="Write here instead of stdout.")


def certificate_text(result: Result) -> str:
    """The result's certificate as text (``certify.dispatch.Certificate``)."""
    from symreach.certify.dispatch import as_certificate

    return as_certificate(result.certificate).dumps()


def write_certificate(path: Path, result: Result) -> None:
    write_atomic(path, certificate_text(result))


def write_outputs(outputs: Sequence[PendingOutput]) -> bool:
    """Write each pending file; a failure is one line naming the path. True if all were written."""
    ok = True
    for path, render in outputs:
        try:
            write_atomic(path, render())
        except OSError as exc:
            click.echo(f"symreach: error: {write_error(path, exc)}", err=True)
            ok = False
    return ok


def emit_verdict(text: str, exit_code: int, outputs: Sequence[PendingOutput] = ()) -> NoReturn:
    """Print the verdict, then write the files that go with it; exit with the
    verdict's status whether or not the files could be written."""
    process.printing(exit_code)
    click.echo(text)
    sys.stdout.flush()
    write_outputs(outputs)
    sys.exit(exit_code)
