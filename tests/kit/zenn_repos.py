"""A generated Zenn-shaped repository, as a new user brings it: articles without dates under Zenn's random
slugs, images, books (one whose config lists chapters that were never written), a README, drafts, and a
git history that added the files over the years, with a rename."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path

from tests.kit.git_repos import GitRepo
from tests.kit.images import png

START = datetime(2019, 4, 1, 12, 0, tzinfo=UTC)


def zenn_slug(n: int) -> str:
    """A slug like the ones ``zenn new:article`` makes: 14 lower-case hex characters."""
    return hashlib.sha256(f"article-{n}".encode()).hexdigest()[:14]


@dataclass
class ZennRepository:
    repo: GitRepo
    # slug -> naive UTC time its file was added (renames followed), for the published articles
    published: dict[str, datetime] = field(default_factory=dict)
    drafts: list[str] = field(default_factory=list)
    # book slug -> the chapter slugs that exist, in the config's order
    books: dict[str, list[str]] = field(default_factory=dict)
    # book slug -> the chapter files its config lists that do not exist
    missing_chapters: dict[str, list[str]] = field(default_factory=dict)

    @property
    def root(self) -> Path:
        return self.repo.root


def article(title: str, *, image: str | None = None, published: bool = True) -> str:
    """Front matter as ``zenn new:article`` writes it: no date."""
    body = f"{title} の本文です。\n\n## はじめに\n\nZenn で書いた記事。\n"
    if image:
        body += f"\n![図](/images/{image})\n"
    return (
        "---\n"
        f'title: "{title}"\n'
        'emoji: "📝"\n'
        'type: "tech"\n'
        "topics: [python, aws]\n"
        f"published: {'true' if published else 'false'}\n"
        "---\n\n" + body
    )


def chapter(title: str) -> str:
    return f'---\ntitle: "{title}"\n---\n\n{title} の章。\n'


def generate(root: Path, *, articles: int = 40, drafts: int = 2) -> ZennRepository:
    """Commit ``articles`` published articles (each its own commit, a week apart, the first renamed
    once), ``drafts`` drafts, images, and two books: ``short-guide-book`` with every chapter, and
    ``long-course-book`` whose config lists 100 chapters of which 27 exist."""
    made = ZennRepository(GitRepo(root))
    repo = made.repo
    repo.commit(
        START,
        {"README.md": "# My Zenn contents\n", ".gitignore": "node_modules\n", "images/logo.png": png()},
        message="zenn init",
    )
    when = START
    for n in range(articles):
        when = START + timedelta(days=7 * (n + 1), hours=n % 5)
        slug = zenn_slug(n)
        files: dict[str, str | bytes] = {}
        image = None
        if n % 3 == 0:
            image = f"{slug}/figure.png"
            files[f"images/{image}"] = png((n * 5 % 256, 80, 160))
        files[f"articles/{slug}.md"] = article(f"記事 {n}", image=image)
        repo.commit(when, files, message=f"add article {n}")
        made.published[slug] = when.astimezone(UTC).replace(tzinfo=None)
    # A rename keeps the first name's date.
    first, renamed = zenn_slug(0), "renamed-first-article"
    when += timedelta(days=3)
    repo.commit(when, rename={f"articles/{first}.md": f"articles/{renamed}.md"}, message="rename")
    made.published[renamed] = made.published.pop(first)
    for n in range(drafts):
        slug = zenn_slug(1000 + n)
        when += timedelta(days=1)
        repo.commit(when, {f"articles/{slug}.md": article(f"下書き {n}", published=False)})
        made.drafts.append(slug)
    when += timedelta(days=1)
    short = ["introduction", "setup", "deploy"]
    repo.commit(
        when,
        {
            "books/short-guide-book/config.yaml": _config("短いガイド", short),
            "books/short-guide-book/cover.png": png((10, 200, 10)),
            **{f"books/short-guide-book/{c}.md": chapter(c) for c in short},
        },
        message="short book",
    )
    made.books["short-guide-book"] = short
    listed = [f"lesson-{n:03d}" for n in range(1, 101)]
    written = listed[::4] + listed[1:6:4]  # 27 of the 100
    when += timedelta(days=1)
    repo.commit(
        when,
        {
            "books/long-course-book/config.yaml": _config("長い講座", listed),
            **{f"books/long-course-book/{c}.md": chapter(c) for c in written},
        },
        message="long book, started",
    )
    made.books["long-course-book"] = [c for c in listed if c in written]
    made.missing_chapters["long-course-book"] = [c for c in listed if c not in written]
    return made


def _config(title: str, chapters: list[str]) -> str:
    listed = "".join(f"  - {slug}\n" for slug in chapters)
    return f'title: "{title}"\nsummary: ""\ntopics: [python]\npublished: true\nprice: 0\nchapters:\n{listed}'
