"""How a stack key is declared: once, as a typed field whose specifier gives its name, reader, default,
check and doc line; and the reading of every declared key, collecting each problem instead of stopping.

``key("memorySize", integer(128, 10240), default=512, doc=...)`` on a field of a ``@stack_settings`` class
is the whole declaration: ``read_keys`` reads the keys in the order of the fields (a nested
``@stack_settings`` class, declared with ``group``, at its field's place), the committed stack files are
checked against the declared names, and ``docs/deploying.md``'s table is generated from them.
"""

from __future__ import annotations

import dataclasses
import ipaddress
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar, dataclass_transform

from shared import names

T = TypeVar("T")
C = TypeVar("C")

_KEY = "blog-api stack key"
_GROUP = "blog-api stack keys"


class ConfigSource(Protocol):
    """The part of ``pulumi.Config`` the program uses (tests pass a dictionary-backed fake)."""

    def get(self, key: str) -> str | None: ...
    def get_object(self, key: str) -> Any: ...


class KeyCheck:
    """One key being read: its raw value, the values of the keys read before it, and its problems.

    A problem is one line naming the key and the ``pulumi config set`` that fixes it."""

    def __init__(self, cfg: ConfigSource, stack: str, key: str, seen: dict[str, Any], problems: list[str]):
        self.cfg = cfg
        self.stack = stack
        self.key = key
        self._seen = seen
        self._problems = problems

    def problem(self, why: str, example: str, *, key: str | None = None) -> None:
        named = key or self.key
        fix = f"pulumi config set {names.PROJECT}:{named} '{example}' --stack {self.stack}"
        self._problems.append(f"{names.PROJECT}:{named} {why}; fix: {fix}")

    def check(self, ok: bool, why: str, example: str, *, key: str | None = None) -> None:
        if not ok:
            self.problem(why, example, key=key)

    def optional(self) -> str | None:
        # An empty string in a stack file means "not set": it lets the committed files list every key.
        value = (self.cfg.get(self.key) or "").strip()
        return value or None

    def object(self) -> Any:
        return self.cfg.get_object(self.key)

    def text_of(self, key: str) -> str | None:
        """The value read for an earlier text key."""
        value = self._seen[key]
        assert value is None or isinstance(value, str), key
        return value

    def strings_of(self, key: str) -> tuple[str, ...]:
        """The value read for an earlier list key."""
        value = self._seen[key]
        assert isinstance(value, tuple), key
        return value


# Reads a key's value (``KeyCheck.optional`` or ``object``), reporting a value of the wrong shape.
Kind = Callable[[KeyCheck, T], T]
# Checks a value read, reporting through the KeyCheck (which also sees the keys read before).
Check = Callable[[T, KeyCheck], None]


@dataclass(frozen=True)
class Key:
    """One stack key's declaration (the field's name and type are the field's own)."""

    name: str
    read: Kind[Any]
    default: Any
    doc: str
    check: Check[Any] | None = None
    # Read only when this holds for the keys read before (else the default, unchecked).
    applies: Callable[[KeyCheck], bool] | None = None
    # Set in both committed stack files; False for a key given at deploy time only.
    committed: bool = True


def key(
    name: str,
    read: Kind[T],
    *,
    default: T,
    doc: str,
    check: Check[T] | None = None,
    applies: Callable[[KeyCheck], bool] | None = None,
    committed: bool = True,
) -> T:
    """A field read from the stack key ``name`` (without the ``blog-api:`` namespace)."""
    spec = Key(name, read, default, doc, check, applies, committed)
    return field(default=default, metadata={_KEY: spec})


def group(cls: type[T]) -> T:
    """A field holding a ``@stack_settings`` class of its own keys, read at this field's place."""
    # A Field object standing for the value, as dataclasses.field's own typing has it.
    group_field: T = field(metadata={_GROUP: cls})
    return group_field


@dataclass_transform(frozen_default=True, kw_only_default=True, field_specifiers=(key, group))
def stack_settings(cls: type[C]) -> type[C]:
    """A frozen, keyword-only dataclass whose ``key(...)`` fields are stack keys."""
    return dataclass(frozen=True, kw_only=True)(cls)


