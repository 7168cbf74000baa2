"""Parsing in worker processes gives exactly what parsing here gives: the same articles, byte for byte,
and the same failures, in the same order, over a real-shaped corpus and Zenn's own examples."""

from __future__ import annotations

import os
from pathlib import Path

from bench import real_corpus
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


def corpus() -> list[FileToParse]:
    files = [FileToParse(real_corpus.path(i), f"{i:040x}", real_corpus.article(i)) for i in range(24)]
    files += [FileToParse(f"articles/{p.name}", "0" * 40, p.read_bytes()) for p in sorted(ZENN.glob("*.md"))]
    files.append(FileToParse("articles/broken.md", "1" * 40, b"---\ntitle: [unclosed\n---\nbody"))
    files.append(FileToParse("articles/not valid.md", "2" * 40, b"---\ntitle: x\n---\n"))
    return files


def comparable(outcome: ParsedArticle | ArticleParseError) -> object:
    return ("error", str(outcome)) if isinstance(outcome, ArticleParseError) else outcome


def test_worker_processes_render_byte_for_byte_what_this_process_renders() -> None:
    files = corpus()
    options = ParseOptions(asset_base_url="https://assets.example.com")
    here = [comparable(parse_one(options, f)) for f in files]

    with ArticleParser(options, 2) as parser:
        assert parser.processes == 2
        forked = [comparable(o) for o in parser.parse(files)]

    assert forked == here
    failures = [o for o in here if isinstance(o, tuple)]
    assert ("error", str(parse_one(options, files[-1]))) in failures  # the failures are there too
    assert sum(isinstance(o, ParsedArticle) and o.content_html != "" for o in here) >= 30


def test_a_stream_of_files_is_parsed_as_it_comes() -> None:
    files = corpus()[:12]
    with ArticleParser(ParseOptions(), 2) as parser:
        streamed = [comparable(o) for o in parser.parse(iter(files))]
    assert streamed == [comparable(parse_one(ParseOptions(), f)) for f in files]


def test_few_files_and_one_process_stay_in_this_process() -> None:
    files = corpus()[: MIN_FILES_FOR_PROCESSES - 1]
    with ArticleParser(ParseOptions(), 2) as parser:
        assert len(list(parser.parse(files))) == len(files)
        assert parser._pool._children == []  # nothing was forked
    with ArticleParser(ParseOptions(), 1) as parser:
        assert parser.processes == 0


def test_the_process_count_follows_the_cpus_unless_set() -> None:
    assert process_count(None) == len(os.sched_getaffinity(0))
    assert process_count(1) == 1
    assert process_count(0) == 0
    assert process_count(6) == 6
