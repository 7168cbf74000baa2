"""The one hook rendering gives the asset store: each Markdown image's source, offered to a resolver
(``function.assets``) that may answer the URL readers load it from."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from markdown_it.token import Token

# src as written → the URL to use instead, or None to leave it.
ImageResolver = Callable[[str], str | None]


def resolve_image_sources(tokens: Sequence[Token], resolve: ImageResolver) -> None:
    """Rewrite the ``src`` of every image token (inline children, as markdown-it nests them) in place."""
    for token in tokens:
        for child in token.children or ():
            if child.type == "image":
                src = child.attrGet("src")
                if isinstance(src, str) and (url := resolve(src)) is not None:
                    child.attrSet("src", url)
