"""One sync's images pass, on fakes of its records and fetcher: what each ``finish`` writes."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path

from function.assets.folder import FolderAssetStore
from function.assets.keys import asset_key, content_sha256
from function.assets.kinds import PNG
from function.assets.syncing import AssetSync
from function.sources.gitsha import git_blob_sha
from function.sources.port import FetchedFile, FetchResult, RepoFile, RepoRef, Snapshot
from function.store.asset_records import References, StoredAsset
from tests.kit import images

T0 = datetime(2026, 12, 1, tzinfo=UTC)
REPO = RepoRef("alice/blog", "main")
CAT, COVER = images.png((255, 0, 0)), images.png((0, 0, 255))


class Saves:
    """The records: nothing stored before; each ``save`` kept as it was called."""

    def __init__(self) -> None:
        self.calls: list[tuple[list[str], dict[str, dict[str, str | None]], list[str]]] = []

    def load(self, user_id: int) -> tuple[Mapping[str, StoredAsset], Mapping[str, Mapping[str, str | None]]]:
        return {}, {}

    def save(
        self,
        user_id: int,
        assets: Sequence[StoredAsset],
        references: References,
        *,
        gone: Sequence[str] = (),
        now: datetime,
    ) -> None:
        self.calls.append(
            (sorted(a.path for a in assets), {k: dict(v) for k, v in references.items()}, list(gone))
        )


class Files:
    """The repository's bytes by path."""

    def __init__(self, contents: dict[str, bytes]) -> None:
        self.contents = contents

    def fetch(
        self,
        repo: RepoRef,
        snapshot: Snapshot,
        files: Sequence[RepoFile],
        *,
        wanted_in_all: int | None = None,
    ) -> list[FetchResult]:
        return [FetchedFile(f.path, f.sha, self.contents[f.path]) for f in files]


def listed(contents: dict[str, bytes]) -> Snapshot:
    others = tuple(RepoFile(path, git_blob_sha(data), len(data)) for path, data in contents.items())
    return Snapshot("h" * 40, (), others=others)


def test_a_second_finish_writes_only_what_was_stored_after_the_first(tmp_path: Path) -> None:
    # GIVEN a pass that stored an article's image and finished, as the articles' part of a sync does
    contents = {"images/cat.png": CAT, "books/intro/cover.png": COVER}
    records = Saves()
    sync = AssetSync(records, FolderAssetStore(tmp_path), Files(contents))
    images = sync.start(1)
    snapshot = listed(contents)
    images.prepare(REPO, snapshot)
    pets = images.images_for("articles/pets.md")
    assert pets.resolve("/images/cat.png") == f"asset:{asset_key(content_sha256(CAT), PNG)}"
    images.record("pets", pets)
    images.finish(T0, complete=True)
    # WHEN a book's cover resolves afterwards and the pass finishes again
    cover = images.images_for("books/intro/config.yaml").resolve("/books/intro/cover.png")
    images.finish(T0, complete=True)
    # THEN the cover's row is written by the second finish, and nothing of the first is written twice
    assert cover == f"asset:{asset_key(content_sha256(COVER), PNG)}"
    assert records.calls == [
        (["images/cat.png"], {"pets": {"images/cat.png": git_blob_sha(CAT)}}, []),
        (["books/intro/cover.png"], {}, []),
    ]
    # AND a third finish with nothing new writes nothing
    images.finish(T0, complete=True)
    assert len(records.calls) == 2
