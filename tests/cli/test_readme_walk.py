"""The first hour, replayed: the README's "Try it locally" steps run in order, as written, against a real
server (``make run``'s own commands) and a generated Zenn-shaped repository with books, images, no dates
and a git history. Nothing in the walk may archive or lose an article.

The commands are read from the README itself (its ``sh`` blocks, continuation lines joined): ``make run``
lines are expanded with ``make -n`` and their commands run here, the server in the background on a free
port (the README's ``5000`` is replaced by it), ``../my-zenn`` is the generated repository, and every
other line runs in a shell as a reader would paste it.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from function.store.backends import open_database
from function.store.connection import connection
from function.store.facade import PeeweeStore
from tests.kit.zenn_repos import ZennRepository, generate

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
SAMPLE_PUBLISHED = 6  # examples/articles: 8 articles, 2 of them drafts

pytestmark = [
    pytest.mark.skipif(
        shutil.which("make") is None or shutil.which("curl") is None, reason="needs make, curl"
    ),
    pytest.mark.timeout(600),
]

# Settings a developer's shell may hold that the walk must not see (a reader's fresh terminal).
SCRUBBED = ("DATABASE_URL", "ARTICLE_SOURCE", "GITHUB_WEBHOOK_SECRET", "SITE_URL", "AWS_LAMBDA_FUNCTION_NAME")


def walk_blocks() -> dict[str, list[str]]:
    """The commands of each ``sh`` block of "Try it locally", by the heading above it: continuation lines
    joined, comment lines and a trailing ``# comment`` dropped."""
    text = README.read_text(encoding="utf-8")
    section = text[text.index("## Try it locally") : text.index("## Map of the folders")]
    blocks: dict[str, list[str]] = {}
    heading = "Try it locally"
    for part in re.split(r"(?m)^(#{2,3} .*)$", section):
        if part.startswith("#"):
            heading = part.lstrip("# ").strip()
            continue
        for block in re.findall(r"```sh\n(.*?)```", part, re.DOTALL):
            joined = re.sub(r"\\\n\s*", "", block)
            commands = []
            for line in joined.splitlines():
                if not line.strip() or line.lstrip().startswith("#"):
                    continue
                commands.append(re.sub(r"\s{2,}# .*$", "", line).strip())
            blocks.setdefault(heading, []).extend(commands)
    return blocks


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class Walk:
    """A reader's terminal: the checkout they work in, and what ran."""

    checkout: Path
    repo: ZennRepository
    env: dict[str, str]
    port: int = 0
    server: subprocess.Popen[str] | None = None
    outputs: list[tuple[str, subprocess.CompletedProcess[str]]] = field(default_factory=list)

    def translate(self, command: str) -> str:
        """The README's line as it runs here: its port, and the generated repository for ../my-zenn."""
        return command.replace("127.0.0.1:5000", f"127.0.0.1:{self.port}").replace(
            "../my-zenn", str(self.repo.root)
        )

    def shell(self, command: str) -> subprocess.CompletedProcess[str]:
        result = subprocess.run(  # noqa: S602 - the README's lines, run as a reader pastes them
            command, shell=True, cwd=self.checkout, env=self.env, capture_output=True, text=True, timeout=300
        )
        self.outputs.append((command, result))
        return result

    def make_run(self, readme_line: str) -> subprocess.CompletedProcess[str]:
        """``make run …`` as written: make's own commands for it (``make -n``), run here; the server last,
        in the background, until it answers."""
        self.stop()
        self.port = free_port()
        words = shlex.split(self.translate(readme_line))
        assert words[:2] == ["make", "run"], readme_line
        planned = subprocess.run(
            [
                "make",
                "-s",
                "-n",
                "--no-print-directory",
                "-C",
                str(ROOT),
                *words[1:],
                f"VENV={ROOT / '.venv'}",
                f"PORT={self.port}",
            ],
            env=self.env,
            capture_output=True,
            text=True,
            check=True,
            timeout=60,
        ).stdout.splitlines()
        commands = [line for line in planned if line.startswith("mkdir -p .data") or "blog-api " in line]
        [serve] = [line for line in planned if "flask" in line]
        output = None
        for command in commands:
            result = self.shell(command)
            assert result.returncode == 0, (command, result.stdout, result.stderr)
            if "blog-api sync" in command:
                output = result
        self.server = subprocess.Popen(  # noqa: S602 - make's own command line
            serve, shell=True, cwd=self.checkout, env=self.env, stderr=subprocess.PIPE, text=True
        )
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/healthz", timeout=2):
                    break
            except (urllib.error.URLError, ConnectionError):
                time.sleep(0.1)
        else:
            raise AssertionError("the server did not start")
        assert output is not None
        return output

    def run(self, readme_line: str) -> subprocess.CompletedProcess[str]:
        result = self.shell(self.translate(readme_line))
        assert result.returncode == 0, (readme_line, result.stdout, result.stderr)
        return result

    def get(self, path: str) -> Any:
        with urllib.request.urlopen(f"http://127.0.0.1:{self.port}{path}", timeout=10) as answer:
            return json.loads(answer.read())

    def every_article(self) -> list[dict[str, Any]]:
        found: list[dict[str, Any]] = []
        cursor = ""
        while True:
            page = self.get(f"/users/demo/articles?limit=100{cursor}")
            found += page["articles"]
            if page["nextCursor"] is None:
                return found
            cursor = f"&cursor={page['nextCursor']}"

    def stop(self) -> None:
        if self.server is not None:
            self.server.terminate()
            self.server.wait(timeout=10)
            assert self.server.stderr is not None
            self.server.stderr.close()
            self.server = None


