"""The JSON contract (docs/json.md): every JSON document a command prints
carries ``schema_version`` and ``command``; errors are documents too.

Bump ``SCHEMA_VERSION`` when a documented key changes meaning or goes away;
adding a key does not bump it.
"""

from __future__ import annotations

import json
from typing import Any, Optional

SCHEMA_VERSION = 1


def document(command: str, data: dict[str, Any]) -> dict[str, Any]:
    """``data`` with ``schema_version`` and ``command`` first."""
    return {"schema_version": SCHEMA_VERSION, "command": command,
            **{k: v for k, v in data.items() if k not in ("schema_version", "command")}}


def render_document(command: str, data: dict[str, Any], fmt: str = "json", indent: Optional[int] = None) -> str:
    """The document as JSON, or as YAML (``-o yaml``: the same keys)."""
    doc = document(command, data)
    if fmt == "yaml":
        import yaml

        plain = json.loads(json.dumps(doc, default=_default))
        return yaml.safe_dump(plain, sort_keys=False, default_flow_style=False, allow_unicode=True).rstrip("\n")
    return json.dumps(doc, default=_default, indent=indent)


def error_document(command: str, kind: str, message: str, exit_code: int, *, file: Optional[str] = None,
                   line: Optional[int] = None, field: Optional[str] = None) -> dict[str, Any]:
    """An error under ``-o json``: what went wrong, where, and the exit status."""
    return document(command, {"error": {"kind": kind, "message": message, "file": file, "line": line,
                                        "field": field}, "exit_code": exit_code})


def _default(value: Any) -> Any:
    if isinstance(value, (set, frozenset, tuple)):
        return list(value)
    return str(value)
