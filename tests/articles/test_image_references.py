"""Image references in the stored HTML: only the renderer's own become URLs when served, an author can
forge none (in raw HTML, in Markdown, in text), and composing keeps every attribute's boundaries.

The pages are read as a browser reads them: html5lib implements the WHATWG parsing algorithm, as Chromium
does.
"""

from __future__ import annotations

from xml.etree.ElementTree import Element

import html5lib
import pytest
from hypothesis import given
from hypothesis import strategies as st

from function.articles.images import (
    ImageBases,
    compose,
    compose_url,
    key_of,
    reference_for_url,
    references_for_urls,
    stored_reference,
)
from function.articles.render import render_article

KEY = "0123456789abcdef" * 4 + ".png"
OTHER = "fedcba9876543210" * 4 + ".webp"
CDN = "https://cdn.example.com/blog"
EMBED = "https://www.youtube-nocookie.com/embed/abcdefghijk"


def resolve(src: str) -> str | None:
    """The asset store's answer, as ``function.assets`` gives it: cat.png is stored, nothing else."""
    return stored_reference(KEY) if src == "/images/cat.png" else None


def rendered(text: str, *, raw: bool = False) -> str:
    return render_article(text, allow_raw_html=raw, resolve_image=resolve).html


def parsed(html: str) -> Element:
    return html5lib.parse(html, treebuilder="etree", namespaceHTMLElements=False)


def sources(html: str) -> list[str | None]:
    """Each ``<img>``'s ``src`` as a browser reads it (None: the image has none)."""
    return [img.get("src") for img in parsed(html).iter("img")]


def every_attribute(html: str) -> list[tuple[str, str, str]]:
    return [(e.tag, n, v) for e in parsed(html).iter() if isinstance(e.tag, str) for n, v in e.attrib.items()]


def test_the_renderers_own_image_is_stored_as_its_reference_and_served_under_the_asset_url() -> None:
    html = rendered("![cat](/images/cat.png) ![dog](https://example.com/dog.png) ![bird](/images/bird.png)")
    assert sources(html) == [f"asset:{KEY}", "https://example.com/dog.png", "/images/bird.png"]
    assert sources(compose(html, ImageBases(CDN))) == [
        f"{CDN}/{KEY}",
        "https://example.com/dog.png",
        "/images/bird.png",
    ]
    assert sources(compose(html, ImageBases("/assets"))) == [
        f"/assets/{KEY}",
        "https://example.com/dog.png",
        "/images/bird.png",
    ]


@pytest.mark.parametrize(
    "forged",
    [
        f'<img src="asset:{KEY}">',
        f"<img src='ASSET:{KEY}'>",
        f'<img src=" asset:{KEY}">',
        f'<img src="\tasset:{KEY}">',
        f'<img src="as&#9;set:{KEY}">',
        f'<img src="&#x61;sset:{KEY}">',
        f'<img src="asset&colon;{KEY}">',
        f'<img alt="x" src="asset:{KEY}" title="y">',
        f'<p><img src="asset:{KEY}" /></p>',
    ],
)
@pytest.mark.parametrize("raw", [True, False])
def test_a_reference_an_author_writes_in_html_is_never_served_as_an_image(forged: str, raw: bool) -> None:
    html = rendered(f"{forged}\n\n![cat](/images/cat.png)\n", raw=raw)
    served = compose(html, ImageBases(CDN))
    # Only the renderer's own image is served from the asset URL; the forged one has no source at all
    # (raw HTML on) or is text (off)
    assert [s for s in sources(served) if s and CDN in s] == [f"{CDN}/{KEY}"]
    assert all(s is None or "asset" not in s.lower() for s in sources(served))


@pytest.mark.parametrize(
    "forged",
    [
        f"![x](asset:{KEY})",
        f"![x](<asset:{KEY}>)",
        f"[![x](asset:{KEY})](https://example.com/)",
        f'![x](https://example.com/a.png "asset:{KEY}")',
        f'`<img src="asset:{KEY}">`',
        f'Text: src="asset:{KEY}" and <img src="asset:{KEY}">',
        f'```html\n<img src="asset:{KEY}">\n```',
    ],
)
def test_a_reference_an_author_writes_in_markdown_or_text_stays_inert(forged: str) -> None:
    html = rendered(forged)
    served = compose(html, ImageBases(CDN))
    assert CDN not in served
    assert all(s is None or not s.startswith("asset:") for s in sources(served))


@pytest.mark.parametrize("raw", [True, False])
def test_a_marker_an_author_writes_is_removed_or_stays_text(raw: bool) -> None:
    # The renderer's markers hold a per-render secret; an author's guess at one is no image
    guesses = "\ue000" + "0" * 16 + ":0\ue001"
    html = rendered(
        f'<img src="{guesses}">\n\n![x]({guesses})\n\n{guesses}\n\n![cat](/images/cat.png)', raw=raw
    )
    assert [s for s in sources(compose(html, ImageBases(CDN))) if s and CDN in s] == [f"{CDN}/{KEY}"]


OPENERS = {
    "iframe": f'<iframe src="{EMBED}" title=\'',
    "iframe, double quote": f'<iframe src="{EMBED}" title="',
    "img": "<p><img src='/a.png' alt='",
    "a": "<p><a href='https://example.com/' title='",
    "ol": "<ol start=1 class='",
}
CLOSERS = {
    "iframe": "' ></iframe>",
    "iframe, double quote": '" ></iframe>',
    "img": "'></p>",
    "a": "'>link</a></p>",
    "ol": "'><li>a</li></ol>",
}


