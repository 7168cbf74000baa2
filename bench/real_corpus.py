"""A real-shaped article repository: articles sized and featured like a real Zenn repository's.

The ``corpus`` module's articles are small and uniform (a few KB each). Real Zenn repositories are not:
a sample of 511 articles held 20 MB of Markdown, a median near 30 KB, many code blocks with file labels,
tables, mermaid fences, footnotes, math, link cards and embeds, and three to eight topics each. This
profile draws each article's size from a log-normal around 30 KB, cut to 2-120 KB, and fills it with
those features in proportions like the sample's, from a seeded generator (the same bytes on every run).
"""

from __future__ import annotations

import functools
import itertools
import json
import random
from collections.abc import Callable

from bench.corpus import ARTICLES_DIR

MEDIAN_BYTES = 30_000
MIN_BYTES = 2_000
MAX_BYTES = 120_000
_SIGMA = 0.75  # log-normal spread: about a quarter of the articles above 50 KB, a tenth under 12 KB

_TOPICS = (
    "python", "typescript", "aws", "lambda", "react", "nextjs", "go", "rust", "docker", "kubernetes",
    "terraform", "github", "githubactions", "mysql", "tidb", "postgresql", "flask", "nodejs", "css",
    "frontend", "backend", "security", "zenn", "idea", "tech", "cloudflare", "vite", "vue", "linux",
)  # fmt: skip
_WORDS = (
    "lambda webhook github push article database latency round trip proxy worker sync tree blob token "
    "install python flask peewee mariadb tidb markdown render front matter slug tag archive deploy stack "
    "queue retry timeout budget memory cold start component hook state server client request response "
    "cache index query schema migration build test type function module package the a of to and in is "
    "for that with as on it we this be are by from at not but or if when then so"
).split()
_EMOJI = ("🐍", "🚀", "📝", "🔧", "🧪", "☁️", "🦀", "💡")

_CODE: dict[str, tuple[str, tuple[str, ...]]] = {
    "ts": (
        "src/index.ts",
        (
            "import { Hono } from 'hono';",
            "export async function handler(event: APIGatewayProxyEvent): Promise<Result> {",
            "  const body = JSON.parse(event.body ?? '{}') as Payload;",
            "  if (!body.items?.length) return { statusCode: 400, body: 'no items' };",
            "  const rows = await db.select().from(articles).where(eq(articles.userId, id));",
            "  return rows.map((row) => ({ ...row, tags: row.tags.split(',') }));",
            "}",
            "type Payload = { items: Array<{ id: number; name: string }> };",
        ),
    ),
    "python": (
        "app/main.py",
        (
            "from dataclasses import dataclass",
            "@dataclass(frozen=True)",
            "class Article:",
            "    slug: str",
            "    tags: tuple[str, ...] = ()",
            "def handler(event: dict[str, Any], context: object) -> dict[str, Any]:",
            "    rows = [row for row in db.execute('SELECT id, slug FROM articles') if row[1]]",
            "    return {'statusCode': 200, 'body': json.dumps({'count': len(rows)})}",
        ),
    ),
    "yaml": (
        ".github/workflows/ci.yml",
        (
            "name: ci",
            "on: [push, pull_request]",
            "jobs:",
            "  test:",
            "    runs-on: ubuntu-latest",
            "    steps:",
            "      - uses: actions/checkout@v4",
            "      - run: make test",
        ),
    ),
    "go": (
        "cmd/server/main.go",
        (
            "package main",
            'import "net/http"',
            "func main() {",
            '\thttp.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {',
            '\t\tw.Write([]byte("hello"))',
            "\t})",
            '\tlog.Fatal(http.ListenAndServe(":8080", nil))',
            "}",
        ),
    ),
    "bash": (
        "",
        (
            "npx zenn new:article --slug my-article",
            "docker compose up -d --build",
            'export DATABASE_URL="mysql://user:pass@127.0.0.1:4000/blog"',
            'for f in articles/*.md; do wc -c "$f"; done | sort -n | tail -5',
        ),
    ),
    "json": (
        "package.json",
        (
            "{",
            '  "name": "blog",',
            '  "scripts": { "dev": "vite", "build": "tsc && vite build" },',
            '  "dependencies": { "react": "^18.3.1", "zod": "^3.23.8" }',
            "}",
        ),
    ),
    "diff ts": (
        "",
        (
            "-const limit = 10;",
            "+const limit = Number(process.env.LIMIT ?? 20);",
            " export function page(items: Item[]) {",
            "+  if (!items.length) return [];",
            "   return items.slice(0, limit);",
            " }",
        ),
    ),
}


def slug(i: int) -> str:
    return f"real-{i:04d}"


def path(i: int) -> str:
    return f"{ARTICLES_DIR}/{slug(i)}.md"


def target_bytes(rng: random.Random) -> int:
    size = int(rng.lognormvariate(0, _SIGMA) * MEDIAN_BYTES)
    return max(MIN_BYTES, min(MAX_BYTES, size))