def keys_of(cls: type[Any]) -> Iterator[tuple[tuple[str, ...], Key]]:
    """Every key declared by ``cls`` and its groups, in reading order, with the attribute path to it."""
    for f in dataclasses.fields(cls):
        if _KEY in f.metadata:
            yield (f.name,), f.metadata[_KEY]
        elif _GROUP in f.metadata:
            for path, spec in keys_of(f.metadata[_GROUP]):
                yield (f.name, *path), spec


def read_keys(cls: type[Any], cfg: ConfigSource, stack: str, problems: list[str]) -> dict[str, Any]:
    """The keyword arguments of ``cls``, each key read and checked; the problems are added to ``problems``.

    Every value has its field's type: ``key()`` ties the reader's type, the default's and the field's."""
    return _read(cls, cfg, stack, problems, {})


def _read(
    cls: type[Any], cfg: ConfigSource, stack: str, problems: list[str], seen: dict[str, Any]
) -> dict[str, Any]:
    values: dict[str, Any] = {}
    for f in dataclasses.fields(cls):
        if _GROUP in f.metadata:
            group_cls = f.metadata[_GROUP]
            values[f.name] = group_cls(**_read(group_cls, cfg, stack, problems, seen))
            continue
        spec: Key = f.metadata[_KEY]
        checking = KeyCheck(cfg, stack, spec.name, seen, problems)
        if spec.applies is not None and not spec.applies(checking):
            value = spec.default
        else:
            value = spec.read(checking, spec.default)
            if spec.check is not None:
                spec.check(value, checking)
        seen[spec.name] = values[f.name] = value
    return values


# The readers. Each takes the KeyCheck and the default, and returns a value of the default's type.


def text(k: KeyCheck, default: str) -> str:
    return k.optional() or default


def upper_text(k: KeyCheck, default: str) -> str:
    return (k.optional() or default).upper()


def optional(k: KeyCheck, default: str | None) -> str | None:
    return k.optional() or default


def boolean(k: KeyCheck, default: bool) -> bool:
    value = (k.optional() or str(default)).lower()
    k.check(value in ("true", "false"), f"is {value!r}; it must be true or false", "false")
    return value == "true"


def choice(allowed: tuple[str, ...]) -> Kind[str]:
    def read(k: KeyCheck, default: str) -> str:
        value = k.optional() or default
        k.check(value in allowed, f"is {value!r}; it must be one of {', '.join(allowed)}", allowed[0])
        return value

    return read


def integer(low: int, high: int) -> Kind[int]:
    return _number(lambda v: low <= v <= high, f"between {low} and {high}")


def one_of_numbers(allowed: tuple[int, ...]) -> Kind[int]:
    return _number(lambda v: v in allowed, f"one of {', '.join(map(str, allowed))}")


def optional_integer(low: int, high: int) -> Kind[int | None]:
    read = integer(low, high)

    def read_optional(k: KeyCheck, default: int | None) -> int | None:
        # Unset means "none"; a value given is read as the integer rule says (its fix example is 0).
        return default if k.optional() is None else read(k, 0)

    return read_optional


def _number(ok: Callable[[int], bool], rule: str) -> Kind[int]:
    def read(k: KeyCheck, default: int) -> int:
        raw = k.optional()
        if raw is None:
            return default
        try:
            value = int(raw)
        except ValueError:
            k.problem(f"is {raw!r}; it must be {rule}", str(default))
            return default
        k.check(ok(value), f"is {value}; it must be {rule}", str(default))
        return value

    return read


def string_list(k: KeyCheck, default: tuple[str, ...]) -> tuple[str, ...]:
    value = k.object()
    if value is None or value == "":
        return default
    if not isinstance(value, list) or not all(isinstance(item, str) and item for item in value):
        k.problem("must be a list of non-empty strings", '["…"]')
        return default
    return tuple(value)


def comma_list(k: KeyCheck, default: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(h.strip() for h in (k.optional() or "").split(",") if h.strip()) or default


def cidr(k: KeyCheck, default: str) -> str:
    value = k.optional() or default
    try:
        network = ipaddress.ip_network(value)
    except ValueError:
        k.problem(f"{value!r} is not a CIDR block", default)
        return default
    k.check(
        network.version == 4 and 16 <= network.prefixlen <= 24,
        "must be an IPv4 block between /16 and /24",
        default,
    )
    return str(network)
