"""Mermaid fences lose what would reconfigure mermaid.js in the reader's browser: ``%%{init: …}%%``
directives (and every other ``%%{…}%%``) and ``---`` front matter (its ``config:``). A review loaded
remote resources through ``themeCSS`` with ``url(…)``, a ``fontFamily`` with ``background:url(…)`` and an
``<img>`` label, all under mermaid's strict mode."""

from __future__ import annotations

import html

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from function.articles.mermaid import diagram_source
from function.articles.render import render_markdown

GRAPH = "graph TD\n  A-->B"


def rendered_source(fence_body: str) -> str:
    out = render_markdown(f"```mermaid\n{fence_body}\n```\n")
    assert out.startswith('<pre class="mermaid">') and out.endswith("</pre>\n"), out
    return html.unescape(out[len('<pre class="mermaid">') : -len("</pre>\n")])


@pytest.mark.parametrize(
    "fence",
    [
        "%%{init: {'themeCSS': '.node rect { background: url(https://logger.example/x) }'}}%%\n" + GRAPH,
        '%%{init: {"fontFamily": "x;background:url(https://logger.example/f)"}}%%\n' + GRAPH,
        "%%{initialize: {'securityLevel': 'loose'}}%%\n" + GRAPH,
        GRAPH + "\n%%{init: {'flowchart': {'htmlLabels': true}}}%%",
        "%%{\n  init: {\n    'theme': 'base',\n    'themeVariables': {'primaryColor': 'url(x)'}\n  }\n}%%\n"
        + GRAPH,
        "%%{init: {'themeCSS': 'x'}}\n" + GRAPH,  # never closed: mermaid reads it to the end
        "%%{wrap}%%\n" + GRAPH,
        "%%{%%{init}%%}%%\n" + GRAPH,
    ],
)
def test_directives_are_removed(fence: str) -> None:
    source = rendered_source(fence)
    assert "%%{" not in source and "init" not in source and "url(" not in source, source


@pytest.mark.parametrize(
    "fence",
    ["%%%{x}%%{init: {'themeCSS': 'y'}}%%\n" + GRAPH, "%%{a}%%%{b}%%{init}%%\n" + GRAPH, "%%{x}%{\n" + GRAPH],
)
def test_removing_one_directive_never_leaves_another(fence: str) -> None:
    assert "%%{" not in rendered_source(fence)


@pytest.mark.parametrize(
    "fence",
    [
        "---\nconfig:\n  themeCSS: '.n { background: url(https://logger.example/x) }'\n---\n" + GRAPH,
        "---\ntitle: T\nconfig:\n  securityLevel: loose\n  flowchart:\n    htmlLabels: true\n---\n" + GRAPH,
        "---   \nconfig:\n  theme: base\n---   \n\n" + GRAPH,
        "   ---\n   config:\n     fontFamily: 'url(x)'\n   ---\n   " + GRAPH,  # mermaid dedents first
        "---\n---\n---\nconfig:\n  themeCSS: url(x)\n---\n" + GRAPH,  # a second block under the first
        "%%{x}%%\n---\nconfig:\n  themeCSS: url(x)\n---\n" + GRAPH,  # front matter once a directive goes
        "---\nconfig:\n  themeCSS: url(x)\n---",  # nothing after it
    ],
)
def test_front_matter_is_removed(fence: str) -> None:
    source = rendered_source(fence)
    assert not source.startswith("---") and "config" not in source and "url(" not in source, source


def test_a_plain_diagram_is_kept_as_written() -> None:
    fence = "sequenceDiagram\n  Alice->>Bob: 50%% off\n  %% a comment\n  Bob-->>Alice: ---"
    assert rendered_source(fence) == fence


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.sampled_from(["%", "%%", "{", "}", "%%{", "}%%", "---", "\n", " ", "a", "config:"]), max_size=40
    )
)
def test_no_directive_or_front_matter_survives_any_source(parts: list[str]) -> None:
    source = diagram_source("".join(parts))
    assert "%%{" not in source
    assert source.strip().split("\n", 1)[0].strip() != "---"
