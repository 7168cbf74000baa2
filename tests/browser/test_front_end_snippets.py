"""docs/front-ends.md's examples, read out of the page and run in chromium against a running blog-api.

The API answers the article late on purpose (after the page has loaded), which is when a front end that
let mermaid run at page load shows the diagram's source. The page is on another origin than the API, as
a site is, so CORS is part of what is tested. Mermaid is served from its npm package in place of the CDN.
"""

from __future__ import annotations

import functools
import http.server
import re
import subprocess
import threading
import time
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import pytest
from werkzeug.serving import make_server

from function.app import create_app
from function.articles.embeds import IFRAME_SOURCES
from function.services import Services
from function.settings import Settings
from function.store.migrations.steps import SCHEMA_VERSION
from function.worker.maintenance import initialise
from tests.browser.conftest import PATIENCE_S, ROOT, WORK, diagram_drawn, wait_for
from tests.kit.images import png

DOC = ROOT / "docs" / "front-ends.md"
DOC_API = "https://api.example.com"
DOC_MERMAID = "https://cdn.jsdelivr.net/npm/mermaid@12/dist/mermaid.esm.min.mjs"
# npm ci on a first run, a bundle with esbuild: more than a unit test's two minutes.
pytestmark = pytest.mark.timeout(600)

# How late the article arrives: long after the page's own load, so nothing can draw it at load time.
ARTICLE_DELAY_S = 1.5

ARTICLE = """---
title: "Diagrams arrive late"
topics: ["frontend"]
published: true
---

## First part

:::message
Styled by content.css.
:::

```mermaid
graph LR
  Fetch --> Insert --> Draw
```

```mermaid
%%{init: {"securityLevel": "loose", "htmlLabels": true, "flowchart": {"htmlLabels": true}}}%%
graph TD
  Directive --> Ignored
```

### A smaller heading

Euler: $e^{i\\pi} + 1 = 0$

![a square](/images/square.png)

## Second part

https://example.com/a/card
"""


def snippet(name: str) -> str:
    """The code block that follows ``<!-- snippet: NAME -->`` in docs/front-ends.md."""
    text = DOC.read_text(encoding="utf-8")
    match = re.search(rf"<!-- snippet: {re.escape(name)} -->\n```\w*\n(.*?)\n```\n", text, re.DOTALL)
    assert match, f"docs/front-ends.md has no snippet {name!r}"
    return match[1]


def replaced(text: str, replacements: dict[str, str]) -> str:
    for old, new in replacements.items():
        assert old in text, f"the snippet no longer holds {old!r}: update this test with it"
        text = text.replace(old, new)
    return text


class _Late:
    """WSGI middleware: the article routes answer after ARTICLE_DELAY_S."""

    def __init__(self, app: Any) -> None:
        self.app = app

    def __call__(self, environ: dict[str, Any], start_response: Any) -> Iterable[bytes]:
        if environ.get("PATH_INFO", "").startswith("/users/") and environ.get("REQUEST_METHOD") == "GET":
            time.sleep(ARTICLE_DELAY_S)
        return self.app(environ, start_response)


class _Switch:
    """A WSGI app set after the server is bound (the settings need the server's port)."""

    app: Any = None

    def __call__(self, environ: dict[str, Any], start_response: Any) -> Iterable[bytes]:
        return self.app(environ, start_response)


def _serve(server: Any) -> Iterator[str]:
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_port}"
    finally:
        server.shutdown()
        server.server_close()


class _Quiet(http.server.SimpleHTTPRequestHandler):
    extensions_map = {".mjs": "text/javascript", ".js": "text/javascript", ".html": "text/html"}

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture
def site_folder(tmp_path: Path) -> Path:
    folder = tmp_path / "site"
    folder.mkdir()
    return folder


@pytest.fixture
def site(site_folder: Path) -> Iterator[str]:
    """The front end's own origin: a static file server for the folder."""
    handler = functools.partial(_Quiet, directory=str(site_folder))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    yield from _serve(server)


