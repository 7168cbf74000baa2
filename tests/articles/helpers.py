"""Building article files for the parsing tests."""

from __future__ import annotations

from function.articles.parse import parse_article
from function.articles.parsed import ParsedArticle

SHA = "0" * 40


def article_bytes(front_matter: str, body: str = "Body.\n") -> bytes:
    """A file with ``front_matter`` (YAML text without the fences) and ``body``."""
    return f"---\n{front_matter}\n---\n{body}".encode()


def parse(front_matter: str, body: str = "Body.\n", *, allow_raw_html: bool = False) -> ParsedArticle:
    """Parse ``articles/hello.md`` made of ``front_matter`` and ``body``."""
    return parse_article(
        "articles/hello.md", SHA, article_bytes(front_matter, body), allow_raw_html=allow_raw_html
    )
