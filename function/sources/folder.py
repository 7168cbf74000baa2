"""The ``dir:PATH`` article source: a local folder read as if it were the repository.

It lists and fetches the same paths with the same blob SHAs as the GitHub source would for the same files
committed to git, so the worker cannot tell the two apart (used by ``make run`` and the tests).

Decisions:

* ``dir:PATH`` names the repository's root: ``PATH/<articles_dir>/*.md`` are the articles. When ``PATH``
  is itself the articles folder of a repository (``PATH`` is ``<parent>/<articles_dir>`` and the parent
  is a git work tree or holds Zenn's ``books/`` or ``images/``), the parent is the root: the books and
  images are found, and image paths resolve as on GitHub. Any other folder without an articles folder
  but with ``*.md`` files is read as a bare folder of articles (no books, no images). Repository paths
  are ``<articles_dir>/<name>.md`` either way; ``layout().described`` says which reading was taken.
* Only regular files count; symlinked files are skipped, as the GitHub source skips symlink blobs (git
  stores the link, not the file). The root and the articles folder may be symlinks, but no file outside
  the resolved root is ever read.
* ``<root>/books/<slug>/`` holds Zenn books: their config, chapter and cover files are listed as
  ``book_files`` (``function.articles.book_paths`` says which), under the same rules.
* When the folder is in a git work tree, each article's ``added_at`` is the author date of the commit
  that added its file, renames followed (one ``git log`` per listing: ``function.sources.git_history``).
  Files never committed have none.
* ``head_sha`` is a SHA-1 over the sorted ``(path, blob sha)`` list: it changes exactly when an article
  or book file is added, removed or edited, and needs no git.
* The other files (``Snapshot.others``, where images come from) are every regular file under the root
  outside dot-folders that is not an article (books' files included).
"""

from __future__ import annotations

import hashlib
import logging
import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path, PurePosixPath

from function.articles.book_paths import BOOKS_DIR, is_book_path
from function.articles.parse import is_article_path
from function.errors import SourceUnavailable
from function.sources.git_history import added_dates
from function.sources.gitsha import git_blob_sha
from function.sources.port import FetchedFile, FetchFailure, FetchResult, RepoFile, RepoRef, Snapshot

log = logging.getLogger(__name__)


