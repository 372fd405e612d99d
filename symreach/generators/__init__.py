"""Seeded generators of benchmark and test inputs.

- ``dags``: DAGs for the pebbling reduction (pyramids, binary in-trees, paths,
  random DAGs), each with its target vertex.
- ``nets``: parametric one-safe Petri-net families (token ring, mutual
  exclusion, dining philosophers) with documented coverable and never-markable
  places, for the Petri-net reduction.
- ``clusters``: random Kubernetes-like clusters in instance format v1.
- ``hard_clusters``: Kubernetes-like clusters whose constraints compose into
  long plans (service pyramids, StatefulSets, pools, spread, tight capacity),
  so that preprocessing does not decide them.

Every generator is deterministic: the same parameters and seed give the same
output, byte for byte once serialized.
"""
