"""Which repository file an image source in an article points at."""

from __future__ import annotations

import posixpath
import re
from urllib.parse import unquote

_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")


def repository_paths(src: str, article_path: str) -> tuple[str, ...]:
    """The repository paths ``src`` may name, most likely first; empty for a URL (a scheme, ``//host``)
    or a path that leaves the repository.

    Root-relative (``/images/a.png``, Zenn's form) is from the repository's root; relative
    (``../images/a.png``) is from the article's folder, then, for a bare ``images/a.png`` that is not
    there, from the root as well (the form many blogs use). Query and fragment are dropped, percent
    escapes decoded.
    """
    value = src.strip()
    if not value or value.startswith("//") or _SCHEME.match(value):
        return ()
    value = unquote(value.split("#", 1)[0].split("?", 1)[0])
    if not value:
        return ()
    if value.startswith("/"):
        candidates = [value.lstrip("/")]
    else:
        candidates = [posixpath.join(posixpath.dirname(article_path), value), value]
    paths = []
    for candidate in candidates:
        path = posixpath.normpath(candidate)
        if path in (".", "..") or path.startswith(("../", "/")) or path in paths:
            continue
        paths.append(path)
    return tuple(paths)
