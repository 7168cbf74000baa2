"""Users: who the blog serves, their App installation and their repository."""

from __future__ import annotations

import logging
from typing import Any

import peewee

from function.errors import UnknownUser, UserExists
from function.store.base import StoreBase
from function.store.base import translated as _translated
from function.store.models import (
    User,
)
from function.store.records import (
    UserRecord,
)

log = logging.getLogger(__name__)


_USER_COLUMNS = (
    User.id,
    User.name,
    User.email,
    User.github_installation_id,
    User.repository,
    User.repository_id,
    User.source,
    User.removal_confirmed,
)


class UserQueries(StoreBase):
    @_translated
    def add_user(
        self, name: str, email: str, installation_id: int | None, repository: str | None = None
    ) -> UserRecord:
        """Register a user. Raises UserExists when the name or the installation id is taken."""
        try:
            user_id = (
                User.insert(
                    name=name,
                    email=email,
                    github_installation_id=installation_id,
                    repository=repository,
                )
                .bind(self._db)
                .execute()
            )
        except peewee.IntegrityError as exc:
            raise UserExists(f"a user named {name!r} or with installation {installation_id} exists") from exc
        return UserRecord(int(user_id), name, email, installation_id, repository)

    @_translated
    def get_user(self, name: str) -> UserRecord | None:
        """The user called ``name`` (byte-exact), or None."""
        return self._one_user(User.name == name)

    @_translated
    def find_user_by_installation(self, installation_id: int) -> UserRecord | None:
        """The user registered for a GitHub App installation, or None."""
        return self._one_user(User.github_installation_id == installation_id)

    @_translated
    def list_users(self) -> list[UserRecord]:
        """Every user, by name."""
        rows = self._rows(User.select(*_USER_COLUMNS).order_by(User.name))
        return [UserRecord(*row) for row in rows]

    @_translated
    def set_installation(self, name: str, installation_id: int | None) -> UserRecord:
        """Point the user at another App installation (or none). Raises UnknownUser, or UserExists when
        another user has that installation."""
        try:
            User.update(github_installation_id=installation_id).where(User.name == name).bind(
                self._db
            ).execute()
        except peewee.IntegrityError as exc:
            raise UserExists(f"installation {installation_id} belongs to another user") from exc
        user = self._one_user(User.name == name)
        if user is None:
            raise UnknownUser(f"no user named {name!r}")
        return user

    @_translated
    def set_repository(self, name: str, repository: str | None) -> UserRecord:
        """Follow another repository ("owner/name", or none: the next push pins one). Its GitHub id is
        forgotten: the next push from a repository of that name pins it. Raises UnknownUser."""
        User.update(repository=repository, repository_id=None).where(User.name == name).bind(
            self._db
        ).execute()
        user = self._one_user(User.name == name)
        if user is None:
            raise UnknownUser(f"no user named {name!r}")
        return user

    @_translated
    def pin_repository(self, user_id: int, repository: str, repository_id: int | None) -> None:
        """Record the repository a push came from as the user's, once: only a user who follows no
        repository yet gets the name, and only a user whose repository id is unknown gets the id (a
        delivery never replaces what is stored; ``set_repository`` does, from the command line)."""
        User.update(repository=repository).where(User.id == user_id, User.repository.is_null()).bind(
            self._db
        ).execute()
        if repository_id is not None:
            # The caller holds the user's lock and has checked that the names agree (GitHub compares
            # them case-insensitively, SQLite would not).
            User.update(repository_id=repository_id).where(
                User.id == user_id, User.repository_id.is_null()
            ).bind(self._db).execute()

    @_translated
    def bind_source(self, user_id: int, source: str) -> None:
        """Record the source of the user's first sync, once: a user bound already keeps theirs (the
        caller holds the user's lock and checked it; ``set_source`` changes it, from the command line)."""
        User.update(source=source).where(User.id == user_id, User.source.is_null()).bind(self._db).execute()

    @_translated
    def set_source(self, name: str, source: str, repository: str | None = None) -> UserRecord:
        """Bind the user to another source (``github`` or ``dir:PATH``); for ``github``, ``repository``
        (owner/name) is followed, its id forgotten as ``set_repository`` does. Raises UnknownUser."""
        changes: dict[Any, Any] = {User.source: source}
        if repository is not None:
            changes.update({User.repository: repository, User.repository_id: None})
        User.update(changes).where(User.name == name).bind(self._db).execute()
        user = self._one_user(User.name == name)
        if user is None:
            raise UnknownUser(f"no user named {name!r}")
        return user

    @_translated
    def confirm_removal(self, user_id: int, count: int | None) -> None:
        """Let the user's next sync archive up to ``count`` served articles at once (None: no longer)."""
        User.update(removal_confirmed=count).where(User.id == user_id).bind(self._db).execute()

    @_translated
    def find_user_by_account(self, account_id: int) -> UserRecord | None:
        """The user linked to the GitHub account ``account_id`` (its numeric id), or None."""
        return self._one_user(User.github_account_id == account_id)

    @_translated
    def account_of(self, name: str) -> int | None:
        """The GitHub account id the user ``name`` is linked to, or None (not linked yet, or no user).
        Inside a transaction, the row is locked (``_locking``) for what the transaction decides on it."""
        row = self._first(self._locking(User.select(User.github_account_id).where(User.name == name)))
        return int(row[0]) if row and row[0] is not None else None

    @_translated
    def link_account(self, name: str, account_id: int) -> None:
        """Link the user ``name`` to the GitHub account ``account_id``."""
        User.update(github_account_id=account_id).where(User.name == name).bind(self._db).execute()

    def _one_user(self, condition: Any) -> UserRecord | None:
        # Inside a transaction (an installation event applied all or nothing), what is read decides
        # what is written: the read locks the row and sees the latest committed one (``_locking``).
        row = self._first(self._locking(User.select(*_USER_COLUMNS).where(condition)))
        return UserRecord(*row) if row else None
