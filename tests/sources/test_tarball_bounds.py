"""A tarball is bounded by what it unpacks to, not only by what it weighs: a small gzip that unpacks to
hundreds of MiB (in a file or in a long-name header) ends the tarball read, and the files come by blob."""

from __future__ import annotations

import gzip
import io
import logging
import tarfile
from collections.abc import Callable

import pytest

from function.sources.port import FetchedFile, RepoRef
from tests.kit.github_fixtures import REPO, GitHubClientParts
from tests.kit.github_standin import GitHubStandIn

MakeSource = Callable[..., GitHubClientParts]
MAIN = RepoRef(full_name=REPO, branch="main", installation_id=1)
FILES = {f"articles/post-{i:03d}.md": f"---\ntitle: post {i}\n---\nbody {i}\n".encode() for i in range(60)}


def _archive(commit: str, bomb: tarfile.TarInfo, bomb_data: bytes, tar_format: int) -> bytes:
    """GitHub's layout (one top folder), the bomb first, then every file intact."""
    folder = f"{REPO.replace('/', '-')}-{commit[:7]}"
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w", format=tar_format) as tar:
        tar.addfile(bomb, io.BytesIO(bomb_data))
        for path, data in FILES.items():
            info = tarfile.TarInfo(f"{folder}/{path}")
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return gzip.compress(raw.getvalue(), compresslevel=9, mtime=0)


def _long_name(commit: str) -> tarfile.TarInfo:
    info = tarfile.TarInfo(f"{REPO.replace('/', '-')}-{commit[:7]}/" + "a" * (8 * 1024 * 1024))
    info.size = 0
    return info


def _zeros(commit: str) -> tuple[tarfile.TarInfo, bytes]:
    info = tarfile.TarInfo(f"{REPO.replace('/', '-')}-{commit[:7]}/images/huge.bin")
    data = bytes(24 * 1024 * 1024)
    info.size = len(data)
    return info, data


@pytest.mark.parametrize("tar_format", [tarfile.GNU_FORMAT, tarfile.PAX_FORMAT], ids=["gnu", "pax"])
def test_a_long_name_header_ends_the_tarball_before_it_is_read(
    github: GitHubStandIn, make_github_source: MakeSource, tar_format: int, caplog: pytest.LogCaptureFixture
) -> None:
    # GIVEN a tarball whose first entry's name is 8 MiB long (a few KB compressed)
    github.set_files(FILES)
    source = make_github_source().source
    snapshot = source.snapshot(MAIN)
    archive = _archive(snapshot.head_sha, _long_name(snapshot.head_sha), b"", tar_format)
    assert len(archive) < 100 * 1024
    github.serve_tarball(snapshot.head_sha, archive)
    github.reset_records()
    # WHEN every file is fetched
    with caplog.at_level(logging.WARNING):
        results = source.fetch(MAIN, snapshot, snapshot.files)
    # THEN the tarball was given up at that header, and every file came intact by blob
    assert [
        getattr(r, "error", None)
        for r in caplog.records
        if r.getMessage().startswith("GitHub tarball failed")
    ] == ["HeaderError"]
    assert all(isinstance(r, FetchedFile) for r in results)
    assert github.count("blob") == len(FILES)


def test_a_file_that_unpacks_past_the_limit_ends_the_tarball(
    github: GitHubStandIn, make_github_source: MakeSource, caplog: pytest.LogCaptureFixture
) -> None:
    # GIVEN a 1 MiB limit on the tarball (4 MiB unpacked) and one that unpacks to 24 MiB from a few KB
    github.set_files(FILES)
    source = make_github_source(max_tarball_bytes=1024 * 1024).source
    snapshot = source.snapshot(MAIN)
    info, data = _zeros(snapshot.head_sha)
    archive = _archive(snapshot.head_sha, info, data, tarfile.PAX_FORMAT)
    assert len(archive) < 100 * 1024
    github.serve_tarball(snapshot.head_sha, archive)
    github.reset_records()
    with caplog.at_level(logging.WARNING):
        results = source.fetch(MAIN, snapshot, snapshot.files)
    assert [
        getattr(r, "error", None)
        for r in caplog.records
        if r.getMessage().startswith("GitHub tarball failed")
    ] == ["BodyTooLarge"]
    assert all(isinstance(r, FetchedFile) for r in results)
    assert github.count("blob") == len(FILES)


def test_an_ordinary_tarball_still_delivers_every_file(
    github: GitHubStandIn, make_github_source: MakeSource
) -> None:
    github.set_files(FILES)
    source = make_github_source(max_tarball_bytes=1024 * 1024).source
    snapshot = source.snapshot(MAIN)
    github.reset_records()
    results = source.fetch(MAIN, snapshot, snapshot.files)
    assert all(isinstance(r, FetchedFile) for r in results)
    assert github.count("blob") == 0 and github.count("tarball") == 1
