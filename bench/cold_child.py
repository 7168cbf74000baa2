"""Run by ``bench.coldstart`` in a fresh interpreter of the runtime's Python, from an unpacked Lambda zip:
import the handler and answer one signed push in Lambda mode, as a cold execution environment does.

Standard library only before the handler import (it is what is timed). Arguments: the unpacked zip's
directory and a file holding the event; prints one JSON line of milliseconds."""

import time

STARTED = time.perf_counter()

import json  # noqa: E402 - after the clock: interpreter start-up is the runtime's, not ours
import sys  # noqa: E402


def main() -> None:
    task_dir, event_file = sys.argv[1], sys.argv[2]
    sys.path[0] = task_dir  # as /var/task on Lambda (not this script's directory)
    with open(event_file, encoding="utf-8") as f:
        event = json.load(f)
    before_import = time.perf_counter()
    from function.handler import handler

    imported = time.perf_counter()
    answer = handler(event, None)
    answered = time.perf_counter()
    print(
        json.dumps(
            {
                "status": answer.get("statusCode"),
                "import_ms": (imported - before_import) * 1000,
                "accept_ms": (answered - imported) * 1000,
                "total_ms": (answered - STARTED) * 1000,
            }
        )
    )


main()
