"""One-off maintenance through the function itself: ``{"kind": "init-db"}`` creates the tables.

For a database the laptop cannot reach (private networking, no public endpoint), the function that
can is asked directly: ``aws lambda invoke --payload '{"kind": "init-db"}'``. Like the scheduled
sweep's event it carries no signature, so only the handler's pass-through may run it.
"""

from __future__ import annotations

import json
from typing import Any

from function.errors import SchemaMismatch

INIT_DB_KIND = "init-db"


def is_init_db_event(raw: bytes) -> bool:
    """True for exactly ``{"kind": "init-db"}`` (an envelope's kind is always one of its own)."""
    if len(raw) > 1024:
        return False
    try:
        data = json.loads(raw)
    except (ValueError, UnicodeDecodeError):
        return False
    return isinstance(data, dict) and data.get("kind") == INIT_DB_KIND


def initialise(db: Any) -> list[str]:
    """Create the tables (idempotent, adding the nullable columns newer versions introduced) and return
    how the existing ones still differ from this version's (empty when they agree)."""
    from function.store.connection import connection
    from function.store.models import create_tables, schema_differences

    with connection(db):
        create_tables(db)
        return schema_differences(db)


def refuse_differences(differences: list[str]) -> None:
    """Raise SchemaMismatch naming the differences, if any."""
    if differences:
        raise SchemaMismatch(
            "the database's tables were made by another version of blog-api ("
            + "; ".join(differences)
            + "): migrate them, or for a local database made by `make run`, delete .data/ and run again"
        )


def run_init_db(services: Any) -> dict[str, Any]:
    """The event's work: ``{"status": "ready"}`` once the tables exist, or SchemaMismatch (409)."""
    refuse_differences(initialise(services.database()))
    return {"status": "ready", "message": "database ready"}
