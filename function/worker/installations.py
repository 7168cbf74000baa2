"""GitHub App installation events: ``users.github_installation_id`` follows the App's installation.

Match rule: by GitHub's numeric account id, which a rename keeps and nobody else can take. A user is
linked to the account of the first installation linked to them; from then on only that account links
them. For an account not linked yet, ``GITHUB_INSTALLATION_USER_MAP`` (``login=user`` or
``account-id=user``) names the user, else the account's login does. The map is exclusive: a user it
names is never linked by an account it does not map to them (an account that happens to be called
``alice`` cannot take the blog the map gives to another account).

An installation granting exactly one repository (``created`` with selected repositories) names the
repository of a user who follows none yet.

- ``installation`` ``created`` / ``unsuspend`` / ``new_permissions_accepted`` and every
  ``installation_repositories`` event: the matched user gets this installation id. Another user still
  holding the id (a copied database, a stale registration) is cleared first: GitHub's word is newest.
- ``installation`` ``deleted``: whoever holds the id has it cleared.
- anything else (``suspend``, other actions), or no matching user: skipped, logged with the fix.

The event only says what to check: before a link changes, GitHub is asked what is true now
(``GET /app/installations/{id}``, ``function.github.installations``). A ``deleted`` event for an
installation GitHub still has, or a link event for one it no longer has (a replayed or out-of-order
delivery), is skipped; a link goes to the user named by GitHub's current account login, not the
payload's. Without App credentials (``ARTICLE_SOURCE=dir:...``, local development) nothing can be asked
and the event's word is taken, with a warning.

The accept path only parses and forwards (Lambda mode must answer without touching the database);
``apply`` runs in ``/events`` or, in inline mode, in the request.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Mapping
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from function.errors import BadRequest
from function.webhooks import envelope
from function.webhooks.push import decode_payload

if TYPE_CHECKING:
    # For the types only: the accept path parses installation events with this module, and must not
    # load the database layer to do it.
    import peewee

    from function.settings import Settings
    from function.store.records import UserRecord

log = logging.getLogger(__name__)

EVENTS = frozenset({"installation", "installation_repositories"})
_LINK_ACTIONS = frozenset({"created", "unsuspend", "new_permissions_accepted"})
_CLEAR_ACTIONS = frozenset({"deleted"})


@dataclass(frozen=True)
class InstallationChange:
    event: str
    action: str
    installation_id: int
    login: str | None
    account_id: int | None = None
    # The one repository the installation grants, (full name, id), when it grants exactly one.
    only_repository: tuple[str, int | None] | None = None

    @property
    def effect(self) -> str:
        """ "link", "clear" or "none"."""
        if self.event == "installation_repositories":
            return "link"
        if self.action in _LINK_ACTIONS:
            return "link"
        if self.action in _CLEAR_ACTIONS:
            return "clear"
        return "none"


def parse(event: str, payload: object) -> InstallationChange:
    """The change an installation event asks for; BadRequest when it does not look like one."""
    if not isinstance(payload, dict):
        raise BadRequest(f"{event} payload must be a JSON object")
    action = payload.get("action")
    installation = payload.get("installation")
    inst_id = installation.get("id") if isinstance(installation, dict) else None
    valid_id = isinstance(inst_id, int) and envelope.is_installation_id(inst_id)
    if not isinstance(action, str) or not isinstance(inst_id, int) or not valid_id:
        raise BadRequest(f"{event} payload needs a string 'action' and a valid installation.id")
    account = installation.get("account") if isinstance(installation, dict) else None
    login = account.get("login") if isinstance(account, dict) else None
    # A login longer than any user name (users.name is 100 characters) cannot match one.
    login = login if isinstance(login, str) and 0 < len(login) <= 100 else None
    account_id = account.get("id") if isinstance(account, dict) else None
    account_id = (
        account_id if isinstance(account_id, int) and envelope.is_installation_id(account_id) else None
    )
    return InstallationChange(event, action[:64], inst_id, login, account_id, _only_repository(payload))


def _only_repository(payload: dict[str, Any]) -> tuple[str, int | None] | None:
    """The repository of an ``installation`` ``created`` event that selected exactly one."""
    installation = payload.get("installation")
    if payload.get("action") != "created" or not isinstance(installation, dict):
        return None
    repositories = payload.get("repositories")
    if installation.get("repository_selection") != "selected" or not isinstance(repositories, list):
        return None
    if len(repositories) != 1 or not isinstance(repositories[0], dict):
        return None
    name, repo_id = repositories[0].get("full_name"), repositories[0].get("id")
    if not isinstance(name, str) or not re.fullmatch(r"[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+", name):
        return None
    return name, repo_id if isinstance(repo_id, int) and envelope.is_installation_id(repo_id) else None


def set_installation_command(installation_id: int) -> str:
    return f"blog-api users set-installation --name <user> --installation-id {installation_id}"


def user_name_for(login: str, mapping: Mapping[str, str], account_id: int | None = None) -> str | None:
    """The user an account not linked yet links: the map's (by account id, then login), else the
    login's namesake unless the map gives that user to another account (None then)."""
    if account_id is not None and str(account_id) in mapping:
        return mapping[str(account_id)]
    if login in mapping:
        return mapping[login]
    return None if login in mapping.values() else login


