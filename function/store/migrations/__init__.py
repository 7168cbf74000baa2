"""Schema migrations: the database's schema version (table ``schema_version``, ``version``), the numbered
steps that bring an earlier database to this code's version (``steps.STEPS``, written with Peewee's
``playhouse.migrate``, ``operations``), running them (``runner.migrate``), and the check a job makes
first (``job_check.require_current_schema``).

Nothing is re-exported here: a job imports ``job_check`` alone, which needs neither the runner nor
``playhouse.migrate`` (about 40 ms of imports a cold process would pay before its first push).
"""
