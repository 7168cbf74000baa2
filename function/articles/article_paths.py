"""Which repository files are articles, and the slug an article's file name gives.

The rules are in ``function.articles.parse``'s module docstring: direct children ``<articles_dir>/<name>.md``
that are not ignored (``README.md``, ``.hidden.md``, ``_draft.md``), and a slug from RFC 3986's unreserved
set, at most ``MAX_SLUG_CHARS`` characters.
"""

from __future__ import annotations

import re

from function.articles.ignored import is_ignored_name
from function.errors import ArticleParseError

MAX_SLUG_CHARS = 190

_SLUG_RE = re.compile(r"[A-Za-z0-9_~-][A-Za-z0-9._~-]*")


def is_article_path(path: str, articles_dir: str = "articles") -> bool:
    """True when ``path`` is a direct child ``<articles_dir>/<name>.md``: the listing filter.

    It is the same rule the GitHub source applies to the tree listing, and it keeps files whose name is not
    a valid slug (``hello world.md``): ``parse_article`` then fails them with a message. Files that are
    not articles (``is_ignored_name``: ``README.md``, ``.hidden.md``, ``_draft.md``) are left out.
    """
    name = _name_in_dir(path, articles_dir)
    return name is not None and name.endswith(".md") and not is_ignored_name(name)


def slug_for_path(path: str, articles_dir: str = "articles") -> str | None:
    """The slug of ``<articles_dir>/<slug>.md`` when it is a direct child with a valid slug, else None
    (also for files that are not articles)."""
    if not is_article_path(path, articles_dir):
        return None
    try:
        return slug_of(path, articles_dir)
    except ArticleParseError:
        return None


def _name_in_dir(path: str, articles_dir: str) -> str | None:
    folder = articles_dir.strip("/")
    prefix = f"{folder}/" if folder else ""
    if not path.startswith(prefix):
        return None
    name = path[len(prefix) :]
    return name if name and "/" not in name else None


def slug_of(path: str, articles_dir: str) -> str:
    name = _name_in_dir(path, articles_dir)
    if name is None or not name.endswith(".md"):
        raise ArticleParseError(f"not an article path: expected {articles_dir.strip('/')}/<slug>.md")
    slug = name[: -len(".md")]
    if not slug:
        raise ArticleParseError("empty slug: the file is named '.md'")
    if len(slug) > MAX_SLUG_CHARS:
        raise ArticleParseError(f"slug is {len(slug)} characters long; at most {MAX_SLUG_CHARS} are allowed")
    if not _SLUG_RE.fullmatch(slug):
        raise ArticleParseError(
            "slug may only contain ASCII letters, digits, '-', '_', '.', '~' and must not start with '.'"
        )
    return slug