@pytest.fixture
def api(tmp_path: Path, site: str) -> Iterator[str]:
    """blog-api with user demo and one synced article, allowing the site's origin, answering late."""
    repo = tmp_path / "repo"
    (repo / "articles").mkdir(parents=True)
    (repo / "images").mkdir()
    (repo / "articles" / "late.md").write_text(ARTICLE, encoding="utf-8")
    (repo / "images" / "square.png").write_bytes(png((20, 120, 200)))
    switch = _Switch()
    server = make_server("127.0.0.1", 0, switch, threaded=True)
    base = f"http://127.0.0.1:{server.server_port}"
    settings = Settings.from_env(
        {
            "GITHUB_WEBHOOK_SECRET": "front-end-test-secret",
            "ARTICLE_SOURCE": f"dir:{repo}",
            "DATABASE_URL": f"sqlite:///{tmp_path / 'blog.db'}",
            "ASSET_DIR": str(tmp_path / "assets"),
            # The page is on another origin: image URLs must name the API's.
            "ASSET_URL": f"{base}/assets",
            "CORS_ALLOWED_ORIGINS": site,
            "RENDER_PROCESSES": "1",
        }
    )
    services = Services(settings)
    assert initialise(services.database()).after == SCHEMA_VERSION
    with services.store() as store:
        store.add_user("demo", "demo@example.com", 1)
        summary = services.worker(store).sync_user("demo")
    assert summary.succeeded == 1 and not summary.failures
    switch.app = _Late(create_app(services=services))
    yield from _serve(server)
    services.database().close()


def _link_mermaid(site_folder: Path, mermaid_dist: Path) -> None:
    (site_folder / "mermaid").symlink_to(mermaid_dist, target_is_directory=True)


DIAGRAMS_DRAWN = "return document.querySelectorAll('.blog-content .mermaid svg').length === arguments[0]"


def _check_the_article_is_shown(page: Any, api: str) -> None:
    drawn = wait_for(page, diagram_drawn("Draw"), "the late article's diagram was not drawn")
    assert drawn["width"] > 50 and drawn["height"] > 10
    wait_for(page, lambda d: d.execute_script(DIAGRAMS_DRAWN, 2), "not every diagram was drawn")
    # Labels are SVG text (htmlLabels: false), also where a diagram asked for HTML (the renderer strips
    # such directives; test_a_directive_in_the_page_cannot_unlock_html_labels tries the page's own lock).
    assert (
        page.execute_script("return document.querySelectorAll('.blog-content .mermaid foreignObject').length")
        == 0
    )
    # The table of contents links to the headings, by their ids in the body.
    links = page.execute_script(
        "return [...document.querySelectorAll('nav a')].map(a => [a.textContent, a.getAttribute('href')])"
    )
    assert [text for text, _ in links] == ["First part", "A smaller heading", "Second part"]
    for _, href in links:
        assert page.execute_script("return document.getElementById(arguments[0]) !== null", href[1:])
    # content.css from the API styles the body; the formula is MathML; the image comes from the API.
    background = page.execute_script(
        "return getComputedStyle(document.querySelector('.blog-content aside.msg')).backgroundColor"
    )
    assert background not in ("rgba(0, 0, 0, 0)", "transparent")
    assert page.execute_script("return document.querySelector('.blog-content math') !== null")
    assert page.execute_script(
        "const img = document.querySelector('.blog-content img');"
        "return img.complete && img.naturalWidth > 0 && img.src.startsWith(arguments[0]);",
        f"{api}/assets/",
    )