class UserStore(Protocol):
    """The users part of ``function.store.facade.PeeweeStore`` (``store.users``), as this module uses it."""

    def get_user(self, name: str) -> UserRecord | None: ...
    def find_user_by_installation(self, installation_id: int) -> UserRecord | None: ...
    def set_installation(self, name: str, installation_id: int | None) -> UserRecord: ...
    def find_user_by_account(self, account_id: int) -> UserRecord | None: ...
    def account_of(self, name: str) -> int | None: ...
    def link_account(self, name: str, account_id: int) -> None: ...
    def pin_repository(self, user_id: int, repository: str, repository_id: int | None) -> None: ...


class CurrentInstallation(Protocol):
    """What GitHub has now (``function.github.installations.InstallationState``)."""

    @property
    def login(self) -> str | None: ...
    @property
    def account_id(self) -> int | None: ...


# installation id -> GitHub's current state of it, or None when it does not exist.
Lookup = Callable[[int], CurrentInstallation | None]


@dataclass(frozen=True)
class Outcome:
    change: str  # "linked" | "cleared" | "unchanged" | "skipped"
    user: str | None = None
    reason: str | None = None

    def to_json(self, installation_id: int) -> dict[str, Any]:
        if self.change == "skipped":
            return {"status": "skipped", "reason": self.reason or ""}
        return {
            "status": "processed",
            "installation": installation_id,
            "user": self.user,
            "change": self.change,
        }


