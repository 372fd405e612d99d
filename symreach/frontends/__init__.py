"""Front ends that turn foreign inputs into format-v1 documents (SPEC 3).

``kubernetes``: manifests and ``kubectl get -o yaml`` dumps.
"""

from symreach.frontends.kubernetes import (
    Report,
    is_kubernetes_document,
    kubernetes_to_v1,
    load_kubernetes,
    load_kubernetes_with_report,
)

__all__ = [
    "Report",
    "is_kubernetes_document",
    "kubernetes_to_v1",
    "load_kubernetes",
    "load_kubernetes_with_report",
]
