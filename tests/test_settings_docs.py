"""The configuration page's table is generated from the settings' declarations, and kept current."""

from __future__ import annotations

from pathlib import Path

from function import settings_docs
from shared.doc_tables import replace_table
from shared.runtime_settings import declared

PAGE = Path(__file__).resolve().parents[1] / "docs" / "configuration.md"


def test_the_committed_table_is_the_one_the_declarations_make() -> None:
    page = PAGE.read_text(encoding="utf-8")
    # Stale: run `make docs` (python -m function.settings_docs --write docs/configuration.md).
    assert replace_table(page, settings_docs.COMMAND, settings_docs.table()) == page


def test_every_declared_variable_has_its_row_with_default_and_stack_key() -> None:
    rows = settings_docs.table().splitlines()[2:]
    assert [row.split(" | ")[0].removeprefix("| ").split(" / ")[0] for row in rows] == [
        f"`{spec.env}`" for spec in declared()
    ]
    assert "| `LOG_LEVEL` | level of the app's own log lines | `INFO` | `logLevel` |" in rows
    assert any(row.startswith("| `DATABASE_URL` / `DATABASE_URL_PARAM` |") for row in rows)
    assert any(row.startswith("| `ARTICLE_SOURCE` |") and row.endswith("| always `github` |") for row in rows)


def test_check_fails_on_a_stale_page_and_write_makes_it_current(tmp_path: Path) -> None:
    page = tmp_path / "configuration.md"
    page.write_text(PAGE.read_text(encoding="utf-8").replace("`Asia/Tokyo`", "`UTC`"), encoding="utf-8")

    assert settings_docs.main(["--check", str(page)]) == 1
    assert settings_docs.main(["--write", str(page)]) == 0
    assert settings_docs.main(["--check", str(page)]) == 0
    assert page.read_text(encoding="utf-8") == PAGE.read_text(encoding="utf-8")
