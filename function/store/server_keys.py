"""Keys the server makes for itself and keeps in the database (the page cursor's signing key).

Such a key is 32 random bytes that no person chooses or types, so it cannot be guessed from anything
public and shares nothing with a configured secret. It is made by ``init-db`` (or, on a database made
before, by the first process that needs it) and read once per process. Deleting its row rotates it:
the next processes make a new one, and what was signed with the old one is refused.
"""

from __future__ import annotations

import secrets

import peewee

from function.store.backends import unwrap
from function.store.models import ServerKey

CURSOR_KEY = "page-cursor"
_KEY_BYTES = 32


def server_key(db: peewee.Database | peewee.DatabaseProxy, name: str) -> bytes:
    """The key ``name``, made and stored the first time anyone asks. Two processes making it at the
    same moment agree: the first insert wins, the other is ignored, and both read back the stored one."""
    real = unwrap(db)
    stored = _read(real, name)
    if stored is None:
        fresh = secrets.token_hex(_KEY_BYTES)
        ServerKey.insert(name=name, value=fresh).on_conflict_ignore().bind(real).execute()
        stored = _read(real, name)
    if stored is None:
        raise peewee.IntegrityError(f"server key {name!r} could not be stored")
    return bytes.fromhex(stored)


def _read(db: peewee.Database, name: str) -> str | None:
    row = ServerKey.select(ServerKey.value).where(ServerKey.name == name).bind(db).tuples().first()
    return str(row[0]) if row else None
