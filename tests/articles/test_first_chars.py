"""``first_chars`` never says a regex cannot match at a character where ``re`` finds a match.

It may say yes too often (that costs only speed); a wrong no would change a code block's highlighting.
Checked on hand-picked traps (case folding outside ASCII, lookaheads, empty matches, back-references) and
on every rule of every regex lexer Pygments ships, at every position of a sample of code.
"""

from __future__ import annotations

import re
import warnings

from hypothesis import given, settings
from hypothesis import strategies as st
from pygments.lexers import find_lexer_class_by_name, get_all_lexers

from function.articles.first_chars import first_chars


def _starts(pattern: str, flags: int = 0) -> str:
    """The ASCII characters ``first_chars`` lets through for ``pattern`` (or "*": anything)."""
    first = first_chars(re.compile(pattern, flags))
    if first.anything:
        return "*"
    return "".join(chr(c) for c in range(128) if first.may_start_with(chr(c)))


def test_literals_classes_and_the_dot_start_with_what_they_match() -> None:
    assert _starts(r"def\b") == "d"
    assert _starts(r"[a-c]x|y") == "abcy"
    assert _starts(r"\d+\.") == "0123456789"
    assert _starts(r"[^\S\n]+") == "\t\x0b\x0c\r\x1c\x1d\x1e\x1f "
    assert _starts(r".") == "".join(chr(c) for c in range(128) if c != 10)
    assert _starts(r"(?s).") == "".join(chr(c) for c in range(128))


def test_optional_parts_let_what_follows_start_the_match() -> None:
    assert _starts(r"(\s*)(def)") == "\t\n\x0b\x0c\r\x1c\x1d\x1e\x1f d"
    assert _starts(r"[uU]?'") == "'Uu"
    assert _starts(r"(?:a{0}|b{0,2})c") == "bc"


def test_zero_width_tests_are_looked_through_and_a_lookahead_gates_the_character() -> None:
    assert _starts(r"^\bfoo") == "f"
    assert _starts(r"(?<!\.)len") == "l"
    assert _starts(r"(?!x)\w") == _starts(r"\w")
    # Matches empty, but only where the lookahead's characters are: nothing else can start it.
    assert _starts(r"^(?=\s|/|<!--)") == "\t\n\x0b\x0c\r\x1c\x1d\x1e\x1f /<"


def test_a_regex_that_can_match_empty_or_refers_to_a_group_may_start_with_anything() -> None:
    assert _starts(r"") == "*"
    assert _starts(r"x*") == "*"
    assert _starts(r"(a?)\1b") == "*"
    assert _starts(r"(a)\1") == "a"  # the group's own first character comes before the reference
    assert _starts(r"(a)?(?(1)b|c)") == "*"


def test_case_folding_is_re_s_own_including_characters_outside_ascii() -> None:
    assert _starts(r"(?i)select") == "Ss"
    # re folds the Kelvin sign to k and the long s to s: both literals start with them.
    assert first_chars(re.compile("(?i)k")).may_start_with("\u212a")
    assert first_chars(re.compile("(?i)\u017f")).may_start_with("S")
    assert not first_chars(re.compile("(?ia)k")).may_start_with("\u212a")


def test_scoped_flags_apply_inside_their_group_only() -> None:
    assert _starts(r"(?i:a)b") == "Aa"
    assert _starts(r"(?s:.)") == "".join(chr(c) for c in range(128))
    assert _starts(r"(?-i:a)", re.IGNORECASE) == "a"


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet="ab(|)?*+[]^-.\\sSdw{}0123!=<:", max_size=12), st.text("ab \n.(-_x", max_size=6))
def test_never_no_where_re_matches(pattern: str, text: str) -> None:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # "possible nested set": the generator writes "[[" often
            compiled = re.compile(pattern)
    except (re.error, OverflowError, RecursionError):
        return
    first = first_chars(compiled)
    for pos in range(len(text) + 1):
        if compiled.match(text, pos) is not None:
            assert first.may_start_with(text[pos : pos + 1]), (pattern, text, pos)


SAMPLE = (
    "import x from 'y';\nexport async function f(a: A): Promise<B> {\n  const re = /a[b/]+\\/c/gi;\n"
    'def f(x: int) -> str:\n    return f"{x!r}"\n@decorator\nclass C(Base):\n#!/bin/sh\n'
    "echo \"${HOME:-/tmp}\" | grep -E '^a+$'\ncat <<EOF\nbody\nEOF\nSELECT * FROM t;\n"
    '<div class="a">&amp;</div>\na { color: #fff; }\nkey: value\n- item\n{"a": [1, 2.5, null]}\n'
    "[section]\n+added\n-removed\n// comment\n/* block */\n# comment\n<!-- c -->\n0x1F 1e-3 \t\\ 日本語 $x\n"
)


def test_every_rule_of_every_pygments_regex_lexer_at_every_position_of_code() -> None:
    patterns: set[re.Pattern[str]] = set()
    for _, aliases, _, _ in get_all_lexers():
        if not aliases:
            continue
        tokendefs = getattr(find_lexer_class_by_name(aliases[0])(), "_tokens", None)
        for rules in (tokendefs or {}).values():
            patterns.update(
                rule[0].__self__
                for rule in rules
                if isinstance(getattr(rule[0], "__self__", None), re.Pattern)
            )
    assert len(patterns) > 5000
    wrong = []
    narrowed = 0
    for pattern in patterns:
        first = first_chars(pattern)
        narrowed += not first.anything
        for pos in range(len(SAMPLE) + 1):
            if pattern.match(SAMPLE, pos) is not None and not first.may_start_with(SAMPLE[pos : pos + 1]):
                wrong.append((pattern.pattern, pos))
                break
    assert wrong == []
    assert narrowed > 0.9 * len(patterns)  # the reading understands nearly every real rule
