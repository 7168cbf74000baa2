from __future__ import annotations

from flask import Blueprint

blueprint = Blueprint("health", __name__)


@blueprint.get("/healthz")
def healthz() -> tuple[dict[str, str], int]:
    """Liveness only: touches no dependency, so it answers even when the database is down."""
    return {"status": "ok"}, 200
