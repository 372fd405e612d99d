"""``string.format``'s ``%s`` of ``device`` and its maps, against the kso DRA variant's answers for
a device with neither a version attribute nor a capacity (the device of ``cel_environment.json``
has both: cel-go's random Go map order then picks which of two errors it reports, and symreach
answers that error with a pattern admitting both messages: ``tests/test_dra_cel_tail.py``)."""

from __future__ import annotations

import pytest

import tests.test_dra_cel_environment as environment
from symreach.frontends import dra_cel

ATTRIBUTES = {"model": {"string": "a\u00e9\"1"}, "mem": {"int": -40}, "ok": {"bool": True},
              "other.example.com/x": {"int": 3}, "z.io/q": {"string": ""}}
_S = '("%s" + device.driver.substring(0,0))'
_ATTRS = '{"gpu.example.com":{"mem":-40, "model":"a\u00e9\\"1", "ok":true}, "other.example.com":{"x":3}, "z.io":{"q":""}}'
_DEVICE = ('{"allowMultipleAllocations":false, "attributes":' + _ATTRS
           + ', "capacity":{}, "driver":"gpu.example.com"}')
ANSWERS = [   # the variant's answers (k8s.io/kubernetes v1.35.4)
    (f'{{"z": true}}[{_S}.format([device])]', "CEL runtime error: no such key: " + _DEVICE),
    (f'{{"z": true}}[{_S}.format([device.attributes])]', "CEL runtime error: no such key: " + _ATTRS),
    (f'{{"z": true}}[{_S}.format([device.capacity])]', "CEL runtime error: no such key: {}"),
    (f'{{"z": true}}[{_S}.format([[device, 1]])]', f"CEL runtime error: no such key: [{_DEVICE}, 1]"),
    (f'{{"z": true}}[{_S}.format([{{"d": device.attributes}}])]', f'CEL runtime error: no such key: {{"d":{_ATTRS}}}'),
    (f'{{"z": true}}[{_S}.format([dyn(device)])]', "CEL runtime error: no such key: " + _DEVICE),
]


def _symreach(expression: str) -> dra_cel.Outcome:
    attributes = dra_cel.attribute_values("gpu.example.com", ATTRIBUTES)
    capacity = dra_cel.capacity_values("gpu.example.com", {})
    return dra_cel.evaluate(expression, "gpu.example.com", attributes, capacity)


def test_the_device_printed_as_the_variant_prints_it():
    for expression, answer in ANSWERS:
        assert _symreach(expression) == dra_cel.CelError(answer.removeprefix(environment.RUNTIME)), expression
    assert len(ANSWERS) == 6


@pytest.mark.slow
@pytest.mark.skipif(not environment.VARIANT.exists(), reason="the kso DRA variant is not built here")
def test_answers_are_the_variant_answers(tmp_path, monkeypatch):
    monkeypatch.setitem(environment.DATA, "attributes", ATTRIBUTES)
    monkeypatch.setitem(environment.DATA, "capacity", {})
    for expression, answer in ANSWERS:
        assert environment.variant_answer(expression, tmp_path / "s.yaml") == answer, expression
