"""How ``PeeweeStore`` lends its parts' methods under its own names, with their exact signatures."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Concatenate, Generic, ParamSpec, TypeVar, cast, overload

P = ParamSpec("P")
R = TypeVar("R")


class Forward(Generic[P, R]):
    """A class attribute that reads as the method ``method`` of the part in attribute ``part``:
    ``get_user = Forward("users", UserQueries.get_user)`` makes ``store.get_user(name)`` call
    ``store.users.get_user(name)``. The type checker sees the part's own signature, and "go to
    definition" on ``method`` lands on the query itself."""

    def __init__(self, part: str, method: Callable[Concatenate[Any, P], R]) -> None:
        self._part = part
        self._name = method.__name__
        self.__doc__ = method.__doc__

    @overload
    def __get__(self, obj: None, owner: type) -> Forward[P, R]: ...
    @overload
    def __get__(self, obj: object, owner: type) -> Callable[P, R]: ...
    def __get__(self, obj: object | None, owner: type) -> Forward[P, R] | Callable[P, R]:
        if obj is None:
            return self
        return cast(Callable[P, R], getattr(getattr(obj, self._part), self._name))
