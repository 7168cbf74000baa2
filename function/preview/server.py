"""Run a preview: a scratch folder, the first sync, the watcher, and the app with the preview's pages,
served until Ctrl+C."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable, Mapping
from pathlib import Path

from flask import Flask

from function.app import create_app
from function.preview.pages import EXTENSION, PreviewConfig, blueprint
from function.preview.session import Preview

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8000


def preview_app(preview: Preview, *, mermaid_file: str | None = None) -> Flask:
    """The app as a server runs it (the read routes, ``/assets``, ``/static/content.css``) plus the
    preview's pages."""
    app = create_app(services=preview.services)
    app.extensions[EXTENSION] = PreviewConfig(preview, mermaid_file)
    app.register_blueprint(blueprint)
    return app


def serve(
    folder: Path,
    *,
    host: str = DEFAULT_HOST,
    port: int = DEFAULT_PORT,
    mermaid_file: str | None = None,
    environ: Mapping[str, str] | None = None,
    say: Callable[[str], None] = print,
) -> None:
    """Sync ``folder``, then serve its preview on ``host:port`` (0: any free port) until interrupted;
    the scratch database and images are removed afterwards."""
    from werkzeug.serving import make_server

    from function.preview.watch import watch_in_background

    with tempfile.TemporaryDirectory(prefix="blog-api-preview-") as scratch:
        preview = Preview(folder, Path(scratch), os.environ if environ is None else environ)
        preview.create_store()
        say(f"reading {preview.folder}")
        say(preview.sync().line)
        app = preview_app(preview, mermaid_file=mermaid_file)
        # Threads: each open page holds one for its event stream.
        server = make_server(host, port, app, threaded=True)
        watching = watch_in_background(preview, say)
        try:
            shown = f"[{host}]" if ":" in host else host
            say(f"preview: http://{shown}:{server.server_port}/  (watching for changes; Ctrl+C stops)")
            server.serve_forever()
        except KeyboardInterrupt:
            say("stopped")
        finally:
            watching.stop()
            server.server_close()
