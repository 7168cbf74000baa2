"""The search route's work: the lexical index, the semantic port, or both fused, for one request.

Lexical search is two database statements (``function.store.search_reads``). Semantic search asks the
port for the nearest articles (more than a page: the filters and unpublished articles drop some), then
reads their summaries. Hybrid fuses the lexical and the semantic rankings by reciprocal rank
(``function.search.fusion``). A page never goes past ``offset`` + ``limit`` of the first
``CANDIDATES`` articles of a ranking, so semantic and hybrid totals count at most that many.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from function.api.search_params import HYBRID, LEXICAL, MAX_LIMIT, MAX_OFFSET, SEMANTIC, SearchParams
from function.errors import NotFound, SearchUnavailable
from function.search.fusion import fused, fused_distance
from function.search.lexical import MAX_QUERY_TERMS, distance
from function.search.port import SemanticSearch
from function.search.tokens import query_terms
from function.store.facade import PeeweeStore
from function.store.records import ArticleView
from function.store.search_reads import Filters
from shared.runtime_settings import variable

# The most articles a ranking is read to: the deepest page there is.
CANDIDATES = MAX_OFFSET + MAX_LIMIT


@dataclass(frozen=True)
class SearchResult:
    """A page of matches with their distances (ascending), and how many matched in all."""

    hits: list[tuple[ArticleView, float]]
    total: int


def search_mode(asked: str | None, semantic: SemanticSearch | None) -> str:
    """The mode to run: the one asked for, else hybrid when embeddings are configured and lexical
    when not. SearchUnavailable for semantic or hybrid without an embedding provider."""
    if asked is None:
        return HYBRID if semantic is not None else LEXICAL
    if asked != LEXICAL and semantic is None:
        raise SearchUnavailable(
            f"searchMode={asked} needs an embedding provider, and none is configured "
            f"({_provider_setting()}); searchMode=lexical works without one"
        )
    return asked


def _provider_setting() -> str:
    return variable("embedding_provider")


def run_search(
    store: PeeweeStore,
    semantic: SemanticSearch | None,
    user_name: str,
    params: SearchParams,
    filters: Filters,
) -> SearchResult:
    """The page ``params`` ask for. NotFound for no such user; SearchUnavailable as ``search_mode``."""
    mode = search_mode(params.mode, semantic)
    if mode == LEXICAL:
        return _lexical(store, user_name, params, filters)
    assert semantic is not None  # search_mode refused the other case
    user = store.users.get_user(user_name)
    if user is None:
        raise NotFound(f"no user named {user_name!r}")
    nearest = semantic.search(user.id, params.query, CANDIDATES)
    if mode == SEMANTIC:
        views = store.search.summaries_of(user_name, [i for i, _ in nearest], filters=filters)
        kept = [(views[i], d) for i, d in nearest if i in views]
        return SearchResult(kept[params.offset : params.offset + params.limit], len(kept))
    return _hybrid(store, user_name, params, filters, nearest)


def _lexical(store: PeeweeStore, user_name: str, params: SearchParams, filters: Filters) -> SearchResult:
    terms = query_terms(params.query, limit=MAX_QUERY_TERMS)
    page = store.search.lexical_page(
        user_name, terms, limit=params.limit, offset=params.offset, filters=filters
    )
    if page is None:
        raise NotFound(f"no user named {user_name!r}")
    return SearchResult([(view, distance(score)) for view, score in page.hits], page.total)


def _hybrid(
    store: PeeweeStore,
    user_name: str,
    params: SearchParams,
    filters: Filters,
    nearest: Sequence[tuple[int, float]],
) -> SearchResult:
    terms = query_terms(params.query, limit=MAX_QUERY_TERMS)
    lexical = store.search.lexical_ranking(user_name, terms, limit=CANDIDATES, filters=filters) or []
    views = {view.id: view for view, _ in lexical}
    missing = [i for i, _ in nearest if i not in views]
    views.update(store.search.summaries_of(user_name, missing, filters=filters))
    ranking = fused([[view.id for view, _ in lexical], [i for i, _ in nearest if i in views]])
    kept = [(views[i], fused_distance(score)) for i, score in ranking]
    return SearchResult(kept[params.offset : params.offset + params.limit], len(kept))
