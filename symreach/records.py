"""``record``: ``@dataclass(frozen=True)`` without compiling source at import.

Why: ``dataclass`` writes six methods per frozen class as source text and
compiles each (``__init__``, ``__repr__``, ``__eq__``, ``__hash__``,
``__setattr__``, ``__delattr__``): about 1 ms of CPU per class, a third of a
small ``symreach check`` (``benchmarks/startup.py``). ``record`` makes the same
class -- a real dataclass, so ``fields``, ``replace`` and ``asdict`` work --
with the same methods: equality and hash over the same tuples (so the same
hash values), the same ``repr``, the same ``FrozenInstanceError``. Only
``__init__`` is compiled, from source like dataclass's, on the first call.

Plain classes only: a class with a dataclass base, ``InitVar``, ``ClassVar``,
keyword-only fields, or its own ``__setattr__``/``__delattr__`` goes to
``dataclass`` unchanged.
"""

from __future__ import annotations

import dataclasses
from operator import attrgetter
from reprlib import recursive_repr
from typing import Any, Callable, Optional, TypeVar

try:  # type checkers then read ``@record`` classes as dataclasses (Python >= 3.11)
    from typing import dataclass_transform
except ImportError:  # pragma: no cover - Python 3.10
    def dataclass_transform(**_: Any) -> Callable[[Callable], Callable]:
        return lambda f: f

T = TypeVar("T", bound=type)

_MISSING = dataclasses.MISSING


@dataclass_transform(frozen_default=True, field_specifiers=(dataclasses.field, dataclasses.Field))
def record(cls: Optional[T] = None, /, *, frozen: bool = True) -> Any:
    """``@record`` is ``@dataclass(frozen=True)``; ``@record(frozen=False)`` is ``@dataclass``."""
    def wrap(c: T) -> T:
        return _make(c, frozen)
    return wrap if cls is None else wrap(cls)


def _plain(cls: type, frozen: bool) -> bool:
    if any(hasattr(base, "__dataclass_fields__") for base in cls.__mro__[1:]):
        return False
    if frozen and ("__setattr__" in cls.__dict__ or "__delattr__" in cls.__dict__):
        return False
    return "self" not in cls.__dict__.get("__annotations__", {})


def _make(cls: T, frozen: bool) -> T:
    if not _plain(cls, frozen):
        return dataclasses.dataclass(frozen=frozen)(cls)
    own = cls.__dict__
    class_hash = own.get("__hash__", _MISSING)
    explicit_hash = not (class_hash is _MISSING or (class_hash is None and "__eq__" in own))
    has_eq, has_repr, has_doc = "__eq__" in own, "__repr__" in own, bool(own.get("__doc__"))
    if not has_doc:  # dataclass would render the signature with ``inspect``: costly, and read by no one
        cls.__doc__ = cls.__name__
    # Fields, defaults, ``__match_args__``; no method is generated with these flags.
    cls = dataclasses.dataclass(init=False, repr=False, eq=False)(cls)
    fields = dataclasses.fields(cls)
    if len(fields) != len(cls.__dataclass_fields__) or any(getattr(f, "kw_only", False) for f in fields):
        raise TypeError(f"{cls.__name__}: use @dataclass for InitVar, ClassVar or keyword-only fields")
    _check_defaults_order(cls, fields)
    if not has_doc:
        cls.__doc__ = f"{cls.__name__}({', '.join(f.name for f in fields if f.init)})"
    cls.__dataclass_params__ = _params(cls.__dataclass_params__, frozen)
    cls.__init__ = _lazy_init(cls, fields, frozen)
    if not has_repr:
        cls.__repr__ = _repr(cls, tuple(f.name for f in fields if f.repr))
    if not has_eq:
        cls.__eq__ = _eq(tuple(f.name for f in fields if f.compare))
    if not explicit_hash:
        cls.__hash__ = _hash(tuple(f.name for f in fields if (f.compare if f.hash is None else f.hash))) \
            if frozen else None
    if frozen:
        cls.__setattr__, cls.__delattr__ = _frozen(cls, frozenset(f.name for f in fields))
    return cls


def _check_defaults_order(cls: type, fields: tuple) -> None:
    seen_default = False
    for f in fields:
        if not f.init:
            continue
        if f.default is not _MISSING or f.default_factory is not _MISSING:
            seen_default = True
        elif seen_default:
            raise TypeError(f"non-default argument {f.name!r} follows default argument")