@pytest.mark.parametrize("opener", sorted(OPENERS))
def test_an_image_inside_an_attribute_an_author_left_open_never_becomes_markup(opener: str) -> None:
    source = (
        f"{OPENERS[opener]}\n\n![cat](/images/cat.png)\n\nend{CLOSERS[opener]}\n\n![cat](/images/cat.png)\n"
    )
    served = compose(rendered(source, raw=True), ImageBases('https://cdn.example.com/"><script>'))
    tree = parsed(served)
    # No attribute holds a marker or a reference, nothing but the allowlist's names appear, and every
    # embed keeps the sandbox the sanitizer gave it
    for tag, name, value in every_attribute(served):
        assert name.isascii() and name.replace("-", "").isalpha(), (tag, name, served)
        assert "\ue000" not in value and "asset:" not in value, (tag, name)
    assert list(tree.iter("script")) == []
    assert all(iframe.get("sandbox") is not None for iframe in tree.iter("iframe"))
    # The image written where images go is the renderer's, served under the (escaped) base; after an
    # unclosed iframe the browser reads the rest as the iframe's fallback text, which it never shows
    found = sources(served)
    assert found[-1:] == ['https://cdn.example.com/"><script>/' + KEY] or (
        opener.startswith("iframe") and found == []
    )


@given(
    alt=st.text(alphabet=st.sampled_from("ab \"'<>&=/ src:asset\ue000"), max_size=30),
    title=st.text(alphabet=st.sampled_from("ab \"'<>&=/ src:asset"), max_size=30),
    base=st.text(alphabet=st.sampled_from("ab\"'<>&=/ ?#:"), min_size=1, max_size=20),
)
def test_composing_changes_only_the_source_whatever_the_attributes_and_the_base(
    alt: str, title: str, base: str
) -> None:
    alt_md = alt.replace("\\", "").replace("[", "").replace("]", "")
    title_md = title.replace('"', "").replace("\\", "")
    html = rendered(f'![{alt_md}](/images/cat.png "{title_md}")\n\n![b](/images/bird.png)', raw=True)
    before = parsed(html)
    served = compose(html, ImageBases(base))
    after = parsed(served)
    old, new = list(before.iter("img")), list(after.iter("img"))
    assert len(old) == len(new) == 2
    for was, now in zip(old, new, strict=True):
        # Every attribute is the one stored, but the renderer's reference, which became base/key
        expected = dict(was.attrib)
        if expected.get("src") == f"asset:{KEY}":
            expected["src"] = f"{base.rstrip('/')}/{KEY}"
        assert dict(now.attrib) == expected
    assert [e.tag for e in after.iter()] == [e.tag for e in before.iter()]


def test_repository_images_are_composed_against_the_asset_base_only_when_it_is_set() -> None:
    html = render_article(
        '![a](/images/a.png) ![b](images/b.png) ![c](other/c.png)\n\n<img src="/images/d.png" alt="d">',
        allow_raw_html=True,
    ).html
    assert compose(html, ImageBases("/assets")) == html
    served = compose(html, ImageBases("/assets", "https://raw.example.com/me/blog/main"))
    assert sources(served) == [
        "https://raw.example.com/me/blog/main/images/a.png",
        "https://raw.example.com/me/blog/main/images/b.png",
        "other/c.png",
        "https://raw.example.com/me/blog/main/images/d.png",
    ]


def test_a_book_cover_is_composed_and_a_path_is_left_as_it_is() -> None:
    assert compose_url(stored_reference(KEY), ImageBases(CDN + "/")) == f"{CDN}/{KEY}"
    assert compose_url("books/guide/cover.png", ImageBases(CDN)) == "books/guide/cover.png"
    assert compose_url(None, ImageBases(CDN)) is None


def test_only_a_content_key_makes_a_reference() -> None:
    assert key_of(stored_reference(KEY)) == KEY
    for value in ("asset:", "asset:../etc/passwd", f"asset:{KEY}?x", f'asset:{KEY}"', f"x{KEY}", KEY):
        assert key_of(value) is None
    with pytest.raises(ValueError):
        stored_reference("cat.png")
    with pytest.raises(ValueError):
        render_article("![cat](/images/cat.png)", resolve_image=lambda src: "https://cdn.example.com/cat.png")


def test_urls_an_earlier_version_stored_become_references_of_known_keys_only() -> None:
    keys = {KEY, OTHER}
    stored = (
        f'<p><img src="https://d1.cloudfront.net/{KEY}" alt="a"> <img src="/assets/{OTHER}" alt="b"> '
        f'<img src="https://example.com/{"9" * 64}.png" alt="c"> <img src="{KEY}" alt="d"></p>\n'
        f'<p>text https://d1.cloudfront.net/{KEY}</p>\n<p><a href="/assets/{KEY}">link</a></p>\n'
    )
    migrated = references_for_urls(stored, keys)
    assert sources(migrated) == [f"asset:{KEY}", f"asset:{OTHER}", f"https://example.com/{'9' * 64}.png", KEY]
    assert f"text https://d1.cloudfront.net/{KEY}" in migrated and f'href="/assets/{KEY}"' in migrated
    assert references_for_urls(migrated, keys) == migrated
    assert reference_for_url(f"https://d1.cloudfront.net/{KEY}", keys) == f"asset:{KEY}"
    assert reference_for_url(f"https://d1.cloudfront.net/{KEY}?v=1", keys) is None
