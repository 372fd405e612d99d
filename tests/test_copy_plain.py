"""``copy_plain``: a deep copy of parsed YAML/JSON data, equal in value, type and key order."""

from __future__ import annotations

import copy
import math

from symreach.loader.shapes import copy_plain


def test_copies_deeply_keeping_types_and_order():
    value = {"b": [1, True, 1.5, None, "x", {"z": [], "a": {}}], "a": {"k": False}, "nan": math.nan}
    copied = copy_plain(value)
    assert list(copied) == ["b", "a", "nan"] and list(copied["b"][5]) == ["z", "a"]
    assert copied["b"][1] is True and type(copied["b"][0]) is int and math.isnan(copied["nan"])
    assert {k: v for k, v in copied.items() if k != "nan"} == {k: v for k, v in value.items() if k != "nan"}
    copied["b"][5]["z"].append(1)
    copied["a"]["k"] = True
    assert value["b"][5]["z"] == [] and value["a"]["k"] is False


def test_data_marshal_cannot_write_is_deep_copied():
    class Opaque:
        pass

    value = {"a": [Opaque()]}
    copied = copy_plain(value)
    assert copied["a"] is not value["a"] and isinstance(copied["a"][0], Opaque)
    assert copy.deepcopy(value)["a"][0] is not value["a"][0]
