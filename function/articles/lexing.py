"""Pygments' tokens for a code block, with only the rules that can match at a position tried there,
several at once in one regex (in C).

Pygments' ``RegexLexer`` tries a state's rules one after another in Python at every position: about 24
``match`` calls per token on real-shaped code, the larger part of the highlighting time. Two cuts, each
keeping the rule Pygments' loop would pick:

- A rule whose match cannot begin with the character at the position is skipped
  (``function.articles.first_chars`` reads that from the rule's regex, erring towards "it can"). At a
  punctuation mark or a space that usually leaves one rule; the rules left keep their order.
- Rules left side by side are tried as one regex alternation ``(r0)|(r1)|…``, which tries its branches in
  the same order and takes the first that matches at the position; the branch that matched is the group
  that closed last (``lastindex``: each branch is one group around the rule's own pattern, and nothing
  follows it). A rule with a callback then runs its own regex once more, so the callback gets the match
  object it always got.

Per state, the tries for each character met are remembered. Tokens, positions and state changes come
from a copy of ``RegexLexer.get_tokens_unprocessed`` (Pygments, BSD licence) that differs only in how it
finds the rule.

A rule that cannot be joined without changing what it matches is tried alone, in its place: numbered
back-references or conditionals (the groups are renumbered by joining), differing or inline global flags,
or anything ``re`` refuses to compile; so is a long rule (a Unicode class of names), whose own compiled
regex is cheaper than compiling it again into each character's alternation. A lexer with its own
``get_tokens_unprocessed`` (YAML, JSON, C, PHP...) is left to it.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Iterator
from typing import Any

from pygments.lexer import Lexer, RegexLexer
from pygments.token import Error, Whitespace, _TokenType

from function.articles.first_chars import ANYTHING, FirstChars, first_chars

Token = tuple[int, Any, str]
Rule = tuple[Callable[..., Any], Any, Any]

# A number after a backslash (a back-reference, or an octal escape read the same way here) or a group
# test (?(1)…) depends on group numbers, which joining shifts.
_NUMBERED = re.compile(r"\\[1-9]|\(\?\(")
_LEADING_FLAGS = re.compile(r"\A(?:\(\?[aiLmsux]+\))+")
_SCOPED_FLAGS = (("i", re.IGNORECASE), ("m", re.MULTILINE), ("s", re.DOTALL), ("x", re.VERBOSE))
_SCOPABLE_FLAGS = re.IGNORECASE | re.MULTILINE | re.DOTALL | re.VERBOSE


class _Try:
    """Rules tried as one at a position: several joined in one regex, or a single rule's own regex."""

    __slots__ = ("match", "rule_of_group", "rules")

    def __init__(
        self, rules: list[Rule], match: Callable[..., Any], rule_of_group: list[Rule | None] | None
    ) -> None:
        self.rules = rules
        self.match = match
        self.rule_of_group = rule_of_group


class _State:
    """A lexer state's rules, what each can start with, and per character met the tries that can match
    there: the rules that cannot start with the character are left out, in their order otherwise, so the
    first rule that matches is still the one Pygments' loop would pick."""

    __slots__ = ("branches", "by_char", "every_rule", "firsts", "flags", "rules")

    def __init__(self, rules: list[Rule]) -> None:
        self.rules = rules
        self.flags = _common_flags(rules)
        self.branches = [_branch(rule, self.flags) for rule in rules]
        self.firsts = [_first_chars(rule) for rule in rules]
        self.by_char: dict[str, tuple[_Try, ...]] = {}
        self.every_rule: tuple[_Try, ...] | None = None

    def tries_at(self, char: str) -> tuple[_Try, ...]:
        """The tries for a position whose character is ``char`` ("" at the end of the text)."""
        if len(self.by_char) >= _MAX_CHARS_PER_STATE:  # a text of many characters: no more remembered
            if self.every_rule is None:
                self.every_rule = self._tries([True] * len(self.rules))
            return self.every_rule
        found = self.by_char[char] = self._tries([first.may_start_with(char) for first in self.firsts])
        return found

    def _tries(self, candidates: list[bool]) -> tuple[_Try, ...]:
        tries: list[_Try] = []
        run: list[tuple[Rule, str]] = []
        for rule, branch, candidate in zip(self.rules, self.branches, candidates, strict=True):
            if not candidate:
                continue
            if branch is not None and len(branch) <= _JOINED_BRANCH_CHARS:
                run.append((rule, branch))
                continue
            tries += _joined(run, self.flags)
            run = []
            tries.append(_Try([rule], rule[0], None))
        return tuple(tries + _joined(run, self.flags))


