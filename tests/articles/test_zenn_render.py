"""Zenn's Markdown as readers expect it: one feature article of ours, fragment by fragment."""

from __future__ import annotations

from pathlib import Path

import pytest

from function.articles.images import ImageBases, compose
from function.articles.parse import parse_article
from function.articles.render import render_article, render_markdown

from .helpers import SHA
from .html_safety import script_hazards, text_outside_code

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
# Zenn's own example articles (MIT), in the Zenn repository fixture: the numbered ones.
ZENN_EXAMPLES = FIXTURES / "zenn" / "articles"


@pytest.fixture(scope="module")
def feature() -> str:
    data = (FIXTURES / "zenn-features.md").read_bytes()
    return parse_article("articles/zenn-features.md", SHA, data).content_html


@pytest.mark.parametrize(
    "fragment",
    [
        # breaks: a single newline inside a paragraph is a line break
        "<p>First line of a paragraph<br>\nsecond line, same paragraph.</p>",
        # a bare URL alone on its line is a link card, its text the URL
        '<p><a class="link-card" href="https://zenn.dev/zenn/articles/markdown-guide" rel="nofollow noopener'
        ' noreferrer">https://zenn.dev/zenn/articles/markdown-guide</a></p>',
        # a bare URL inside text is linked
        '<p>Text with a bare URL <a href="https://example.com/inline" rel="nofollow noopener noreferrer">'
        "https://example.com/inline</a> inside.</p>",
        # comments are dropped, as a block and inline
        "<p>Visible  text.</p>",
        # <br> in a table cell
        '<td style="text-align:left">a<br>\nb</td>',
        # lang:file fence: a clean class and the file name as a label
        '<div class="code-block-container"><div class="code-block-filename-container">'
        '<span class="code-block-filename">app/layout.tsx</span></div><pre class="highlight">'
        '<code class="language-tsx"><span class="k">export</span>',
        # diff fence: lines marked, the rest highlighted as the language
        '<code class="language-diff language-js"><span class="diff-line diff-remove">-<span class="kd">const'
        "</span>",
        '<span class="diff-line diff-add">+<span class="kd">const</span>',
        # unknown language: plain, escaped
        '<code class="language-nosuchlang">&lt;raw&gt; &amp; plain\n</code>',
        # footnotes: a reference and a footnotes section (ids scoped to the article: see test_render_ids)
        '" rel="nofollow noopener noreferrer">[1]</a></sup>',
        '<section class="footnotes">\n<ol class="footnotes-list">\n<li id="fn-',
        '" class="footnote-item"><p>The footnote text.',
        # task lists: disabled checkboxes
        '<li class="task-list-item"><input class="task-list-item-checkbox" type="checkbox" disabled="">'
        " open task</li>",
        'checked="checked" type="checkbox" disabled=""> done task</li>',
        # image size
        '<img src="https://example.com/cat.png" alt="cat" width="250">',
        # Zenn blocks
        '<aside class="msg message">\n<p>A message.</p>\n</aside>',
        "<details><summary>Click</summary>\n<p>Hidden.</p>\n</details>",
        # math as MathML, no raw dollars; a price is not math
        '<span class="math inline"><math display="inline"><semantics><mrow><msup><mi>e</mi>',
        "and a price of 100$.</p>",
        '<div class="math block">\n<math display="block"><semantics><mrow><mfrac>',
        # embeds: iframes from the allowlist only, in each service's form
        '<span class="embed-block embed-youtube"><iframe src="https://www.youtube-nocookie.com/embed/ToLJE4YEQRI"',
        '<p class="embed-invalid">not a valid id</p>',
        '<iframe src="https://platform.twitter.com/embed/Tweet.html?id=20"',
        '<a class="link-card" href="https://zenn.dev" rel="nofollow noopener noreferrer">https://zenn.dev</a>',
        '<a class="link-card" href="https://gist.github.com/catnose99/2c9e2d7c5a4f0e6b8a3e"',
        '<a class="link-card" href="https://github.com/zenn-dev/zenn-editor/blob/main/README.md"',
        '<iframe src="https://speakerdeck.com/player/4f926da9cb4cd0001f00a1ff"',
        '<iframe src="https://www.slideshare.net/slideshow/embed_code/key/ryFpmiY9yvqapP"',
        '<iframe src="https://codepen.io/zenn-dev/embed/abcDEF?default-tab=result"',
        '<iframe src="https://codesandbox.io/embed/new"',
        '<iframe src="https://stackblitz.com/edit/angular?embed=1&amp;ctl=1&amp;file=src/app.ts"',
        '<iframe src="https://embed.figma.com/design/LKQ4FJ4bTnCSjedbRpk931/Sample-File?embed-host=blog-api"',
        # heading ids as Zenn makes them (encodeURIComponent of the text), duplicates numbered
        '<h2 id="%E3%81%AF%E3%81%98%E3%82%81%E3%81%AB">はじめに</h2>',
        '<h2 id="%E3%81%AF%E3%81%98%E3%82%81%E3%81%AB-1">はじめに</h2>',
        '<h3 id="code-inline-heading">Code <code>inline</code> heading</h3>',
    ],
)
def test_feature_article_fragment(feature: str, fragment: str) -> None:
    assert fragment in feature


