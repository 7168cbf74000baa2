"""The GitHub App adapter of the article source port (``function.sources.port.ArticleSource``).

Cost model, which the benchmark and the tests hold it to (requests after the installation token):

- ``snapshot``: 2 requests (head SHA of the branch, one recursive tree listing), 3 when the branch is the
  repository's default and must be looked up first. Never one request per article.
- ``fetch`` of k files: k blob requests (fewer when files share content), at most ``max_workers`` at once;
  or, when most of a large repository is wanted (first sync), 1 tarball request plus blob requests only
  for what the tarball did not deliver intact.

Every byte handed out has been checked against its git blob SHA, so a corrupted or substituted answer is
a failure, never wrong content in the database.
"""

from __future__ import annotations

import logging
import re
import tarfile
import zlib
from collections.abc import Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Protocol
from urllib.parse import quote

from function.articles.book_paths import is_book_path
from function.articles.ignored import is_ignored_name
from function.errors import BodyTooLarge, HttpError, SourcePermanentError, SourceUnavailable
from function.github.app_auth import API_VERSION, GITHUB_JSON, is_rate_limited
from function.github.http import CappedReader, HttpClient, HttpResponse
from function.sources import tar_stream
from function.sources.github_answers import json_blob_content, tree_blob
from function.sources.gitsha import git_blob_sha
from function.sources.port import FetchedFile, FetchFailure, FetchResult, RepoFile, RepoRef, Snapshot

logger = logging.getLogger(__name__)

SHA_MEDIA_TYPE = "application/vnd.github.sha"
RAW_MEDIA_TYPE = "application/vnd.github.raw"
# The parser's limit for one article (function.articles.parse.MAX_FILE_BYTES; not imported, so the
# source does not load the Markdown renderer): nothing larger is downloaded.
MAX_ARTICLE_FILE_BYTES = 1024 * 1024
# The tarball as read from GitHub, and the contents kept from it: beyond, the rest goes by blob.
MAX_TARBALL_BYTES = 64 * 1024 * 1024
# What the tarball may unpack to, per byte of MAX_TARBALL_BYTES: text compresses about 4:1.
UNPACKED_PER_PACKED = 4
MAX_WORKERS_LIMIT = 16  # far below GitHub's secondary limit of 100 concurrent requests
# Matched whole (fullmatch): "$" would also match before a trailing newline.
_SHA_RE = re.compile(r"[0-9a-f]{40}")
_REPO_RE = re.compile(r"[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+")
# Whatever goes wrong with the tarball, the blobs are still there: these end the tarball attempt only.
_TARBALL_ERRORS = (
    HttpError,
    SourceUnavailable,
    SourcePermanentError,
    tarfile.TarError,
    OSError,
    EOFError,
    zlib.error,
)


class TokenProvider(Protocol):
    """What the source needs from the App auth (``function.github.app_auth.GitHubAppAuth`` fits)."""

    def installation_token(self, installation_id: int) -> str: ...

    def invalidate(self, installation_id: int, token: str | None = None) -> None: ...


@dataclass(frozen=True)
class _Failed:
    message: str
    retryable: bool


def is_retryable_status(status: int, headers: Mapping[str, str]) -> bool:
    """5xx, 408, 429 and a rate-limited 403 are worth retrying later; other 4xx are answers."""
    return status >= 500 or status in (408, 429) or (status == 403 and is_rate_limited(headers))


