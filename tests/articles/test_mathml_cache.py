"""A formula's MathML is made once per process: what comes back is what the plain conversion makes."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from function.articles import mathml
from function.articles.render import render_markdown

FUZZ = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])

LATEX = [
    "x",
    "^",
    "_",
    "{",
    "}",
    "\\frac{a}{b}",
    "\\sum",
    "\\text{<b>&amp;</b>}",
    "&#x41;",
    "\\",
    "2",
    " ",
    "$",
]


@FUZZ
@given(st.lists(st.sampled_from(LATEX), min_size=1, max_size=12).map("".join), st.booleans())
def test_a_remembered_formula_is_what_the_plain_conversion_makes(latex: str, display: bool) -> None:
    plain = mathml._mathml.__wrapped__  # the conversion itself, without the cache
    first = mathml.render_math(latex, {"display_mode": display})
    again = mathml.render_math(latex, {"display_mode": display})
    assert first == again == plain(latex, "block" if display else "inline")


def test_the_same_formula_inline_and_displayed_is_made_for_each() -> None:
    html = render_markdown("$a^2$ and $a^2$\n\n$$\na^2\n$$")
    assert html.count('<math display="inline">') == 2
    assert html.count('<math display="block">') == 1
    assert html.count("<msup><mi>a</mi><mn>2</mn></msup>") == 3


def test_a_formula_too_deep_to_convert_shows_its_source_and_is_not_remembered() -> None:
    latex = "{" * 2000 + "x" + "}" * 2000
    remembered = mathml._mathml.cache_info().currsize
    for _ in range(2):
        assert mathml.render_math(latex, {}).startswith('<code class="math-source">{{{')
    assert mathml._mathml.cache_info().currsize == remembered
