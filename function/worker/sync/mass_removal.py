"""The safety valve: a sync that would take most of a blog out of service is held, not carried out.

A push from the wrong place (a sample folder synced into a real user, a branch emptied by mistake, a
repository swapped) looks like a blog whose articles were all deleted. Archiving keeps the rows, but the
blog is gone from readers until someone notices. So before anything is written, the sync counts the
served articles (published, not archived, not scheduled) whose file is gone from a complete listing: when
they are at least ``MASS_REMOVAL_MIN_ARTICLES`` and more than ``MASS_REMOVAL_FRACTION`` of what is served,
the sync is held. Nothing is read or written, nothing archived; the delivery is recorded ``held`` with
the count, the alarm topic is told, and a person carries it out (``blog-api sync --user U
--confirm-removal``, or ``blog-api redeliver --confirm-removal``) or fixes the source.

Newest wins as before: a held sync writes nothing, and the confirmed sync reads the branch head (or the
folder) as it is then, under the user's lock, so what it archives is what the source says at that time.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING

from function.store.records import StoredArticle
from function.store.write_plan import served_before

if TYPE_CHECKING:
    # The summary holds a MassRemoval and the plan is made of the summary's records: types only here.
    from function.worker.sync.plan import ReadPlan

# Below this many articles going out of service, a sync is never held: a small blog's clean-up (or the
# sample's eight articles) is not an accident worth a person's time.
MASS_REMOVAL_MIN_ARTICLES = 20


@dataclass(frozen=True)
class MassRemoval:
    """A held sync: whose, how many served articles it would have archived, of how many served."""

    user_name: str
    going: int
    served: int

    @property
    def message(self) -> str:
        """What the delivery record, the CLI and the alarm say, with the two ways out."""
        user_name = self.user_name
        return (
            f"held: this sync would archive {self.going} of the {self.served} articles {user_name!r} serves "
            "(their files are gone from the source); nothing was archived. If the source is right, "
            f"`blog-api sync --user {user_name} --confirm-removal` (or `blog-api redeliver "
            "--confirm-removal`) carries it out; if it is not, fix it and push again"
        )


def mass_removal(
    user_name: str,
    plan: ReadPlan,
    index: Mapping[str, StoredArticle],
    now: datetime,
    fraction: float,
    *,
    confirmed: int | None = None,
) -> MassRemoval | None:
    """The valve's verdict on ``plan``: a ``MassRemoval`` when the sync must be held, else None. Only a
    complete listing archives anything, so only a complete listing can be held. ``confirmed``: how many
    served articles a person agreed this sync may archive (``--confirm-removal``): up to that, no hold."""
    if not plan.snapshot.complete:
        return None
    served = [slug for slug, stored in index.items() if served_before(stored, now)]
    going = sum(1 for slug in served if slug not in plan.slugs)
    if going < MASS_REMOVAL_MIN_ARTICLES or going <= fraction * len(served):
        return None
    if confirmed is not None and going <= confirmed:
        return None
    return MassRemoval(user_name, going, len(served))


@dataclass(frozen=True)
class Valve:
    """The valve of one sync: whose, the threshold, what a person confirmed (``confirmed``: a count from
    ``blog-api redeliver --confirm-removal``, None: nothing), and the sync's clock's now."""

    user_name: str
    fraction: float
    now: datetime
    confirmed: int | None = None

    def check(self, plan: ReadPlan, index: Mapping[str, StoredArticle]) -> MassRemoval | None:
        """The hold of ``plan``, or None."""
        return mass_removal(self.user_name, plan, index, self.now, self.fraction, confirmed=self.confirmed)
