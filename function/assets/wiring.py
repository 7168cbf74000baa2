"""Builds the asset store and the sync from the settings (the composition root calls these)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from function.assets.port import AssetStore
from function.settings import Settings

if TYPE_CHECKING:
    from function.assets.syncing import AssetSync, Fetcher


def asset_store(settings: Settings) -> AssetStore:
    """S3 when ``ASSET_BUCKET`` is set (the stack), else the folder ``ASSET_DIR``."""
    if settings.asset_bucket:
        from function.assets.s3 import S3AssetStore, s3_client_factory

        return S3AssetStore(settings.asset_bucket, s3_client_factory(settings.https_proxy, settings.no_proxy))
    from function.assets.folder import FolderAssetStore

    return FolderAssetStore(Path(settings.asset_dir))


def asset_fetcher(settings: Settings, source: Any) -> Fetcher:
    """A source that reads images: the GitHub source again, with the images' own per-file cap (enforced
    while the blob streams) and never the tarball; the folder source as it is."""
    from function.sources.github import GitHubSource

    if not isinstance(source, GitHubSource):
        fetcher: Fetcher = source
        return fetcher
    return GitHubSource(
        source.auth,
        source.http,
        source.api_url,
        articles_dir=source.articles_dir,
        max_workers=source.max_workers,
        tarball_min_files=2**31,
        max_file_bytes=settings.asset_max_bytes,
    )


def asset_sync(settings: Settings, db: Any, store: AssetStore, source: Any) -> AssetSync | None:
    """The images' part of a sync; None when ``ARTICLE_ASSET_BASE_URL`` is set: then the images live
    elsewhere and sources are rewritten against that URL instead (it wins)."""
    if settings.asset_base_url:
        return None
    from function.assets.syncing import AssetSync
    from function.store.asset_records import AssetRecords

    return AssetSync(
        AssetRecords(db),
        store,
        asset_fetcher(settings, source),
        images_dir=settings.images_dir,
        max_bytes=settings.asset_max_bytes,
        push_max_bytes=settings.asset_push_max_bytes,
    )