class DirectorySource:
    """``ArticleSource`` over a local folder; ``repo`` arguments are ignored."""

    def __init__(self, root: Path, articles_dir: str = "articles") -> None:
        self.root = Path(root)
        self.articles_dir = articles_dir.strip("/")
        self._said: str | None = None  # the layout last logged: said once, and again when it changes

    def snapshot(self, repo: RepoRef) -> Snapshot:
        """List the article files now. Raises ``SourceUnavailable`` when the root cannot be read."""
        layout = self.layout()
        if layout.described != self._said:
            self._said = layout.described
            log.info("Article folder", extra={"folder": str(self.root), "reading": layout.described})
        root, folder = layout.root, layout.articles
        try:
            names = sorted(entry.name for entry in os.scandir(folder))
        except OSError as exc:
            raise SourceUnavailable(f"cannot list {folder}: {exc.strerror or exc}") from None
        files = []
        for name in names:
            path = self._repo_path(name)
            if not is_article_path(path, self.articles_dir) or not _is_utf8(name):
                continue
            data = _read_regular_file(root, folder / name)
            if data is not None:
                files.append(RepoFile(path=path, sha=git_blob_sha(data)))
        book_files = self._book_files(root)
        others = _other_files(root, {f.path for f in files})
        return Snapshot(
            head_sha=_head_sha([*files, *others]),
            files=tuple(files),
            complete=True,
            book_files=tuple(book_files),
            others=others,
            added_at=self._added_at(root, folder, {f.path for f in files}),
        )

    def binding(self) -> str:
        """What a user synced from this folder is bound to (``function.worker.sync.binding``): ``dir:`` and
        the repository's resolved root, the same whether ``dir:`` names the root or its articles folder."""
        return f"dir:{self.layout().root}"

    def history(self) -> dict[str, datetime]:
        """Each article's time of addition from the git history (repository path -> naive UTC), as a
        snapshot would list it, without reading the files; empty outside a git work tree."""
        layout = self.layout()
        try:
            names = sorted(entry.name for entry in os.scandir(layout.articles) if entry.is_file())
        except OSError as exc:
            raise SourceUnavailable(f"cannot list {layout.articles}: {exc.strerror or exc}") from None
        paths = {self._repo_path(name) for name in names if _is_utf8(name)}
        return self._added_at(
            layout.root, layout.articles, {p for p in paths if is_article_path(p, self.articles_dir)}
        )

    def _added_at(self, root: Path, folder: Path, paths: set[str]) -> dict[str, datetime]:
        """The listed articles' dates from the git history of their folder (one ``git log``): keyed by
        repository path, also for a bare folder of articles, whose files sit at its top."""
        if not paths:
            return {}
        inside = folder.relative_to(root).as_posix()
        dates = added_dates(root, [inside])
        prefix = "" if inside == "." else inside + "/"
        found = {}
        for path, when in dates.items():
            name = path.removeprefix(prefix)
            if "/" not in name and (repo_path := self._repo_path(name)) in paths:
                found[repo_path] = when
        return found

    def _book_files(self, root: Path) -> list[RepoFile]:
        books = root / BOOKS_DIR
        if books.is_symlink() or not books.is_dir():
            return []
        files = []
        try:
            folders = sorted(entry.name for entry in os.scandir(books) if entry.is_dir(follow_symlinks=False))
            for folder in folders:
                for name in sorted(entry.name for entry in os.scandir(books / folder)):
                    path = f"{BOOKS_DIR}/{folder}/{name}"
                    if not is_book_path(path) or not _is_utf8(path):
                        continue
                    data = _read_regular_file(root, root / path)
                    if data is not None:
                        files.append(RepoFile(path=path, sha=git_blob_sha(data), size=len(data)))
        except OSError as exc:
            raise SourceUnavailable(f"cannot list {books}: {exc.strerror or exc}") from None
        return files

    def fetch(
        self,
        repo: RepoRef,
        snapshot: Snapshot,
        files: Sequence[RepoFile],
        *,
        wanted_in_all: int | None = None,
    ) -> list[FetchResult]:
        """Read ``files``. A file that is gone, unreadable, or changed since ``snapshot`` yields a
        non-retryable ``FetchFailure`` (the next sync sees its new state); this never raises."""
        return list(self.fetch_stream(repo, snapshot, files, wanted_in_all=wanted_in_all))

    def fetch_stream(
        self,
        repo: RepoRef,
        snapshot: Snapshot,
        files: Sequence[RepoFile],
        *,
        wanted_in_all: int | None = None,
    ) -> Iterator[FetchResult]:
        """``fetch``, one file read at a time, in the order given."""
        try:
            root, folder = self._folders()
        except SourceUnavailable as exc:
            yield from (FetchFailure(f.path, f.sha, str(exc), retryable=False) for f in files)
            return
        for file in files:
            yield self._fetch_one(root, folder, file)

    def _fetch_one(self, root: Path, folder: Path, file: RepoFile) -> FetchResult:
        if is_book_path(file.path):
            data = _read_regular_file(root, root / file.path)
        elif is_article_path(file.path, self.articles_dir):
            data = _read_regular_file(root, folder / file.path.rsplit("/", 1)[-1])
        elif _is_plain_path(file.path):
            # Another file of the tree (an image): read under the root, never outside it.
            data = _read_regular_file(root, root / file.path)
        else:
            return FetchFailure(file.path, file.sha, "not a path of this source", retryable=False)
        if data is None:
            return FetchFailure(file.path, file.sha, "file is gone or cannot be read", retryable=False)
        if git_blob_sha(data) != file.sha:
            # GitHub serves a blob by its SHA, so its content always matches; match that here.
            return FetchFailure(file.path, file.sha, "file changed since the listing", retryable=False)
        return FetchedFile(path=file.path, sha=file.sha, content=data)

    def _repo_path(self, name: str) -> str:
        return f"{self.articles_dir}/{name}" if self.articles_dir else name

    def _folders(self) -> tuple[Path, Path]:
        """(resolved root, folder holding the articles)."""
        layout = self.layout()
        return layout.root, layout.articles

    def layout(self) -> FolderLayout:
        """Where the repository's root and its articles are, as read now. Raises ``SourceUnavailable``
        when the folder does not exist or is not a directory."""
        try:
            given = self.root.resolve(strict=True)
        except (OSError, RuntimeError) as exc:
            raise SourceUnavailable(f"article folder {self.root} does not exist or cannot be read") from exc
        if not given.is_dir():
            raise SourceUnavailable(f"article folder {self.root} is not a directory")
        if not self.articles_dir:
            return FolderLayout(given, given, "repository")
        folder = given / self.articles_dir
        if folder.is_dir():
            return FolderLayout(given, folder, "repository")
        if folder.exists():
            raise SourceUnavailable(f"{folder} is not a directory")
        parent = _repository_above(given, self.articles_dir)
        if parent is not None:
            return FolderLayout(parent, given, "articles folder")
        # dir: may point straight at a folder of articles. Without any *.md either, the repository simply
        # has no articles (an empty listing, as GitHub would give).
        return FolderLayout(given, given, "bare folder")


