"""A sync writes in bounded transactions: none holds more than a batch's articles and bytes (TiDB refuses
a transaction over 100 MiB), and what a cut-short sync committed is kept and not fetched again."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

import pytest

from function.articles.parsed import ParsedArticle
from function.store.batching import TRANSACTION_MAX_BYTES, article_bytes, transaction_batches
from function.worker.sync import Worker
from tests.kit.blog_fixtures import USER, Blog, article


class CutShort(Exception):
    """The run stopped there (a Lambda time-out kills the process at any point)."""


class RecordingWrites:
    """The store's reconcile part, with each ``apply``'s articles and archived slugs recorded; ``fail_on``
    makes that call raise, as a Lambda time-out or a dropped connection would cut the run short there."""

    def __init__(self, reconcile: Any, fail_on: int | None) -> None:
        self._reconcile = reconcile
        self._fail_on = fail_on
        self.batches: list[list[Any]] = []
        self.archived: list[list[str]] = []

    def apply(
        self,
        user_id: int,
        articles: Sequence[ParsedArticle],
        archive_slugs: Sequence[str],
        now: datetime,
        *,
        index: Mapping[str, Any],
        render_fingerprint: str | None = None,
        reindex: bool = False,
    ) -> Any:
        self.batches.append(list(articles))
        self.archived.append(list(archive_slugs))
        if len(self.batches) == self._fail_on:
            raise CutShort
        return self._reconcile.apply(
            user_id,
            articles,
            archive_slugs,
            now,
            index=index,
            render_fingerprint=render_fingerprint,
            reindex=reindex,
        )

    def __getattr__(self, name: str) -> Any:
        return getattr(self._reconcile, name)


class RecordingStore:
    """The real store, its reconcile part recording (``RecordingWrites``)."""

    def __init__(self, store: Any, fail_on: int | None = None) -> None:
        self._store = store
        self.reconcile = RecordingWrites(store.reconcile, fail_on)

    @property
    def batches(self) -> list[list[Any]]:
        return self.reconcile.batches

    @property
    def archived(self) -> list[list[str]]:
        return self.reconcile.archived

    def __getattr__(self, name: str) -> Any:
        return getattr(self._store, name)


def test_batches_are_bounded_by_count_and_bytes() -> None:
    class A:
        def __init__(self, size: int) -> None:
            self.content, self.content_html, self.title, self.description, self.path = (
                "x" * size,
                "",
                "t",
                None,
                "p",
            )
            self.slug, self.thumbnail, self.toc, self.tags = "p", None, (), ()

    # 20,000 articles of 5.75 KB: the 115 MB first sync
    articles = [A(5750) for _ in range(20_000)]
    batches = list(transaction_batches(articles))

    assert sum(len(b) for b in batches) == 20_000
    assert max(sum(article_bytes(a) for a in b) for b in batches) <= TRANSACTION_MAX_BYTES
    assert max(sum(article_bytes(a) for a in b) for b in batches) < 100 * 1024 * 1024 // 10
    assert len(batches) == 20  # 1,000 articles (6.3 MB) each


def test_a_sync_writes_in_batches_and_a_cut_short_one_keeps_its_progress(blog: Blog) -> None:
    blog.commit({f"articles/a{i:02}.md": article(f"A{i}", body="b" * 2000) for i in range(10)})

    with blog.store() as store:
        cut = RecordingStore(store, fail_on=3)
        worker = Worker(cut, blog.source, batch_max_articles=4, batch_max_bytes=10 * 1024 * 1024)
        with pytest.raises(CutShort):
            worker.sync_user(USER, repository=None)
    assert [len(b) for b in cut.batches] == [4, 4, 2]
    assert len(blog.articles(limit="100")) == 8  # two batches committed and served

    blog.github.reset_records()
    with blog.store() as store:
        again = RecordingStore(store)
        summary = Worker(again, blog.source, batch_max_articles=4).sync_user(USER)

    assert summary.succeeded == 10 and summary.fetched == 2  # only the two left over
    assert len(blog.articles(limit="100")) == 10
    assert blog.github.count("blob") <= 2


def test_bytes_bound_the_batch_too(blog: Blog) -> None:
    blog.commit({f"articles/b{i}.md": article(f"B{i}", body="c" * 30_000) for i in range(5)})

    with blog.store() as store:
        recording = RecordingStore(store)
        Worker(recording, blog.source, batch_max_bytes=70_000).sync_user(USER)

    assert [len(b) for b in recording.batches] == [1, 1, 1, 1, 1]  # each ~60 KB of text with its HTML
    assert all(sum(article_bytes(a) for a in b) <= 70_000 for b in recording.batches)


def test_a_mass_delete_archives_in_bounded_transactions(blog: Blog) -> None:
    # GIVEN ten synced articles
    blog.commit({f"articles/c{i}.md": article(f"C{i}") for i in range(10)})
    with blog.store() as store:
        Worker(store, blog.source).sync_user(USER)

    # WHEN seven are deleted and at most three may be archived per transaction (TiDB rewrites whole rows)
    blog.commit({f"articles/c{i}.md": None for i in range(7)})
    with blog.store() as store:
        recording = RecordingStore(store)
        summary = Worker(recording, blog.source, archive_max_articles=3).sync_user(USER)

    # THEN three transactions archived them, none more than three, and three articles are still served
    assert [len(a) for a in recording.archived] == [3, 3, 1]
    assert summary.archived == 7
    assert sorted(a["slug"] for a in blog.articles()) == ["c7", "c8", "c9"]


def test_a_mass_delete_of_long_articles_is_cut_by_the_bytes_of_their_rows(blog: Blog) -> None:
    # GIVEN six synced articles whose rows hold 15 KB (a description of 5,000 Japanese characters) and
    # two short ones
    description = "見" * 5_000
    front = f'publish: true\ndescription: "{description}"\n---\nBody.\n'
    files = {f"articles/d{i}.md": f'---\ntitle: "D{i}"\n{front}'.encode() for i in range(6)}
    blog.commit({**files, "articles/e0.md": article("E0"), "articles/e1.md": article("E1")})
    with blog.store() as store:
        Worker(store, blog.source).sync_user(USER)
        user = store.users.get_user(USER)
        assert user is not None
        sizes = store.reconcile.row_bytes(user.id, [f"d{i}" for i in range(6)] + ["e0", "e1"])
    assert all(15_000 < sizes[f"d{i}"] < 17_000 for i in range(6))

    # WHEN all eight are deleted, with at most 35 KB of rows archived per transaction (TiDB rewrites
    # each whole row to set its flag)
    blog.commit({**dict.fromkeys(files), "articles/e0.md": None, "articles/e1.md": None})
    with blog.store() as store:
        recording = RecordingStore(store)
        summary = Worker(recording, blog.source, archive_max_bytes=35_000).sync_user(
            USER, confirm_removal=True
        )

    # THEN no transaction archived more than 35 KB of rows, and all eight were archived
    groups = [group for group in recording.archived if group]
    assert all(sum(sizes[slug] for slug in group) <= 35_000 for group in groups)
    assert [len(group) for group in groups] == [2, 2, 4]  # two long ones each, the short ones beside
    assert summary.archived == 8
    assert blog.articles() == []
