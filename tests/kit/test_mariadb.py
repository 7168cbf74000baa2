"""The throwaway MariaDB helper explains itself when the server is not installed."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.kit.mariadb import MariaDBUnavailable, ThrowawayMariaDB


def test_missing_binaries_fail_with_a_one_line_hint(tmp_path: Path) -> None:
    with pytest.raises(MariaDBUnavailable) as raised:
        ThrowawayMariaDB(bin_dirs=[str(tmp_path)]).start()
    message = str(raised.value)
    assert "\n" not in message
    assert "apt-get install mariadb-server" in message
    assert "TEST_DATABASE_URL" in message
