"""Independent checkers of not-deployable evidence, one module per kind.

None of them imports the engines or the symbolic encoding: each rebuilds
what it needs from the model, so a bug in an engine cannot vouch for itself.

- ``bdd_invariant``: a BDD engine's reached set, re-checked with BDDs of the
  guards built straight from the model.
- ``clause_invariant``: an IC3 clause invariant, re-checked with a fresh SAT
  solver and an independent CNF of the semantics.
"""