@pytest.fixture
def walk(tmp_path: Path) -> Iterator[Walk]:
    """A reader's checkout (the sample and the venv are the repository's own, linked) and their repository,
    a git clone named my-zenn."""
    checkout = tmp_path / "blog-api"
    checkout.mkdir()
    (checkout / "examples").symlink_to(ROOT / "examples")
    (checkout / ".venv").symlink_to(ROOT / ".venv")
    env = {key: value for key, value in os.environ.items() if key not in SCRUBBED}
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    walk = Walk(checkout, generate(tmp_path / "my-zenn"), env)
    yield walk
    walk.stop()


def archived_in(database: Path) -> list[str]:
    """The archived articles of every user of a walk's database."""
    db = open_database(f"sqlite:///{database}")
    with connection(db):
        rows = db.execute_sql("SELECT slug FROM articles WHERE archived").fetchall()
    db.close()
    return [row[0] for row in rows]


def served_count(database: Path) -> int:
    db = open_database(f"sqlite:///{database}")
    with connection(db):
        articles = PeeweeStore(db).reads.published_articles("demo")
    db.close()
    return len(articles or [])


def test_the_readmes_walk_serves_the_sample_then_your_repository_and_loses_nothing(walk: Walk) -> None:
    blocks = walk_blocks()
    sample, own = blocks["Try it locally"], blocks["Your own repository"]
    sample_db = walk.checkout / ".data" / "blog.db"
    own_db = walk.checkout / ".data" / "my-zenn.db"

    # -- the sample: make run, the signed test delivery, the reads, the same delivery with curl alone --
    assert sample[0] == "make run"
    synced = walk.make_run(sample[0])
    assert synced.stdout.splitlines()[0].startswith("reading the repository at ")
    assert served_count(sample_db) == SAMPLE_PUBLISHED
    delivered = walk.run(sample[1])
    readme_body = re.search(r"# body: (\{.*\})", README.read_text(encoding="utf-8"))
    assert readme_body is not None
    assert f"body: {readme_body.group(1)}" in delivered.stdout, delivered.stdout
    for line in sample[2:]:
        walk.run(line)
    assert archived_in(sample_db) == []

    # -- your own repository: make run REPO=…, the reads, a delivery ----------------------------------
    assert own[0].startswith("make run REPO=../my-zenn")
    synced = walk.make_run(own[0])
    assert (
        synced.stdout.splitlines()[0]
        == f"reading the repository at {walk.repo.root} (articles in {walk.repo.root / 'articles'})"
    )
    for line in own[1:]:
        walk.run(line)

    # THEN every published article is served, each dated by the commit that added its file, newest first
    served = walk.every_article()
    assert {a["slug"]: a["publishedAt"] for a in served} == {
        slug: when.strftime("%Y-%m-%dT%H:%M:%S.000000Z") for slug, when in walk.repo.published.items()
    }
    assert [a["slug"] for a in served] == sorted(walk.repo.published, key=walk.repo.published.__getitem__)[
        ::-1
    ]
    # AND each article's image is served from the app
    with_image = next(a for a in served if "記事 3" == a["title"])
    html = walk.get(f"/users/demo/articles/{with_image['slug']}")["contentHtml"]
    [src] = re.findall(r'<img src="([^"]+)"', html)
    with urllib.request.urlopen(f"http://127.0.0.1:{walk.port}{src}", timeout=10) as image:
        assert image.headers["Content-Type"] == "image/png"
    # AND each book serves the chapters it has, in its config's order
    for slug, chapters in walk.repo.books.items():
        assert [c["slug"] for c in walk.get(f"/users/demo/books/{slug}")["chapters"]] == chapters
    # AND the sync named every missing chapter with the file expected
    for chapter in walk.repo.missing_chapters["long-course-book"]:
        assert f"books/long-course-book/{chapter}.md" in synced.stdout
    # AND nothing was archived, anywhere; the sample's database is as it was
    assert archived_in(own_db) == [] and archived_in(sample_db) == []
    assert served_count(sample_db) == SAMPLE_PUBLISHED
    walk.stop()


def test_the_issues_first_hour_can_no_longer_archive_a_blog(walk: Walk) -> None:
    # GIVEN a user synced from their own folder with the CLI, into the default database
    sample_line = walk_blocks()["Try it locally"]
    env = f"ARTICLE_SOURCE=dir:{walk.repo.root} DATABASE_URL=sqlite:///.data/blog.db"
    walk.run("mkdir -p .data")
    walk.run(f"{env} .venv/bin/blog-api init-db")
    walk.run(f"{env} .venv/bin/blog-api users add --name demo --email demo@example.com --installation-id 1")
    first = walk.shell(f"{env} .venv/bin/blog-api sync --user demo")
    assert first.returncode == 3, first.stdout + first.stderr  # partial: the long book's missing chapters
    database = walk.checkout / ".data" / "blog.db"
    assert served_count(database) == len(walk.repo.published)

    # WHEN they follow the README: make run (the sample) and its test delivery
    refused = walk.make_run(sample_line[0])
    answer = walk.shell(walk.translate(sample_line[1]))

    # THEN both are refused, naming both folders and the command that rebinds, and nothing is archived
    sample_folder = (ROOT / "examples" / "articles").resolve()
    assert "is bound to the folder " + str(walk.repo.root) in refused.stderr
    assert "status: 409" in answer.stdout and "SOURCE_MISMATCH" in answer.stdout
    assert f"blog-api users set-source --name demo --source dir:{sample_folder}" in answer.stdout
    assert archived_in(database) == []
    assert served_count(database) == len(walk.repo.published)
