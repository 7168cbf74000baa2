"""A user is bound to the source its articles come from.

A sync compares the listing with what is stored and archives what is gone, so a sync of the wrong source
(the sample folder synced into a real user, another clone, GitHub for a folder's user) takes the whole
blog out of service. The first sync of a user records where it read from (by a push as by ``blog-api
sync``): ``github`` (which repository is the user's ``repository``, pinned as before), or ``dir:`` and the
resolved root of a folder (its articles/ folder names the same root). Every later sync from another source
is refused before anything is read or written, with words that name both sources and the command that
rebinds the user (``blog-api users set-source``).
"""

from __future__ import annotations

from collections.abc import Callable

from function.errors import SourceMismatch
from function.sources.port import ArticleSource
from function.store.records import UserRecord

GITHUB = "github"
DIR_PREFIX = "dir:"


def binding_of(source: ArticleSource) -> str:
    """What a user synced from ``source`` is bound to: a folder says (its ``binding()``), anything else
    reads a GitHub repository."""
    binding: Callable[[], str] | None = getattr(source, "binding", None)
    return binding() if binding is not None else GITHUB


def described(binding: str, repository: str | None = None) -> str:
    """A binding in words: "the folder /path", or "GitHub (the repository owner/name)"."""
    if binding.startswith(DIR_PREFIX):
        return f"the folder {binding.removeprefix(DIR_PREFIX)}"
    return f"GitHub (the repository {repository})" if repository else "GitHub"


def check_binding(user: UserRecord, binding: str, *, repository: str | None = None) -> None:
    """Raise ``SourceMismatch`` when ``user`` is bound to another source than ``binding`` (the source of
    this sync; ``repository``: the repository a push names). A user bound to nothing yet passes: the
    caller records the binding."""
    if user.source is None or user.source == binding:
        return
    bound = described(user.source, user.repository)
    reading = described(binding, repository or user.repository)
    target = (
        binding
        if binding.startswith(DIR_PREFIX)
        else f"{GITHUB}:{repository or user.repository or 'OWNER/NAME'}"
    )
    raise SourceMismatch(
        f"user {user.name!r} is bound to {bound}, and this sync reads {reading}: refused, nothing was "
        f"synced or archived. To serve {reading} as {user.name!r} instead: blog-api users set-source "
        f"--name {user.name} --source {target} (what is not there is archived by the next sync, held "
        "for confirmation when it is most of the blog)"
    )
