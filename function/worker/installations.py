"""GitHub App installation events: ``users.github_installation_id`` follows the App's installation.

Match rule: the installation's account ``login`` names the blog user, either directly (login == user
name) or through ``GITHUB_INSTALLATION_USER_MAP`` (``login=user,...``), which wins when it has the login.

- ``installation`` ``created`` / ``unsuspend`` / ``new_permissions_accepted`` and every
  ``installation_repositories`` event: the matched user gets this installation id. Another user still
  holding the id (a copied database, a stale registration) is cleared first: GitHub's word is newest.
- ``installation`` ``deleted``: whoever holds the id has it cleared.
- anything else (``suspend``, other actions), or no matching user: skipped, logged with the fix.

The accept path only parses and forwards (Lambda mode must answer without touching the database);
``apply`` runs in ``/events`` or, in inline mode, in the request.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from function.errors import BadRequest
from function.webhooks import envelope
from function.webhooks.push import decode_payload

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


def parse(event: str, payload: Any) -> InstallationChange:
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
    return InstallationChange(event, action[:64], inst_id, login)


def set_installation_command(installation_id: int) -> str:
    return f"blog-api users set-installation --name <user> --installation-id {installation_id}"


def user_name_for(login: str, mapping: Mapping[str, str]) -> str:
    return mapping.get(login, login)


class UserStore(Protocol):
    """The part of ``function.store.facade.PeeweeStore`` this module uses."""

    def get_user(self, name: str) -> Any: ...
    def find_user_by_installation(self, installation_id: int) -> Any: ...
    def set_installation(self, name: str, installation_id: int | None) -> Any: ...


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


def apply(store: UserStore, change: InstallationChange, mapping: Mapping[str, str], delivery: str) -> Outcome:
    """Make the users table agree with the installation event (see the module docstring)."""
    fields = {"delivery": delivery, "installation_id": change.installation_id, "login": change.login}
    effect = change.effect
    if effect == "clear":
        holder = store.find_user_by_installation(change.installation_id)
        if holder is None:
            return Outcome("skipped", reason=f"no user has installation {change.installation_id}")
        store.set_installation(holder.name, None)
        log.info("Installation cleared", extra={**fields, "user": holder.name})
        return Outcome("cleared", holder.name)
    if effect == "none":
        return Outcome("skipped", reason=f"{change.event} action {change.action!r} changes no user")
    if not change.login:
        raise BadRequest(f"{change.event} payload has no installation.account.login")

    name = user_name_for(change.login, mapping)
    user = store.get_user(name)
    if user is None:
        log.warning(
            "Installation for unknown user",
            extra={
                **fields,
                "fix": f"{set_installation_command(change.installation_id)} "
                "(or map the login in GITHUB_INSTALLATION_USER_MAP)",
            },
        )
        return Outcome("skipped", reason=f"no user named {name!r} for account {change.login!r}")
    if user.installation_id == change.installation_id:
        return Outcome("unchanged", name)
    holder = store.find_user_by_installation(change.installation_id)
    if holder is not None and holder.name != name:
        store.set_installation(holder.name, None)
        log.warning("Installation moved from another user", extra={**fields, "user": holder.name})
    store.set_installation(name, change.installation_id)
    log.info(
        "Installation linked",
        extra={**fields, "user": name, "previous_installation_id": user.installation_id},
    )
    return Outcome("linked", name)


def apply_in(svc: Any, change: InstallationChange, delivery: str) -> dict[str, Any]:
    with svc.store() as store, store.db.atomic():
        outcome = apply(store, change, svc.settings.installation_user_map, delivery)
    return outcome.to_json(change.installation_id)


def apply_envelope(svc: Any, env: envelope.Envelope) -> tuple[dict[str, Any], int]:
    """``/events``' part: the verified envelope's installation event, applied."""
    if env.body is None:
        raise BadRequest("installation events travel in the standard envelope only")
    change = parse(env.event, decode_payload(env.body))
    return apply_in(svc, change, env.delivery), 200
