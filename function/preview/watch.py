"""Re-sync the folder when a file in it changes (watchfiles: the OS's change notifications, debounced)."""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path

from function.preview.session import Preview

# A save is often several writes (a temporary file, a rename): changes this close together are one sync.
DEBOUNCE_MS = 200
STEP_MS = 50


# How long the watcher waits for a change before it reports that it is listening (and then again).
LISTENING_MS = 200


class Watching:
    """The watcher's thread; ``stop()`` ends it (within ``LISTENING_MS``, or once a sync under way ends)."""

    def __init__(self, thread: threading.Thread, stop_event: threading.Event) -> None:
        self._thread = thread
        self._stop = stop_event

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()


def watch_in_background(preview: Preview, say: Callable[[str], None], *, timeout: float = 10.0) -> Watching:
    """Start a thread that syncs ``preview`` after every change under its folder, and return once it
    listens (a change made after this is seen), after a sync that catches up with any change made
    before."""
    stop, listening = threading.Event(), threading.Event()
    thread = threading.Thread(
        target=_watch, args=(preview, stop, listening, say), name="preview-watch", daemon=True
    )
    thread.start()
    if not listening.wait(timeout):
        say("warning: the folder watcher did not start; pages will not follow your edits")
    preview.sync(changed=())
    return Watching(thread, stop)


def _watch(
    preview: Preview, stop: threading.Event, listening: threading.Event, say: Callable[[str], None]
) -> None:
    # Imported here: only the preview needs the watcher (an optional dependency, `blog-api[preview]`).
    from watchfiles import DefaultFilter, watch

    # DefaultFilter leaves out .git, node_modules, editors' swap and backup files, __pycache__...
    for changes in watch(
        preview.folder,
        watch_filter=DefaultFilter(),
        debounce=DEBOUNCE_MS,
        step=STEP_MS,
        stop_event=stop,
        raise_interrupt=False,
        # An empty set every LISTENING_MS without changes: the first one says the watcher is set up.
        rust_timeout=LISTENING_MS,
        yield_on_timeout=True,
    ):
        listening.set()
        paths = sorted(
            {relative for _, path in changes if (relative := _repository_path(preview.folder, Path(path)))}
        )
        if not paths:
            continue
        outcome = preview.sync(paths)
        shown = ", ".join(paths[:3]) + (f" and {len(paths) - 3} more" if len(paths) > 3 else "")
        say(f"changed {shown}: {outcome.line}")


def _repository_path(root: Path, path: Path) -> str | None:
    try:
        return path.relative_to(root).as_posix()
    except ValueError:
        return None