def article(i: int, revision: int = 0) -> bytes:
    """Real-shaped article ``i`` at ``revision`` (another revision is a real content change)."""
    rng = random.Random(i * 104_729 + revision)
    size = target_bytes(rng)
    topics = rng.sample(_TOPICS, rng.randint(3, 8))
    front = [
        "---",
        f"title: {json.dumps(_sentence(rng, 4, 10)[:-1] + f' ({i})', ensure_ascii=False)}",
        f'emoji: "{rng.choice(_EMOJI)}"',
        f'type: "{rng.choice(["tech", "tech", "tech", "idea"])}"',
        "topics: [" + ", ".join(json.dumps(t) for t in topics) + "]",
        f"published: {'true' if rng.random() < 0.9 else 'false'}",
        "---",
        "",
    ]
    body: list[str] = []
    notes: list[str] = []
    used = 0
    section = 0
    while used < size:
        section += 1
        part = [f"## {section}. {_sentence(rng, 2, 6)[:-1]}", ""]
        for _ in range(rng.randint(1, 3)):
            part += _FEATURES[rng.choices(range(len(_FEATURES)), weights=_WEIGHTS)[0]](rng, notes)
        used += sum(len(line.encode()) + 1 for line in part)
        body += part
    if revision:
        body.append(f"Revised ({revision}).")
    body += ["", *notes]
    return "\n".join(front + body).encode()


def repository(n: int) -> dict[str, bytes]:
    """The whole tree: ``n`` real-shaped articles plus a README (not an article)."""
    files = {path(i): article(i) for i in range(n)}
    files["README.md"] = b"# Zenn contents\n"
    return files


def _sentence(rng: random.Random, low: int = 6, high: int = 18) -> str:
    return " ".join(rng.choices(_WORDS, k=rng.randint(low, high))).capitalize() + "."


@functools.cache
def _sentence_pool() -> tuple[str, ...]:
    """Prose sentences drawn once from a fixed seed: picking whole sentences keeps generating 60 MB of
    articles to seconds, and the articles stay the same on every run."""
    rng = random.Random(20_250_501)
    return tuple(_sentence(rng) for _ in range(8192))


def _paragraphs(rng: random.Random, notes: list[str]) -> list[str]:
    lines: list[str] = []
    pool = _sentence_pool()
    for _ in range(rng.randint(2, 4)):
        sentences = rng.choices(pool, k=rng.randint(2, 6))
        k = rng.randrange(len(sentences))
        decoration = rng.random()
        if decoration < 0.25:
            sentences[k] += f" `{rng.choice(_WORDS)}_{rng.choice(_WORDS)}()` is called."
        elif decoration < 0.45:
            link = f"https://zenn.dev/{rng.choice(_WORDS)}/articles/{rng.randint(1, 999)}"
            sentences[k] += f" See [the guide]({link})."
        elif decoration < 0.55:
            sentences[k] += f" It takes $O(n \\log n)$ with **{rng.choice(_WORDS)}**."
        elif decoration < 0.65:
            number = len(notes) + 1
            sentences[k] += f"[^{number}]"
            notes.append(f"[^{number}]: {_sentence(rng, 4, 10)}")
        lines += [" ".join(sentences), ""]
    return lines


def _code(rng: random.Random, notes: list[str]) -> list[str]:
    lang = rng.choice(list(_CODE))
    label, lines = _CODE[lang]
    info = f"{lang}:{label}" if label and rng.random() < 0.7 else lang
    body = [rng.choice(lines) for _ in range(rng.randint(6, 40))]
    return [f"```{info}", *body, "```", ""]


def _table(rng: random.Random, notes: list[str]) -> list[str]:
    columns = rng.randint(2, 5)
    rows = ["| " + " | ".join(rng.choices(_WORDS, k=columns)) + " |" for _ in range(rng.randint(3, 12))]
    return [rows[0], "|" + "---|" * columns, *rows[1:], ""]


def _list(rng: random.Random, notes: list[str]) -> list[str]:
    marker = rng.choice(["-", "1."])
    return [f"{marker} {_sentence(rng, 3, 10)}" for _ in range(rng.randint(3, 7))] + [""]


def _mermaid(rng: random.Random, notes: list[str]) -> list[str]:
    steps = [rng.choice(_WORDS) for _ in range(rng.randint(3, 7))]
    edges = [f"  {a}_{n} --> {b}_{n + 1}" for n, (a, b) in enumerate(itertools.pairwise(steps))]
    return ["```mermaid", "graph TD", *edges, "```", ""]


def _math(rng: random.Random, notes: list[str]) -> list[str]:
    return ["$$", f"\\sum_{{i=1}}^{{n}} x_i^{rng.randint(2, 4)} = \\frac{{n(n+1)}}{{2}}", "$$", ""]


def _card(rng: random.Random, notes: list[str]) -> list[str]:
    return rng.choice(
        [
            [f"@[card](https://example.com/{rng.choice(_WORDS)}/{rng.randint(1, 99)})", ""],
            [f"https://github.com/octo/{rng.choice(_WORDS)}", ""],
            [f"@[youtube](dQw4w9WgXc{rng.randint(0, 9)})", ""],
            [f"https://x.com/zenn_dev/status/{rng.randint(10**17, 10**18)}", ""],
        ]
    )


def _box(rng: random.Random, notes: list[str]) -> list[str]:
    kind = rng.choice([":::message", ":::message alert", ":::details " + _sentence(rng, 2, 4)[:-1]])
    return [kind, _sentence(rng), ":::", ""]


def _quote_and_image(rng: random.Random, notes: list[str]) -> list[str]:
    return [
        f"> {_sentence(rng)}",
        "",
        f"![{rng.choice(_WORDS)}](/images/{rng.choice(_WORDS)}-{rng.randint(1, 9)}.png =600x)",
        "",
    ]


_FEATURES: tuple[Callable[[random.Random, list[str]], list[str]], ...] = (
    _paragraphs,
    _code,
    _table,
    _list,
    _mermaid,
    _math,
    _card,
    _box,
    _quote_and_image,
)
_WEIGHTS = (10, 6, 2, 3, 0.7, 0.7, 1.2, 1, 1)
