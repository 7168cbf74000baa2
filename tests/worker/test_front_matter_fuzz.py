"""Front matter fuzz through the whole worker: a hostile article file (bad YAML, wrong types, huge values)
fails alone with a message and is left as it was, while the rest of the repository syncs. And two files
whose names differ only in case are two articles on both backends (MariaDB compares slugs utf8mb4_bin).

``parse_article`` (tested on its own in tests/articles) is the oracle for whether a file is valid; this
checks what the worker, the store and the read routes make of either outcome."""

from __future__ import annotations

import itertools
from typing import Any

import yaml
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from function.articles.parse import parse_article
from function.errors import ArticleParseError
from function.sources.github import MAX_ARTICLE_FILE_BYTES
from tests.kit.answers import contract_counts
from tests.kit.blog_checks import delivery, served, stored
from tests.kit.blog_fixtures import Blog, article

EXAMPLES = 30  # per backend; each example is a whole delivery
FUZZ = settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
FUZZ_PATH = "articles/fuzz.md"
KEYS = ["title", "type", "description", "thumbnail", "publish", "tags", "category"]

values = st.recursive(
    st.one_of(
        st.none(),
        st.booleans(),
        st.integers(),
        st.floats(allow_nan=False),
        st.text(max_size=30),
        st.dates(),
        # huge values: past every length limit of the parser
        st.builds(lambda c, n: c * n, st.sampled_from(["a", "é", "/", " ", "\n"]), st.integers(400, 70_000)),
    ),
    lambda inner: st.one_of(
        st.lists(inner, max_size=120), st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=150,
)
metas = st.dictionaries(st.sampled_from(KEYS), values, max_size=len(KEYS))
yaml_fragments = st.lists(
    st.sampled_from(
        [
            *"titleypubsh:-[]{}!&*|>'\"#%@`,?\\\n\t 0123456789",
            "title: ",
            "tags: ",
            "publish: ",
            "!!python/object ",
            "&a ",
            "*a",
            "2024-13-45",
            "\x00",
            "é",
        ]
    ),
    max_size=60,
).map("".join)


@st.composite
def article_files(draw: st.DrawFn) -> bytes:
    """An article file with hostile front matter: bad YAML text, or YAML of the wrong types and sizes."""
    if draw(st.booleans()):
        front = draw(yaml_fragments)
    else:
        front = yaml.safe_dump(draw(metas), allow_unicode=True, width=10**9)
    body = draw(st.sampled_from(["Body.", "", "<script>alert(1)</script>", "# Heading\n\n- a\n- b"]))
    return f"---\n{front}\n---\n{body}\n".encode("utf-8", "surrogatepass")


def expected_outcome(data: bytes) -> tuple[Any, str | None]:
    """(parsed article or None, error message or None), from the parser alone, except for a file
    over the size limit: the GitHub source refuses it from the listing, in its own words, before any
    download (so the parser never sees it)."""
    if len(data) > MAX_ARTICLE_FILE_BYTES:
        return None, f"{len(data)} bytes, over the {MAX_ARTICLE_FILE_BYTES}-byte limit for an article"
    try:
        return parse_article(FUZZ_PATH, "0" * 40, data), None
    except ArticleParseError as exc:
        return None, str(exc)


@FUZZ
@given(data=article_files())
def test_hostile_front_matter_fails_that_file_alone_with_a_message_and_the_rest_syncs(
    blog: Blog, data: bytes
) -> None:
    n = next(_counter)
    blog.github.update_files({"articles/steady.md": article("Steady")})
    before = stored(blog).get("fuzz")
    # GIVEN a commit with one hostile article and an edit to a good one
    blog.commit({FUZZ_PATH: data, "articles/good.md": article(f"Good {n}")})
    # WHEN the push is delivered
    answer = blog.push(delivery=f"fuzz-{n}")
    # THEN the good articles are in sync whatever the hostile file held
    assert answer.status_code == 200, answer.get_json()
    titles = {slug: a["title"] for slug, a in served(blog).items()}
    assert titles["good"] == f"Good {n}" and titles["steady"] == "Steady"
    parsed, error = expected_outcome(data)
    event("hostile file failed" if error else "hostile file was valid")
    summary = answer.get_json()
    after = stored(blog).get("fuzz")
    if error is not None:
        # ... and the hostile file failed alone, with the parser's message, left as it was
        assert summary["failed"] == 1 and summary["succeeded"] == summary["processed"] - 1
        assert f"{FUZZ_PATH}: {error}"[:1000] in (delivery(blog, f"fuzz-{n}").error or "")
        assert after == before
    else:
        # ... or it was valid after all and is stored exactly as parsed
        assert summary["failed"] == 0
        assert after is not None and after.content_hash == parsed.content_hash and not after.archived
        if parsed.publish:
            assert titles["fuzz"] == parsed.title


_counter = itertools.count()


def test_file_names_differing_only_in_case_are_two_distinct_articles(blog: Blog) -> None:
    # GIVEN Foo.md and foo.md side by side (git on Linux keeps both)
    blog.github.set_files({"articles/Foo.md": article("Upper"), "articles/foo.md": article("Lower")})
    # WHEN the push is delivered
    answer = blog.push(delivery="case")
    # THEN both synced, as two articles, each served under its own slug (byte-exact on MariaDB too)
    assert contract_counts(answer.get_json()) == {
        "status": "processed",
        "processed": 2,
        "succeeded": 2,
        "failed": 0,
    }
    assert sorted(stored(blog)) == ["Foo", "foo"]
    assert blog.client.get("/users/alice/articles/Foo").get_json()["title"] == "Upper"
    assert blog.client.get("/users/alice/articles/foo").get_json()["title"] == "Lower"
    assert blog.client.get("/users/alice/articles/FOO").status_code == 404

    # WHEN one of them is deleted THEN only that one is archived
    blog.commit({"articles/Foo.md": None})
    blog.push(delivery="case-2")
    assert sorted(served(blog)) == ["foo"]
    assert stored(blog)["Foo"].archived and not stored(blog)["foo"].archived