def test_feature_article_shows_no_raw_syntax(feature: str) -> None:
    for raw in (
        "@[",
        "@link",
        "=250x",
        "<!--",
        "note for the author",
        "&lt;br&gt;",
        "$$",
        "$e^",
        "[^1]",
        "[ ]",
    ):
        assert raw not in feature, raw


def test_table_of_contents() -> None:
    data = (FIXTURES / "zenn-features.md").read_bytes()
    toc = [entry.as_json() for entry in parse_article("articles/x.md", SHA, data).toc]
    assert toc == [
        {"level": 2, "id": "%E3%81%AF%E3%81%98%E3%82%81%E3%81%AB", "text": "はじめに"},
        {"level": 2, "id": "%E3%81%AF%E3%81%98%E3%82%81%E3%81%AB-1", "text": "はじめに"},
        {"level": 3, "id": "code-inline-heading", "text": "Code inline heading"},
    ]


def test_toc_lists_top_level_h1_to_h3_only() -> None:
    toc = render_article("# A\n#### Deep\n> ## Quoted\n\n:::details x\n## Inside\n:::\n## B!?").toc
    assert [(e.level, e.id, e.text) for e in toc] == [(1, "a", "A"), (2, "b!%3F", "B!?")]


def test_a_heading_of_punctuation_keeps_it_in_its_id_as_zenn_does() -> None:
    assert render_markdown("## !!!\n## !!!") == '<h2 id="!!!">!!!</h2>\n<h2 id="!!!-1">!!!</h2>\n'


def test_link_cards_only_for_a_url_alone_on_its_line_outside_lists_and_messages() -> None:
    html = render_markdown("- https://a.example\n\n:::message\nhttps://b.example\n:::\n\n> https://c.example")
    assert "link-card" not in html
    assert html.count("<a href=") == 3


def test_a_youtube_url_alone_on_its_line_embeds() -> None:
    html = render_markdown("https://www.youtube.com/watch?v=ToLJE4YEQRI&t=30s")
    assert '<iframe src="https://www.youtube-nocookie.com/embed/ToLJE4YEQRI?start=30"' in html


def test_e_mail_addresses_and_bare_domains_are_not_linked() -> None:
    assert (
        render_markdown("mail a@example.com or example.com") == "<p>mail a@example.com or example.com</p>\n"
    )


def test_br_is_kept_with_raw_html_off_and_other_html_is_text() -> None:
    assert (
        render_markdown("a<br>b<br/>c<br />d <b>x</b>")
        == "<p>a<br>\nb<br>\nc<br>\nd &lt;b&gt;x&lt;/b&gt;</p>\n"
    )


@pytest.mark.parametrize("allow_raw_html", [False, True])
def test_comments_are_dropped_with_either_setting(allow_raw_html: bool) -> None:
    html = render_markdown("<!--\nsecret\n-->\n\nvisible <!-- x --> text", allow_raw_html=allow_raw_html)
    assert "secret" not in html and "x --" not in html and "<!--" not in html
    assert "visible" in html and "text" in html


def test_an_unclosed_comment_stays_text() -> None:
    assert render_markdown("a <!-- b") == "<p>a &lt;!-- b</p>\n"


def test_image_sizes() -> None:
    assert 'width="250" height="100"' in render_markdown("![a](https://e.com/a.png =250x100)")
    assert 'height="50%"' in render_markdown('![a](https://e.com/a.png =x50% "t")')
    assert "width" not in render_markdown("![a](https://e.com/a.png)")


