"""Front ends that turn foreign inputs into format-v1 documents (SPEC 3).

``dispatch``: which front end reads a file; ``kubernetes``: manifests and
``kubectl get -o yaml`` dumps; ``petri_net`` with ``reduction_petri``, and
``reduction_pebbling``: the paper's reductions (Appendices B and C).

Nothing is imported here, so that reading a net does not load the Kubernetes
front end.
"""
