"""Independent checkers of not-deployable evidence, one module per kind.

None of them imports the engines or the symbolic encoding: each rebuilds
what it needs from the model, so a bug in an engine cannot vouch for itself.

- ``bdd_invariant``: a BDD engine's reached set, re-checked with BDDs of the
  guards built straight from the model.
- ``clause_invariant``: an IC3 clause invariant, re-checked with a fresh SAT
  solver and an independent CNF of the semantics.
- ``may_fixpoint``: a may-be-present set, checked closed under an
  over-approximation of every deploy rule and disjoint from the target.
- ``theorem5`` and ``static_filter`` (sharing ``never_deployable``): one pair
  per alternative that fails in every configuration; ``node_filters``
  re-evaluates the node filters from the pod spec, without the loader.
- ``explicit_states``: the explicit engine's reachable set, checked closed.

``dispatch`` reads any certificate file and picks its checker; ``lemmas``
turns any certificate into a few readable "never" lemmas.
"""
