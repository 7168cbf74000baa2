"""One-off maintenance through the function itself, and the user registration the CLI shares:

- ``{"kind": "init-db"}`` creates the tables of a new database, or migrates an earlier one to this
  version's schema (what ``blog-api init-db`` runs);
- ``{"kind": "add-user", "name": …, "email": …, "installationId": …}`` registers a user (what
  ``blog-api users add`` runs).

For a database the laptop cannot reach (private networking, no public endpoint), the function that
can is asked directly: ``aws lambda invoke --payload '{"kind": "init-db"}'``. Like the scheduled
sweep's event these carry no signature, so only the handler's pass-through may run them.
"""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, Any

from function.errors import BadRequest, Conflict, SchemaMismatch, UserExists

if TYPE_CHECKING:
    import peewee

    from function.services import Services
    from function.store.migrations.runner import MigrationReport

INIT_DB_KIND = "init-db"
ADD_USER_KIND = "add-user"
KINDS = frozenset({INIT_DB_KIND, ADD_USER_KIND})


def maintenance_event(raw: bytes) -> dict[str, Any] | None:
    """The event when ``raw`` is one of ``KINDS`` (an envelope's kind is always one of its own)."""
    if len(raw) > 4096:
        return None
    try:
        data = json.loads(raw)
    except (ValueError, UnicodeDecodeError):
        return None
    if isinstance(data, dict) and data.get("kind") in KINDS:
        return data
    return None


def run(services: Services, event: dict[str, Any]) -> dict[str, Any]:
    """Run a maintenance event; its answer, or BadRequest / Conflict / SchemaMismatch (all 4xx)."""
    if event["kind"] == INIT_DB_KIND:
        return run_init_db(services)
    return run_add_user(services, event)


def new_user_problem(
    name: str, email: str, installation_id: int | None, repository: str | None
) -> tuple[str, str] | None:
    """(field, rule) for a value the database would take but nobody could use, or None. The name is a
    URL path segment (``/users/<name>/articles``) and at most 100 characters."""
    if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]{0,99}", name):
        return "name", "must be 1-100 letters, digits, '.', '_' or '-', starting with a letter or digit"
    if "@" not in email.strip("@") or any(c.isspace() for c in email) or len(email) > 255:
        return "email", "must be an e-mail address"
    if installation_id is not None and not 0 < installation_id < 2**63:
        return "installation_id", "must be a positive number"
    if repository is not None and not re.fullmatch(r"[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+", repository):
        return "repository", "must look like owner/name"
    return None


def add_user(store: Any, name: str, email: str, installation_id: int | None, repository: str | None) -> Any:
    """Register a user; Conflict naming what is taken (the name, or the installation and its holder)."""
    refuse_taken(store, name, installation_id)
    try:
        return store.add_user(name, email, installation_id, repository)
    except UserExists:
        # Registered by someone else between the check and the insert: say which, as above.
        refuse_taken(store, name, installation_id)
        raise


def refuse_taken(store: Any, name: str, installation_id: int | None) -> None:
    """Conflict with one line naming what is taken, and what to do instead."""
    existing = store.get_user(name)
    if existing is not None:
        inst = existing.installation_id
        raise Conflict(
            f"user {name!r} already exists ("
            + (f"installation {inst}" if inst is not None else "no installation yet")
            + "): pick another --name, pass --if-missing to accept it, or change its installation with "
            f"`blog-api users set-installation --name {name} --installation-id N`"
        )
    if installation_id is not None:
        holder = store.find_user_by_installation(installation_id)
        if holder is not None:
            raise Conflict(
                f"installation {installation_id} is already registered to user {holder.name!r}: "
                "one installation serves one user; check the id (GitHub: Settings > Applications > "
                "Installed GitHub Apps > Configure, the number at the end of the URL)"
            )


def run_add_user(services: Services, event: dict[str, Any]) -> dict[str, Any]:
    """``{"kind": "add-user", "name", "email", "installationId"?, "repository"?}`` → the user added."""
    name, email = event.get("name"), event.get("email")
    installation_id, repository = event.get("installationId"), event.get("repository")
    if not isinstance(name, str) or not isinstance(email, str):
        raise BadRequest('add-user needs "name" and "email" (strings)')
    if installation_id is not None and (
        isinstance(installation_id, bool) or not isinstance(installation_id, int)
    ):
        raise BadRequest('"installationId" must be a number')
    if repository is not None and not isinstance(repository, str):
        raise BadRequest('"repository" must be a string like owner/name')
    problem = new_user_problem(name, email, installation_id, repository)
    if problem is not None:
        field, rule = problem
        label = {"installation_id": "installationId"}.get(field, field)
        raise BadRequest(f'"{label}" {rule}')
    with services.store() as store:
        user = add_user(store, name, email, installation_id, repository)
    return {
        "status": "added",
        "user": user.name,
        "email": user.email,
        "installation": user.installation_id,
        "repository": user.repository,
    }


def migrate_database(db: peewee.Database) -> MigrationReport:
    """``blog-api migrate``: bring the database to this version's schema in place, each step it lacks
    once and in order (``function.store.migrations.migrate``; a database without tables gets them), then
    refuse with SchemaMismatch what no step mends (a column this version needs is still missing, or one
    it does not know refuses its rows)."""
    from function.store.connection import connection
    from function.store.migrations.runner import migrate
    from function.store.schema import schema_differences

    with connection(db):
        report = migrate(db)
        refuse_differences(schema_differences(db))
        return report


def initialise(db: peewee.Database) -> MigrationReport:
    """``blog-api init-db``: ``migrate_database``, then the server's keys, made now rather than by the
    first reader. Idempotent."""
    from function.store.connection import connection
    from function.store.server_keys import CURSOR_KEY, server_key

    with connection(db):
        report = migrate_database(db)
        server_key(db, CURSOR_KEY)
        return report


def refuse_differences(differences: list[str]) -> None:
    """Raise SchemaMismatch naming the differences, if any."""
    if differences:
        raise SchemaMismatch(
            "the database's tables differ from this version's in ways no migration step mends ("
            + "; ".join(differences)
            + "): they were changed by hand or made by an unknown version; for a local database made by "
            "`make run`, delete .data/ and run again"
        )


def run_init_db(services: Services) -> dict[str, Any]:
    """The event's work: ``blog-api init-db``'s, answered ``{"status": "ready", "schemaVersion",
    "migration": [what the migration did, a line each]}``; SchemaMismatch (409) as the command."""
    report = initialise(services.database())
    return {
        "status": "ready",
        "message": "database ready",
        "schemaVersion": report.after,
        "migration": report.lines(),
    }
