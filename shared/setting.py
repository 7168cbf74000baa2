"""How a runtime setting is declared: once, as a typed field whose specifier says everything else.

``setting(...)`` gives a field of a ``@declared_settings`` class its environment variable, default, parser,
check and doc line, and where the Pulumi program sets it. The function reads and checks its environment
from these declarations (``function.settings``), the documentation's table is generated from them
(``function.settings_docs``), and the Pulumi program sets the Lambda environment from them
(``infra.environment``). Standard library only: ``function/`` and ``infra/`` both import it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar, dataclass_transform, overload

T = TypeVar("T")
C = TypeVar("C")

# A problem with a setting's value, as the words after its name: "must start with https://". None: fine.
Check = Callable[[T], str | None]

_KEY = "blog-api setting"


class SettingProblem(ValueError):
    """Raised by a parser: the text after the variable's name that says what is wrong with its value."""


@dataclass(frozen=True)
class Param:
    """The variable naming an SSM SecureString that holds the setting, read when the plain one is unset."""

    env: str
    # The stack key whose value the Pulumi program gives this variable.
    stack_key: str


@dataclass(frozen=True)
class Setting(Generic[T]):
    """One setting's declaration (the field's name and type are the field's own)."""

    env: str
    doc: str
    parse: Callable[[str], T | None]
    check: Check[T] | None = None
    # The default as the documentation shows it, when its value alone would not say it.
    default_doc: str | None = None
    # Strip blanks before deciding the variable is unset ("  " then means the default).
    strip: bool = False
    # Variables read when ``env`` is unset (the lower-case spellings of the proxy variables).
    also: tuple[str, ...] = ()
    param: Param | None = None
    # Kept out of repr (the value is a secret or holds one).
    secret: bool = False
    # Required unless the reader says otherwise: the words after "is not set:" when it is missing.
    required: str | None = None
    # Where the Pulumi program sets the variable: from this stack key, or always to this value.
    stack_key: str | None = None
    on_lambda: str | None = None
    # Filled in from the field: its name and its default.
    attribute: str = ""
    default: Any = None
    default_factory: Callable[[], Any] | None = None

    def __post_init__(self) -> None:
        if self.stack_key is not None and self.on_lambda is not None:
            raise ValueError(f"{self.env}: a stack key or a fixed value on Lambda, not both")

    def default_value(self) -> Any:
        """The value when the variable is unset (a new one each time for a mutable default)."""
        return self.default_factory() if self.default_factory is not None else self.default


@overload
def setting(
    *,
    env: str,
    doc: str,
    parse: Callable[[str], T | None],
    default: None,
    check: Check[T] | None = None,
    default_doc: str | None = None,
    strip: bool = False,
    also: tuple[str, ...] = (),
    param: Param | None = None,
    secret: bool = False,
    stack_key: str | None = None,
    on_lambda: str | None = None,
) -> T | None: ...
@overload
def setting(
    *,
    env: str,
    doc: str,
    parse: Callable[[str], T | None],
    default: T,
    check: Check[T] | None = None,
    default_doc: str | None = None,
    strip: bool = False,
    also: tuple[str, ...] = (),
    param: Param | None = None,
    secret: bool = False,
    required: str | None = None,
    stack_key: str | None = None,
    on_lambda: str | None = None,
) -> T: ...
@overload
def setting(
    *,
    env: str,
    doc: str,
    parse: Callable[[str], T | None],
    default_factory: Callable[[], T],
    check: Check[T] | None = None,
    default_doc: str | None = None,
    strip: bool = False,
    stack_key: str | None = None,
) -> T: ...
def setting(
    *,
    env: str,
    doc: str,
    parse: Callable[[str], Any],
    default: Any = dataclasses.MISSING,
    default_factory: Callable[[], Any] | None = None,
    check: Check[Any] | None = None,
    default_doc: str | None = None,
    strip: bool = False,
    also: tuple[str, ...] = (),
    param: Param | None = None,
    secret: bool = False,
    required: str | None = None,
    stack_key: str | None = None,
    on_lambda: str | None = None,
) -> Any:
    """A settings field declared by its variable: see ``Setting`` for each part."""
    spec: Setting[Any] = Setting(
        env=env,
        doc=doc,
        parse=parse,
        check=check,
        default_doc=default_doc,
        strip=strip,
        also=also,
        param=param,
        secret=secret,
        required=required,
        stack_key=stack_key,
        on_lambda=on_lambda,
    )
    metadata = {_KEY: spec}
    if default_factory is not None:
        return field(default_factory=default_factory, repr=not secret, metadata=metadata)
    return field(default=default, repr=not secret, metadata=metadata)


@dataclass_transform(frozen_default=True, kw_only_default=True, field_specifiers=(setting, field))
def declared_settings(cls: type[C]) -> type[C]:
    """A frozen, keyword-only dataclass whose ``setting(...)`` fields are settings."""
    return dataclass(frozen=True, kw_only=True)(cls)


_declared: dict[type[Any], tuple[Setting[Any], ...]] = {}


def settings_of(cls: type[Any]) -> tuple[Setting[Any], ...]:
    """The settings a ``@declared_settings`` class declares, in the order of its fields."""
    if cls not in _declared:
        _declared[cls] = _collect(cls)
    return _declared[cls]


def _collect(cls: type[Any]) -> tuple[Setting[Any], ...]:
    found: list[Setting[Any]] = []
    for f in dataclasses.fields(cls):
        spec = f.metadata.get(_KEY)
        if isinstance(spec, Setting):
            factory = None if f.default_factory is dataclasses.MISSING else f.default_factory
            found.append(
                dataclasses.replace(spec, attribute=f.name, default=f.default, default_factory=factory)
            )
    return tuple(found)
