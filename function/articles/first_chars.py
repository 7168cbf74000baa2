"""Which characters a regex's match can begin with: an over-approximation read from ``re``'s own parse.

``lexing`` uses it to try, at a position, only the rules of a lexer state that can match the character
there (``re`` otherwise enters every branch of the joined regex before the one that matches). The answer
may say yes where the regex cannot match (that only costs speed), never no where it can. Whatever this
cannot read with certainty — a back-reference, a conditional, an operator it does not know — makes the
regex "may start with anything", as does any way to match the empty string — except behind a lookahead,
which still tells what the character at the position must be, consumed or not.

Each single-character test (a literal, a class, ``.``) is answered by ``re`` itself: the piece is written
back as a one-character pattern and compiled with the flags in force at that point, so case folding,
``\\w`` and the dot's newline are exactly ``re``'s. Reading the parse uses ``re._parser`` (the module
``re.compile`` itself uses): it is checked against the regexes it judged by the lexing tests.
"""

from __future__ import annotations

import functools
import re
import re._constants as sre
import re._parser as sre_parse
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

# Flags that change what one character matches (the rest change parsing, or only zero-width tests).
_CHAR_FLAGS = re.IGNORECASE | re.DOTALL | re.ASCII
_CATEGORIES = {
    sre.CATEGORY_DIGIT: r"\d",
    sre.CATEGORY_NOT_DIGIT: r"\D",
    sre.CATEGORY_SPACE: r"\s",
    sre.CATEGORY_NOT_SPACE: r"\S",
    sre.CATEGORY_WORD: r"\w",
    sre.CATEGORY_NOT_WORD: r"\W",
}
_REPEATS = (sre.MAX_REPEAT, sre.MIN_REPEAT, sre.POSSESSIVE_REPEAT)
_ZERO_WIDTH = (sre.AT, sre.ASSERT, sre.ASSERT_NOT)

CharTest = Callable[[str], Any]


class _Unknown(Exception):
    """A part this reading does not judge: the regex may start with anything."""


@dataclass(frozen=True)
class FirstChars:
    """What a regex's match can begin with: ``anything`` (no narrowing possible), or a character one of
    ``tests`` accepts."""

    anything: bool
    tests: tuple[CharTest, ...] = ()

    def may_start_with(self, char: str) -> bool:
        return self.anything or any(test(char) for test in self.tests)


ANYTHING = FirstChars(anything=True)


def first_chars(pattern: re.Pattern[str]) -> FirstChars:
    """What the character at a position must be for ``pattern.match`` to match there (``ANYTHING``
    when the pattern can match empty without a lookahead that says)."""
    try:
        parsed = sre_parse.parse(pattern.pattern, pattern.flags)
        tests, is_open = _sequence(list(parsed), parsed.state.flags)
    except (_Unknown, re.error, RecursionError, TypeError, ValueError):
        return ANYTHING
    if is_open:
        return ANYTHING
    return FirstChars(anything=False, tests=tuple(tests))


def _sequence(items: list[Any], flags: int) -> tuple[list[CharTest], bool]:
    """Tests for what ``items`` (one after another) start with, and whether they can all match without
    saying anything of the character at the position (``open``: what follows them may start it)."""
    tests: list[CharTest] = []
    for op, av in items:
        item_tests, is_open = _item(op, av, flags)
        tests += item_tests
        if not is_open:
            return tests, False
    return tests, True


def _item(op: Any, av: Any, flags: int) -> tuple[list[CharTest], bool]:
    if op in (sre.LITERAL, sre.NOT_LITERAL, sre.IN, sre.ANY):
        return [_char_test(_one_char_pattern(op, av), flags & _CHAR_FLAGS)], False
    if op == sre.ASSERT and av[0] == 1:
        # A lookahead: the character here must be one its own pattern can start with (unless that
        # pattern can match empty), even when the whole match is empty.
        return _sequence(list(av[1]), flags)
    if op in _ZERO_WIDTH:
        return [], True  # consumes nothing: what follows is what starts the match
    if op == sre.SUBPATTERN:
        _group, add_flags, del_flags, sub = av
        return _sequence(list(sub), (flags | add_flags) & ~del_flags)
    if op == sre.ATOMIC_GROUP:
        return _sequence(list(av), flags)
    if op in _REPEATS:
        low, high, sub = av
        if high == 0:
            return [], True
        tests, is_open = _sequence(list(sub), flags)
        return tests, is_open or low == 0
    if op == sre.BRANCH:
        tests = []
        is_open = False
        for alternative in av[1]:
            alt_tests, alt_open = _sequence(list(alternative), flags)
            tests += alt_tests
            is_open = is_open or alt_open
        return tests, is_open
    raise _Unknown(op)


def _one_char_pattern(op: Any, av: Any) -> str:
    if op == sre.ANY:
        return "."
    if op == sre.LITERAL:
        return f"[{_escaped(av)}]"
    if op == sre.NOT_LITERAL:
        return f"[^{_escaped(av)}]"
    parts: list[str] = []
    for inner_op, inner_av in av:
        if inner_op == sre.NEGATE:
            parts.insert(0, "^")
        elif inner_op == sre.LITERAL:
            parts.append(_escaped(inner_av))
        elif inner_op == sre.RANGE:
            parts.append(f"{_escaped(inner_av[0])}-{_escaped(inner_av[1])}")
        elif inner_op == sre.CATEGORY and inner_av in _CATEGORIES:
            parts.append(_CATEGORIES[inner_av])
        else:
            raise _Unknown(inner_op)
    return f"[{''.join(parts)}]"


def _escaped(code: int) -> str:
    return f"\\U{code:08x}"


@functools.lru_cache(maxsize=4096)
def _char_test(pattern: str, flags: int) -> CharTest:
    return re.compile(pattern, flags).fullmatch