@dataclass(frozen=True)
class FolderLayout:
    """How ``dir:PATH`` is read: the repository's root, the folder of its articles, and which of the three
    readings was taken ("repository": PATH is the root; "articles folder": PATH is the root's articles
    folder; "bare folder": PATH is a folder of articles outside any repository)."""

    root: Path
    articles: Path
    reading: str

    @property
    def described(self) -> str:
        """One line for the person who named the folder: which folder is read as what."""
        if self.reading == "articles folder":
            return (
                f"{self.articles} is the articles folder of the repository at {self.root}: "
                f"reading the repository (articles, books and images)"
            )
        if self.reading == "bare folder":
            return (
                f"reading {self.root} as a folder of articles (it has no articles/ folder and is in no "
                "repository that has one): no books or images are read"
            )
        return f"reading the repository at {self.root} (articles in {self.articles})"


def _repository_above(folder: Path, articles_dir: str) -> Path | None:
    """The root whose ``articles_dir`` is ``folder``, when that root looks like a repository (a git work
    tree, or Zenn's books/ or images/ beside the articles); else None. A plain folder that happens to be
    called "articles" (say in the home directory) is never widened to its parent."""
    depth = len(PurePosixPath(articles_dir).parts)
    if depth >= len(folder.parts):
        return None
    candidate = folder.parents[depth - 1]
    try:
        if (candidate / articles_dir).resolve(strict=True) != folder:
            return None
    except (OSError, RuntimeError):
        return None
    markers = (".git", BOOKS_DIR, "images")
    return candidate if any((candidate / marker).exists() for marker in markers) else None


def _read_regular_file(root: Path, candidate: Path) -> bytes | None:
    """The bytes of ``candidate`` when it is a regular file (not a symlink) inside ``root``, else None."""
    try:
        if candidate.is_symlink() or not candidate.is_file():
            return None
        if not candidate.resolve(strict=True).is_relative_to(root):
            # The articles folder itself is a symlink pointing out of the root.
            return None
        return candidate.read_bytes()
    except (OSError, RuntimeError):
        # Vanished between listing and reading, permission denied, a symlink loop: not an article now.
        return None


def _other_files(root: Path, articles: set[str]) -> tuple[RepoFile, ...]:
    """Every other regular file under ``root`` (dot-folders such as ``.git`` skipped), as a tree listing
    would show it: the images of ``function.assets`` come from these."""
    found = []
    for folder, subfolders, names in os.walk(root):
        subfolders[:] = sorted(d for d in subfolders if not d.startswith("."))
        for name in sorted(names):
            candidate = Path(folder) / name
            path = candidate.relative_to(root).as_posix()
            if path in articles or name.startswith(".") or not _is_utf8(path):
                continue
            data = _read_regular_file(root, candidate)
            if data is not None:
                found.append(RepoFile(path=path, sha=git_blob_sha(data), size=len(data)))
    return tuple(found)


def _is_plain_path(path: str) -> bool:
    parts = path.split("/")
    return bool(path) and not path.startswith("/") and all(p not in ("", ".", "..") for p in parts)


def _is_utf8(name: str) -> bool:
    # A file name that is not UTF-8 arrives with surrogate escapes; git hosts have none and the store
    # cannot hold one, so it is not an article.
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _head_sha(files: Sequence[RepoFile]) -> str:
    digest = hashlib.sha1(usedforsecurity=False)
    for file in sorted(files, key=lambda f: f.path):
        digest.update(f"{file.sha} {file.path}\n".encode())
    return digest.hexdigest()