def test_the_plain_html_page_draws_a_diagram_that_arrives_late(
    page: Any, api: str, site: str, site_folder: Path, mermaid_dist: Path
) -> None:
    # GIVEN the doc's page, pointed at this API, with mermaid from the npm package instead of the CDN
    _link_mermaid(site_folder, mermaid_dist)
    html = replaced(snippet("plain-html"), {DOC_API: api, DOC_MERMAID: "/mermaid/mermaid.esm.min.mjs"})
    (site_folder / "article.html").write_text(html, encoding="utf-8")

    # WHEN a reader opens it
    page.get(f"{site}/article.html?slug=late")

    # THEN the page has loaded before the article arrived...
    assert page.execute_script("return document.getElementById('article').children.length") == 0
    # ...and once it arrives, it is shown whole: diagram drawn, toc, styles, formula, image
    _check_the_article_is_shown(page, api)
    assert page.find_element("id", "title").text == "Diagrams arrive late"


# A diagram that asks for what the configuration locks, put into the page as if the renderer had let it
# through, and drawn by the page's own mermaid (the same instance: modules are shared by URL).
HOSTILE_DIAGRAM = r"""
const done = arguments[arguments.length - 1];
(async () => {
  const { default: mermaid } = await import("/mermaid/mermaid.esm.min.mjs");
  const node = document.createElement("pre");
  node.className = "mermaid";
  node.textContent = '%%{init: {"securityLevel": "loose", "htmlLabels": true, '
    + '"flowchart": {"htmlLabels": true}}}%%\n' + "graph TD\n  Hostile --> Ignored";
  document.getElementById("article").appendChild(node);
  await mermaid.run({ nodes: [node] });
  done([node.querySelectorAll("svg").length, node.querySelectorAll("foreignObject").length]);
})().catch((error) => done(String(error)));
"""


def test_a_directive_in_the_page_cannot_unlock_html_labels(
    page: Any, api: str, site: str, site_folder: Path, mermaid_dist: Path
) -> None:
    _link_mermaid(site_folder, mermaid_dist)
    html = replaced(snippet("plain-html"), {DOC_API: api, DOC_MERMAID: "/mermaid/mermaid.esm.min.mjs"})
    (site_folder / "article.html").write_text(html, encoding="utf-8")
    page.get(f"{site}/article.html?slug=late")
    wait_for(page, diagram_drawn("Draw"), "the article's diagram was not drawn")
    page.set_script_timeout(PATIENCE_S)

    drawn = page.execute_async_script(HOSTILE_DIAGRAM)

    # One diagram drawn, its labels SVG text: the directive could not turn HTML labels back on.
    assert drawn == [1, 0]


def test_the_plain_html_page_says_not_found_for_an_unknown_slug(
    page: Any, api: str, site: str, site_folder: Path, mermaid_dist: Path
) -> None:
    _link_mermaid(site_folder, mermaid_dist)
    html = replaced(snippet("plain-html"), {DOC_API: api, DOC_MERMAID: "/mermaid/mermaid.esm.min.mjs"})
    (site_folder / "article.html").write_text(html, encoding="utf-8")

    page.get(f"{site}/article.html?slug=no-such-article")

    wait_for(page, lambda d: d.find_element("id", "title").text == "Not found", "no 'Not found'")


NEXT_ENTRY = """
import { createRoot } from "react-dom/client";
import ArticlePage from "./app/articles/[slug]/page";

// The server component is an async function returning elements: called here as Next.js calls it.
const slug = new URLSearchParams(location.search).get("slug") ?? "";
const element = await ArticlePage({ params: Promise.resolve({ slug }) });
createRoot(document.getElementById("root")!).render(element);
"""
NEXT_NAVIGATION_STAND_IN = """
export function notFound(): never {
  throw new Error("NEXT_NOT_FOUND");
}
"""
NEXT_INDEX = """<!doctype html>
<html><head><meta charset="utf-8">
<link rel="stylesheet" href="{api}/static/content.css">
</head><body><div id="root"></div><script type="module" src="/out/entry.js"></script></body></html>
"""


