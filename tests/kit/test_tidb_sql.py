"""How the TiDB-faithful relay reads and rewrites what a client sends (no server needed)."""

from __future__ import annotations

from tests.kit.tidb_sql import CONSISTENT_BEGIN, rewrite, statements


def test_statements_are_rewritten_outside_quotes_only() -> None:
    text = (
        "BEGIN;\nINSERT INTO t VALUES ('BEGIN;\\nGET_LOCK(1, 2)', `GET_LOCK`);"
        "\nSELECT GET_LOCK('a', 0);\nCOMMIT"
    )

    changed = rewrite(text, "f.get_lock")

    assert statements(changed.sql) == [
        CONSISTENT_BEGIN,
        "\nINSERT INTO t VALUES ('BEGIN;\\nGET_LOCK(1, 2)', `GET_LOCK`)",
        "\nSELECT f.get_lock('a', 0)",
        "\nCOMMIT",
    ]
    assert changed.writes
    assert rewrite("CREATE TABLE IF NOT EXISTS `a` (x INT)", "f").tables == ((None, "a"),)
    assert rewrite("SELECT 'INSERT'", "f").writes is False


def test_a_use_statement_names_the_database_later_tables_belong_to() -> None:
    assert rewrite("USE `blog`", "f").database == "blog"
    assert rewrite("ALTER TABLE other.t ADD x INT", "f").tables == (("other", "t"),)
    assert rewrite("CREATE UNIQUE INDEX IF NOT EXISTS `i` ON `t` (`x`)", "f").tables == ((None, "t"),)


def test_a_text_without_any_keyword_is_passed_on_unread() -> None:
    text = "SELECT `slug`, `title` FROM `articles` WHERE `user_id` = 1"

    assert rewrite(text, "f").sql is text


def test_the_tables_a_text_writes_are_named_for_their_checks() -> None:
    text = (
        "BEGIN;\nINSERT IGNORE INTO `tags` (`path`) VALUES ('a');\nUPDATE `blog`.`articles` SET `x` = 1;\n"
        "DELETE FROM article_tags WHERE 1;\nSELECT 'UPDATE `nothing`';\nCOMMIT"
    )

    assert rewrite(text, "f").written == ((None, "tags"), ("blog", "articles"), (None, "article_tags"))
