"""``blog-api sync`` prints each warning once, with its file and reason, and counts them; a log line on
the terminal always carries its fields (never a bare ``Article warning``)."""

from __future__ import annotations

import io
import logging
from pathlib import Path

import pytest

from function.cli.text_logs import TextFormatter, configure_text_logging
from tests.kit.cli import run_cli


def front_matter(*extra: str) -> str:
    return "\n".join(["---", "title: T", "published: true", *extra, "---", "", "Body.", ""])


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str | None]:
    articles = tmp_path / "repo" / "articles"
    articles.mkdir(parents=True)
    (articles / "x.md").write_text(front_matter("canonical: https://example.com/x"))
    (articles / "y.md").write_text(front_matter("canonical: https://example.com/y", "slide: false"))
    (articles / "z.md").write_text(front_matter())
    env: dict[str, str | None] = {
        "DATABASE_URL": f"sqlite:///{tmp_path}/blog.db",
        "ARTICLE_SOURCE": f"dir:{tmp_path / 'repo'}",
        "GITHUB_WEBHOOK_SECRET": None,
    }
    assert run_cli("init-db", env=env).exit_code == 0
    assert run_cli("users", "add", "--name", "demo", "--email", "d@example.com", env=env).exit_code == 0
    return env


def test_each_warning_is_printed_once_with_its_file_and_counted(env: dict[str, str | None]) -> None:
    result = run_cli("sync", "--user", "demo", env=env)

    assert result.exit_code == 0, result.stdout + result.stderr
    printed = result.stdout + result.stderr
    for line in (
        "warning articles/x.md: unknown front matter key 'canonical' (ignored)",
        "warning articles/y.md: unknown front matter key 'canonical' (ignored)",
        "warning articles/y.md: unknown front matter key 'slide' (ignored)",
    ):
        assert printed.count(line) == 1, printed
    assert "Article warning" not in printed
    assert result.stderr == ""
    assert "processed=3 succeeded=3 failed=0 fetched=3 written=3 unchanged=0 archived=0 warnings=3 " in (
        result.stdout
    )


def test_an_unchanged_file_is_not_warned_about_again(env: dict[str, str | None]) -> None:
    assert run_cli("sync", "--user", "demo", env=env).exit_code == 0

    again = run_cli("sync", "--user", "demo", env=env)

    assert "warnings=0" in again.stdout and "canonical" not in again.stdout + again.stderr


def test_a_log_line_in_text_mode_carries_its_fields() -> None:
    stream = io.StringIO()
    handler = configure_text_logging()
    handler.setStream(stream)  # type: ignore[attr-defined]
    try:
        logging.getLogger("function.worker.sync").warning(
            "Tree listing incomplete; nothing archived", extra={"head_sha": "abc123", "left": 2}
        )
    finally:
        logging.getLogger().removeHandler(handler)

    assert stream.getvalue() == "warning Tree listing incomplete; nothing archived: head_sha=abc123, left=2\n"


def test_text_lines_are_redacted() -> None:
    record = logging.makeLogRecord(
        {"msg": "Fetch failed", "levelname": "WARNING", "url": "https://x/?token=ghs_abcdefghijklmnopqrstu"}
    )

    line = TextFormatter().format(record)

    assert "ghs_" not in line and line.startswith("warning Fetch failed: url=")
