"""Parsing in render processes gives exactly what parsing here gives: the same articles, byte for byte,
the same failures, in the same order, over a real-shaped corpus and Zenn's own examples; the image
sources resolve here, in the order a render here asks for them, with the same HTML."""

from __future__ import annotations

import hashlib
import logging
import multiprocessing
import os
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from bench import real_corpus
from function.articles.images import stored_reference
from function.articles.parallel_parse import (
    MIN_FILES_FOR_PROCESSES,
    ArticleParser,
    FileToParse,
    ParseOptions,
    parse_one,
    process_count,
)
from function.articles.parsed import ParsedArticle
from function.errors import ArticleParseError

ZENN = Path(__file__).resolve().parents[1] / "fixtures" / "zenn" / "articles"
STARTED = "Render processes started"


def corpus() -> list[FileToParse]:
    files = [FileToParse(real_corpus.path(i), f"{i:040x}", real_corpus.article(i)) for i in range(24)]
    files += [FileToParse(f"articles/{p.name}", "0" * 40, p.read_bytes()) for p in sorted(ZENN.glob("*.md"))]
    files.append(FileToParse("articles/broken.md", "1" * 40, b"---\ntitle: [unclosed\n---\nbody"))
    files.append(FileToParse("articles/not valid.md", "2" * 40, b"---\ntitle: x\n---\n"))
    return files


def comparable(outcome: ParsedArticle | ArticleParseError) -> object:
    return ("error", str(outcome)) if isinstance(outcome, ArticleParseError) else outcome


def started(caplog: pytest.LogCaptureFixture) -> list[object]:
    return [getattr(r, "processes", None) for r in caplog.records if r.getMessage() == STARTED]


def test_render_processes_render_byte_for_byte_what_this_process_renders(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO, logger="function.articles.parallel_parse")
    files = corpus()
    options = ParseOptions(asset_base_url="https://assets.example.com")
    here = [comparable(parse_one(options, f)) for f in files]

    with ArticleParser(options, 2) as parser:
        spread = [comparable(o) for o in parser.parse(files)]

    assert started(caplog) == [2]
    assert spread == here
    failures = [o for o in here if isinstance(o, tuple)]
    assert ("error", str(parse_one(options, files[-1]))) in failures  # the failures are there too
    assert sum(isinstance(o, ParsedArticle) and o.content_html != "" for o in here) >= 30


def test_a_stream_of_files_is_parsed_as_it_comes() -> None:
    files = corpus()[:12]
    with ArticleParser(ParseOptions(), 2) as parser:
        streamed = [comparable(o) for o in parser.parse(iter(files))]
    assert streamed == [comparable(parse_one(ParseOptions(), f)) for f in files]


def test_few_files_and_one_process_stay_in_this_process(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="function.articles.parallel_parse")
    files = corpus()[: MIN_FILES_FOR_PROCESSES - 1]
    with ArticleParser(ParseOptions(), 2) as parser:
        assert len(list(parser.parse(files))) == len(files)
    with ArticleParser(ParseOptions(), 1) as parser:
        assert parser.processes == 0
        assert len(list(parser.parse(corpus()))) == len(corpus())
    assert started(caplog) == []


def test_the_process_count_follows_the_cpus_unless_set() -> None:
    assert process_count(None) == len(os.sched_getaffinity(0))
    assert process_count(1) == 1
    assert process_count(0) == 0
    assert process_count(6) == 6


def test_files_waiting_behind_a_slow_one_stay_bounded() -> None:
    # GIVEN a stream whose first file takes a while to render (lots of code), then quick ones
    code = "def f(x: int) -> int:\n    return [x * 2 for x in range(10)][0]  # c\n" * 1500
    slow = FileToParse("articles/slow.md", "0" * 40, f"---\ntitle: s\n---\n```python\n{code}```\n".encode())
    quick = [FileToParse(f"articles/q{i}.md", "0" * 40, b"---\ntitle: q\n---\nq\n") for i in range(20)]
    pulled: list[str] = []

    def stream() -> Iterator[FileToParse]:
        for file in (slow, *quick):
            pulled.append(file.path)
            yield file

    # WHEN the first outcome comes
    with ArticleParser(ParseOptions(), 2) as parser:
        outcomes = parser.parse(stream(), expected=21)
        first = next(outcomes)
        pulled_by_then = len(pulled)
        rest = list(outcomes)

    # THEN the other process rendered only a few files ahead of it, and every file came, in order
    assert pulled_by_then <= 4
    assert [o.slug for o in (first, *rest) if isinstance(o, ParsedArticle)] == ["slow"] + [
        f"q{i}" for i in range(20)
    ]


