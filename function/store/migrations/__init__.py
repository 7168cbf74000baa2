"""Schema migrations: the database's schema version (table ``schema_version``), the numbered steps that
bring an earlier database to this code's version (``steps.STEPS``, written with Peewee's
``playhouse.migrate``), running them (``migrate``), and the check a job makes first
(``require_current_schema``)."""

from __future__ import annotations

from function.store.migrations.job_check import require_current_schema
from function.store.migrations.runner import MigrationReport, migrate
from function.store.migrations.steps import SCHEMA_VERSION, STEPS

__all__ = ["SCHEMA_VERSION", "STEPS", "MigrationReport", "migrate", "require_current_schema"]
