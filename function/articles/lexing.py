"""Pygments' tokens for a code block, with each lexer state's rules tried in one regex (in C).

Pygments' ``RegexLexer`` tries a state's rules one after another in Python at every position: about 24
``match`` calls per token on real-shaped code, the larger part of the highlighting time. A regex
alternation ``(r0)|(r1)|…`` tries its branches in the same order and takes the first one that matches
at the position, so it picks the same rule; the branch that matched is the group that closed last
(``lastindex``: each branch is one group around the rule's own pattern, and nothing follows it). That
rule's own regex then runs once more, so its action gets the match object it always got. Tokens,
positions and state changes come from a copy of ``RegexLexer.get_tokens_unprocessed`` (Pygments, BSD
licence) that differs only in how it finds the rule.

A state whose rules cannot be joined without changing what they match keeps the rule-by-rule loop:
numbered back-references or conditionals (the groups are renumbered by joining), differing or inline
global flags, or anything ``re`` refuses to compile. A lexer with its own ``get_tokens_unprocessed``
(YAML, JSON, C, PHP...) is left to it.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Iterator
from typing import Any

from pygments.lexer import Lexer, RegexLexer
from pygments.token import Error, Whitespace, _TokenType

Token = tuple[int, Any, str]
Rule = tuple[Callable[..., Any], Any, Any]

# A number after a backslash (a back-reference, or an octal escape read the same way here) or a group
# test (?(1)…) depends on group numbers, which joining shifts.
_NUMBERED = re.compile(r"\\[1-9]|\(\?\(")
_LEADING_FLAGS = re.compile(r"\A(?:\(\?[aiLmsux]+\))+")
_SCOPED_FLAGS = (("i", re.IGNORECASE), ("m", re.MULTILINE), ("s", re.DOTALL), ("x", re.VERBOSE))
_SCOPABLE_FLAGS = re.IGNORECASE | re.MULTILINE | re.DOTALL | re.VERBOSE


class _Segment:
    """Rules of a state tried as one: a joined regex, or a single rule that cannot be joined."""

    __slots__ = ("match", "rule_of_group", "rules")

    def __init__(
        self, rules: list[Rule], match: Callable[..., Any], rule_of_group: list[Rule | None] | None
    ) -> None:
        self.rules = rules
        self.match = match
        self.rule_of_group = rule_of_group


# Per lexer class and state name: the state's rules in segments, in their order.
_SEGMENTS: dict[tuple[type, str], tuple[_Segment, ...]] = {}


def tokens(lexer: Lexer, text: str) -> Iterator[Token]:
    """Exactly ``lexer.get_tokens_unprocessed(text)``."""
    if type(lexer).get_tokens_unprocessed is not RegexLexer.get_tokens_unprocessed:
        return lexer.get_tokens_unprocessed(text)  # type: ignore[no-any-return]
    return _regex_lexer_tokens(lexer, text)


def _segments(lexer_class: type, name: str, rules: list[Rule]) -> tuple[_Segment, ...]:
    key = (lexer_class, name)
    found = _SEGMENTS.get(key)
    if found is None:
        found = _SEGMENTS[key] = _split(rules)
    return found


def _split(rules: list[Rule]) -> tuple[_Segment, ...]:
    flags = _common_flags(rules)
    segments: list[_Segment] = []
    run: list[tuple[Rule, str]] = []
    for rule in rules:
        branch = _branch(rule, flags)
        if branch is not None:
            run.append((rule, branch))
            continue
        segments += _joined(run, flags)
        run = []
        segments.append(_Segment([rule], rule[0], None))
    return tuple(segments + _joined(run, flags))


def _common_flags(rules: list[Rule]) -> int:
    """The flags most of the rules have: the joined regex's own, so that most branches need no scoped
    flags (a branch in a flags group is tried without ``re``'s quick first-character check)."""
    counts = Counter(pattern.flags for rule in rules if isinstance(pattern := _pattern(rule), re.Pattern))
    return counts.most_common(1)[0][0] if counts else 0


def _pattern(rule: Rule) -> re.Pattern[str] | None:
    pattern = getattr(rule[0], "__self__", None)
    return pattern if isinstance(pattern, re.Pattern) and isinstance(pattern.pattern, str) else None


def _branch(rule: Rule, common: int) -> str | None:
    """The rule's pattern as one branch of a regex compiled with ``common`` flags, or None."""
    pattern = _pattern(rule)
    if pattern is None or _NUMBERED.search(pattern.pattern):
        return None
    differing = pattern.flags ^ common
    if differing & ~_SCOPABLE_FLAGS:
        return None
    # Global flags may only lead a pattern (Python 3.11); they are in pattern.flags already.
    source = _LEADING_FLAGS.sub("", pattern.pattern)
    # In verbose mode a comment runs to the end of the line: the newline keeps ")" out of it.
    tail = "\n" if pattern.flags & re.VERBOSE else ""
    on = "".join(letter for letter, bit in _SCOPED_FLAGS if differing & bit and pattern.flags & bit)
    off = "".join(letter for letter, bit in _SCOPED_FLAGS if differing & bit and common & bit)
    scoped = f"{on}-{off}" if off else on
    return f"(?{scoped}:{source}{tail})()"


def _joined(run: list[tuple[Rule, str]], flags: int) -> list[_Segment]:
    if len(run) < 2:
        return [_Segment([rule], rule[0], None) for rule, _ in run]
    rule_of_group: list[Rule | None] = [None]
    for rule, _ in run:
        rule_of_group += [None] * rule[0].__self__.groups + [rule]  # type: ignore[attr-defined]
    try:
        joined = re.compile("|".join(branch for _, branch in run), flags)
    except (re.error, RecursionError, OverflowError):
        return [_Segment([rule], rule[0], None) for rule, _ in run]
    if joined.groups != len(rule_of_group) - 1:
        return [_Segment([rule], rule[0], None) for rule, _ in run]
    return [_Segment([rule for rule, _ in run], joined.match, rule_of_group)]


def _first_match(
    segments: tuple[_Segment, ...], rules: list[Rule], text: str, pos: int
) -> tuple[Any, Rule | None]:
    """The first rule of the state that matches at ``pos``, and its match (None, None if none does)."""
    for segment in segments:
        hit = segment.match(text, pos)
        if hit is not None:
            return _resolve(segment, hit, rules, text, pos)
    return None, None


def _resolve(
    segment: _Segment, hit: re.Match[str], rules: list[Rule], text: str, pos: int
) -> tuple[Any, Rule | None]:
    """The rule of ``segment`` that ``hit`` found, and its match: the joined regex's when the rule's action
    is a token type (its text and end are the rule's own: the rule's branch is followed only by an empty
    group), else the rule's own, for its callback's groups."""
    if segment.rule_of_group is None:
        return hit, segment.rules[0]
    rule = segment.rule_of_group[hit.lastindex or 0]
    if rule is not None:
        if type(rule[1]) is _TokenType:
            return hit, rule
        m = rule[0](text, pos)
        if m:
            return m, rule
    # Cannot happen (the rule's own regex matches where its branch did); if it did, Pygments' own loop.
    for rule in rules:
        m = rule[0](text, pos)
        if m:
            return m, rule
    return None, None


def _regex_lexer_tokens(lexer: Any, text: str) -> Iterator[Token]:
    # Pygments' RegexLexer.get_tokens_unprocessed (stack=('root',)), but for how the rule is found.
    pos = 0
    tokendefs = lexer._tokens
    lexer_class = type(lexer)
    statestack = ["root"]
    statetokens = tokendefs["root"]
    segments = _segments(lexer_class, "root", statetokens)
    while 1:
        if len(segments) == 1:  # most states: one joined regex, one call
            hit = segments[0].match(text, pos)
            m, rule = (None, None) if hit is None else _resolve(segments[0], hit, statetokens, text, pos)
        else:
            m, rule = _first_match(segments, statetokens, text, pos)
        if m:
            assert rule is not None
            _, action, new_state = rule
            if action is not None:
                if type(action) is _TokenType:
                    yield pos, action, m.group()
                else:
                    yield from action(lexer, m)
            pos = m.end()
            if new_state is not None:
                # state transition
                if isinstance(new_state, tuple):
                    for name in new_state:
                        if name == "#pop":
                            if len(statestack) > 1:
                                statestack.pop()
                        elif name == "#push":
                            statestack.append(statestack[-1])
                        else:
                            statestack.append(name)
                elif isinstance(new_state, int):
                    # pop, but keep at least one state on the stack
                    if abs(new_state) >= len(statestack):
                        del statestack[1:]
                    else:
                        del statestack[new_state:]
                elif new_state == "#push":
                    statestack.append(statestack[-1])
                else:
                    raise AssertionError(f"wrong state def: {new_state!r}")
                statetokens = tokendefs[statestack[-1]]
                segments = _segments(lexer_class, statestack[-1], statetokens)
        else:
            # no rule matched here
            try:
                if text[pos] == "\n":
                    # at EOL, reset state to "root"
                    statestack = ["root"]
                    statetokens = tokendefs["root"]
                    segments = _segments(lexer_class, "root", statetokens)
                    yield pos, Whitespace, "\n"
                    pos += 1
                    continue
                yield pos, Error, text[pos]
                pos += 1
            except IndexError:
                break
