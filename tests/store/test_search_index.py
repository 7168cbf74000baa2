"""The lexical search index as the sync keeps it, on SQLite and MariaDB: relevance on Japanese and
English articles shaped like real ones, and the index across edit, rename, delete and rebuild."""

from __future__ import annotations

import pytest

from function.search.lexical import MAX_QUERY_TERMS
from function.search.postings import BLOCK_DOCS, decode
from function.search.tokens import query_terms
from function.store.facade import PeeweeStore
from function.store.models import SearchDocument, SearchPosting
from function.store.records import UserRecord
from function.store.search_reads import NO_FILTERS, Filters, ScoredPage
from function.store.tag_filter import TagFilter
from tests.kit.builders import T0, apply_as_worker, article, at
from tests.kit.statements import count_statements

# Articles shaped like a Japanese tech blog's: long bodies with code, URLs and math, common words shared.
_COMMON_JA = (
    "この記事では実際の運用で気づいたことをまとめます。設定を変更したあとはテストを実行して、"
    "結果を確認してください。詳しくは公式ドキュメントを参照してください。"
)
_COMMON_EN = "In this post we look at what we learned in production. Run the tests after every change."

CORPUS = [
    article(
        "lambda-cold-start",
        title="AWS Lambdaのコールドスタートを短縮する",
        tags=("tech/aws/lambda",),
        body=(_COMMON_JA * 3)
        + "SnapStartを有効にすると初期化が速くなります。\n\n"
        + "```python\nimport boto3\nclient = boto3.client('lambda')\n```\n"
        + "https://docs.aws.amazon.com/lambda/latest/dg/snapstart.html を読みました。",
    ),
    article(
        "tidb-vector-index",
        title="TiDBのベクトル検索インデックスを試す",
        tags=("tech/database/tidb",),
        body=(_COMMON_JA * 3)
        + "HNSWのパラメータを調整しました。コサイン距離 $d = 1 - \\cos\\theta$ を使います。",
    ),
    article(
        "rust-async-runtime",
        title="Understanding the Tokio async runtime",
        tags=("lang/rust",),
        body=(_COMMON_EN * 4)
        + "The work-stealing scheduler moves tasks between worker threads. "
        + "`tokio::spawn` returns a JoinHandle.",
    ),
    article(
        "zenn-markdown-tips",
        title="Zennで使えるMarkdown記法まとめ",
        tags=("tech/markdown",),
        body=(_COMMON_JA * 3) + ":::message\nメッセージボックスの書き方\n:::\n\n数式はKaTeXで描画されます。",
    ),
    article(
        "postgres-vacuum",
        title="PostgreSQL VACUUM in practice",
        tags=("tech/database/postgres",),
        body=(_COMMON_EN * 4)
        + "Autovacuum thresholds depend on table size; bloat grows when long transactions hold snapshots.",
    ),
    article(
        "tokyo-meetup-report",
        title="東京で開催されたサーバーレス勉強会のレポート",
        tags=("event",),
        body=(_COMMON_JA * 3) + "登壇者はLambdaとStep Functionsの使い分けについて話しました。",
    ),
    article("draft-secret", title="未公開の下書き記事", body="秘密のキーワード", publish=False),
]


@pytest.fixture
def user(store: PeeweeStore) -> UserRecord:
    return store.users.add_user("alice", "alice@example.com", 101)


@pytest.fixture
def blog(store: PeeweeStore, user: UserRecord) -> PeeweeStore:
    apply_as_worker(store, user.id, CORPUS, [], T0)
    return store


def search(
    store: PeeweeStore, query: str, *, limit: int = 20, offset: int = 0, filters: Filters = NO_FILTERS
) -> ScoredPage:
    page = store.search.lexical_page(
        "alice", query_terms(query, limit=MAX_QUERY_TERMS), limit=limit, offset=offset, filters=filters
    )
    assert page is not None
    return page


def found(page: ScoredPage) -> list[str]:
    return [view.slug for view, _ in page.hits]


@pytest.mark.parametrize(
    ("query", "slug"),
    [
        ("コールドスタート", "lambda-cold-start"),
        ("ベクトル検索", "tidb-vector-index"),
        ("tokio async runtime", "rust-async-runtime"),
        ("Markdown記法", "zenn-markdown-tips"),
        ("postgresql vacuum", "postgres-vacuum"),
        ("サーバーレス勉強会", "tokyo-meetup-report"),
    ],
)
def test_a_distinctive_title_phrase_finds_its_article_first(blog: PeeweeStore, query: str, slug: str) -> None:
    assert found(search(blog, query))[0] == slug


@pytest.mark.parametrize(
    ("query", "slug"),
    [
        ("SnapStart", "lambda-cold-start"),
        ("HNSW", "tidb-vector-index"),
        ("work-stealing scheduler", "rust-async-runtime"),
        ("メッセージボックス", "zenn-markdown-tips"),
        ("autovacuum bloat", "postgres-vacuum"),
        ("使い分け", "tokyo-meetup-report"),
        ("boto3", "lambda-cold-start"),  # in a code block
        ("docs.aws.amazon.com", "lambda-cold-start"),  # in a URL
        ("cos theta", "tidb-vector-index"),  # in math
    ],
)
def test_a_body_only_term_finds_its_article_in_the_top_five(blog: PeeweeStore, query: str, slug: str) -> None:
    assert slug in found(search(blog, query))[:5]


def test_width_and_case_fold_to_the_same_terms(blog: PeeweeStore) -> None:
    full_width = "".join(chr(ord(c) + 0xFEE0) for c in "SNAPSTART")  # as an IME types it
    assert found(search(blog, full_width))[0] == "lambda-cold-start"
    assert found(search(blog, "ｺｰﾙﾄﾞｽﾀｰﾄ"))[0] == "lambda-cold-start"  # half-width katakana


