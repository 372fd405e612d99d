"""Exporters: results and witness traces as files (JSON, YAML streams, kubectl scripts, text)."""

from symreach.export.traces import FORMATS, export_trace, parse_exported_trace, plan_trace, pod_manifest

__all__ = ["FORMATS", "export_trace", "parse_exported_trace", "plan_trace", "pod_manifest"]
