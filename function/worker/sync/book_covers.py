"""A book's cover as readers load it: the asset store's URL, resolved by the sync's images pass like an
article's image (``function.assets.syncing``), and stored as the book's ``cover``."""

from __future__ import annotations

from dataclasses import dataclass, field

from function.assets.syncing import AssetPass
from function.sources.port import RepoFile


@dataclass(frozen=True)
class Cover:
    """What a book stores of its cover: the URL served (None: none to serve), and the blob it was made
    from (None: not stored yet, so the next sync resolves it again)."""

    url: str | None
    sha: str | None
    warnings: list[str] = field(default_factory=list)


def resolve_cover(
    cover: RepoFile | None, config_path: str, images: AssetPass | None, asset_base_url: str | None
) -> Cover:
    """The cover file of a book (``books/<slug>/cover.png``) as its URL.

    Without an images pass (``ARTICLE_ASSET_BASE_URL`` set, or no store), the path is served as the
    articles' images are: under that base URL, or as the repository path."""
    if cover is None:
        return Cover(None, None)
    if images is None:
        if asset_base_url:
            return Cover(f"{asset_base_url.rstrip('/')}/{cover.path}", cover.sha)
        return Cover(cover.path, cover.sha)
    found = images.images_for(config_path)
    url = found.resolve("/" + cover.path)
    if url is None and found.paths.get(cover.path) is None:
        # Not stored yet (the store or GitHub failed): no blob recorded, so the book is read again.
        return Cover(None, None, found.warnings)
    # A refused file (not an image, too big) is remembered at its blob: no cover until it changes.
    return Cover(url, cover.sha, found.warnings)