def test_each_article_comes_once_scores_descending_and_drafts_never(blog: PeeweeStore) -> None:
    page = search(blog, "してください lambda 秘密")
    slugs = found(page)
    assert len(slugs) == len(set(slugs)) == page.total
    scores = [score for _, score in page.hits]
    assert scores == sorted(scores, reverse=True)
    assert "draft-secret" not in slugs


def test_paging_and_the_total(blog: PeeweeStore) -> None:
    everything = found(search(blog, "してください"))
    assert len(everything) == 4
    assert found(search(blog, "してください", limit=2, offset=1)) == everything[1:3]
    past = search(blog, "してください", offset=10)
    assert past.hits == [] and past.total == 4


def test_the_tag_filter_keeps_only_its_articles(blog: PeeweeStore) -> None:
    tags = TagFilter.of(["tech/database"])
    page = search(blog, "インデックス vacuum してください", filters=Filters(tags=tags))
    assert sorted(found(page)) == ["postgres-vacuum", "tidb-vector-index"]
    assert page.total == 2


def test_the_answer_carries_the_summary_with_its_tags(blog: PeeweeStore) -> None:
    view, score = search(blog, "SnapStart").hits[0]
    assert view.tags == ("tech/aws/lambda",)
    assert view.title == "AWS Lambdaのコールドスタートを短縮する"
    assert view.content == ""  # a summary: no body
    assert score > 0


def test_no_match_and_no_user(blog: PeeweeStore) -> None:
    assert search(blog, "kubernetes").hits == []
    assert blog.search.lexical_page("nobody", ["lambda"], limit=5, offset=0) is None


def test_the_search_is_two_statements(blog: PeeweeStore) -> None:
    with count_statements(blog.db) as counted:
        search(blog, "lambda コールドスタート")
    assert counted.round_trips == 2


def indexed_slugs(store: PeeweeStore, user_id: int) -> list[str]:
    rows = SearchDocument.select(SearchDocument.slug).where(SearchDocument.user == user_id).bind(store.db)
    return sorted(row.slug for row in rows)


def docs_of(store: PeeweeStore, user_id: int) -> dict[int, str]:
    rows = SearchDocument.select(SearchDocument.doc, SearchDocument.slug).where(
        SearchDocument.user == user_id
    )
    return {row.doc: row.slug for row in rows.bind(store.db)}


def entries(store: PeeweeStore, user_id: int) -> list[tuple[str, str, int, int]]:
    """Every entry of the index as (slug, term, weighted frequency, weighted length), decoded."""
    slugs = docs_of(store, user_id)
    found = []
    for row in SearchPosting.select().where(SearchPosting.user == user_id).bind(store.db):
        for record in decode(bytes(row.postings)):
            assert int(record["doc"]) // BLOCK_DOCS == row.block  # each entry in its own block's row
            found.append(
                (slugs[int(record["doc"])], row.term, int(record["frequency"]), int(record["length"]))
            )
    return sorted(found)


def term_slugs(store: PeeweeStore, user_id: int, term: str) -> list[str]:
    return sorted(slug for slug, t, _, _ in entries(store, user_id) if t == term)


def test_an_edit_replaces_the_articles_terms(blog: PeeweeStore, user: UserRecord) -> None:
    edited = article(
        "postgres-vacuum", title="PostgreSQL VACUUM in practice", body="Now about HOT updates and fillfactor."
    )
    apply_as_worker(blog, user.id, [edited], [], at(60))
    assert found(search(blog, "fillfactor")) == ["postgres-vacuum"]
    assert found(search(blog, "autovacuum")) == []
    # The terms the edit dropped have no entry of it left; its new ones have.
    assert term_slugs(blog, user.id, "autovacuum") == []
    assert term_slugs(blog, user.id, "fillfactor") == ["postgres-vacuum"]


def test_a_rename_moves_the_terms_to_the_new_slug(blog: PeeweeStore, user: UserRecord) -> None:
    old = next(a for a in CORPUS if a.slug == "rust-async-runtime")
    renamed = article("tokio-runtime", title=old.title, body=old.content, tags=old.tags)
    apply_as_worker(blog, user.id, [renamed], ["rust-async-runtime"], at(60))
    assert found(search(blog, "work-stealing")) == ["tokio-runtime"]
    assert term_slugs(blog, user.id, "stealing") == ["tokio-runtime"]


def test_a_deleted_article_leaves_the_index(blog: PeeweeStore, user: UserRecord) -> None:
    apply_as_worker(blog, user.id, [], ["tidb-vector-index"], at(60))
    assert found(search(blog, "HNSW")) == []
    assert "tidb-vector-index" not in indexed_slugs(blog, user.id)
    assert term_slugs(blog, user.id, "hnsw") == []


def test_writing_the_same_articles_again_rebuilds_the_same_index(blog: PeeweeStore, user: UserRecord) -> None:
    before = _all_rows(blog, user.id)
    apply_as_worker(blog, user.id, CORPUS, [], at(60))
    assert _all_rows(blog, user.id) == before
    assert indexed_slugs(blog, user.id) == sorted(a.slug for a in CORPUS)


def _all_rows(store: PeeweeStore, user_id: int) -> list[tuple[object, ...]]:
    return list(entries(store, user_id))


def test_an_unchanged_push_writes_nothing(blog: PeeweeStore, user: UserRecord) -> None:
    index = blog.reconcile.load_index(user.id)
    with count_statements(blog.db) as counted:
        blog.reconcile.apply(user.id, [], [], at(60), index=index)
    assert counted.count == 0