class GitHubSource:
    """Reads ``<articles_dir>/*.md`` of a repository through a GitHub App installation.

    ``tarball_min_files`` and ``tarball_min_fraction`` decide when ``fetch`` downloads the tarball instead
    of single blobs: when more than that many files, and more than that fraction of the snapshot, are
    wanted. ``max_file_bytes`` bounds what is read from a tarball entry (larger ones go by blob).
    """

    def __init__(
        self,
        auth: TokenProvider,
        http: HttpClient,
        api_url: str,
        articles_dir: str = "articles",
        max_workers: int = 8,
        *,
        tarball_min_files: int = 50,
        tarball_min_fraction: float = 0.5,
        max_file_bytes: int = MAX_ARTICLE_FILE_BYTES,
        max_tarball_bytes: int = MAX_TARBALL_BYTES,
    ) -> None:
        if not 1 <= max_workers <= MAX_WORKERS_LIMIT:
            raise ValueError(f"max_workers must be between 1 and {MAX_WORKERS_LIMIT}")
        self.auth = auth
        self.http = http
        self.api_url = api_url.rstrip("/")
        self.articles_dir = articles_dir.strip("/")
        self.max_workers = max_workers
        self.tarball_min_files = tarball_min_files
        self.tarball_min_fraction = tarball_min_fraction
        self.max_file_bytes = max_file_bytes
        self.max_tarball_bytes = max_tarball_bytes

    # -- requests ----------------------------------------------------------------------------------

    def _repo_url(self, repo: RepoRef) -> str:
        if not _REPO_RE.fullmatch(repo.full_name) or ".." in repo.full_name:
            raise SourcePermanentError(f"not a repository name: {repo.full_name!r}")
        return f"{self.api_url}/repos/{repo.full_name}"

    @staticmethod
    def _installation(repo: RepoRef) -> int:
        if repo.installation_id is None:
            raise SourcePermanentError(f"{repo.full_name}: no GitHub App installation id")
        return repo.installation_id

    def _headers(self, token: str, accept: str) -> dict[str, str]:
        return {"Authorization": f"Bearer {token}", "Accept": accept, "X-GitHub-Api-Version": API_VERSION}

    def _blob_cap(self) -> int:
        # Room for the JSON (base64) form some proxies answer instead of the raw one.
        return self.max_file_bytes * 4 // 3 + 64 * 1024

    def _get(
        self, repo: RepoRef, path: str, accept: str = GITHUB_JSON, *, max_bytes: int | None = None
    ) -> HttpResponse:
        """GET ``/repos/{owner}/{name}{path}``; a 401 (token revoked early) is retried once with a new token.

        Raises ``HttpError`` (no answer), ``SourceUnavailable`` / ``SourcePermanentError`` (token)."""
        installation = self._installation(repo)
        url = self._repo_url(repo) + path
        for attempt in range(2):
            token = self.auth.installation_token(installation)
            headers = self._headers(token, accept)
            if max_bytes is None:
                response = self.http.request("GET", url, headers=headers)
            else:
                response = self.http.request("GET", url, headers=headers, max_bytes=max_bytes)
            if response.status != 401 or attempt == 1:
                return response
            self.auth.invalidate(installation, token)
        raise AssertionError("unreachable")

    def _snapshot_get(self, repo: RepoRef, what: str, path: str, accept: str = GITHUB_JSON) -> HttpResponse:
        """``_get`` for the listing: anything but 200 raises SourceUnavailable or SourcePermanentError."""
        try:
            response = self._get(repo, path, accept)
        except HttpError as exc:
            raise SourceUnavailable(f"{repo.full_name}: {what}: {exc}") from None
        if response.status == 200:
            return response
        message = f"{repo.full_name}: {what}: GitHub answered {response.status}"
        if is_retryable_status(response.status, response.headers):
            raise SourceUnavailable(message)
        raise SourcePermanentError(message)

    # -- snapshot ----------------------------------------------------------------------------------

    def default_branch(self, repo: RepoRef) -> str:
        """The repository's default branch, read now (one request)."""
        response = self._snapshot_get(repo, "repository", "")
        try:
            branch = response.json()["default_branch"]
        except (ValueError, KeyError, TypeError):
            raise SourceUnavailable(f"{repo.full_name}: unreadable repository answer") from None
        if not isinstance(branch, str) or not branch:
            raise SourceUnavailable(f"{repo.full_name}: repository answer without a default branch")
        return branch

    def head_sha(self, repo: RepoRef, branch: str) -> str:
        """The commit SHA at the head of ``branch``, read now (one request, plain-text SHA media type)."""
        response = self._snapshot_get(
            repo, f"head of {branch!r}", f"/commits/{quote(branch, safe='/')}", SHA_MEDIA_TYPE
        )
        sha = response.body.decode("ascii", "replace").strip().lower()
        if not _SHA_RE.fullmatch(sha):
            raise SourceUnavailable(f"{repo.full_name}: head of {branch!r}: not a commit SHA")
        return sha

    def snapshot(self, repo: RepoRef) -> Snapshot:
        """The article files at the branch head read now: head SHA, then one recursive tree listing.

        When the push reported its head (``repo.pushed_head``) and the branch is known, that commit's
        listing is requested at the same time as the head: if the head is still the pushed one (the
        usual case) the listing is already there, one GitHub round trip (50 ms) sooner; if a newer push
        moved the branch, the pushed listing is dropped and the head's is read. The head is always read
        now, so the listing is never older than the branch.

        Only regular-file blobs that are direct children ``<articles_dir>/*.md`` count (symlinks and
        submodules do not). A truncated listing gives ``complete=False``. Raises ``SourceUnavailable``
        (worth retrying) or ``SourcePermanentError`` (repository, branch or installation gone)."""
        pushed = (repo.pushed_head or "").lower()
        if repo.branch is None or not _SHA_RE.fullmatch(pushed):
            branch = repo.branch or self.default_branch(repo)
            return self.listing(repo, self.head_sha(repo, branch))
        with ThreadPoolExecutor(max_workers=1, thread_name_prefix="pushed-listing") as pool:
            ahead = pool.submit(self.listing, repo, pushed)
            head = self.head_sha(repo, repo.branch)
            if head == pushed:
                return ahead.result()
        return self.listing(repo, head)

    def listing(self, repo: RepoRef, head: str) -> Snapshot:
        """The article files at commit ``head`` (one request). A commit's tree never changes, so this may
        be read before the branch head is known (``function.worker.sync.push_read``)."""
        response = self._snapshot_get(repo, "tree listing", f"/git/trees/{head}?recursive=1")
        try:
            data = response.json()
            entries = data["tree"]
            truncated = bool(data.get("truncated", False))
            blobs = sorted((f for f in map(tree_blob, entries) if f is not None), key=lambda f: f.path)
        except (ValueError, KeyError, TypeError, AttributeError):
            raise SourceUnavailable(f"{repo.full_name}: unreadable tree listing at {head}") from None
        if truncated:
            logger.warning(
                "GitHub tree listing truncated", extra={"repository": repo.full_name, "head_sha": head}
            )
        articles = tuple(f for f in blobs if self._is_article(f.path))
        books = tuple(f for f in blobs if is_book_path(f.path))
        # Every other blob (books' files included): where the images readers see come from.
        others = tuple(f for f in blobs if not self._is_article(f.path) and _SHA_RE.fullmatch(f.sha))
        return Snapshot(
            head_sha=head, files=articles, complete=not truncated, book_files=books, others=others
        )

    def _is_article(self, path: str) -> bool:
        prefix = f"{self.articles_dir}/" if self.articles_dir else ""
        name = path[len(prefix) :]
        return (
            path.startswith(prefix) and "/" not in name and name.endswith(".md") and not is_ignored_name(name)
        )

    # -- fetch -------------------------------------------------------------------------------------

    def fetch(
        self,
        repo: RepoRef,
        snapshot: Snapshot,
        files: Sequence[RepoFile],
        *,
        wanted_in_all: int | None = None,
    ) -> list[FetchResult]:
        """Fetch ``files`` at ``snapshot``; one result per file, in the order given, never raising.

        Each content is verified against its blob SHA. Failures are ``FetchFailure`` with
        ``retryable=True`` for 5xx/429/rate limit/time-outs, ``False`` for 404, SHA mismatch and refusals."""
        place = {f.path: index for index, f in enumerate(files)}
        results = list(self.fetch_stream(repo, snapshot, files, wanted_in_all=wanted_in_all))
        return sorted(results, key=lambda result: place[result.path])

    def fetch_stream(
        self,
        repo: RepoRef,
        snapshot: Snapshot,
        files: Sequence[RepoFile],
        *,
        wanted_in_all: int | None = None,
    ) -> Iterator[FetchResult]:
        """``fetch``'s results as they come: the tarball's files as it is read (in its order), then the
        rest, each fetched alone, in the order given."""
        # A file the listing says is over the limit is never downloaded: it fails here, with its size.
        too_big = {f.path: f.size for f in files if f.size is not None and f.size > self.max_file_bytes}
        wanted = [f for f in files if f.path not in too_big]
        if not wanted and not too_big:
            return
        found: set[str] = set()
        # A first sync read in chunks still goes by tarball (one per chunk, each keeping only that
        # chunk's files): 20 downloads of 20,000 articles cost less than 20,000 blob requests, which
        # would also exceed an installation's 5,000 requests an hour. A chunk of a few files (the tail)
        # goes by blob all the same.
        in_all = max(wanted_in_all or 0, len(wanted))
        if len(wanted) > self.tarball_min_files and self._wants_tarball(in_all, len(snapshot.files)):
            for file in self._tarball_files(repo, snapshot.head_sha, wanted):
                found.add(file.path)
                yield file
        missing_shas = sorted({f.sha for f in wanted if f.path not in found})
        by_sha = self._fetch_blobs(repo, missing_shas)
        for f in files:
            if f.path in found:
                continue
            if f.path in too_big:
                message = f"{too_big[f.path]} bytes, over the {self.max_file_bytes}-byte limit for an article"
                yield FetchFailure(path=f.path, sha=f.sha, message=message, retryable=False)
                continue
            outcome = by_sha[f.sha]
            if isinstance(outcome, _Failed):
                yield FetchFailure(
                    path=f.path, sha=f.sha, message=outcome.message, retryable=outcome.retryable
                )
            else:
                yield FetchedFile(path=f.path, sha=f.sha, content=outcome)

    def _wants_tarball(self, wanted: int, total: int) -> bool:
        return wanted > self.tarball_min_files and wanted > self.tarball_min_fraction * total

    def _fetch_blobs(self, repo: RepoRef, shas: Sequence[str]) -> dict[str, bytes | _Failed]:
        if not shas:
            return {}
        if len(shas) == 1:
            return {shas[0]: self._fetch_blob(repo, shas[0])}
        with ThreadPoolExecutor(max_workers=min(self.max_workers, len(shas))) as pool:
            outcomes = pool.map(lambda sha: self._fetch_blob(repo, sha), shas)
            return dict(zip(shas, outcomes, strict=True))

    def _fetch_blob(self, repo: RepoRef, sha: str) -> bytes | _Failed:
        if not _SHA_RE.fullmatch(sha):
            return _Failed("not a blob SHA", retryable=False)
        try:
            response = self._get(repo, f"/git/blobs/{sha}", RAW_MEDIA_TYPE, max_bytes=self._blob_cap())
        except BodyTooLarge:
            message = f"blob {sha}: over the {self.max_file_bytes}-byte limit for an article"
            return _Failed(message, retryable=False)
        except HttpError as exc:
            return _Failed(str(exc), retryable=True)
        except SourceUnavailable as exc:
            return _Failed(str(exc), retryable=True)
        except SourcePermanentError as exc:
            return _Failed(str(exc), retryable=False)
        if response.status != 200:
            retryable = is_retryable_status(response.status, response.headers)
            return _Failed(f"blob {sha}: GitHub answered {response.status}", retryable=retryable)
        data: bytes = response.body
        if git_blob_sha(data) == sha:
            return data
        # A proxy or an older GitHub may ignore the raw media type and answer the JSON (base64) form.
        decoded = json_blob_content(data)
        if decoded is not None and git_blob_sha(decoded) == sha:
            return decoded
        return _Failed(f"blob {sha}: content does not match its SHA", retryable=False)

    def _tarball_files(
        self, repo: RepoRef, head_sha: str, files: Sequence[RepoFile]
    ) -> Iterator[FetchedFile]:
        """``files`` taken from the tarball at ``head_sha`` (one request, streamed), each given as soon as
        it is read.

        Gives only verified contents; whatever is missing, too big or mismatched is left to the caller
        (blob fetches). Never raises for a GitHub or archive problem."""
        wanted = {f.path: f.sha for f in files}
        found: set[str] = set()
        try:
            token = self.auth.installation_token(self._installation(repo))
            url = f"{self._repo_url(repo)}/tarball/{head_sha}"
            with self.http.stream("GET", url, headers=self._headers(token, GITHUB_JSON)) as answer:
                if answer.status != 200:
                    logger.warning(
                        "GitHub tarball unavailable, fetching blobs",
                        extra={"repository": repo.full_name, "status": answer.status},
                    )
                    return
                # "r|*": a forward-only stream, never the whole archive in memory.
                # Capped in total (the archive as sent) and per member (the listing's limit), so a
                # hostile archive costs bounded time and memory; what it did not give goes by blob.
                capped = CappedReader(answer.raw, self.max_tarball_bytes, f"{repo.full_name} tarball")
                kept = 0
                # Unpacked bytes are capped too, headers included (tar_stream): the compressed size
                # says little about what a hostile archive unpacks to.
                unpacked_cap = self.max_tarball_bytes * UNPACKED_PER_PACKED
                with tar_stream.open_stream(capped, unpacked_cap, f"{repo.full_name} tarball") as archive:
                    for member in archive:
                        # GitHub prefixes every entry with one folder "<owner>-<repo>-<short sha>/".
                        path = member.name.partition("/")[2]
                        sha = wanted.get(path)
                        if sha is None or path in found or not member.isfile():
                            continue
                        if member.size > self.max_file_bytes:
                            continue
                        if kept + member.size > self.max_tarball_bytes:
                            break
                        extracted = archive.extractfile(member)
                        data = extracted.read(self.max_file_bytes + 1) if extracted is not None else b""
                        if git_blob_sha(data) == sha:
                            found.add(path)
                            kept += len(data)
                            yield FetchedFile(path=path, sha=sha, content=data)
                        if len(found) == len(wanted):
                            break
        except (
            HttpError,  # BodyTooLarge included
            SourceUnavailable,
            SourcePermanentError,
            tarfile.TarError,
            OSError,
            zlib.error,
        ) as exc:
            logger.warning(
                "GitHub tarball failed, fetching the rest as blobs",
                extra={"repository": repo.full_name, "error": type(exc).__name__, "found": len(found)},
            )