def apply(
    users: UserStore,
    change: InstallationChange,
    mapping: Mapping[str, str],
    delivery: str,
    current: CurrentInstallation | _Unverified | None,
) -> Outcome:
    """Make the users table agree with the installation event, as GitHub confirms it (see the module
    docstring). ``current`` is GitHub's answer for the event's installation, asked beforehand, or
    ``UNVERIFIED`` when nothing could be asked."""
    fields = {"delivery": delivery, "installation_id": change.installation_id, "login": change.login}
    effect = change.effect
    if effect == "none":
        return Outcome("skipped", reason=f"{change.event} action {change.action!r} changes no user")
    if current is UNVERIFIED:
        log.warning("Installation event applied unverified (no GitHub App configured)", extra=fields)
        login, account_id = change.login, change.account_id
    elif effect == "clear" and current is not None:
        log.warning(
            "Installation event contradicted by GitHub", extra={**fields, "event_action": change.action}
        )
        return Outcome(
            "skipped",
            reason=f"installation {change.installation_id} still exists on GitHub (a replayed or late event)",
        )
    elif effect == "link" and current is None:
        log.warning(
            "Installation event contradicted by GitHub", extra={**fields, "event_action": change.action}
        )
        return Outcome(
            "skipped", reason=f"installation {change.installation_id} does not exist on GitHub any more"
        )
    else:
        login = getattr(current, "login", None) or change.login
        account_id = getattr(current, "account_id", None)
    if effect == "clear":
        holder = users.find_user_by_installation(change.installation_id)
        if holder is None:
            return Outcome("skipped", reason=f"no user has installation {change.installation_id}")
        users.set_installation(holder.name, None)
        log.info("Installation cleared", extra={**fields, "user": holder.name})
        return Outcome("cleared", holder.name)
    if not login:
        raise BadRequest(f"{change.event} payload has no installation.account.login")
    if account_id is None:
        raise BadRequest(f"{change.event}: installation {change.installation_id} names no account id")
    fields["login"], fields["account_id"] = login, account_id

    linked = users.find_user_by_account(account_id)
    name = linked.name if linked is not None else user_name_for(login, mapping, account_id)
    if name is None:
        log.warning("Installation for a user the map gives to another account", extra=fields)
        return Outcome(
            "skipped",
            reason=f"account {login!r} is not the one GITHUB_INSTALLATION_USER_MAP links to user {login!r}",
        )
    user = linked or users.get_user(name)
    if user is None:
        log.warning(
            "Installation for unknown user",
            extra={
                **fields,
                "fix": f"{set_installation_command(change.installation_id)} "
                "(or map the login in GITHUB_INSTALLATION_USER_MAP)",
            },
        )
        return Outcome("skipped", reason=f"no user named {name!r} for account {login!r}")
    owner = users.account_of(name) if linked is None else account_id
    if owner is not None and owner != account_id:
        log.warning("Installation from another account than the user's", extra={**fields, "user": name})
        return Outcome(
            "skipped",
            reason=f"user {name!r} is linked to another GitHub account than {login!r} (id {account_id})",
        )
    if owner is None:
        users.link_account(name, account_id)
    if user.repository is None and change.only_repository is not None:
        users.pin_repository(user.id, *change.only_repository)
        log.info(
            "Repository named by the installation", extra={**fields, "repository": change.only_repository[0]}
        )
    if user.installation_id == change.installation_id:
        return Outcome("unchanged", name)
    holder = users.find_user_by_installation(change.installation_id)
    if holder is not None and holder.name != name:
        users.set_installation(holder.name, None)
        log.warning("Installation moved from another user", extra={**fields, "user": holder.name})
    users.set_installation(name, change.installation_id)
    log.info(
        "Installation linked",
        extra={**fields, "user": name, "previous_installation_id": user.installation_id},
    )
    return Outcome("linked", name)


class _Unverified:
    """GitHub could not be asked (no App configured)."""


UNVERIFIED = _Unverified()


def current_state(
    lookup: Lookup | None, change: InstallationChange
) -> CurrentInstallation | _Unverified | None:
    """GitHub's answer for the event's installation; asked before any transaction is open (it is an
    HTTP round trip). A GitHub failure raises SourceUnavailable: 503, retried, nothing changed."""
    if change.effect == "none":
        return UNVERIFIED  # nothing will change: no need to ask
    if lookup is None:
        return UNVERIFIED
    return lookup(change.installation_id)


class JobUserStore(Protocol):
    """A job's store: its users, and the database whose transaction makes a change all or nothing."""

    @property
    def users(self) -> UserStore: ...

    @property
    def db(self) -> peewee.Database: ...


class InstallationServices(Protocol):
    """What applying an installation event needs of ``function.services.Services``."""

    settings: Settings

    def installation_lookup(self) -> Lookup | None: ...
    def store(self) -> AbstractContextManager[JobUserStore]: ...


def apply_in(svc: InstallationServices, change: InstallationChange, delivery: str) -> dict[str, Any]:
    current = current_state(svc.installation_lookup(), change)
    with svc.store() as store, store.db.atomic():
        outcome = apply(store.users, change, svc.settings.installation_user_map, delivery, current)
    return outcome.to_json(change.installation_id)


def apply_envelope(svc: InstallationServices, env: envelope.Envelope) -> tuple[dict[str, Any], int]:
    """``/events``' part: the verified envelope's installation event, applied."""
    if env.body is None:
        raise BadRequest("installation events travel in the standard envelope only")
    change = parse(env.event, decode_payload(env.body))
    return apply_in(svc, change, env.delivery), 200
