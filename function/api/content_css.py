"""The stylesheet for ``contentHtml``, served at ``/static/content.css``.

It is the hand-written ``content.css`` beside this module (every element and class the renderer emits,
scoped under ``.blog-content``, light and dark) followed by the colours of highlighted code, made here
from Pygments' styles: the light one is the server's own highlighting style (the one ``highlight.css``
serves), the dark one ``DARK_STYLE``. Each token class gets one rule whose colours are custom properties,
set once per theme, so forcing a theme (``.blog-content-dark``) switches the code's colours with the rest.
"""

from __future__ import annotations

import functools
import hashlib
from importlib import resources

from pygments.styles import get_style_by_name
from pygments.token import STANDARD_TYPES

from function.articles.highlight import STYLE as LIGHT_STYLE

SCOPE = ".blog-content"
DARK_STYLE = "github-dark"
# The selectors that turn a theme on, as the hand-written part's theme blocks have them.
_LIGHT = f"{SCOPE}"
_DARK_MEDIA = "@media (prefers-color-scheme: dark)"
_FORCED_LIGHT = f"{SCOPE}-light {SCOPE},\n{SCOPE}{SCOPE}-light"
_FORCED_DARK = f"{SCOPE}-dark {SCOPE},\n{SCOPE}{SCOPE}-dark"


@functools.cache
def stylesheet() -> str:
    """The whole stylesheet: ``content.css`` and the highlighting rules (built once per process)."""
    handwritten = resources.files(__package__).joinpath("content.css").read_text(encoding="utf-8")
    return handwritten + highlight_rules() + "\n"


@functools.cache
def version() -> str:
    """A short hash of the stylesheet: its ETag, and what a front end may put in the URL (``?v=``)."""
    return hashlib.sha256(stylesheet().encode()).hexdigest()[:16]


def highlight_rules() -> str:
    """Colour properties per theme, then one rule per Pygments token class that either style colours."""
    light, dark = get_style_by_name(LIGHT_STYLE), get_style_by_name(DARK_STYLE)
    light_vars: list[str] = []
    dark_vars: list[str] = []
    # The block's own background and plain text are the theme's (--bc-code-bg, --bc-text), so code
    # blocks look like the rest of the page; only the tokens take the styles' colours.
    rules: list[str] = []
    for token, css_class in sorted(STANDARD_TYPES.items(), key=lambda item: item[1]):
        if not css_class:
            continue
        lit, drk = light.style_for_token(token), dark.style_for_token(token)
        declarations = []
        if lit["color"] or drk["color"]:
            light_vars.append(f"  --bc-hl-{css_class}: {_hex(lit['color'])};")
            dark_vars.append(f"  --bc-hl-{css_class}: {_hex(drk['color'])};")
            declarations.append(f"color: var(--bc-hl-{css_class})")
        if lit["bgcolor"] or drk["bgcolor"]:
            light_vars.append(f"  --bc-hl-{css_class}-bg: {_hex(lit['bgcolor'], 'transparent')};")
            dark_vars.append(f"  --bc-hl-{css_class}-bg: {_hex(drk['bgcolor'], 'transparent')};")
            declarations.append(f"background-color: var(--bc-hl-{css_class}-bg)")
        # Weight and slant are the light style's in both themes: a shape, not a colour.
        if lit["bold"]:
            declarations.append("font-weight: bold")
        if lit["italic"]:
            declarations.append("font-style: italic")
        if lit["underline"]:
            declarations.append("text-decoration: underline")
        if declarations:
            body = "; ".join(declarations)
            rules.append(f"{SCOPE} pre.highlight .{css_class} {{ {body}; }}")
    light_block = "\n".join(light_vars)
    dark_block = "\n".join(dark_vars)
    indented_dark = "\n".join("  " + line for line in dark_block.splitlines())
    return "\n".join(
        [
            f"{_LIGHT} {{\n{light_block}\n}}",
            f"{_DARK_MEDIA} {{\n  {SCOPE} {{\n{indented_dark}\n  }}\n}}",
            f"{_FORCED_LIGHT} {{\n{light_block}\n}}",
            f"{_FORCED_DARK} {{\n{dark_block}\n}}",
            *rules,
        ]
    )


def _hex(value: str | None, missing: str = "currentColor") -> str:
    # Pygments gives colours without "#" (or "" when the style leaves the token alone).
    return f"#{value}" if value else missing
