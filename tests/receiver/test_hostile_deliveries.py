"""Whole hostile deliveries: payload, headers and repository contents drawn together, each delivery
checked for what the bounds promise: no 5xx other than 503, bounded memory and time, and no write
outside the pushed repository's articles."""

from __future__ import annotations

import json
import time
import tracemalloc

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from function.articles.parse import slug_for_path
from tests.kit.blog_checks import stored
from tests.kit.blog_fixtures import Blog, article
from tests.kit.deliveries import github_headers

HOSTILE = settings(
    max_examples=15,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
# Budgets for one delivery on this machine: far above a real sync, far below what the unbounded code
# took (560 MB for 20 oversized files; 2.1 GB for one gzip bomb).
PEAK_BYTES = 300 * 1024 * 1024
SECONDS = 30

names = st.from_regex(r"[a-z0-9][a-z0-9_-]{0,12}", fullmatch=True)
folders = st.sampled_from(["articles/", "articles/sub/", "", "other/", "articles/../", ".github/"])
suffixes = st.sampled_from([".md", ".md", ".markdown", ".txt", ""])
contents = st.one_of(
    st.builds(lambda t, b: article(t or "T", body=b), st.text(max_size=30), st.text(max_size=300)),
    st.binary(max_size=2000),
    st.builds(lambda n: b"---\ntitle: big\n---\n" + b"x" * n, st.integers(900_000, 3_000_000)),
    st.sampled_from([b"", b"---\n---\n", b"---\ntitle: [unclosed\n---\n", b"\xff\xfe---"]),
)
repositories = st.dictionaries(
    st.builds(lambda f, n, s: f + n + s, folders, names, suffixes), contents, max_size=8
)


def _payload(blog: Blog, draw_ref: str, draw_after: str | None, repo: str) -> bytes:
    data = json.loads(blog.push_body(draw_ref))
    if draw_after is not None:
        data["after"] = draw_after
    data["repository"]["full_name"] = repo
    return json.dumps(data).encode()


@HOSTILE
@given(
    files=repositories,
    ref=st.sampled_from(["refs/heads/main", "refs/heads/main", "refs/heads/other", "refs/tags/v1"]),
    after=st.one_of(st.none(), st.from_regex(r"[0-9a-f]{40}", fullmatch=True), st.just("0" * 40)),
    repo=st.sampled_from(["octo/blog", "octo/blog", "octo/other", "../etc"]),
    delivery=st.text(min_size=1, max_size=60).filter(lambda s: s.isprintable()),
)
def test_a_hostile_delivery_stays_within_the_bounds(
    blog: Blog, files: dict[str, bytes], ref: str, after: str | None, repo: str, delivery: str
) -> None:
    blog.github.set_files(files or {"articles/a.md": article("A")})
    body = _payload(blog, ref, after, repo)
    headers = github_headers(body, delivery=delivery.encode("latin-1", "replace").decode("latin-1"))

    before = stored(blog)
    tracemalloc.start()
    started = time.monotonic()
    try:
        answer = blog.client.post("/webhooks/github", data=body, headers=headers)
        elapsed = time.monotonic() - started
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()

    assert answer.status_code < 500 or answer.status_code == 503, answer.get_data(as_text=True)
    if answer.status_code >= 400:
        assert set(answer.get_json()) == {"error", "message"}
    assert peak < PEAK_BYTES and elapsed < SECONDS
    # Only article files at the top of the pushed repository's articles folder are ever written.
    after_rows = stored(blog)
    # (An article gone from the repository is archived: kept, hidden; that is the pushed repository's too.)
    changed = {s for s, row in after_rows.items() if before.get(s) != row and not row.archived}
    allowed = {slug_for_path(path, "articles") for path in files or {"articles/a.md": b""}}
    if repo != "octo/blog" or ref != "refs/heads/main":
        assert not changed
    assert changed <= allowed - {None}
