"""Random CEL expressions (seeded) for the constructs ``tests/test_dra_cel_tail.py`` checks against the
kso DRA variant: indexes by lists, maps, optionals, null and the device; the device and its maps as
map keys; ``insert failed`` naming a list, a map, an optional or the device; ``format`` precisions of
any size; ``%s`` of maps holding values Go cannot print. ``python -m tests.dra_cel_tail_expressions``
prints them as JSON (the data file's expressions were made with seed 41)."""

from __future__ import annotations

import json
import random
import sys

_P = 'device.attributes["gpu.example.com"].model.substring(4)'   # "" at run time: no constant folding
_S = 'device.driver.substring(0,0)'

_LISTS = ['[device.driver]', '[1] + [2]', '[] + [1]', '[1, 2].slice(0, 1)', 'device.driver.split(".")',
          '[[1] + [2]][0]', '[1].map(x, x)', 'lists.range(2)', 'optional.of([1] + [2]).value()',
          '[[1], [2]].flatten()', '[2, 1].sort()', 'true ? [1] + [2] : []', '{1: [1] + [2]}[1]']
_MAPS = ['{device.driver: 1}', 'device.attributes["gpu.example.com"]', 'device.attributes["nope.io"]',
         'device.capacity["gpu.example.com"]', '{1: 2}.transformMap(k, v, v)', 'dyn(device)', '[device][0]',
         'device.attributes', 'device.capacity', 'dyn(device.attributes)', 'device.?attributes.value()']
_OTHERS = ['optional.of(1)', 'optional.none()', 'dyn(null)', '[null][0]', 'device', '.device',
           'true ? device : device', 'cel.bind(d, device, d)', '{"a": device}.a', 'dyn(1.5)', 'dyn(2u)',
           'dyn(true)', 'dyn("a")', 'dyn(-1)']
_TARGETS = ['dyn({"a": 1})', 'dyn([1])', 'dyn("abc")', 'dyn(device.attributes)', 'dyn(device.capacity)',
            'dyn({1: 2})', 'optional.of(dyn({"a": 1}))', 'dyn(1)']
_ELEMENTS = ['1', '-7', '2.5', '1e21', '0.000001', 'true', 'false', 'null', '3u', '"a b"', 'device.driver',
             '[1, 2]', '[]', '{"k": 1}', '{}', 'optional.of(1)', 'optional.none()', 'duration("90m")',
             '[1] + [2]', 'device.driver.split(".")', 'optional.of([1])', '-0.0', '123456.0', '1234567.0']
_PRINTS = ['device', 'device.attributes', 'device.capacity', '[device, 1]', '{"a": device}',
           '{"v": device.attributes["gpu.example.com"].ver, "q": device.capacity["gpu.example.com"].cores}',
           '[device.capacity, device.attributes]', '{"x": ip("1.2.3.4"), "y": semver("1.0.0")}',
           '{"x": [1, quantity("1")], "y": {"z": semver("1.0.0")}}', 'device.attributes["gpu.example.com"]']


def expressions(seed: int, count: int) -> list[str]:
    rng = random.Random(seed)
    out: list[str] = []
    while len(out) < count:
        family = rng.randrange(5)
        if family == 0:   # an index by a value of any type
            key = rng.choice(_LISTS + _MAPS + _OTHERS)
            target = rng.choice(_TARGETS)
            out.append(f'{target}[?{key}].hasValue()' if rng.random() < 0.4 else f'{target}[{key}] == 1')
        elif family == 1:   # the device and its maps as keys
            a, b = rng.choice(_MAPS + _OTHERS), rng.choice(_MAPS + _OTHERS)
            shape = rng.randrange(4)
            if shape == 0:
                out.append(f'{{{a}: 1, {b}: 2}}.size() == 1')
            elif shape == 1:
                out.append(f'{b} in {{{a}: 1}}')
            elif shape == 2:
                out.append(f'cel.bind(k, {a}, {{k: 1, {b}: 2}}.size())  == 1')
            else:
                out.append(f'cel.bind(k, {a}, [1, 2].transformMapEntry(i, v, {{k: v}}).size() == 1)')
        elif family == 2:   # insert failed naming a composite key
            elements = ", ".join(f"dyn({rng.choice(_ELEMENTS)})" for _ in range(rng.randrange(4)))
            key = rng.choice([f'[{elements}]', f'optional.of([{elements}])', f'[{elements}] + [{elements}]'])
            out.append(f'cel.bind(x, {key}, [1, 2].transformMapEntry(i, v, {{x: v}}).size() == 1)')
        elif family == 3:   # a format precision or %e width of any size
            digits = rng.choice([4, 5, 5, 6, 7, 8, 8, 9, 12, 19])
            p = rng.randrange(10 ** (digits - 1), 10 ** digits)
            x = rng.choice(['0.1', '1.5', '-2.5', '0.0', '1e300', '123456789.125', '2.0/3.0', '1e-300', '-1e-7'])
            verb = rng.choice("fe")
            out.append(f'cel.bind(s, ({_P} + "%.{p}{verb}").format([{x}]), {{"z": true}}[s.size() < 200 ? s : '
                       f's.substring(0, 90) + "|" + string(s.size()) + "|" + s.substring(s.size() - 90)])')
        else:   # %s of maps holding values Go cannot print
            out.append(f'{{"z": true}}[("%s" + {_S}).format([{rng.choice(_PRINTS)}])]')
    return out


if __name__ == "__main__":
    json.dump(expressions(int(sys.argv[1]) if len(sys.argv) > 1 else 41, 400), sys.stdout, indent=0)