def _build_next_example(site_folder: Path, api: str) -> None:
    """The doc's lib, page and client component, bundled with esbuild as Next.js would for the browser."""
    source = site_folder / "src"
    files = {
        "lib/blog.ts": snippet("next-lib"),
        "app/articles/[slug]/page.tsx": snippet("next-page"),
        "app/articles/[slug]/article-body.tsx": snippet("next-body"),
        "shims/next-navigation.ts": NEXT_NAVIGATION_STAND_IN,
        "entry.tsx": NEXT_ENTRY,
        # The "@/..." imports of a Next.js project, as its tsconfig maps them.
        "tsconfig.json": '{"compilerOptions": {"baseUrl": ".", "paths": {"@/*": ["./*"]}}}',
    }
    for name, text in files.items():
        (source / name).parent.mkdir(parents=True, exist_ok=True)
        (source / name).write_text(text, encoding="utf-8")
    result = subprocess.run(
        [
            str(WORK / "node_modules" / ".bin" / "esbuild"),
            "entry.tsx",
            "--bundle",
            "--format=esm",
            "--splitting",
            "--target=es2022",
            "--jsx=automatic",
            f"--outdir={site_folder / 'out'}",
            "--alias:next/navigation=./shims/next-navigation.ts",
            f'--define:process.env.BLOG_API_URL="{api}"',
            '--define:process.env.BLOG_USER="demo"',
            '--define:process.env.NODE_ENV="production"',
            "--log-level=error",
        ],
        cwd=source,
        env={"NODE_PATH": str(WORK / "node_modules"), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=PATIENCE_S * 4,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    (site_folder / "index.html").write_text(NEXT_INDEX.format(api=api), encoding="utf-8")


def test_the_nextjs_example_draws_a_diagram_that_arrives_late(
    page: Any, api: str, site: str, site_folder: Path, mermaid_dist: Path
) -> None:
    # GIVEN the doc's Next.js files built for the browser (mermaid imported from its npm package)
    _build_next_example(site_folder, api)

    # WHEN a reader opens the article's page
    page.get(f"{site}/index.html?slug=late")

    # THEN the late article is shown whole, its diagram drawn by the client component
    _check_the_article_is_shown(page, api)
    assert page.find_element("css selector", "main h1").text == "Diagrams arrive late"


def test_the_nextjs_layout_links_the_stylesheet_of_the_api() -> None:
    assert "href={`${process.env.BLOG_API_URL}/static/content.css`}" in snippet("next-layout")


def test_every_example_configures_mermaid_the_same_safe_way() -> None:
    text = DOC.read_text(encoding="utf-8")
    preview_page = (ROOT / "function" / "preview" / "templates" / "base.html").read_text(encoding="utf-8")
    configs = [*re.findall(r"mermaid\.initialize\((\{.*?\})\);", text, re.DOTALL)]
    configs += re.findall(r"mermaid\.initialize\((\{.*?\})\);", preview_page, re.DOTALL)
    assert len(configs) >= 4  # the doc's section, its two examples, the preview
    normalised = {re.sub(r"\s+", "", config.replace("\n", "")) for config in configs}
    assert len(normalised) == 1, normalised
    [config] = normalised
    assert (
        'securityLevel:"strict"' in config and "htmlLabels:false" in config and "startOnLoad:false" in config
    )


def test_the_content_security_policy_names_every_embed_host() -> None:
    text = DOC.read_text(encoding="utf-8")
    policy = text.split("<!-- csp: begin -->", 1)[1].split("<!-- csp: end -->", 1)[0]
    frame_src = policy.split("frame-src", 1)[1].split(";", 1)[0]
    hosts = {url.removeprefix("https://") for url in frame_src.split()}
    assert hosts == set(IFRAME_SOURCES)


def test_the_docs_mermaid_is_the_major_version_the_tests_install() -> None:
    package = (Path(__file__).parent / "package.json").read_text(encoding="utf-8")
    [version] = re.findall(r'"mermaid": "(\d+)\.', package)
    assert f"mermaid@{version}/" in DOC_MERMAID and DOC_MERMAID in snippet("plain-html")
