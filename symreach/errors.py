"""The one exception that means "the input is wrong", with a user-facing message.

Front ends raise only ``InputError`` for bad input so that the command line can
print one line and exit with status 2, whatever the cause.
"""

from __future__ import annotations

from typing import Optional


class InputError(Exception):
    """Bad input. ``str(err)`` is ``FILE:LINE: field.path: problem``.

    Parts that are unknown are omitted (no line for JSON given as a dict, no
    file for command-line options). The parts stay available as attributes so
    that callers may re-format them.
    """

    def __init__(
        self,
        problem: str,
        filename: Optional[str] = None,
        line: Optional[int] = None,
        field_path: str = "",
    ) -> None:
        self.problem = problem
        self.filename = filename
        self.line = line
        self.field_path = field_path
        super().__init__(self.message)

    @property
    def message(self) -> str:
        where = ""
        if self.filename:
            where = self.filename
            if self.line is not None:
                where += f":{self.line}"
        parts = [p for p in (where, self.field_path) if p]
        return ": ".join(parts + [self.problem])

    def __str__(self) -> str:
        return self.message
