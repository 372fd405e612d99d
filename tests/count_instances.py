"""Seeded random tiny instances with count targets (format v1 dicts).

``random_doc`` from ``tests.random_instances`` with its query replaced by a
count target: K = 2 or 3 pods (or ``more``: one more than sigma0 has), on one
node, on a node-selector pool or in a zone. Small enough for the explicit
engine with saturation switched off up to K + 1 pods per pair.
"""

from __future__ import annotations

import random

from tests.random_instances import ZONES, random_doc


def count_doc(seed: int, profile=None) -> dict:
    doc = random_doc(seed, profile)
    rng = random.Random(seed * 7919 + 1)
    target = rng.choice(doc["podTypes"])
    query: dict = {"pod": target["name"]}
    scope = rng.random()
    if scope < 0.5:
        query["node"] = rng.choice(doc["nodes"])["name"]
    else:
        zones = sorted({n["labels"]["zone"] for n in doc["nodes"]} & set(ZONES))
        key = "nodeSelector" if scope < 0.75 else "domain"
        query[key] = {"zone": rng.choice(zones)}
    if rng.random() < 0.3:
        query["more"] = True
    else:
        query["count"] = rng.choice((2, 2, 3))
    if rng.random() < 0.15:
        other = rng.choice(doc["podTypes"])
        query["with"] = [{"pod": other["name"], "node": rng.choice(doc["nodes"])["name"]}]
    if rng.random() < 0.5:
        # more initial pods of the target type, so that 'more' and counts start above 0
        node = rng.choice(doc["nodes"])["name"]
        doc["initial"] = [i for i in doc["initial"] if not (i["pod"] == target["name"] and i["node"] == node)]
        doc["initial"].append({"pod": target["name"], "node": node, "count": rng.randint(1, 2)})
    doc["query"] = query
    return doc
