"""The safety valve's verdict: held only when at least 20 served articles, and more than the fraction of
what is served, would be archived; drafts, archived and scheduled articles do not count."""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest

from function.sources.port import RepoFile, Snapshot
from function.store.records import StoredArticle
from function.worker.sync.mass_removal import MassRemoval, mass_removal
from function.worker.sync.plan import Known, Planner, ReadPlan

NOW = datetime(2026, 3, 1, 12, 0)


def stored(
    slug: str, *, publish: bool = True, archived: bool = False, at: datetime | None = None
) -> StoredArticle:
    when = at or NOW - timedelta(days=30)
    return StoredArticle(
        0, slug, f"articles/{slug}.md", "0" * 40, "h", archived, when, when, when, "", publish
    )


def index_of(count: int, **kinds: int) -> dict[str, StoredArticle]:
    """``count`` served articles a0…, and as many drafts, archived and scheduled ones as ``kinds`` says."""
    found = {f"a{n}": stored(f"a{n}") for n in range(count)}
    found |= {f"d{n}": stored(f"d{n}", publish=False) for n in range(kinds.get("drafts", 0))}
    found |= {f"x{n}": stored(f"x{n}", archived=True) for n in range(kinds.get("archived", 0))}
    later = NOW + timedelta(days=1)
    found |= {f"s{n}": stored(f"s{n}", at=later) for n in range(kinds.get("scheduled", 0))}
    return found


def plan_keeping(slugs: list[str], *, complete: bool = True) -> ReadPlan:
    files = tuple(RepoFile(f"articles/{slug}.md", "0" * 40) for slug in slugs)
    return Planner("articles").plan(Snapshot("h", files, complete=complete), Known({}, {}))


@pytest.mark.parametrize(
    ("served", "kept", "held"),
    [
        (134, 0, MassRemoval("alice", 134, 134)),  # the sample synced over a whole blog
        (40, 19, MassRemoval("alice", 21, 40)),  # 21 of 40: more than half, at least 20
        (40, 20, None),  # exactly half: not more than half
        (30, 11, None),  # 19 of 30: more than half, but fewer than 20
        (100, 79, None),  # 21 of 100: at least 20, but not half
        (8, 0, None),  # a small blog emptied: never held
    ],
)
def test_held_when_most_of_the_blog_and_at_least_20_articles_would_go(
    served: int, kept: int, held: MassRemoval | None
) -> None:
    index = index_of(served)
    plan = plan_keeping([f"a{n}" for n in range(kept)])

    assert mass_removal("alice", plan, index, NOW, 0.5) == held


def test_only_served_articles_count_not_drafts_archived_or_scheduled_ones() -> None:
    # 10 served, plus 50 drafts, 50 archived and 50 scheduled, all gone from the listing
    index = index_of(10, drafts=50, archived=50, scheduled=50)

    assert mass_removal("alice", plan_keeping([]), index, NOW, 0.5) is None


def test_a_truncated_listing_archives_nothing_so_it_is_never_held() -> None:
    assert mass_removal("alice", plan_keeping([], complete=False), index_of(100), NOW, 0.5) is None


def test_the_fraction_is_a_setting() -> None:
    index, plan = index_of(100), plan_keeping([f"a{n}" for n in range(70)])  # 30 of 100 would go

    assert mass_removal("alice", plan, index, NOW, 0.5) is None
    assert mass_removal("alice", plan, index, NOW, 0.25) == MassRemoval("alice", 30, 100)
    assert mass_removal("alice", plan_keeping([]), index, NOW, 1.0) is None  # 1: never held


def test_a_confirmed_removal_passes_up_to_its_count() -> None:
    index = index_of(50)

    assert mass_removal("alice", plan_keeping([]), index, NOW, 0.5, confirmed=50) is None
    assert mass_removal("alice", plan_keeping([]), index, NOW, 0.5, confirmed=49) == MassRemoval(
        "alice", 50, 50
    )


def test_the_message_names_the_counts_and_both_ways_out() -> None:
    message = MassRemoval("alice", 134, 134).message

    assert message.startswith("held: this sync would archive 134 of the 134 articles 'alice' serves")
    assert "nothing was archived" in message
    assert "blog-api sync --user alice --confirm-removal" in message
    assert "blog-api redeliver --confirm-removal" in message
