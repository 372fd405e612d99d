"""Writing what commands produce: YAML/JSON documents, traces, certificates.

Every file is written atomically (a temporary file in the same directory,
then ``os.replace``), so a reader never sees half a file; devices and pipes
(``/dev/stdout``, a FIFO) are written in place and never replaced. A command
with a verdict prints the verdict first and writes its files afterwards
(``emit_verdict``): a file that cannot be written is one error line naming
its path, and the verdict and its exit status stand.
"""

from __future__ import annotations

import functools
import json
import functools
import os
import stat
import sys
import tempfile
from pathlib import Path
from typing import Any, Callable, NoReturn, Optional, Sequence, Union

import click

from symreach.cli import process
from symreach.errors import InputError
from symreach.result import Result

Data = Union[str, bytes]
PendingOutput = tuple[Path, Callable[[], Data]]


@functools.cache
def _dumper() -> type:
    import yaml  # imported on use: PyYAML costs more start-up than a small check

    class Dumper(getattr(yaml, "CSafeDumper", yaml.SafeDumper)):  # type: ignore[misc]
        """Safe dumper that never writes anchors or aliases."""

        def ignore_aliases(self, data: Any) -> bool:
            return True
    return Dumper


def dump_yaml(doc: Any) -> str:
    """Deterministic YAML (key order kept, no anchors/aliases)."""
    import yaml

    return yaml.dump(doc, Dumper=_dumper(), sort_keys=False, default_flow_style=False,
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


def write_document(doc: Any, out: Optional[Path], as_json: bool = False, fmt: Optional[str] = None) -> None:
    """``doc`` as YAML (or JSON) to ``out``, or to stdout when ``out`` is None;
    ``fmt`` (``-o``), when given, chooses over ``as_json`` (the command's default)."""
    if fmt is not None:
        as_json = fmt == "json"
    text = json.dumps(doc, indent=2) + "\n" if as_json else dump_yaml(doc)
    if out is None:
        click.echo(text, nl=False)
        return
    write_or_fail(out, text)


DOCUMENT_FORMATS = ("yaml", "json")
OTHER_FORMATS = ("text", "wide", "csv")  # -o values of other commands: refused here, never taken for a file


class FormatOrLegacyFile(click.ParamType):
    """``-o FORMAT`` of a command that writes a document (generate, encode).

    ``-o`` names the output format, as in kubectl and every other command; the
    file is ``--out FILE``. Before, ``-o`` named the file: a value that is no
    format name is still taken as the file, with a deprecation warning.
    """

    name = "format"

    def get_metavar(self, param: click.Parameter, ctx: Optional[click.Context] = None) -> str:
        return "[" + "|".join(DOCUMENT_FORMATS) + "]"

    def convert(self, value: Any, param: Optional[click.Parameter], ctx: Optional[click.Context]) -> Any:
        if isinstance(value, (str, Path)) and str(value) in DOCUMENT_FORMATS:
            return str(value)
        if str(value) in OTHER_FORMATS:
            self.fail(f"this command writes a document: -o {' or -o '.join(DOCUMENT_FORMATS)}", param, ctx)
        click.echo(f"symreach: warning: -o FILE is deprecated, use --out {value} "
                   f"(-o names the format: {', '.join(DOCUMENT_FORMATS)})", err=True)
        return Path(value)


def document_output_options(func: Callable) -> Callable:
    """``-o yaml|json`` (stdout's or the file's format) and ``--out FILE``; the command gets
    ``out`` (a path or None) and ``fmt`` (None: the command's default)."""
    @functools.wraps(func)
    def wrapper(*args: Any, output: Any, out: Optional[Path], **kwargs: Any) -> Any:
        if isinstance(output, Path):  # the deprecated -o FILE
            if out is not None:
                raise click.UsageError("give the file once: --out FILE (-o names the format)")
            out, output = output, None
        return func(*args, out=out, fmt=output, **kwargs)

    wrapper = click.option("--out", "out", type=click.Path(dir_okay=False, path_type=Path),
                           help="Write here instead of stdout.")(wrapper)
    return click.option("-o", "--output", "output", type=FormatOrLegacyFile(), default=None,
                        help="Output format: yaml or json (a file name here is the deprecated "
                             "spelling of --out FILE).")(wrapper)


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
