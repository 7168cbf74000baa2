"""A repository of 200 hostile files beside 50 good articles and a good book, through the real worker
(the GitHub stand-in, render processes and all): the delivery is ``partial``, never failed or retried;
every good article and the good book are served; each hostile file either fails alone, in words, or
is served with what made it hostile taken out. Before, any one of them answered 500 (retried into the
dead-letter queue, on every later push) or ran for minutes.

The time of the delivery is printed (``pytest -s``), not asserted: the target is under 10 s on a
quiet machine (figures in the commit that added this test); the generous time-out only stops a hang.
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Iterator

import pytest

from tests.kit.answers import contract_counts
from tests.kit.blog_checks import delivery, served
from tests.kit.blog_fixtures import Blog, article

GOOD_ARTICLES = 50
HOSTILE_FILES = 200
GOOD_BOOK = "a-good-book-of-notes"

# Each kind: (front matter, body). Rendered into articles, chapters or configs below.
FRONT = {
    "huge number": "title: 0x" + "f" * 5000,
    "huge decimal": "title: " + "9" * 5000,
    "year 1": "title: t\npublished_at: 0001-01-01",
    "past year 9999": "title: t\npublished_at: 9999-12-31T23:00:00-05:00",
    "aliases": "title: t\nx: &a " + "a/" * 1500 + "\ntags: [" + ", ".join(["*a"] * 3000) + "]",
    "billion laughs": "a: &a [x, x, x, x, x, x, x, x, x]\n"
    + "".join(
        f"{c}: &{c} [*{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}]\n"
        for p, c in zip("abcdefg", "bcdefgh", strict=True)
    )
    + "title: t",
    "surrogate title": 'title: "x\\udcbf"\npublish: true',
    "noncharacter title": 'title: "Caf\\uFFFEe"\npublish: true',
    "control in tags": 'title: t\npublish: true\ntags: ["a\\x01b"]',
    "nested": "title: t\ntags: [" + "[" * 400 + "]" * 400 + "]",
    "python tag": "title: !!python/object/apply:os.system [ls]",
    "not closed": "title: t",
}
BODY = {
    "youtube ²": "https://www.youtube.com/watch?v=abcdefghijk&t=%C2%B2\n\n@[youtube](https://youtu.be/abcdefghijk?t=²)",
    "speakerdeck ²": "@[speakerdeck](abc?slide=²)",
    "mermaid init": "```mermaid\n%%{init: {'themeCSS': 'url(https://logger.example/)'}}%%\ngraph TD\n```",
    "reserved ids": "# root\n## app\n### config",
    "formula in attribute": "<iframe src='x' title='\n\n$x$\n\n' >",
    "blank lines": "\n" * 200_000 + "x",
    "many headings": "# a\n\n" * 15_000,
    "deep lists": "".join("  " * i + "- x\n" for i in range(3000)),
}
CONFIGS = {
    "config aliases": "title: abcdefgh\nx: &a "
    + "a/" * 15_000
    + "\ntags: ["
    + ", ".join(["*a"] * 6000)
    + "]\n",
    "config surrogate summary": 'title: abcdefgh\nsummary: "x\\udcbf"\npublished: true\n',
    "config huge number": "title: 0x" + "f" * 5000 + "\n",
    "config too big": "title: abcdefgh\nsummary: '" + "x" * 200_000 + "'\n",
    "config not a mapping": "- a\n- b\n",
}


def hostile_files() -> dict[str, bytes]:
    """200 files: articles with each hostile front matter and body, and books with hostile configs."""
    files: dict[str, bytes] = {}
    kinds: Iterator[tuple[str, str]] = itertools.cycle(
        [(front, "Body.") for front in FRONT.values()]
        + [("title: Body vector\npublish: true", body) for body in BODY.values()]
    )
    # The two that spend their whole CPU budget are kept to a few files: each costs about a second.
    costly = {BODY["many headings"]: 2}
    n = 0
    while len(files) < HOSTILE_FILES - 2 * len(CONFIGS):
        front, body = next(kinds)
        if body in costly:
            if costly[body] == 0:
                continue
            costly[body] -= 1
        closing = "" if front == FRONT["not closed"] else "---\n"
        text = f"---\n{front}\n{closing}{body}\n"
        files[f"articles/hostile-{n:03}.md"] = text.encode("utf-8", "surrogatepass")
        n += 1
    for i, config in enumerate(CONFIGS.values()):
        folder = f"books/hostile-book-{i:02}"
        files[f"{folder}/config.yaml"] = config.encode("utf-8", "surrogatepass")
        files[f"{folder}/1.intro.md"] = b"---\ntitle: Intro\n---\nx\n"
    assert len(files) == HOSTILE_FILES
    return files


def good_files() -> dict[str, bytes]:
    files = {
        f"articles/good-{n:02}.md": article(f"Good {n}", tags=("tech/aws",), body=f"Body {n}.\n\n$x^{n}$")
        for n in range(GOOD_ARTICLES)
    }
    files[f"books/{GOOD_BOOK}/config.yaml"] = b"title: A good book\nsummary: Notes\npublished: true\n"
    files[f"books/{GOOD_BOOK}/1.intro.md"] = b"---\ntitle: Intro\n---\nHello.\n"
    files[f"books/{GOOD_BOOK}/2.more.md"] = b"---\ntitle: More\n---\nMore.\n"
    return files


@pytest.mark.timeout(300)
def test_a_hostile_repository_syncs_partially_and_serves_every_good_file(blog: Blog) -> None:
    # GIVEN a repository of 200 hostile files beside 50 good articles and a good book
    blog.github.set_files({**good_files(), **hostile_files()})

    # WHEN it is pushed
    began = time.perf_counter()
    answer = blog.push(delivery="hostile-1")
    took = time.perf_counter() - began
    print(
        f"\nhostile repository: {HOSTILE_FILES} hostile + {GOOD_ARTICLES} good files synced in {took:.2f} s"
    )

    # THEN the delivery is processed, not failed: nothing for GitHub or Lambda to retry
    assert answer.status_code == 200, answer.get_json()
    summary = answer.get_json()
    counts = contract_counts(summary)
    assert counts["status"] == "processed"
    assert counts["failed"] > 0 and counts["succeeded"] >= GOOD_ARTICLES + 1
    record = delivery(blog, "hostile-1")
    assert record.outcome == "partial" and not record.retryable

    # ... every good article and the good book are served
    titles = {slug: a["title"] for slug, a in served(blog).items()}
    assert {f"good-{n:02}": f"Good {n}" for n in range(GOOD_ARTICLES)}.items() <= titles.items()
    book = blog.client.get(f"/users/alice/books/{GOOD_BOOK}")
    assert book.status_code == 200 and [c["slug"] for c in book.get_json()["chapters"]] == ["intro", "more"]

    # ... only hostile files failed, and the record says which and why, in words (cut at 2,000 chars)
    failed = summary["failedPaths"]
    assert failed and all(p.startswith(("articles/hostile-", "books/hostile-book-")) for p in failed)
    assert record.error is not None and record.error.startswith(tuple(f"{p}: " for p in failed))
    assert "Traceback" not in record.error and "Exceeds the limit" not in record.error

    # ... and a hostile file that could be read is served with the hostile part taken out
    assert "Cafe" in titles.values()  # the noncharacter removed, the article kept
    for slug, title in titles.items():
        assert "\ufffe" not in title and "\udcbf" not in title, slug

    # WHEN a good article is edited and pushed THEN it syncs; the hostile files are not read again
    blog.commit({"articles/good-00.md": article("Good again")})
    again = blog.push(delivery="hostile-2")
    assert again.status_code == 200 and contract_counts(again.get_json())["status"] == "processed"
    assert served(blog)["good-00"]["title"] == "Good again"
    assert delivery(blog, "hostile-2").outcome == "partial"  # the failures are remembered, not redone
