"""A Zenn book's files → its parsed parts, or ``ArticleParseError`` saying what is wrong.

Decisions where Zenn leaves room (its CLI's readers and validators are the reference):

* ``config.yaml`` is a YAML mapping: ``title`` (required, one line, at most 70 characters as Zenn
  says), ``summary`` (a string; may be empty, as ``zenn new:book`` writes it), ``topics`` (a list of
  strings, one level each; ``tags`` is read as for articles), ``published`` (or ``publish``: a YAML
  boolean; absent is a draft), ``chapters`` (optional: a list of chapter slugs, strings, without
  ``.md``). ``price`` is read by Zenn's shop only and ignored here, as are keys this version does not
  know (each reported once as a warning).
* Chapters are ordered by ``chapters`` when it lists any: the chapter files are ``<slug>.md`` and a file
  the list does not name is not part of the book (Zenn does not publish it either). A listed slug with
  no file is left out and the book is served with the chapters it has, in the list's order, numbered
  from 1 without gaps; ``missing_chapters`` names every one left out, each with the file expected, so
  one sync lists them all. Without ``chapters``, every chapter file is ``<number>.<slug>.md`` and the
  number orders them (ties by slug); a file not named so is left out with a warning.
* A chapter file is Markdown with front matter like an article: ``title`` is required; ``free`` is
  Zenn's paywall flag and ignored. The body is rendered by the article renderer.
* ``position`` is the chapter's place in the book, counted from 1.
* As for articles: ``config.yaml`` is at most 64 KiB of YAML and may use no alias; characters XML 1.0
  forbids are removed with a warning from every text and field; whatever goes wrong while a config or
  a chapter is read is an ``ArticleParseError`` in words, within the file's CPU budget (``one_file``).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import yaml

from function.articles import front_matter
from function.articles.book_paths import BookPath, chapter_slug_error, numbered_chapter
from function.articles.front_matter import shown
from function.articles.front_matter_fields import kind_of, tags_of, text_field
from function.articles.front_matter_yaml import (
    FASTEST_LOADER,
    MAX_FRONT_MATTER_CHARS,
    load_yaml,
    one_line,
    split_front_matter,
)
from function.articles.images import ImageResolver
from function.articles.one_file import reading_one_file
from function.articles.parse import _normalise_body, _render, read_text
from function.articles.row_size import check_row_size
from function.articles.toc import TocEntry
from function.errors import ArticleParseError, RenderLimitError

MAX_BOOK_TITLE_CHARS = 70  # Zenn's own limit
MAX_SUMMARY_CHARS = 5000
MAX_CHAPTER_TITLE_CHARS = 500
MAX_CHAPTERS = 500
KNOWN_CONFIG_KEYS = frozenset(
    {"title", "summary", "topics", "tags", "published", "publish", "price", "chapters"}
)
UNNAMED_CHAPTER = "not named <number>.<slug>.md and no 'chapters' list names it (left out)"
KNOWN_CHAPTER_KEYS = frozenset({"title", "free"})


@dataclass(frozen=True)
class BookConfig:
    """What ``config.yaml`` says, in the form it is stored (``chapter_slugs`` None: ordered by number)."""

    title: str
    summary: str
    tags: tuple[str, ...]
    publish: bool
    chapter_slugs: tuple[str, ...] | None
    warnings: tuple[str, ...] = ()

    def to_json(self) -> str:
        return json.dumps(
            {
                "title": self.title,
                "summary": self.summary,
                "tags": list(self.tags),
                "publish": self.publish,
                "chapters": None if self.chapter_slugs is None else list(self.chapter_slugs),
            },
            ensure_ascii=False,
            sort_keys=True,
            separators=(",", ":"),
        )

    @classmethod
    def from_json(cls, text: str) -> BookConfig:
        data = json.loads(text)
        chapters = data["chapters"]
        return cls(
            title=data["title"],
            summary=data["summary"],
            tags=tuple(data["tags"]),
            publish=bool(data["publish"]),
            chapter_slugs=None if chapters is None else tuple(chapters),
        )


@dataclass(frozen=True)
class ChapterPlace:
    """Where a chapter file goes in its book."""

    path: str
    slug: str
    position: int


@dataclass(frozen=True)
class ParsedChapter:
    slug: str
    path: str
    blob_sha: str
    title: str
    content: str
    content_html: str
    toc: tuple[TocEntry, ...]
    content_hash: str  # over title and body: "did it change?"
    warnings: tuple[str, ...] = ()


def parse_book_config(content: bytes) -> BookConfig:
    """Read one ``config.yaml``; ``ArticleParseError`` names what is wrong (not the path)."""
    with reading_one_file("book config"):
        return _parse_book_config(content)


def _parse_book_config(content: bytes) -> BookConfig:
    warnings: list[str] = []
    text = read_text(content, warnings)
    if len(text) > MAX_FRONT_MATTER_CHARS:
        raise ArticleParseError(
            f"config is {len(text)} characters; at most {MAX_FRONT_MATTER_CHARS} are allowed"
        )
    try:
        meta = load_yaml(text, FASTEST_LOADER, "config")
    except RenderLimitError:
        raise  # the file's CPU budget ran out: said by the file's boundary
    except (yaml.YAMLError, ValueError, TypeError, OverflowError) as exc:
        raise ArticleParseError(f"config is not valid YAML: {one_line(exc)}") from None
    if not isinstance(meta, dict):
        raise ArticleParseError(f"config must be a mapping of keys to values, not {kind_of(meta)}")
    title = text_field(
        meta, "title", MAX_BOOK_TITLE_CHARS, multiline=False, warnings=warnings, where="config"
    )
    if title is None:
        raise ArticleParseError("config: 'title' is required and must not be empty")
    summary = text_field(
        meta, "summary", MAX_SUMMARY_CHARS, multiline=True, warnings=warnings, where="config"
    )
    tags = tags_of({key: meta[key] for key in ("topics", "tags") if key in meta}, warnings)
    return BookConfig(
        title=title,
        summary=summary or "",
        tags=tags,
        publish=front_matter.publish_flag(meta),
        chapter_slugs=_chapter_list(meta.get("chapters")),
        warnings=front_matter.unknown_key_warnings(meta, KNOWN_CONFIG_KEYS, "config") + tuple(warnings),
    )


def _chapter_list(value: Any) -> tuple[str, ...] | None:
    if value is None or value == []:
        return None  # Zenn: an empty list orders by file name, as no list does
    if not isinstance(value, list) or not all(isinstance(slug, str) for slug in value):
        raise ArticleParseError(
            "config: 'chapters' must be a list of chapter slugs as strings (quote numbers: - '1234')"
        )
    if len(value) > MAX_CHAPTERS:
        raise ArticleParseError(f"config: {len(value)} chapters; at most {MAX_CHAPTERS} are allowed")
    for slug in value:
        if slug.endswith(".md"):
            raise ArticleParseError(f"config: 'chapters' lists {shown(slug)}: write the slug without '.md'")
        if (error := chapter_slug_error(slug)) is not None:
            raise ArticleParseError(f"config: 'chapters': {error}")
    if len(set(value)) != len(value):
        raise ArticleParseError("config: 'chapters' names a chapter twice")
    return tuple(value)


def place_chapters(
    config: BookConfig, chapter_files: Mapping[str, BookPath]
) -> tuple[list[ChapterPlace], list[tuple[str, str]]]:
    """The book's chapters in Zenn's order, from its config and its chapter files (repository path →
    ``BookPath``); and (path, warning) for the files left out. ``ArticleParseError`` when the files and the
    config disagree in a way that leaves the book broken (a listed chapter missing, a bad name)."""
    with reading_one_file("book"):
        return _place_chapters(config, chapter_files)


def _place_chapters(
    config: BookConfig, chapter_files: Mapping[str, BookPath]
) -> tuple[list[ChapterPlace], list[tuple[str, str]]]:
    if config.chapter_slugs is not None:
        by_slug = {path.name.removesuffix(".md"): repo_path for repo_path, path in chapter_files.items()}
        present = [slug for slug in config.chapter_slugs if slug in by_slug]
        places = [ChapterPlace(by_slug[slug], slug, number) for number, slug in enumerate(present, 1)]
        return places, []
    numbered: list[tuple[int, str, str]] = []
    warnings: list[tuple[str, str]] = []
    for repo_path, path in sorted(chapter_files.items()):
        found = numbered_chapter(path.name)
        if found is None:
            warnings.append(
                (repo_path, "not named <number>.<slug>.md and no 'chapters' list names it (left out)")
            )
            continue
        number, slug = found
        if (error := chapter_slug_error(slug)) is not None:
            raise ArticleParseError(f"{path.name}: {error}")
        numbered.append((number, slug, repo_path))
    if len(numbered) > MAX_CHAPTERS:
        raise ArticleParseError(f"{len(numbered)} chapters; at most {MAX_CHAPTERS} are allowed")
    seen: set[str] = set()
    for _, slug, _ in numbered:
        if slug in seen:
            raise ArticleParseError(f"two chapter files have the slug {shown(slug)}")
        seen.add(slug)
    numbered.sort()
    return [ChapterPlace(path, slug, place) for place, (_, slug, path) in enumerate(numbered, 1)], warnings


def missing_chapters(
    config: BookConfig, chapter_files: Mapping[str, BookPath], folder: str
) -> list[tuple[str, str]]:
    """(the file expected, why and the fix) for every chapter ``chapters`` lists whose file is not in
    ``folder`` (the book's repository folder, ``books/<slug>``), in the list's order: the book is served
    without them."""
    if config.chapter_slugs is None:
        return []
    present = {path.name.removesuffix(".md") for path in chapter_files.values()}
    # Each listed slug passed chapter_slug_error: at most 50 plain characters.
    return [
        (
            f"{folder}/{slug}.md",
            f"config.yaml's 'chapters' lists {slug!r} but there is no {slug}.md: the book is served "
            f"without it (add {folder}/{slug}.md, or take {slug!r} out of 'chapters')",
        )
        for slug in config.chapter_slugs
        if slug not in present
    ]


def parse_chapter(
    path: str,
    slug: str,
    blob_sha: str,
    content: bytes,
    *,
    allow_raw_html: bool = False,
    asset_base_url: str | None = None,
    resolve_image: ImageResolver | None = None,
) -> ParsedChapter:
    """Parse one chapter file: front matter with a ``title``, and a Markdown body rendered as an
    article's. ``ArticleParseError`` names what is wrong (not the path)."""
    with reading_one_file("chapter"):
        return _parse_chapter(path, slug, blob_sha, content, allow_raw_html, asset_base_url, resolve_image)


def _parse_chapter(
    path: str,
    slug: str,
    blob_sha: str,
    content: bytes,
    allow_raw_html: bool,
    asset_base_url: str | None,
    resolve_image: ImageResolver | None,
) -> ParsedChapter:
    warnings: list[str] = []
    meta, body = split_front_matter(read_text(content, warnings), FASTEST_LOADER)
    title = text_field(meta, "title", MAX_CHAPTER_TITLE_CHARS, multiline=False, warnings=warnings)
    if title is None:
        raise ArticleParseError("front matter: 'title' is required and must not be empty")
    markdown = _normalise_body(body)
    rendered = _render(markdown, allow_raw_html, asset_base_url, resolve_image)
    check_row_size("chapter", markdown, rendered.html, rendered.toc, (title, path, slug, blob_sha))
    unknown = front_matter.unknown_key_warnings(meta, KNOWN_CHAPTER_KEYS, "front matter")
    return ParsedChapter(
        slug=slug,
        path=path,
        blob_sha=blob_sha,
        title=title,
        content=markdown,
        content_html=rendered.html,
        toc=rendered.toc,
        content_hash=_hash({"title": title, "content": markdown}),
        warnings=unknown + tuple(warnings) + rendered.warnings,
    )


def book_hash(config: BookConfig, cover: str | None, chapters: Sequence[tuple[str, int, str]]) -> str:
    """sha256 over what readers see of a book: its config, cover and (slug, position, chapter hash)s,
    so ``updatedAt`` moves only when one of them changed."""
    return _hash({"config": config.to_json(), "cover": cover, "chapters": [list(c) for c in chapters]})


def _hash(fields: Mapping[str, Any]) -> str:
    canonical = json.dumps(fields, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(canonical.encode("utf-8", "surrogatepass")).hexdigest()
