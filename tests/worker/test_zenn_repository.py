"""A Zenn repository synced unedited, through the GitHub App path (SQLite and MariaDB): every published
article served with its date, README.md no failure, a broken file that costs nothing on later pushes."""

from __future__ import annotations

import re
from pathlib import Path

from tests.kit.blog_fixtures import Blog, article
from tests.kit.deliveries import delivery_uuid
from tests.kit.statements import count_statements

ZENN = Path(__file__).resolve().parents[1] / "fixtures" / "zenn" / "articles"
BROKEN = b"---\ntitle: [unclosed\n---\nbody\n"


def zenn_files() -> dict[str, bytes]:
    return {f"articles/{p.name}": p.read_bytes() for p in sorted(ZENN.iterdir())}


def counts(answer: dict[str, object]) -> dict[str, object]:
    """The answer's status and counts (it says more, e.g. which files changed)."""
    return {k: answer[k] for k in ("status", "processed", "succeeded", "failed") if k in answer}


def by_slug(blog: Blog) -> dict[str, dict[str, object]]:
    return {a["slug"]: a for a in blog.articles()}


def test_an_unedited_zenn_repository_serves_every_published_article_with_its_date(blog: Blog) -> None:
    blog.github.set_files(zenn_files())

    answer = blog.push(delivery="zenn-1")

    # README.md is not an article (not counted, not failed); the new:article draft is no failure either.
    assert counts(answer.get_json()) == {"status": "processed", "processed": 10, "succeeded": 10, "failed": 0}
    served = by_slug(blog)
    assert set(served) == {
        "100-example-markdown-guide",
        "101-example-toc-check",
        "102-example-footnotes",
        "201-example-code-fence",
        "300-example-embed-basics",
        "304-example-embed-katex",
        "800-example-xss-check",
        "2024-01-21-dated-slug",
        "zenn-published-at",
    }
    assert served["zenn-published-at"]["publishedAt"] == "2024-01-21T00:30:00.000000Z"  # 09:30 in Tokyo
    assert served["2024-01-21-dated-slug"]["publishedAt"] == "2024-01-20T15:00:00.000000Z"
    assert served["zenn-published-at"]["emoji"] == "⏰"
    assert served["101-example-toc-check"]["tags"] == ["React", "Rust"]
    one = blog.client.get("/users/alice/articles/100-example-markdown-guide").get_json()
    assert one["emoji"] == "👩‍💻" and one["type"] == "idea"
    with blog.store() as store:
        record = store.deliveries.get_delivery(delivery_uuid("zenn-1"))
    # The XSS fixture holds a form feed, which XML forbids: the one warning.
    assert record is not None and record.outcome == "success"
    assert (
        record.error is not None
        and "XML 1.0 forbids" in record.error
        and "800-example-xss-check" in record.error
    )


def test_an_article_without_emoji_serves_null(blog: Blog) -> None:
    blog.github.set_files({"articles/plain.md": article("Plain")})
    blog.push()
    assert by_slug(blog)["plain"]["emoji"] is None


def test_an_explicit_date_wins_over_a_stored_one_and_the_slug_date_only_dates_new_articles(
    blog: Blog,
) -> None:
    blog.github.set_files(
        {"articles/20240301-post.md": article("P"), "articles/plain.md": article("Plain", body="v1")}
    )
    blog.push(delivery="1")
    first = by_slug(blog)
    assert first["20240301-post"]["publishedAt"] == "2024-02-29T15:00:00.000000Z"

    # An explicit date replaces the stored time; an edit without one keeps it.
    blog.commit(
        {
            "articles/20240301-post.md": (
                b"---\ntitle: P\npublished: true\npublished_at: 2024-03-05 12:00\n---\nx"
            ),
            "articles/plain.md": article("Plain", body="v2"),
        }
    )
    blog.push(delivery="2")
    second = by_slug(blog)
    assert second["20240301-post"]["publishedAt"] == "2024-03-05T03:00:00.000000Z"
    assert second["plain"]["publishedAt"] == first["plain"]["publishedAt"]

    # Renaming an already-published article to a dated slug is a new article (new slug); the old one
    # keeps its time when it comes back.
    blog.commit({"articles/20240301-post.md": article("P again")})
    blog.push(delivery="3")
    assert by_slug(blog)["20240301-post"]["publishedAt"] == "2024-03-05T03:00:00.000000Z"