def _params(params: Any, frozen: bool) -> Any:
    """dataclass's parameters object as ``@dataclass(frozen=...)`` would set it."""
    slots = getattr(type(params), "__slots__", ())
    out = object.__new__(type(params))
    for name in slots:
        setattr(out, name, getattr(params, name))
    for name, value in (("init", True), ("repr", True), ("eq", True), ("frozen", frozen)):
        setattr(out, name, value)
    return out


def _tuple_of(names: tuple[str, ...]) -> Callable[[object], tuple]:
    """A C-speed ``lambda self: (self.a, self.b, ...)``."""
    if len(names) >= 2:
        return attrgetter(*names)
    if len(names) == 1:
        get = attrgetter(names[0])
        return lambda obj: (get(obj),)
    return lambda obj: ()


def _eq(names: tuple[str, ...]) -> Callable[[object, object], Any]:
    key = _tuple_of(names)

    def __eq__(self: object, other: object) -> Any:
        if other.__class__ is self.__class__:
            return key(self) == key(other)
        return NotImplemented
    return __eq__


def _hash(names: tuple[str, ...]) -> Callable[[object], int]:
    key = _tuple_of(names)

    def __hash__(self: object) -> int:
        return hash(key(self))
    return __hash__


def _repr(cls: type, names: tuple[str, ...]) -> Callable[[object], str]:
    @recursive_repr()
    def __repr__(self: object) -> str:
        inner = ", ".join(f"{name}={getattr(self, name)!r}" for name in names)
        return f"{self.__class__.__qualname__}({inner})"
    __repr__.__qualname__ = f"{cls.__qualname__}.__repr__"
    return __repr__


def _frozen(cls: type, names: frozenset[str]) -> tuple[Callable, Callable]:
    def __setattr__(self: object, name: str, value: object) -> None:
        if type(self) is cls or name in names:
            raise dataclasses.FrozenInstanceError(f"cannot assign to field {name!r}")
        super(cls, self).__setattr__(name, value)

    def __delattr__(self: object, name: str) -> None:
        if type(self) is cls or name in names:
            raise dataclasses.FrozenInstanceError(f"cannot delete field {name!r}")
        super(cls, self).__delattr__(name)
    return __setattr__, __delattr__


def _lazy_init(cls: type, fields: tuple, frozen: bool) -> Callable[..., None]:
    def __init__(self: object, *args: object, **kwargs: object) -> None:
        init = _compile_init(cls, fields, frozen)
        cls.__init__ = init  # type: ignore[misc] - later instances call it directly
        init(self, *args, **kwargs)
    return __init__


_FACTORY = object()  # an argument left to its default factory


def _compile_init(cls: type, fields: tuple, frozen: bool) -> Callable[..., None]:
    """The ``__init__`` dataclass would write: same parameters, defaults and assignments."""
    namespace: dict[str, object] = {"__FACTORY": _FACTORY, "__set": object.__setattr__}
    params, body = ["self"], []
    for f in fields:
        value = f.name
        if f.default_factory is not _MISSING:
            namespace[f"__factory_{f.name}"] = f.default_factory
            if f.init:
                params.append(f"{f.name}=__FACTORY")
                value = f"__factory_{f.name}() if {f.name} is __FACTORY else {f.name}"
            else:
                value = f"__factory_{f.name}()"
        elif not f.init:
            continue  # a default without __init__: the class attribute holds it
        elif f.default is not _MISSING:
            namespace[f"__default_{f.name}"] = f.default
            params.append(f"{f.name}=__default_{f.name}")
        else:
            params.append(f.name)
        body.append(f"  __set(self, {f.name!r}, {value})" if frozen else f"  self.{f.name} = {value}")
    if hasattr(cls, "__post_init__"):
        body.append("  self.__post_init__()")
    source = f"def __init__({', '.join(params)}):\n" + ("\n".join(body) or "  pass") + "\n"
    exec(source, namespace)  # noqa: S102 - our own text, as dataclass does
    init = namespace["__init__"]
    init.__qualname__ = f"{cls.__qualname__}.__init__"  # type: ignore[attr-defined]
    return init  # type: ignore[return-value]
