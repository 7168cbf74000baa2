"""Property tests: hostile files fail only with ArticleParseError; the content hash means "really changed"."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from function.articles.front_matter_yaml import YamlLoader, yaml_loaders
from function.articles.parse import content_hash, parse_article
from function.articles.parsed import ParsedArticle
from function.errors import ArticleParseError

from .helpers import SHA

# The YAML-reading properties run on every loader this PyYAML has (libyaml's and the pure one).
LOADERS = pytest.mark.parametrize("loader", list(yaml_loaders().values()), ids=list(yaml_loaders()))

FUZZ = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])

KEYS = ["title", "type", "description", "thumbnail", "publish", "tags", "category", "other"]

# Every kind of value YAML can produce, nested a little.
yaml_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.floats(allow_nan=True),
    st.text(max_size=30),
    st.dates(),
    st.datetimes(),
    st.binary(max_size=10),
)
yaml_values = st.recursive(
    yaml_scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.dictionaries(st.sampled_from(KEYS) | st.text(max_size=5), inner, max_size=4),
    ),
    max_leaves=12,
)
front_matters = st.dictionaries(st.sampled_from(KEYS), yaml_values, max_size=len(KEYS))

# Text that looks like YAML often enough to reach deep into the parser.
yaml_ish_text = st.lists(
    st.sampled_from(
        [
            *"titleypubshgcorn:-[]{}!&*|>'\"#%@`,?\\\n\t 0123456789.~",
            "title: ",
            "tags: ",
            "publish: ",
            "category: ",
            "!!",
            "\n- ",
            "2024-13-45",
            "\x00",
            "\ud800",
            "é",
        ]
    ),
    max_size=60,
).map("".join)


def _parse_or_error(data: bytes, loader: YamlLoader | None = None) -> ParsedArticle | None:
    try:
        return parse_article("articles/fuzz.md", SHA, data, yaml_loader=loader)
    except ArticleParseError as exc:
        assert str(exc), "an ArticleParseError always says what is wrong"
        return None


@FUZZ
@given(st.binary(max_size=2000))
def test_arbitrary_bytes_parse_or_fail_cleanly(data: bytes) -> None:
    _parse_or_error(data)


@LOADERS
@FUZZ
@given(data=st.binary(max_size=500))
def test_arbitrary_bytes_after_a_fence_parse_or_fail_cleanly(loader: YamlLoader, data: bytes) -> None:
    _parse_or_error(b"---\n" + data + b"\n---\nbody", loader)


@LOADERS
@FUZZ
@given(front=yaml_ish_text, body=st.text(max_size=200))
def test_yaml_ish_front_matter_parses_or_fails_cleanly(loader: YamlLoader, front: str, body: str) -> None:
    _parse_or_error(f"---\n{front}\n---\n{body}".encode("utf-8", "surrogatepass"), loader)


@LOADERS
@FUZZ
@given(meta=front_matters)
def test_any_yaml_front_matter_parses_or_fails_cleanly(loader: YamlLoader, meta: dict[str, Any]) -> None:
    article = _parse_or_error(f"---\n{yaml.safe_dump(meta)}---\nbody".encode(), loader)
    if article is not None:
        # Whatever got through has the promised types.
        assert isinstance(article.title, str) and (
            article.title or not article.publish
        )  # drafts may be untitled
        assert isinstance(article.publish, bool)
        assert all(isinstance(tag, str) and tag for tag in article.tags)
        assert list(article.tags) == sorted(set(article.tags))


@FUZZ
@given(st.text(max_size=500))
def test_any_body_renders_without_live_script(body: str) -> None:
    article = parse_article(
        "articles/x.md", SHA, f"---\ntitle: t\n---\n{body}".encode("utf-8", "surrogatepass")
    )
    html = article.content_html.lower()
    assert "<script" not in html
    assert 'href="javascript:' not in html


@FUZZ
@given(
    st.lists(
        st.sampled_from(
            [*"<>[]()!:&#;\"' \n`*_", "javascript:", "<script>", ":::message", "data:", "&#106;"]
        ),
        max_size=40,
    ).map("".join)
)
def test_markup_heavy_body_renders_without_live_script(body: str) -> None:
    html = parse_article("articles/x.md", SHA, f"---\ntitle: t\n---\n{body}".encode()).content_html.lower()
    assert "<script" not in html
    assert 'href="javascript:' not in html
    assert 'src="javascript:' not in html


# --- content_hash ---------------------------------------------------------------------------------------

hash_inputs = st.fixed_dictionaries(
    {
        "title": st.text(min_size=1, max_size=20),
        "type": st.none() | st.text(max_size=10),
        "description": st.none() | st.text(max_size=20),
        "thumbnail": st.none() | st.text(max_size=20),
        "publish": st.booleans(),
        "tags": st.lists(st.text(min_size=1, max_size=10), max_size=4, unique=True).map(
            lambda tags: tuple(sorted(tags))
        ),
        "content": st.text(max_size=100),
    }
)


@FUZZ
@given(hash_inputs)
def test_content_hash_is_stable(fields: dict[str, Any]) -> None:
    assert content_hash(**fields) == content_hash(**dict(reversed(list(fields.items()))))


@FUZZ
@given(
    hash_inputs,
    st.sampled_from(sorted(["title", "type", "description", "thumbnail", "publish", "tags", "content"])),
    st.data(),
)
def test_content_hash_changes_with_each_field(fields: dict[str, Any], key: str, data: st.DataObject) -> None:
    changed = dict(fields)
    changed[key] = data.draw(hash_inputs.map(lambda other: other[key]).filter(lambda v: v != fields[key]))
    assert content_hash(**changed) != content_hash(**fields)


def test_content_hash_tells_none_from_empty() -> None:
    base: dict[str, Any] = {
        "title": "t",
        "type": None,
        "description": None,
        "thumbnail": None,
        "publish": False,
        "tags": (),
        "content": "",
    }
    assert content_hash(**base) != content_hash(**{**base, "type": ""})


def test_same_file_gives_the_same_hash() -> None:
    data = b"---\ntitle: x\ntags: [a, b]\npublish: true\n---\nbody\n"
    assert (
        parse_article("articles/a.md", SHA, data).content_hash
        == parse_article("articles/a.md", SHA, data).content_hash
    )


def test_layout_of_the_yaml_does_not_change_the_hash() -> None:
    # GIVEN the same meaning written two ways, at different paths and blob SHAs
    one = b"---\ntitle: x\ntags: [b, a]\npublish: true\n---\nbody\n"
    two = b"---\r\npublish: yes\r\ntags:\r\n  - /a/\r\n  - b\r\n  - b\r\ntitle: 'x'\r\n---\r\n\r\nbody  \r\n"
    # THEN the hash is the same: updatedAt would not move
    assert (
        parse_article("articles/a.md", "1" * 40, one).content_hash
        == parse_article("articles/b.md", "2" * 40, two).content_hash
    )


def test_each_parsed_field_moves_the_hash() -> None:
    base = "title: x\ntype: tech\ndescription: d\nthumbnail: /t.png\npublish: true\ntags: [a]"
    variants = [
        base.replace("title: x", "title: y"),
        base.replace("type: tech", "type: idea"),
        base.replace("description: d", "description: e"),
        base.replace("/t.png", "/u.png"),
        base.replace("publish: true", "publish: false"),
        base.replace("tags: [a]", "tags: [a, b]"),
    ]
    hashes = {_hash(base, "body")} | {_hash(v, "body") for v in variants} | {_hash(base, "body!")}
    assert len(hashes) == len(variants) + 2


def _hash(front: str, body: str) -> str:
    return parse_article("articles/a.md", SHA, f"---\n{front}\n---\n{body}".encode()).content_hash


def test_parsed_article_fields_match_the_hash_inputs() -> None:
    # The hash covers exactly these ParsedArticle fields; a new field must be added here on purpose.
    names = {f.name for f in dataclasses.fields(ParsedArticle)}
    hashed = {
        "title",
        "type",
        "description",
        "thumbnail",
        "publish",
        "tags",
        "content",
        "emoji",
        "published_at",
    }
    # slug_date follows from the slug; warnings name keys that mean nothing, so they change no content;
    # added_at is the file's history (when it was added), not what it says.
    assert names - hashed == {
        "slug",
        "path",
        "blob_sha",
        "content_html",
        "content_hash",
        "slug_date",
        "added_at",
        "warnings",
        "toc",
    }


printable = st.text(
    alphabet=st.characters(blacklist_categories=["Cc", "Cs"]), min_size=1, max_size=40
).filter(lambda s: s.strip() != "")


@LOADERS
@FUZZ
@given(
    title=printable,
    publish=st.booleans(),
    tags=st.lists(printable.filter(lambda s: "/" not in s), max_size=5),
    category=st.none() | printable.filter(lambda s: "/" not in s),
)
def test_valid_front_matter_round_trips(
    loader: YamlLoader, title: str, publish: bool, tags: list[str], category: str | None
) -> None:
    meta: dict[str, Any] = {"title": title, "publish": publish, "tags": tags}
    if category is not None:
        meta["category"] = category
    data = f"---\n{yaml.safe_dump(meta)}---\nbody".encode()
    article = parse_article("articles/x.md", SHA, data, yaml_loader=loader)
    expected = {tag.strip() for tag in [*tags, *([category] if category else [])]} - {""}
    assert article.title == title.strip()
    assert article.publish is publish
    assert article.tags == tuple(sorted(expected))
