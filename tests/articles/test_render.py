"""Rendering: CommonMark + tables + strikethrough, Zenn blocks, and HTML that cannot run script."""

from __future__ import annotations

import re

import pytest

from function.articles.render import render_markdown

from .helpers import parse


def test_code_blocks_keep_their_language() -> None:
    html = render_markdown("```python\nprint('<hi>')\n```")
    assert html.startswith(
        '<div class="code-block-container"><pre class="highlight"><code class="language-python">'
    )
    assert "&lt;hi&gt;" in html


def test_tables_are_rendered() -> None:
    html = render_markdown("| a | b |\n|---|--:|\n| 1 | 2 |")
    assert "<table>" in html
    assert '<td style="text-align:right">2</td>' in html


def test_strikethrough_is_rendered() -> None:
    assert render_markdown("~~old~~ new") == "<p><s>old</s> new</p>\n"


def test_autolinks_and_links_work() -> None:
    html = render_markdown("<https://example.com> [x](/a?b=1&c=2)")
    assert '<a href="https://example.com" rel="nofollow noopener noreferrer">https://example.com</a>' in html
    assert '<a href="/a?b=1&amp;c=2" rel="nofollow noopener noreferrer">x</a>' in html


# --- Zenn blocks ----------------------------------------------------------------------------------------


def test_message_block() -> None:
    assert render_markdown(":::message\nNote **this**.\n:::") == (
        '<aside class="msg message">\n<p>Note <strong>this</strong>.</p>\n</aside>\n'
    )


def test_message_alert_block() -> None:
    assert render_markdown(":::message alert\nCareful.\n:::") == (
        '<aside class="msg alert">\n<p>Careful.</p>\n</aside>\n'
    )


def test_details_block_with_title() -> None:
    assert render_markdown(":::details Show the answer\n42\n:::") == (
        "<details><summary>Show the answer</summary>\n<p>42</p>\n</details>\n"
    )


def test_details_title_is_escaped() -> None:
    html = render_markdown(':::details <img src=x onerror="alert(1)"> & more\nx\n:::')
    assert '<summary>&lt;img src=x onerror="alert(1)"&gt; &amp; more</summary>' in html
    assert "<img" not in html


def test_details_without_title_stays_text_as_on_zenn() -> None:
    # Zenn opens a details block only with a summary after the name.
    assert render_markdown(":::details\nx\n:::") == "<p>:::details<br>\nx<br>\n:::</p>\n"


def test_a_message_line_with_words_after_the_name_keeps_them_as_text() -> None:
    # Zenn shows ":::message 0. 基礎" as the author wrote it: no box, and "0. 基礎" is not dropped.
    html = render_markdown(":::message 0. 基礎\n本文\n:::")

    assert html == "<p>:::message 0. 基礎<br>\n本文<br>\n:::</p>\n"
    assert "<aside" not in html


def test_zenns_message_patterns_open_blocks_with_or_without_spaces() -> None:
    assert render_markdown(":::messagealert\nx\n:::") == '<aside class="msg alert">\n<p>x</p>\n</aside>\n'
    assert render_markdown("::: message\nx\n:::") == '<aside class="msg message">\n<p>x</p>\n</aside>\n'
    assert render_markdown(":::message  alert  \nx\n:::").startswith('<aside class="msg alert">')


def test_containers_nest_with_a_longer_outer_fence() -> None:
    html = render_markdown("::::details Outer\n:::message alert\nInner\n:::\nAfter\n::::\nOutside")
    assert html == (
        "<details><summary>Outer</summary>\n"
        '<aside class="msg alert">\n<p>Inner</p>\n</aside>\n'
        "<p>After</p>\n</details>\n<p>Outside</p>\n"
    )


def test_code_and_tables_inside_containers() -> None:
    html = render_markdown(":::details Code\n```sh\nls\n```\n\n| a |\n|---|\n| 1 |\n:::")
    assert '<pre class="highlight"><code class="language-sh">' in html
    assert "<table>" in html
    assert html.endswith("</details>\n")


def test_an_unclosed_container_ends_with_the_document() -> None:
    assert render_markdown(":::message\nopen") == '<aside class="msg message">\n<p>open</p>\n</aside>\n'


def test_unknown_containers_are_plain_text() -> None:
    assert render_markdown(":::warning\nx\n:::") == "<p>:::warning<br>\nx<br>\n:::</p>\n"


def test_a_container_fence_inside_code_is_code() -> None:
    assert "<aside" not in render_markdown("```\n:::message\n```")


# --- XSS ------------------------------------------------------------------------------------------------


def test_script_in_the_body_is_escaped() -> None:
    html = parse("title: x", "<script>alert(1)</script>\n\ntext <img src=x onerror=alert(1)>").content_html
    assert "<script" not in html
    assert "<img" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html


def test_raw_html_is_kept_only_with_the_flag() -> None:
    html = parse("title: x", '<div class="note">hi</div>', allow_raw_html=True).content_html
    assert html == '<div class="note">hi</div>'


def test_raw_html_flag_off_by_default_even_after_it_was_used() -> None:
    parse("title: x", "<b>x</b>", allow_raw_html=True)
    assert "<b>" not in parse("title: x", "<b>x</b>").content_html


@pytest.mark.parametrize(
    "markdown",
    [
        "[x](javascript:alert(1))",
        "[x](JavaScript:alert(1))",
        "[x]( javascript:alert(1) )",
        "[x](<javascript:alert(1)>)",
        "[x](&#106;avascript:alert(1))",
        "[x](&#x6A;avascript&#58;alert(1))",
        "[x](vbscript:msgbox(1))",
        "[x](data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==)",
        "[x](file:///etc/passwd)",
        "<javascript:alert(1)>",
        "[x][r]\n\n[r]: javascript:alert(1)",
        "![x](javascript:alert(1))",
        "![x](data:image/svg+xml;base64,PHN2Zz4=)",
        ":::message\n[x](javascript:alert(1))\n:::",
    ],
)
def test_script_urls_never_become_links(markdown: str) -> None:
    for flag in (False, True):
        html = render_markdown(markdown, allow_raw_html=flag)
        urls = re.findall(r'(?:href|src)="([^"]*)"', html)
        assert all(not _script_url(url) for url in urls), html


def test_a_tab_hidden_in_the_scheme_stays_percent_encoded() -> None:
    # Browsers drop raw tabs from URLs ("java\tscript:" would run); an encoded %09 is not a scheme.
    html = render_markdown("[x](java&#9;script:alert(1))")
    assert 'href="java%09script:alert(1)"' in html


def test_data_image_urls_are_allowed() -> None:
    html = render_markdown("![dot](data:image/png;base64,iVBORw0KGgo=)")
    assert 'src="data:image/png;base64,iVBORw0KGgo="' in html


def test_attribute_breakout_in_a_url_is_escaped() -> None:
    html = render_markdown('[x](https://e.com/"onmouseover="alert(1))')
    assert 'onmouseover="' not in html


def _script_url(url: str) -> bool:
    lowered = re.sub(r"[\x00-\x20]", "", url).lower()
    if lowered.startswith("data:image/") and not lowered.startswith("data:image/svg"):
        return False
    return lowered.startswith(("javascript:", "vbscript:", "data:", "file:"))