def test_a_broken_file_is_reported_every_time_but_never_fetched_again(blog: Blog) -> None:
    files = {f"articles/post-{i}.md": article(f"Post {i}") for i in range(5)}
    files["articles/broken.md"] = BROKEN
    blog.github.set_files(files)
    first = blog.push(delivery="1").get_json()
    assert counts(first) == {"status": "processed", "processed": 6, "succeeded": 5, "failed": 1}

    # A push that changes no article: no article file is fetched, and the broken one is still reported.
    blog.commit({"README.md": b"# touched\n"})
    blog.github.reset_records()
    with count_statements(blog.db) as statements:
        again = blog.push(delivery="2").get_json()
    assert counts(again) == counts(first)
    assert blog.github.count("blob") == 0 and blog.github.count("tarball") == 0, blog.github.counts()
    writes = [s for s in statements.statements if s.startswith(("INSERT", "UPDATE", "DELETE"))]
    # Only the delivery's record (its start and finish): no article, no failure rewritten.
    assert writes and all(re.match(r"\w+(?: INTO| FROM)? [`\"]deliveries[`\"]", w) for w in writes), writes
    with blog.store() as store:
        record = store.deliveries.get_delivery(delivery_uuid("2"))
    assert record is not None and record.outcome == "partial"
    assert "articles/broken.md" in (record.error or "") and "not valid YAML" in (record.error or "")

    # Fixing the file fetches it once and clears the failure.
    blog.commit({"articles/broken.md": article("Fixed")})
    blog.github.reset_records()
    fixed = blog.push(delivery="3").get_json()
    assert counts(fixed) == {"status": "processed", "processed": 6, "succeeded": 6, "failed": 0}
    assert blog.github.count("blob") == 1
    assert by_slug(blog)["broken"]["title"] == "Fixed"


def test_a_delivery_with_only_broken_files_is_complete_and_its_redelivery_is_skipped(blog: Blog) -> None:
    blog.github.set_files({"articles/ok.md": article("OK"), "articles/broken.md": BROKEN})
    # On Lambda: no 5xx, so no retry.
    result = blog.deliver_via_lambda(delivery="once")
    assert result["statusCode"] == 200
    assert counts(result["body"]) == {"status": "processed", "processed": 2, "succeeded": 1, "failed": 1}
    blog.github.reset_records()
    again = blog.deliver_via_lambda(delivery="once")
    assert again["body"]["status"] == "skipped"
    assert blog.github.count("blob") == 0


def test_a_transient_failure_still_retries(blog: Blog) -> None:
    blog.github.set_files({"articles/a.md": article("A")})
    sha = blog.github.repos["octo/blog"].commits[blog.github.head()]["articles/a.md"]
    blog.github.fail(f"/repos/octo/blog/git/blobs/{sha}", 502, times=None)
    assert blog.push(delivery="flaky").get_json()["failed"] == 1
    with blog.store() as store:
        record = store.deliveries.get_delivery(delivery_uuid("flaky"))
    assert record is not None and record.outcome == "failed"
    blog.github.clear_faults()
    assert blog.push(delivery="flaky").get_json()["succeeded"] == 1  # a failed delivery runs again


def test_unknown_front_matter_keys_are_warnings_in_the_delivery_record(blog: Blog) -> None:
    blog.github.set_files(
        {"articles/a.md": b"---\ntitle: A\npublished: true\npublication_name: acme\n---\nbody\n"}
    )
    assert blog.push(delivery="w").get_json()["failed"] == 0
    with blog.store() as store:
        record = store.deliveries.get_delivery(delivery_uuid("w"))
    assert record is not None and record.outcome == "success"
    assert record.error == "warning: articles/a.md: unknown front matter key 'publication_name' (ignored)"
