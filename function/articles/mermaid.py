"""A mermaid fence's source as the reader's browser may see it: without what would reconfigure mermaid.js.

mermaid.js reads two kinds of configuration from a diagram's own text, both of which a review used to
load remote resources despite ``securityLevel: "strict"`` (``themeCSS`` with ``url(…)``, a
``fontFamily`` holding ``background:url(…)``, an ``<img>`` label with ``htmlLabels``):

* directives, ``%%{init: {…}}%%`` (and ``%%{initialize…}``, ``%%{wrap}%%``): mermaid removes and
  reads every ``%%{`` up to the next ``}%%``, or to the end when none closes it;
* front matter: a first line ``---``, up to the next line ``---``, whose ``config:`` is merged into
  the site's configuration. mermaid first removes the lines' common indentation, so a closing line
  counts here whatever its indentation.

Both are removed, again until none is left (removing one may join characters into another). Comments
(``%% …``) and the diagram itself are kept as written. The front end's own configuration should still
lock the keys that matter (docs/front-ends.md, "Mermaid, securely").
"""

from __future__ import annotations

import re

from function.articles.limits import check_budget

# mermaid's own pattern (directiveRegex) reads from "%%{" to the first "}%%", or to the end of the text.
_DIRECTIVE = re.compile(r"%%\{.*?(?:\}%%|\Z)", re.DOTALL)


def diagram_source(code: str) -> str:
    """``code`` stripped, without directives or front matter (see the module docstring)."""
    source = code.strip()
    while True:
        check_budget()
        cleaned = _without_front_matter(_DIRECTIVE.sub("", source)).strip()
        if cleaned == source:
            return cleaned
        source = cleaned


def _without_front_matter(source: str) -> str:
    first, newline, rest = source.partition("\n")
    if first.strip() != "---":
        return source
    lines = rest.split("\n") if newline else []
    closing = next((i for i, line in enumerate(lines) if line.strip() == "---"), None)
    if closing is None:
        # Never closed: mermaid reads no front matter then, but the line goes all the same, so that no
        # source this gives starts with one.
        return rest
    return "\n".join(lines[closing + 1 :])