class Resolver:
    """An asset pass's answers: a stored file's URL, nothing for a URL or a missing file; every
    question recorded, in order."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.asked: list[str] = []

    def __call__(self, src: str) -> str | None:
        self.asked.append(src)
        if src.startswith(("https:", "//")) or "missing" in src:
            return None
        return stored_reference(key_for(self.path, len(self.asked), src))


def key_for(path: str, n: int, src: str) -> str:
    """A stored image's key (content-addressed in the store) made from what the resolver was asked."""
    return hashlib.sha256(f"{path}/{n}-{src}".encode()).hexdigest() + ".png"


def image_article(i: int) -> bytes:
    images = [f"![a](/images/{i}.png)", "![far](https://example.com/far.png)", "![again](images/x.png)"]
    if i % 3 == 0:
        images.append("![gone](/images/missing.png)")  # left as written: rendered here
    if i % 4 == 0:
        images.append("![q](/images/query.png?size=2)")  # a query string: resolved like any path
    body = f"# A {i}\n\n" + "\n\n".join(f"{image} text {n}" for n, image in enumerate(images))
    return f"---\ntitle: A{i}\n---\n{body}\n".encode()


def test_image_sources_resolve_here_in_order_with_the_html_of_a_render_here() -> None:
    files = [
        FileToParse(f"articles/a{i}.md", "0" * 40, image_article(i), resolves_images=True) for i in range(12)
    ]
    files.append(FileToParse("articles/plain.md", "0" * 40, real_corpus.article(1), resolves_images=False))
    options = ParseOptions(asset_base_url="https://assets.example.com/base/")

    here: dict[str, Resolver] = {}
    spread: dict[str, Resolver] = {}
    expected = [
        comparable(parse_one(options, f, here.setdefault(f.path, Resolver(f.path)))) for f in files[:-1]
    ]
    expected.append(comparable(parse_one(options, files[-1])))
    with ArticleParser(options, 2) as parser:
        outcomes = list(
            parser.parse(files, resolver_for=lambda f: spread.setdefault(f.path, Resolver(f.path)))
        )

    assert [comparable(o) for o in outcomes] == expected
    assert {path: r.asked for path, r in spread.items()} == {path: r.asked for path, r in here.items()}
    html = outcomes[0].content_html if isinstance(outcomes[0], ParsedArticle) else ""
    assert stored_reference(key_for("articles/a0.md", 1, "/images/0.png")) in html
    assert "/images/missing.png" in html and ".invalid/" not in html


def test_a_process_that_dies_fails_the_parse_and_ends_the_others() -> None:
    files = corpus()
    with ArticleParser(ParseOptions(), 2) as parser:
        outcomes = parser.parse(files)
        next(outcomes)
        for child in multiprocessing.active_children():
            if child.name == "render":
                child.kill()
        with pytest.raises(RuntimeError, match="ended without answering"):
            list(outcomes)
        assert [c for c in multiprocessing.active_children() if c.name == "render"] == []


def test_stopping_early_ends_the_processes() -> None:
    with ArticleParser(ParseOptions(), 2) as parser:
        outcomes = parser.parse(corpus())
        next(outcomes)
        outcomes.close()
        assert [c for c in multiprocessing.active_children() if c.name == "render"] == []


def test_starting_the_processes_while_threads_run_warns_of_nothing() -> None:
    # Warnings are errors here: a fork of this threaded process would warn on Python 3.12+.
    stop = threading.Event()
    thread = threading.Thread(target=stop.wait, daemon=True)
    thread.start()
    try:
        with ArticleParser(ParseOptions(), 2) as parser:
            assert len(list(parser.parse(corpus()[:MIN_FILES_FOR_PROCESSES]))) == MIN_FILES_FOR_PROCESSES
    finally:
        stop.set()
        thread.join()
