"""The sample repository used by ``make run`` is in the real format and reads the same through dir:."""

from __future__ import annotations

from pathlib import Path

from function.articles.parse import parse_article
from function.articles.parsed import ParsedArticle
from function.sources.folder import DirectorySource
from function.sources.port import FetchedFile, RepoRef

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "articles"


def _articles() -> dict[str, ParsedArticle]:
    """Slug → parsed article, read through the dir: source as make run reads them."""
    source = DirectorySource(EXAMPLES)
    snapshot = source.snapshot(RepoRef("demo/blog", None, 1))
    results = source.fetch(RepoRef("demo/blog", None, 1), snapshot, snapshot.files)
    parsed: dict[str, ParsedArticle] = {}
    for result in results:
        assert isinstance(result, FetchedFile), result
        article = parse_article(result.path, result.sha, result.content)
        parsed[article.slug] = article
    return parsed


def test_every_example_article_parses() -> None:
    assert len(_articles()) == 8


def test_examples_have_drafts_and_published_articles() -> None:
    articles = _articles()
    drafts = {slug for slug, a in articles.items() if not a.publish}
    assert drafts == {"pulumi-component-resources", "zenn-markdown-cheatsheet"}


def test_examples_cover_the_formats() -> None:
    articles = _articles()
    tags = {tag for a in articles.values() for tag in a.tags}
    assert {"tech/aws/lambda", "tech/aws", "tech/python", "life"} <= tags
    # legacy category, as a string and as a list (merged with tags)
    assert articles["autumn-hike-kumotori"].tags == ("life",)
    assert articles["github-webhook-signatures"].tags == ("tech/github", "tech/python", "tech/security")
    html = "".join(a.content_html for a in articles.values())
    for needle in (
        '<aside class="msg message">',
        '<aside class="msg alert">',
        "<details><summary>",
        "<table>",
    ):
        assert needle in html
    assert '<pre class="highlight"><code class="language-python">' in html
