"""``symreach.records.record`` makes the class ``dataclass`` would, method for method.

Each case declares one class twice, with ``@dataclass(frozen=...)`` and with
``@record``, and compares what the project relies on: constructor signature
and errors, defaults and factories, ``__post_init__``, equality, hash values,
``repr`` (recursive too), frozen errors, ``fields``/``replace``/``asdict``,
``__match_args__``, parameters, copying (pickle's protocol) and subclassing.
"""

from __future__ import annotations

import dataclasses
import copy
from dataclasses import dataclass, field
from typing import Callable, Optional

import pytest

from symreach.model import FrozenDict
from symreach.records import record

CASES: list[Callable[[Callable], type]] = []


def case(make: Callable[[Callable], type]) -> Callable[[Callable], type]:
    CASES.append(make)
    return make


@case
def _point(deco: Callable) -> type:
    @deco
    class Point:
        x: int
        y: int = 0
    return Point


@case
def _rich(deco: Callable) -> type:
    @deco
    class Rich:
        """A class with every field kind the model uses."""

        name: str
        labels: FrozenDict = field(default_factory=FrozenDict)
        tags: tuple = ()
        note: Optional[str] = field(default=None, compare=False)
        hidden: int = field(default=3, repr=False)
        derived: list = field(default_factory=list, init=False, compare=False, hash=False)
    return Rich


@case
def _post_init(deco: Callable) -> type:
    @deco
    class Checked:
        size: int

        def __post_init__(self) -> None:
            if self.size < 0:
                raise ValueError("negative")
    return Checked


@case
def _one_field(deco: Callable) -> type:
    @deco
    class One:
        value: float
    return One


@case
def _no_field(deco: Callable) -> type:
    @deco
    class Empty:
        pass
    return Empty


@case
def _own_hash(deco: Callable) -> type:
    @deco
    class Hashed:
        a: int

        def __hash__(self) -> int:
            return 7
    return Hashed


FROZEN = [(make, frozen) for make in CASES for frozen in (True, False)]
ARGS = {"Point": [(1,), (1, 2), (), (1, 2, 3)], "Rich": [("a",), ("a", FrozenDict(k="v"), (1,), "n", 5), ()],
        "Checked": [(1,), (-1,)], "One": [(1.5,), (float("nan"),)], "Empty": [(), (1,)], "Hashed": [(1,)]}
KWARGS = {"Point": [{"y": 2, "x": 1}, {"z": 1}], "Rich": [{"name": "b", "hidden": 1}, {"derived": []}],
          "Checked": [{"size": 2}], "One": [{"value": 1}], "Empty": [{}], "Hashed": [{"a": 2}]}


def _outcome(call: Callable[[], object]) -> tuple:
    try:
        value = call()
    except Exception as exc:  # noqa: BLE001 - the error itself is what is compared
        return ("raised", type(exc), str(exc))
    return ("ok", value)


def _observe(cls: type) -> list:
    """Everything observable about instances of ``cls`` built from the case's arguments."""
    seen: list = [cls.__match_args__, [f.name for f in dataclasses.fields(cls)],
                  {k: getattr(cls.__dataclass_params__, k) for k in ("init", "repr", "eq", "order", "frozen")}]
    name = cls.__name__
    calls = [lambda a=a: cls(*a) for a in ARGS[name]] + [lambda k=k: cls(**k) for k in KWARGS[name]]
    objects = []
    for call in calls:
        outcome = _outcome(call)
        if outcome[0] == "raised":
            seen.append(outcome)
            continue
        obj = outcome[1]
        objects.append(obj)
        twin = call()
        seen.append(("ok", repr(obj), obj == twin, obj != twin, obj == object(),
                     _outcome(lambda: hash(obj)), dataclasses.asdict(obj),
                     _outcome(lambda: setattr(call(), "x", 9)), _outcome(lambda: delattr(call(), "x")),
                     _outcome(lambda: setattr(call(), "other", 1)),
                     repr(copy.deepcopy(obj)), copy.deepcopy(obj) == obj, copy.copy(obj) == obj))
        fields = [f.name for f in dataclasses.fields(obj) if f.init]
        if fields:
            changed = _outcome(lambda: dataclasses.replace(obj, **{fields[0]: getattr(obj, fields[0])}))
            seen.append(changed[0] == "ok" and changed[1] == obj)
    seen.append([[a == b for b in objects] for a in objects])
    return seen


@pytest.mark.parametrize("make,frozen", FROZEN, ids=lambda v: getattr(v, "__name__", str(v)))
def test_record_behaves_as_dataclass(make: Callable, frozen: bool) -> None:
    real = make(dataclass(frozen=frozen))
    ours = make(record(frozen=frozen))
    assert _observe(ours) == _observe(real)


def test_every_case_observed() -> None:
    assert len(FROZEN) == 12 and all(ARGS[make(dataclass).__name__] for make, _ in FROZEN)


def test_recursive_repr_and_hash_values() -> None:
    real, ours = _point(dataclass(frozen=False)), _point(record(frozen=False))
    a, b = real(1), ours(1)
    a.y, b.y = a, b
    assert repr(a) == repr(b) == f"{real.__qualname__}(x=1, y=...)"
    frozen_real, frozen_ours = _rich(dataclass(frozen=True)), _rich(record)
    args = ("a", FrozenDict(k="v"), (1, 2), "note", 4)
    assert hash(frozen_real(*args)) == hash(frozen_ours(*args))


def test_unsupported_classes_fall_back_to_dataclass() -> None:
    @record
    class Base:
        a: int

    @record
    class Child(Base):
        b: int = 0

    assert Child(1, 2) == Child(1, 2) and {Child(1)} == {Child(1, 0)}
    with pytest.raises(dataclasses.FrozenInstanceError):
        Child(1).b = 3  # type: ignore[misc]
    with pytest.raises(TypeError, match="non-default argument"):
        @record
        class Bad:
            a: int = 0
            b: int  # type: ignore[misc]
