"""The generated article repository: N articles of realistic size and shape, the same on every run.

Each article is a few KB of Markdown with front matter (title, type, description, tags, publish), headings,
paragraphs, a list, a link and a code block: what a technical blog holds, and enough for parsing and
rendering to cost what they cost. A seeded generator keeps runs comparable.
"""

from __future__ import annotations

import json
import random

ARTICLES_DIR = "articles"
_TAGS = (
    "tech/aws/lambda",
    "tech/aws/api-gateway",
    "tech/python",
    "tech/python/flask",
    "tech/database/tidb",
    "tech/git",
    "life",
    "life/travel",
    "books",
)
_WORDS = (
    "lambda webhook github push article database latency round trip proxy worker sync tree blob "
    "token install python flask peewee mariadb tidb markdown render front matter slug tag archive "
    "deploy stack pulumi queue retry timeout budget memory import cold start the a of to and in is "
    "for that with as on it we this be are by from at not"
).split()


def slug(i: int) -> str:
    return f"post-{i:04d}"


def path(i: int) -> str:
    return f"{ARTICLES_DIR}/{slug(i)}.md"


def article(i: int, revision: int = 0) -> bytes:
    """Article ``i`` at ``revision`` (another revision is a real content change)."""
    rng = random.Random(i * 7919 + revision)
    title = " ".join(rng.choice(_WORDS) for _ in range(rng.randint(3, 8))).capitalize()
    tags = sorted(rng.sample(_TAGS, rng.randint(1, 3)))
    front = [
        "---",
        f"title: {json.dumps(f'{title} #{i}')}",
        f"type: {rng.choice(['tech', 'idea'])}",
        f"description: {json.dumps(_sentence(rng))}",
        "tags: [" + ", ".join(json.dumps(t) for t in tags) + "]",
        f"publish: {'true' if rng.random() < 0.9 else 'false'}",
        "---",
        "",
    ]
    body: list[str] = []
    for section in range(rng.randint(3, 5)):
        body += [f"## Section {section + 1}: {_sentence(rng, 3, 6)}", ""]
        for _ in range(rng.randint(2, 4)):
            body += [" ".join(_sentence(rng) for _ in range(rng.randint(3, 6))), ""]
        body += [f"- {_sentence(rng, 3, 8)}" for _ in range(rng.randint(2, 4))] + [""]
        body += [f"See [the docs](https://example.com/{rng.choice(_WORDS)}) for more.", ""]
        body += ["```python", "def handler(event, context):", f"    return {rng.randint(0, 999)}", "```", ""]
    if revision:
        body.append(f"Revised ({revision}).")
    return "\n".join(front + body).encode()


def repository(n: int) -> dict[str, bytes]:
    """The whole tree: ``n`` articles plus a few files that are not articles."""
    files = {path(i): article(i) for i in range(n)}
    files["README.md"] = b"# My blog\n\nArticles live in articles/.\n"
    files["images/cover.png"] = bytes(range(256)) * 16
    # Outside articles/: the folder holds exactly the N articles, so the baseline's Contents API listing
    # (at most 1,000 entries) sees all of them at N=1000.
    files["notes/ideas.md"] = b"Not an article: not in articles/.\n"
    return files


def _sentence(rng: random.Random, low: int = 6, high: int = 16) -> str:
    words = [rng.choice(_WORDS) for _ in range(rng.randint(low, high))]
    return " ".join(words).capitalize() + "."
