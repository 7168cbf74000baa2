"""``python -m tools.parity [check | zenn | measure DIR... [--show FEATURE]]`` (see the package docstring)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from tools.parity import run


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.parity")
    sub = parser.add_subparsers(dest="command")
    sub.add_parser("check", help="the corpus against Zenn's committed fingerprints (the default)")
    sub.add_parser("zenn", help="regenerate Zenn's fingerprints of the corpus (needs node)")
    measure = sub.add_parser("measure", help="both renderers, live, on folders of someone's articles")
    measure.add_argument("folders", nargs="+", type=Path)
    measure.add_argument("--show", action="append", default=[], help="print the differences of FEATURE")
    args = parser.parse_args(argv)

    if args.command == "zenn":
        prints = run.zenn(run.corpus())
        run.save_fingerprints(prints)
        where = run.FINGERPRINTS.relative_to(run.ROOT)
        print(f"wrote Zenn's fingerprints of {len(prints)} articles to {where}")
        return 0
    if args.command == "measure":
        return _measure(args.folders, args.show)
    return _check()


def _check() -> int:
    articles = run.corpus()
    zenn_prints = run.load_fingerprints()
    missing = sorted(set(articles) - set(zenn_prints))
    if missing:
        print(f"no Zenn fingerprints for {missing}: run `make parity-zenn`", file=sys.stderr)
        return 1
    found = run.differences({n: zenn_prints[n] for n in articles}, run.ours(articles))
    accepted = run.allowlist()
    unlisted = [d for d in found if (d.article, d.feature) not in accepted]
    shown = run.presence({n: zenn_prints[n] for n in articles})
    print(run.table(run.per_feature(articles, unlisted), len(articles), shown))
    print(f"{len(found) - len(unlisted)} allowlisted difference(s) (tools/parity/allowlist.toml)")
    for difference in unlisted:
        print("DIFFERS " + difference.describe())
    return 1 if unlisted else 0


def _measure(folders: list[Path], show: list[str]) -> int:
    articles = {}
    for folder in folders:
        for path in sorted(folder.rglob("*.md")):
            articles[str(path)] = run.body(path.read_text(encoding="utf-8", errors="replace"))
    zenn_prints = run.zenn(articles)
    found = run.differences(zenn_prints, run.ours(articles))
    print(run.table(run.per_feature(articles, found), len(articles), run.presence(zenn_prints)))
    for difference in found:
        if difference.feature in show:
            print(difference.describe())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
