"""The sync's plan, on its own: a tree listing diffed with what the database knows, no database needed."""

from __future__ import annotations

from function.sources.port import RepoFile, Snapshot
from function.store.records import RememberedFailure, StoredArticle
from function.worker.sync.plan import Known, Planner
from tests.kit.builders import T0


def stored(slug: str, blob_sha: str, *, archived: bool = False) -> StoredArticle:
    return StoredArticle(
        id=1,
        slug=slug,
        path=f"articles/{slug}.md",
        blob_sha=blob_sha,
        content_hash="h",
        archived=archived,
        published_at=T0,
        created_at=T0,
        updated_at=T0,
        tags_hash="",
        publish=True,
    )


def listing(*files: tuple[str, str, int]) -> Snapshot:
    return Snapshot("head", tuple(RepoFile(path, sha, size) for path, sha, size in files))


def test_only_new_changed_or_archived_files_are_read() -> None:
    # GIVEN a listing of five files, and a database that has three of them, one archived
    snapshot = listing(
        ("articles/same.md", "s1", 10),
        ("articles/edited.md", "e2", 10),
        ("articles/back.md", "b1", 10),
        ("articles/new.md", "n1", 10),
        ("README.md", "r1", 10),
    )
    known = Known(
        {
            "same": stored("same", "s1"),
            "edited": stored("edited", "e1"),
            "back": stored("back", "b1", archived=True),
        },
        {},
    )

    # WHEN the sync plans
    plan = Planner("articles").plan(snapshot, known)

    # THEN the unchanged file is not read, the others are, and the README is no article
    assert [f.path for f in plan.changed] == ["articles/edited.md", "articles/back.md", "articles/new.md"]
    assert plan.slugs == {"same", "edited", "back", "new"}
    assert plan.failures == [] and plan.badly_named == 0


def test_a_file_broken_at_the_same_blob_is_reported_unread_and_rebuild_reads_it() -> None:
    snapshot = listing(("articles/broken.md", "x1", 10), ("articles/bad name.md", "y1", 10))
    known = Known({}, {"broken": RememberedFailure("broken", "articles/broken.md", "x1", "bad YAML")})

    plan = Planner("articles").plan(snapshot, known)
    rebuilt = Planner("articles").plan(snapshot, known, rebuild=True)

    assert plan.changed == []
    assert [(f.path, f.message, f.remembered) for f in plan.failures][1:] == [
        ("articles/broken.md", "bad YAML", True)
    ]
    assert plan.badly_named == 1 and plan.failures[0].path == "articles/bad name.md"
    assert [f.path for f in rebuilt.changed] == ["articles/broken.md"]


def test_the_chunks_are_planned_once_by_the_listed_sizes() -> None:
    snapshot = listing(*((f"articles/a{i}.md", f"sha{i}", 400) for i in range(5)))

    plan = Planner("articles", chunk_max_files=3, chunk_max_bytes=1000).plan(snapshot, Known({}, {}))

    assert [[f.path[-6:] for f in chunk] for chunk in plan.chunks] == [
        ["/a0.md", "/a1.md"],
        ["/a2.md", "/a3.md"],
        ["/a4.md"],
    ]
    assert [f for chunk in plan.chunks for f in chunk] == plan.changed