# Per lexer class and state name.
_STATES: dict[tuple[type, str], _State] = {}
# A state's characters remembered: beyond, each position tries every rule (a text of many scripts).
_MAX_CHARS_PER_STATE = 512
# A longer rule (a Unicode class of names, a long word list) is tried alone with its own regex, already
# compiled by Pygments: compiling it again into every narrowed regex cost more than it saved.
_JOINED_BRANCH_CHARS = 400
# Joined tries by their rules and flags: every state and character with the same candidates shares one.
_JOINED: dict[tuple[tuple[Rule, ...], int], list[_Try]] = {}


def tokens(lexer: Lexer, text: str) -> Iterator[Token]:
    """Exactly ``lexer.get_tokens_unprocessed(text)``."""
    if type(lexer).get_tokens_unprocessed is not RegexLexer.get_tokens_unprocessed:
        return lexer.get_tokens_unprocessed(text)  # type: ignore[no-any-return]
    return _regex_lexer_tokens(lexer, text)


def _state(lexer_class: type, name: str, rules: list[Rule]) -> _State:
    key = (lexer_class, name)
    found = _STATES.get(key)
    if found is None:
        found = _STATES[key] = _State(rules)
    return found


def _first_chars(rule: Rule) -> FirstChars:
    pattern = _pattern(rule)
    return ANYTHING if pattern is None else first_chars(pattern)


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


def _joined(run: list[tuple[Rule, str]], flags: int) -> list[_Try]:
    if len(run) < 2:
        return [_Try([rule], rule[0], None) for rule, _ in run]
    key = (tuple(rule for rule, _ in run), flags)
    found = _JOINED.get(key)
    if found is None:
        found = _JOINED[key] = _compiled(run, flags)
    return found


def _compiled(run: list[tuple[Rule, str]], flags: int) -> list[_Try]:
    rule_of_group: list[Rule | None] = [None]
    for rule, _ in run:
        rule_of_group += [None] * rule[0].__self__.groups + [rule]  # type: ignore[attr-defined]
    try:
        joined = re.compile("|".join(branch for _, branch in run), flags)
    except (re.error, RecursionError, OverflowError):
        return [_Try([rule], rule[0], None) for rule, _ in run]
    if joined.groups != len(rule_of_group) - 1:
        return [_Try([rule], rule[0], None) for rule, _ in run]
    return [_Try([rule for rule, _ in run], joined.match, rule_of_group)]


def _first_match(tries: tuple[_Try, ...], rules: list[Rule], text: str, pos: int) -> tuple[Any, Rule | None]:
    """The first rule of ``tries`` that matches at ``pos``, and its match (None, None if none does)."""
    for attempt in tries:
        hit = attempt.match(text, pos)
        if hit is not None:
            return _resolve(attempt, hit, rules, text, pos)
    return None, None


def _resolve(
    attempt: _Try, hit: re.Match[str], rules: list[Rule], text: str, pos: int
) -> tuple[Any, Rule | None]:
    """The rule of ``attempt`` that ``hit`` found, and its match: the joined regex's when the rule's action
    is a token type (its text and end are the rule's own: the rule's branch is followed only by an empty
    group), else the rule's own, for its callback's groups."""
    if attempt.rule_of_group is None:
        return hit, attempt.rules[0]
    rule = attempt.rule_of_group[hit.lastindex or 0]
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
    state = _state(lexer_class, "root", statetokens)
    while 1:
        char = text[pos : pos + 1]
        tries = state.by_char.get(char)
        if tries is None:
            tries = state.tries_at(char)
        if len(tries) == 1:  # mostly: one rule, or one joined regex of the few that can match here
            attempt = tries[0]
            hit = attempt.match(text, pos)
            if hit is None:
                m = rule = None
            elif attempt.rule_of_group is None:
                m, rule = hit, attempt.rules[0]
            else:
                rule = attempt.rule_of_group[hit.lastindex or 0]
                if rule is not None and type(rule[1]) is _TokenType:
                    m = hit
                else:
                    m, rule = _resolve(attempt, hit, statetokens, text, pos)
        else:
            m, rule = _first_match(tries, statetokens, text, pos)
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
                state = _state(lexer_class, statestack[-1], statetokens)
        else:
            # no rule matched here
            try:
                if text[pos] == "\n":
                    # at EOL, reset state to "root"
                    statestack = ["root"]
                    statetokens = tokendefs["root"]
                    state = _state(lexer_class, "root", statetokens)
                    yield pos, Whitespace, "\n"
                    pos += 1
                    continue
                yield pos, Error, text[pos]
                pos += 1
            except IndexError:
                break
