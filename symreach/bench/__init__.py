"""Engine comparison: ``runner`` runs each (instance, engine) job in its own
process under time and memory limits; ``tables`` turns job results into
per-engine summaries, CSV and JSON."""
