"""Heading and footnote ids as Zenn's renderer makes them; diagrams; the hidden breaks around a card.

The expected ids below are zenn-markdown-html's own output for the same Markdown (the parity tool in
tools/parity/ compares whole corpora the same way).
"""

from __future__ import annotations

import re

import pytest

from function.articles.ids import footnote_key, slugify
from function.articles.render import render_article, render_markdown


@pytest.mark.parametrize(
    ("heading", "zenn_id"),
    [
        ("http/2 の特徴", "http%2F2-%E3%81%AE%E7%89%B9%E5%BE%B4"),
        ("console.log()", "console.log()"),
        ("追記\uff082021-10-08\uff09", "%E8%BF%BD%E8%A8%98%EF%BC%882021-10-08%EF%BC%89"),
        ("Code `inline` heading", "code-inline-heading"),
        ("A  *b*\u3000C", "a-b-c"),
        ("B!?", "b!%3F"),
    ],
)
def test_heading_ids_are_zenns(heading: str, zenn_id: str) -> None:
    rendered = render_article(f"## {heading}\n")
    assert f'<h2 id="{zenn_id}">' in rendered.html
    assert [entry.id for entry in rendered.toc] == [zenn_id]


def test_duplicates_are_numbered_against_every_id_handed_out() -> None:
    html = render_markdown("## a\n## a\n## a-1\n")
    assert re.findall(r'id="([^"]*)"', html) == ["a", "a-1", "a-1-1"]


def test_only_h1_to_h4_get_an_id_as_on_zenn() -> None:
    html = render_markdown("#### four\n##### five\n###### six\n")
    assert re.findall(r"<h\d[^>]*>", html) == ['<h4 id="four">', "<h5>", "<h6>"]


def test_slugify_trims_and_joins_javascript_whitespace() -> None:
    assert slugify("\ufeff Hello\u00a0 World \u3000") == "hello-world"


def test_the_footnote_key_is_stable_and_steps_aside_for_headings() -> None:
    key = footnote_key("text", [])
    assert re.fullmatch(r"[0-9a-f]{4}", key) and footnote_key("text", []) == key
    other = footnote_key("text", [f"fn-{key}-1"])
    assert other != key and footnote_key("text", [f"fnref-{other}-2", f"fn-{key}-1"]) not in (key, other)


def test_a_mermaid_fence_is_a_diagram_for_the_browser() -> None:
    html = render_markdown("```mermaid\ngraph TD\n  A-->B<script>\n```\n")
    assert html == '<pre class="mermaid">graph TD\n  A--&gt;B&lt;script&gt;</pre>\n'


def test_the_breaks_around_a_card_are_hidden_as_zenn_hides_them() -> None:
    html = render_markdown("see\nhttps://example.com\nafter")
    assert html.count('<br style="display:none">') == 2
    assert '<a class="link-card" href="https://example.com"' in html
    assert "<br>" not in html