def test_fence_info_with_a_file_name_only() -> None:
    html = render_markdown("```:Dockerfile\nFROM x\n```")
    assert '<span class="code-block-filename">Dockerfile</span>' in html
    assert "<code>FROM x\n</code>" in html


def test_a_file_name_label_is_escaped() -> None:
    html = render_markdown('```js:<img src=x onerror="alert(1)">\nx\n```')
    assert "<img" not in html and "&lt;img" in html


def test_highlight_stylesheet_covers_the_classes() -> None:
    from function.articles.highlight import stylesheet

    css = stylesheet()
    assert "pre.highlight .k " in css and ".diff-add" in css and "style=" not in css


@pytest.mark.parametrize(
    ("markdown", "expected"),
    [
        ("@[youtube](https://youtu.be/ToLJE4YEQRI)", "https://www.youtube-nocookie.com/embed/ToLJE4YEQRI"),
        ("@[x](https://x.com/jack/status/20)", "https://platform.twitter.com/embed/Tweet.html?id=20"),
        ("@[speakerdeck](abc123?slide=3)", "https://speakerdeck.com/player/abc123?slide=3"),
    ],
)
def test_embed_forms(markdown: str, expected: str) -> None:
    assert f'<iframe src="{expected}"' in render_markdown(markdown)


@pytest.mark.parametrize(
    "markdown",
    [
        '@[youtube](x" onload="alert(1))',
        "@[codesandbox](https://evil.example/embed/x)",
        "@[codepen](javascript:alert(1))",
        "@[tweet](https://twitter.com/jack)",
        "@[figma](https://figma.com.evil.example/file/LKQ4FJ4bTnCSjedbRpk931/x)",
        "@[card](javascript:alert(1))",
    ],
)
def test_bad_embeds_are_never_iframes_or_at_links(markdown: str) -> None:
    html = render_markdown(markdown)
    assert "<iframe" not in html
    assert "@" not in html.replace("@[", "")[:1] and not html.startswith("<p>@")
    assert "javascript:" not in html.split('href="')[-1].split('"')[0]


def test_raw_html_iframes_keep_src_only_from_the_allowlist() -> None:
    html = render_markdown(
        '<iframe src="https://www.youtube-nocookie.com/embed/ToLJE4YEQRI"></iframe>\n\n'
        '<iframe src="https://evil.example/x" srcdoc="<script>alert(1)</script>"></iframe>',
        allow_raw_html=True,
    )
    assert '<iframe src="https://www.youtube-nocookie.com/embed/ToLJE4YEQRI" allow=' in html
    assert "evil" not in html and "srcdoc" not in html and "<script" not in html


def test_repository_images_are_served_against_the_asset_base_url_and_stored_as_written() -> None:
    source = '![a](/images/a.png) ![b](images/b.png)\n\n<img src="/images/c.png">'
    base = "https://cdn.example.com/me/blog"
    rendered = render_article(source, allow_raw_html=True, asset_base_url=base)
    # Stored as written, whatever the base (a new base needs no sync), with no warning since one is set
    assert rendered.html == render_article(source, allow_raw_html=True).html
    assert rendered.warnings == ()
    served = compose(rendered.html, ImageBases("/assets", base))
    for name in ("a", "b", "c"):
        assert f'src="{base}/images/{name}.png"' in served


def test_repository_images_without_a_base_url_stay_with_a_warning() -> None:
    rendered = render_article("![a](/images/a.png)\n![b](https://e.com/b.png)")
    assert 'src="/images/a.png"' in rendered.html
    assert len(rendered.warnings) == 1
    assert "ARTICLE_ASSET_BASE_URL" in rendered.warnings[0] and "/images/a.png" in rendered.warnings[0]


@pytest.mark.parametrize("name", sorted(p.name for p in ZENN_EXAMPLES.glob("[0-9]*-example-*.md")))
def test_zenns_own_examples_render_without_raw_syntax(name: str) -> None:
    data = (ZENN_EXAMPLES / name).read_bytes()
    html = parse_article(f"articles/{name}", SHA, data).content_html
    assert script_hazards(html) == []
    text = text_outside_code(html)
    assert "@[youtube]" not in text and "@[card]" not in text
    if name.startswith("304"):  # Zenn's KaTeX examples: the formulas outside code are MathML
        assert html.count("<math") >= 40
