"""``lexing.tokens`` gives exactly Pygments' own ``get_tokens_unprocessed``: every token, position and type.

Pygments itself is the reference: the same lexer instance is asked both ways, on generated code, on the
languages articles use, and on every regex lexer Pygments ships.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pygments.lexer import RegexLexer, bygroups, combined, default, include, using, words
from pygments.lexers import find_lexer_class_by_name, get_all_lexers, get_lexer_by_name
from pygments.token import Comment, Keyword, Name, Number, Operator, Punctuation, String, Text

from function.articles import lexing

FUZZ = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])


class TrickyLexer(RegexLexer):
    """Every kind of rule the joined form must handle: a numbered back-reference (kept apart), leading
    global flags, verbose patterns with comments, case-insensitive words, callbacks with groups, nested
    lexers, lookbehind, empty matches, includes, pushes and pops, combined states."""

    name = "Tricky"
    flags = re.MULTILINE
    tokens = {
        "root": [
            (r"(fn)(\s+)(\w+)", bygroups(Keyword, Text, Name.Function)),
            (r"<<(\w+)\n[\s\S]*?\n\1\b", String.Heredoc),
            (r"(?s)/\*.*?\*/", Comment.Multiline),
            (r"(?i)\bselect\b", Keyword),
            (r"""(?x) \d+ (?: \.\d* )?  # a number, perhaps with a fraction""", Number),
            (words(("if", "else", "fn"), suffix=r"\b"), Keyword),
            (r"`[^`]*`", using(get_lexer_by_name("bash").__class__)),
            (r"(?<=\.)\w+", Name.Attribute),
            (r'"', String, "string"),
            (r"\{", Punctuation, "#push"),
            (r"\}", Punctuation, "#pop"),
            (r"\(", Punctuation, combined("paren", "string")),
            (r"[=+\-*/]", Operator),
            (r"\w+", Name),
            (r"[ \t]+", Text),
        ],
        "string": [
            (r"\\.", String.Escape),
            (r'"', String, "#pop"),
            (r'[^"\\\n]+', String),
        ],
        "paren": [
            (r"\)", Punctuation, "#pop:2"),
            include("numbers"),
            default("#pop"),
        ],
        "numbers": [
            (r"\d+", Number),
            (r"", Text, "#pop"),
        ],
    }


PIECES = [
    "<<EOF\nx\nEOF\n", "<<END\nEOF\nEND", "/* a\n b */", "/*", "SELECT", "select", "Select", "12", "3.5",
    ".x", "a.b", "fn f", "fn", "if", "else", "`echo $x`", '"', '"a\\"b"', "\\", "{", "}", "(", ")", "(1)",
    "(a", "=", "+", "-", " ", "\t", "\n", "é", "#", "$", "'", "@", "\u3000",
]  # fmt: skip


@FUZZ
@given(st.lists(st.sampled_from(PIECES), max_size=40).map("".join))
def test_a_lexer_with_every_kind_of_rule_gives_pygments_tokens(text: str) -> None:
    lexer = TrickyLexer()
    assert list(lexing.tokens(lexer, text)) == list(lexer.get_tokens_unprocessed(text))


def test_the_rule_with_a_back_reference_is_kept_apart_and_still_wins_in_its_place() -> None:
    lexer = TrickyLexer()
    text = "<<EOF\nselect 1\nEOF\nselect"
    found = list(lexing.tokens(lexer, text))
    assert found[0] == (0, String.Heredoc, "<<EOF\nselect 1\nEOF")
    assert found == list(lexer.get_tokens_unprocessed(text))


# What articles' code blocks hold most (and a file of this project's own code for each).
LANGUAGES = [
    "ts", "tsx", "js", "jsx", "python", "bash", "shell", "go", "rust", "java", "kotlin", "sql", "html", "css",
    "scss", "yaml", "json", "toml", "dockerfile", "diff", "ini", "xml", "csharp", "ruby", "php", "c", "cpp",
    "swift", "dart", "hcl", "graphql", "makefile", "markdown", "console", "powershell", "lua", "elixir",
]  # fmt: skip
CODE_PIECES = [
    "import x from 'y';", "export async function f(a: A): Promise<B> {", "const re = /a[b/]+\\/c/gi;",
    "def f(x: int) -> str:", "    return f\"{x!r}\"", "@decorator", "class C(Base):", "#!/bin/sh",
    'echo "${HOME:-/tmp}" | grep -E \'^a+$\'', "cat <<EOF\nbody\nEOF", "for i in $(seq 3); do :; done",
    "func main() { fmt.Println(`raw`) }", "fn main() -> Result<(), E> { let x = 'a'; }", "SELECT * FROM t;",
    "<div class=\"a\">&amp;</div>", "a { color: #fff; }", "key: value", "- item", '{"a": [1, 2.5, null]}',
    "[section]", "+added", "-removed", "// comment", "/* block */", "# comment", "<!-- c -->", "0x1F", "1e-3",
    "'unterminated", '"', "`", "\\", "{", "}", "(", ")", "\t", " ", "\n", "日本語", "$x", "@Annotation",
]  # fmt: skip


@FUZZ
@given(
    st.sampled_from(LANGUAGES),
    st.lists(st.sampled_from(CODE_PIECES), max_size=30).map(lambda p: "\n".join(p) + "\n"),
)
def test_the_languages_articles_use_give_pygments_tokens(language: str, code: str) -> None:
    lexer = get_lexer_by_name(language, stripnl=False, ensurenl=True)
    assert list(lexing.tokens(lexer, code)) == list(lexer.get_tokens_unprocessed(code))


# Their own patterns backtrack for seconds on the sample (Pygments' loop as much as the joined one).
CATASTROPHIC = {"MCSchemaLexer", "SmithyLexer"}


def _regex_lexers() -> list[type[RegexLexer]]:
    found = []
    for _, aliases, _, _ in get_all_lexers():
        if aliases:
            lexer_class = find_lexer_class_by_name(aliases[0])
            if lexer_class.__name__ in CATASTROPHIC:
                continue
            if lexer_class.get_tokens_unprocessed is RegexLexer.get_tokens_unprocessed:
                found.append(lexer_class)
    return found


SAMPLE = "\n".join(CODE_PIECES) + "\n"


def test_every_regex_lexer_pygments_ships_gives_its_own_tokens() -> None:
    lexers = _regex_lexers()
    assert len(lexers) > 300
    differing = []
    for lexer_class in lexers:
        lexer = lexer_class(stripnl=False, ensurenl=True)
        if list(lexing.tokens(lexer, SAMPLE)) != list(lexer.get_tokens_unprocessed(SAMPLE)):
            differing.append(lexer_class.__name__)
    assert differing == []


@pytest.mark.parametrize("language", LANGUAGES)
def test_a_whole_file_gives_pygments_tokens(language: str) -> None:
    lexer = get_lexer_by_name(language, stripnl=False, ensurenl=True)
    code = Path(lexing.__file__).read_text() + Path(__file__).read_text()
    assert list(lexing.tokens(lexer, code)) == list(lexer.get_tokens_unprocessed(code))


@pytest.mark.parametrize("language", ["python", "ts", "bash", "go"])
def test_at_a_character_only_the_rules_that_can_start_with_it_are_tried(language: str) -> None:
    lexer = get_lexer_by_name(language)
    list(lexing.tokens(lexer, SAMPLE))
    root = lexing._STATES[(type(lexer), "root")]
    assert len(root.rules) > 20
    for char in "( ;\n=x":
        tried = root.tries_at(char)
        assert len(tried) <= 2
        assert sum(len(attempt.rules) for attempt in tried) <= 4
