"""The first sync as an earlier commit's code does it, run by ``bench.earlier`` in a child interpreter.

This file is run as a script with the earlier commit's ``function/`` and ``shared/`` first on
``sys.path``, so every ``function`` import below is that commit's code, not this one's. It imports
nothing from the benchmark (whose ``function`` is the current one) and only APIs the earlier commit had.

Protocol on stdin/stdout, one JSON object per line: the parent sends the settings; the child sets up its
database (directly, unmeasured), fetches its installation token and answers ``{"ready": true}``; the
parent resets its counters and sends ``{"go": true}``; the child runs one push and answers with its
wall time and counts.
"""

from __future__ import annotations

import json
import sys
import time
from datetime import UTC, datetime
from typing import Any


def main() -> int:
    settings = json.loads(sys.stdin.readline())
    from function.github.app_auth import GitHubAppAuth
    from function.github.http import HttpClient
    from function.sources.github import GitHubSource
    from function.store.backends import open_database
    from function.store.connection import connection
    from function.store.facade import PeeweeStore, job_store

    # The earlier commit's module; the type checker sees this commit's, where it moved to store.schema.
    from function.store.models import create_tables  # type: ignore[attr-defined]
    from function.webhooks.envelope import PushRef
    from function.webhooks.push import DeliveryInfo
    from function.worker.sync import Worker

    direct = open_database(settings["direct_url"])
    with connection(direct):
        create_tables(direct)
        PeeweeStore(direct).add_user(  # type: ignore[attr-defined]  # that commit's name
            settings["user"], "bench@example.com", settings["installation_id"], settings["repository"]
        )
    direct.close()

    http = HttpClient()
    auth = GitHubAppAuth(settings["app_id"], settings["private_pem"].encode(), settings["github_url"], http)
    auth.installation_token(settings["installation_id"])  # a warm Lambda has it cached
    source = GitHubSource(auth, http, settings["github_url"])
    db = open_database(settings["relayed_url"])
    _answer({"ready": True})

    json.loads(sys.stdin.readline())  # go
    push = PushRef(
        repository=settings["repository"],
        branch="main",
        installation_id=settings["installation_id"],
        after=settings["head"],
    )
    info = DeliveryInfo(delivery_id=settings["delivery"], event="push", received_at=datetime.now(UTC))
    started = time.perf_counter()
    store: Any
    with job_store(db, keep=False) as store:
        summary = Worker(store, source).process_push(info, push)
    wall_ms = (time.perf_counter() - started) * 1000
    db.close()
    http.close()
    _answer(
        {
            "wall_ms": wall_ms,
            "processed": summary.processed,
            "written": summary.written,
            "failed": summary.failed,
            "fetched": summary.fetched,
        }
    )
    return 0


def _answer(message: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


if __name__ == "__main__":
    sys.exit(main())
