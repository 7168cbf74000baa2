"""Rendering a set of articles with both renderers, and comparing their fingerprints."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import tomllib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from function.articles.render import render_markdown
from tools.parity.features import FEATURES, Fingerprint, fingerprint

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
NODE_DIR = ROOT / ".parity"
FINGERPRINTS = HERE / "zenn_fingerprints.json"
ALLOWLIST = HERE / "allowlist.toml"
# Zenn's own example articles (MIT, see tests/fixtures/zenn/LICENSE) and the articles written for parity.
CORPUS_DIRS = (ROOT / "tests" / "fixtures" / "zenn" / "articles", HERE / "corpus")
CORPUS_FILES = (ROOT / "tests" / "fixtures" / "zenn-features.md",)
_FRONT_MATTER = re.compile(r"\A---[ \t]*\r?\n.*?\r?\n---[ \t]*(?:\r?\n|\Z)", re.DOTALL)


def corpus() -> dict[str, str]:
    """Article name (its path from the repository root) → body (front matter removed)."""
    paths = [p for folder in CORPUS_DIRS for p in sorted(folder.glob("*.md")) if p.name != "README.md"]
    return {
        path.relative_to(ROOT).as_posix(): body(path.read_text(encoding="utf-8"))
        for path in [*paths, *CORPUS_FILES]
    }


def body(text: str) -> str:
    """The Markdown Zenn renders: what follows the front matter."""
    return _FRONT_MATTER.sub("", text, count=1)


def ours(articles: Mapping[str, str]) -> dict[str, Fingerprint]:
    return {name: fingerprint(render_markdown(text)) for name, text in articles.items()}


def zenn(articles: Mapping[str, str]) -> dict[str, Fingerprint]:
    """Zenn's fingerprints, rendered by zenn-markdown-html under Node (``make parity-zenn`` installs it)."""
    if not (NODE_DIR / "node_modules" / "zenn-markdown-html").is_dir():
        raise SystemExit("Zenn's renderer is not installed: run `make parity-zenn` (needs node and npm)")
    shutil.copy(HERE / "zenn_render.mjs", NODE_DIR / "zenn_render.mjs")
    result = subprocess.run(
        ["node", str(NODE_DIR / "zenn_render.mjs")],
        input=json.dumps(dict(articles)),
        capture_output=True,
        text=True,
        check=True,
    )
    return {name: fingerprint(html) for name, html in json.loads(result.stdout).items()}


@dataclass(frozen=True)
class Difference:
    article: str
    feature: str
    zenn: list[str]
    ours: list[str]

    def describe(self, limit: int = 3) -> str:
        zenn_only = [x for x in self.zenn if x not in self.ours][:limit]
        ours_only = [x for x in self.ours if x not in self.zenn][:limit]
        zenn_side = zenn_only or self.zenn[:limit]
        return f"{self.article} [{self.feature}]\n  Zenn: {zenn_side}\n  ours: {ours_only}"


def differences(
    zenn_prints: Mapping[str, Fingerprint], our_prints: Mapping[str, Fingerprint]
) -> list[Difference]:
    found = []
    for article, theirs in zenn_prints.items():
        mine = our_prints[article]
        for feature in FEATURES:
            if theirs.get(feature, []) != mine.get(feature, []):
                found.append(Difference(article, feature, theirs.get(feature, []), mine.get(feature, [])))
    return found


def allowlist(path: Path = ALLOWLIST) -> dict[tuple[str, str], str]:
    """(article, feature) → the reason the difference is accepted."""
    entries = tomllib.loads(path.read_text(encoding="utf-8")).get("difference", [])
    return {(e["article"], e["feature"]): e["reason"] for e in entries}


def per_feature(articles: Iterable[str], found: Iterable[Difference]) -> dict[str, float]:
    """Share of articles at parity, per feature (articles where the feature does not appear count)."""
    names = list(articles)
    differing: dict[str, set[str]] = {feature: set() for feature in FEATURES}
    for difference in found:
        differing[difference.feature].add(difference.article)
    return {f: 100.0 * (len(names) - len(differing[f])) / max(len(names), 1) for f in FEATURES}


def presence(prints: Mapping[str, Fingerprint]) -> dict[str, int]:
    """How many articles show each feature at all (in Zenn's rendering)."""
    return {f: sum(1 for p in prints.values() if p.get(f)) for f in FEATURES}


def table(shares: Mapping[str, float], count: int, shown: Mapping[str, int]) -> str:
    lines = [f"{'feature':<14} {'at parity':>9}  (of {count} articles; how many show the feature)"]
    lines += [f"{feature:<14} {share:7.1f} %  ({shown[feature]})" for feature, share in shares.items()]
    return "\n".join(lines)


def load_fingerprints(path: Path = FINGERPRINTS) -> dict[str, Fingerprint]:
    data: dict[str, Fingerprint] = json.loads(path.read_text(encoding="utf-8"))
    return data


def save_fingerprints(prints: Mapping[str, Fingerprint], path: Path = FINGERPRINTS) -> None:
    path.write_text(json.dumps(prints, ensure_ascii=False, indent=1, sort_keys=True) + "\n", encoding="utf-8")
