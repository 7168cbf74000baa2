"""Our renderer against Zenn's (zenn-markdown-html) on the parity corpus, feature by feature.

Zenn's side is the committed fingerprints (tools/parity/zenn_fingerprints.json, made by
`make parity-zenn`), so this runs without Node. A difference fails unless tools/parity/allowlist.toml
lists it with a reason.
"""

from __future__ import annotations

import pytest

from function.articles.render import render_markdown
from tools.parity import run
from tools.parity.features import FEATURES, fingerprint


@pytest.fixture(scope="module")
def corpus() -> dict[str, str]:
    return run.corpus()


@pytest.fixture(scope="module")
def found(corpus: dict[str, str]) -> list[run.Difference]:
    zenn = run.load_fingerprints()
    return run.differences({name: zenn[name] for name in corpus}, run.ours(corpus))


def test_the_corpus_covers_zenns_examples_and_every_feature(corpus: dict[str, str]) -> None:
    assert set(corpus) <= set(run.load_fingerprints()), "run `make parity-zenn`"
    assert sum(name.startswith("tests/fixtures/zenn/articles/") for name in corpus) >= 8
    zenn = run.load_fingerprints()
    empty = [f for f in FEATURES if not any(zenn[name][f] for name in corpus)]
    assert empty == []


def test_the_corpus_is_at_parity_except_the_allowlisted_differences(found: list[run.Difference]) -> None:
    accepted = run.allowlist()
    unlisted = [d.describe() for d in found if (d.article, d.feature) not in accepted]
    assert unlisted == []


def test_every_allowlisted_difference_still_differs_and_says_why(found: list[run.Difference]) -> None:
    differing = {(d.article, d.feature) for d in found}
    for key, reason in run.allowlist().items():
        assert key in differing, f"{key} is at parity now: remove it from allowlist.toml"
        assert key[1] in FEATURES and len(reason.split()) >= 8


def test_a_difference_in_any_feature_is_caught(corpus: dict[str, str]) -> None:
    name = "tools/parity/corpus/headings-and-text.md"
    zenn = {name: run.load_fingerprints()[name]}
    ours = run.ours({name: corpus[name]})
    assert run.differences(zenn, ours) == []
    ours[name]["headings"][0] = ours[name]["headings"][0].replace("#http%2F2", "#http2")
    (difference,) = run.differences(zenn, ours)
    assert (difference.article, difference.feature) == (name, "headings")


# Zenn's own markup, as zenn-markdown-html 0.4.4 writes it (with embedOrigin set).
ZENN = {
    "math": (
        '<p><embed-katex><eq class="zenn-katex">a^2</eq></embed-katex></p>\n<section class="zenn-katex'
        ' eqno code-line"><eqn><embed-katex display-mode="1">x\n</embed-katex></eqn>'
        "<span>(1)</span></section>"
    ),
    "card": (
        '<p><span class="embed-block zenn-embedded zenn-embedded-card"><iframe id="zenn-embedded__1" '
        'src="https://embed.zenn.studio/card#zenn-embedded__1" data-content="https%3A%2F%2Fexample.com%2Fa">'
        '</iframe></span><a href="https://example.com/a" style="display:none">https://example.com/a</a></p>'
    ),
    "mermaid": (
        '<span class="embed-block zenn-embedded zenn-embedded-mermaid"><iframe id="zenn-embedded__2" '
        'data-content="graph%20TD%0AA--%3EB"></iframe></span>'
    ),
    "heading": '<h2 id="a-b"><a class="header-anchor-link" href="#a-b" aria-hidden="true"></a> A b</h2>',
}
MARKDOWN = {
    "math": "$a^2$\n\n$$x$$ (1)\n",
    "card": "https://example.com/a\n",
    "mermaid": "```mermaid\ngraph TD\nA-->B\n```\n",
    "heading": "## A b\n",
}


@pytest.mark.parametrize("case", list(ZENN))
def test_zenns_markup_and_ours_read_alike(case: str) -> None:
    theirs, mine = fingerprint(ZENN[case]), fingerprint(render_markdown(MARKDOWN[case]))
    assert theirs == mine
    assert any(theirs[f] for f in FEATURES if f != "text")
