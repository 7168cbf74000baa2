"""The sync's embedding step: every served article gets vectors, only what changed is embedded again, a
failing provider costs a bounded number of calls and leaves the articles due for the next push."""

from __future__ import annotations

import logging

import pytest

from function.aws.deadline import Deadline
from function.embeddings.http_json import HttpClients
from function.embeddings.refresh import GIVE_UP_AFTER, VectorRefresh
from function.embeddings.service import ServiceEmbeddings
from function.embeddings.status import status_part, vector_status
from function.settings import Settings
from function.store.embeddings import EmbeddingQueries
from function.store.facade import PeeweeStore
from function.store.records import UserRecord
from tests.kit.builders import T0, apply_as_worker, article, at
from tests.kit.embedding_standin import EmbeddingStandIn

API_KEY = "sk-refresh-secret-0123456789abcdef"


@pytest.fixture
def user(store: PeeweeStore) -> UserRecord:
    return store.users.add_user("alice", "alice@example.com", 101, "alice/blog")


@pytest.fixture
def provider(standin: EmbeddingStandIn, quick_http: HttpClients) -> ServiceEmbeddings:
    return ServiceEmbeddings(standin.url, quick_http, api_key=API_KEY)


def refresh(store: PeeweeStore, provider: ServiceEmbeddings) -> VectorRefresh:
    return VectorRefresh(provider, EmbeddingQueries(store.session), lambda: T0)


def missing(store: PeeweeStore, provider: ServiceEmbeddings) -> dict[str, int]:
    return EmbeddingQueries(store.session).missing_count(provider.model, provider.chunking)


def test_every_served_article_is_embedded_once(
    store: PeeweeStore, user: UserRecord, provider: ServiceEmbeddings, standin: EmbeddingStandIn
) -> None:
    apply_as_worker(store, user.id, [article("a"), article("b"), article("draft", publish=False)], [], T0)

    tally = refresh(store, provider).run(user.id)

    assert (tally.embedded, tally.failed) == (2, 0)
    assert missing(store, provider) == {}
    calls = len(standin.calls)
    assert refresh(store, provider).run(user.id).embedded == 0
    assert len(standin.calls) == calls  # nothing due: no call


def test_only_an_edited_text_is_embedded_again(
    store: PeeweeStore, user: UserRecord, provider: ServiceEmbeddings, standin: EmbeddingStandIn
) -> None:
    apply_as_worker(store, user.id, [article("a"), article("b")], [], T0)
    refresh(store, provider).run(user.id)
    standin.calls.clear()

    apply_as_worker(store, user.id, [article("a", body="A new paragraph.")], [], at(1))
    tally = refresh(store, provider).run(user.id)

    assert tally.embedded == 1
    assert standin.calls[0].path == "/chunks" and standin.calls[0].body["content"] == "A new paragraph."


def test_a_change_of_tags_alone_keeps_the_vectors_without_a_call(
    store: PeeweeStore, user: UserRecord, provider: ServiceEmbeddings, standin: EmbeddingStandIn
) -> None:
    apply_as_worker(store, user.id, [article("a")], [], T0)
    refresh(store, provider).run(user.id)
    standin.calls.clear()

    apply_as_worker(store, user.id, [article("a", tags=("tidb",))], [], at(1))
    tally = refresh(store, provider).run(user.id)

    assert (tally.kept, tally.embedded) == (1, 0)
    assert standin.calls == []


def test_a_provider_that_fails_is_given_up_on_and_the_articles_stay_due(
    store: PeeweeStore,
    user: UserRecord,
    provider: ServiceEmbeddings,
    standin: EmbeddingStandIn,
    caplog: pytest.LogCaptureFixture,
) -> None:
    apply_as_worker(store, user.id, [article(f"a{i}") for i in range(5)], [], T0)
    standin.faults.status = 503

    with caplog.at_level(logging.DEBUG):
        tally = refresh(store, provider).run(user.id)

    assert (tally.failed, tally.stopped) == (GIVE_UP_AFTER, "provider failing")
    assert len(standin.calls) == GIVE_UP_AFTER * 2  # each article's call tried twice, then given up
    assert missing(store, provider) == {"alice": 5}
    logged = [r for r in caplog.records if r.getMessage() == "Article not embedded"]
    assert logged and "HTTP 503" in logged[0].error  # type: ignore[attr-defined]
    assert not [r for r in caplog.records if API_KEY in repr(vars(r))]  # nor in any field of any line

    # WHEN the provider is back, THEN the next run embeds them all
    standin.faults.status = None
    assert refresh(store, provider).run(user.id).embedded == 5
    assert missing(store, provider) == {}


@pytest.mark.parametrize(
    "fault", ["wrong_dimension", "non_finite", "skip_index"], ids=["dimension", "nan", "indexes"]
)
def test_a_bad_answer_stores_nothing(
    store: PeeweeStore, user: UserRecord, provider: ServiceEmbeddings, standin: EmbeddingStandIn, fault: str
) -> None:
    apply_as_worker(store, user.id, [article("a")], [], T0)
    setattr(standin.faults, fault, True)

    tally = refresh(store, provider).run(user.id)

    assert (tally.embedded, tally.failed) == (0, 1)
    assert missing(store, provider) == {"alice": 1}


def test_no_article_is_started_past_the_deadline_margin(
    store: PeeweeStore, user: UserRecord, provider: ServiceEmbeddings, standin: EmbeddingStandIn
) -> None:
    apply_as_worker(store, user.id, [article("a"), article("b")], [], T0)

    tally = refresh(store, provider).run(user.id, Deadline.after(10.0))  # under the 30 s margin

    assert (tally.embedded, tally.stopped) == (0, "deadline")
    assert standin.calls == []


def test_the_status_counts_what_is_missing_without_calling_the_provider(
    store: PeeweeStore, user: UserRecord, provider: ServiceEmbeddings, standin: EmbeddingStandIn
) -> None:
    apply_as_worker(store, user.id, [article("a"), article("b")], [], T0)
    queries = EmbeddingQueries(store.session)

    status = vector_status("service", provider, queries)

    assert (status.provider, status.model, status.missing, status.missing_total) == (
        "service",
        provider.model,
        {"alice": 2},
        2,
    )
    assert standin.calls == []
    assert vector_status(None, None, queries).model is None


def test_the_status_line_says_what_is_missing_and_what_computes_it(
    store: PeeweeStore, user: UserRecord, standin: EmbeddingStandIn
) -> None:
    settings = Settings(
        webhook_secret="s",
        database_url="sqlite:///unused.db",
        embedding_provider="service",
        embedding_url=standin.url,
    )
    part = status_part(settings)
    apply_as_worker(store, user.id, [article("a"), article("b")], [], T0)

    assert part(store, user) == (
        "semantic: 2 served articles without current vectors (service:default): the next push computes "
        "them, or `blog-api sync --user alice`"
    )
    assert standin.calls == []

    provider = ServiceEmbeddings(standin.url, HttpClients.default())
    refresh(store, provider).run(user.id)
    assert part(store, user) == "semantic: every served article has its vectors (service:default)"
    off = Settings(webhook_secret="s", database_url="sqlite:///unused.db")
    assert status_part(off)(store, user) == "semantic: off (EMBEDDING_PROVIDER is not set)"
