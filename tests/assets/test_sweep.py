"""The sweep deletes an image only past the grace period, pointed at by nothing, and its object only
when no row stores under its key."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

from function.assets.folder import FolderAssetStore
from function.assets.keys import asset_key, content_sha256
from function.assets.kinds import PNG
from function.assets.sweep import collect_assets
from function.store.asset_records import AssetRecords, StoredAsset
from function.store.facade import PeeweeStore
from tests.kit import images
from tests.kit.builders import T0

GRACE = timedelta(days=7)


def _put(store: FolderAssetStore, colour: tuple[int, int, int]) -> str:
    data = images.png(colour)
    key = asset_key(content_sha256(data), PNG)
    store.put(key, data, PNG.content_type)
    return key


def test_an_image_gone_past_the_grace_period_is_deleted_unless_its_bytes_are_used_elsewhere(
    store: PeeweeStore, tmp_path: Path
) -> None:
    # GIVEN alice's two images and bob's copy of the second one, both of alice's gone from her repository
    alice = store.users.add_user("alice", "a@example.com", 1, "alice/blog").id
    bob = store.users.add_user("bob", "b@example.com", 2, "bob/blog").id
    folder = FolderAssetStore(tmp_path / "assets")
    red, blue = _put(folder, (255, 0, 0)), _put(folder, (0, 0, 255))
    records = AssetRecords(store.db)
    records.save(
        alice,
        [StoredAsset("images/red.png", "1" * 40, red), StoredAsset("images/blue.png", "2" * 40, blue)],
        {},
        now=T0,
    )
    records.save(bob, [StoredAsset("images/blue.png", "2" * 40, blue)], {}, now=T0)
    records.save(alice, [], {}, gone=["images/red.png", "images/blue.png"], now=T0)
    # WHEN the sweep runs within the grace period, nothing goes
    assert collect_assets(records, folder, T0 + GRACE - timedelta(seconds=1), GRACE).forgotten == 0
    assert folder.get(red) is not None
    # WHEN it runs after it
    report = collect_assets(records, folder, T0 + GRACE + timedelta(seconds=1), GRACE)
    # THEN alice's rows are gone, the red object too, and the blue one stays for bob
    assert report.forgotten == 2 and report.deleted == [red]
    assert folder.get(red) is None and folder.get(blue) is not None
    assert records.load_assets(alice) == {}
    assert list(records.load_assets(bob)) == ["images/blue.png"]
