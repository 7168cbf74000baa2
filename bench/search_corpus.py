"""A real-shaped Japanese and English blog for the search benchmark.

Each article is the ``real_corpus`` article of the same number (English prose, code blocks, tables,
math, link cards: sized like a real Zenn repository's) with about half of its prose paragraphs in
Japanese of the same length, and a Japanese title. Japanese text is drawn from a vocabulary of common
technical words and compounds of a hundred kanji, so its character bigrams are varied as a real
article's are; each title carries a phrase no other title has, which the benchmark's queries look for.
"""

from __future__ import annotations

import random

from bench import real_corpus

_WORDS = (
    "設定 確認 実行 環境 変数 関数 接続 認証 署名 検証 配信 非同期 処理 "
    "時間 制限 記事 同期 変更 追加 削除 一覧 取得 保存 更新 失敗 再試行 "
    "成功 結果 方法 手順 理由 問題 解決 改善 性能 計測 比較 構成 導入 "
    "運用 監視 出力 入力 形式 文字列 配列 検索 索引 全文 日本語 英語 "
    "本番 開発 データベース サーバー クライアント リクエスト レスポンス "
    "キャッシュ トークン ユーザー アプリ ライブラリ フレームワーク テスト "
    "コード ブロック ファイル ディレクトリ リポジトリ ブランチ コミット "
    "プッシュ フック ログ 型"
).split()
_KANJI = (
    "安以宇衣於加幾久計己左之寸世曽太知川天止奈仁奴祢乃波比不部保末美武女毛也由与良利留礼呂和遠"
    "愛悪圧案位医域育員院飲運泳駅円園遠演横屋温化荷界開階寒感漢館岸起期客究急級宮球去橋業曲局銀"
)
_PARTICLES = ("は", "が", "を", "に", "で", "と", "も", "の", "から", "まで")
_ENDINGS = (
    "します。",
    "しました。",
    "できます。",
    "です。",
    "になります。",
    "してください。",
    "と思います。",
)


def _compound(rng: random.Random) -> str:
    return "".join(rng.choice(_KANJI) for _ in range(rng.randint(2, 3)))


def _sentence(rng: random.Random) -> str:
    parts = [
        (rng.choice(_WORDS) if rng.random() < 0.7 else _compound(rng)) + rng.choice(_PARTICLES)
        for _ in range(rng.randint(3, 7))
    ]
    return "".join(parts) + rng.choice(_WORDS) + rng.choice(_ENDINGS)


def distinctive(i: int) -> str:
    """The phrase in article ``i``'s title that no other title has."""
    size = len(_KANJI)
    return f"{_KANJI[i % size]}{_KANJI[(i // size) % size]}の{i:04d}番"


def slug(i: int) -> str:
    return real_corpus.slug(i)


def article(i: int, revision: int = 0) -> bytes:
    """Article ``i``: the real-shaped English article with a Japanese title, about half of its prose
    paragraphs written in Japanese of the same length (so the sizes stay the real-shaped ones)."""
    english = real_corpus.article(i, revision).decode()
    _, front, body = english.split("---", 2)
    rng = random.Random(i * 7_919 + revision)
    title = f"{distinctive(i)}で{rng.choice(_WORDS)}を{rng.choice(_WORDS)}する"
    lines = [line for line in front.strip().splitlines() if not line.startswith("title:")]
    out: list[str] = []
    for paragraph in body.split("\n\n"):
        if paragraph[:1].isalpha() and rng.random() < 0.5:
            japanese = ""
            while len(japanese.encode()) < len(paragraph.encode()):
                japanese += _sentence(rng)
            paragraph = japanese
        out.append(paragraph)
    return ("---\n" + f'title: "{title}"\n' + "\n".join(lines) + "\n---\n" + "\n\n".join(out)).encode()


def published(i: int) -> bool:
    """Whether article ``i`` is published (about one in ten of the real-shaped articles is a draft)."""
    return "\npublished: true" in article(i).decode().split("---", 2)[1]


def queries(count: int, n: int) -> list[str]:
    """``count`` queries of the kinds readers type, in turn: a title's distinctive phrase, two
    Japanese words, an English pair, a mixed one."""
    rng = random.Random(count * 31 + n)
    made = []
    for k in range(count):
        kind = k % 4
        if kind == 0:
            made.append(distinctive(rng.randrange(n)))
        elif kind == 1:
            made.append(f"{rng.choice(_WORDS)} {rng.choice(_WORDS)}")
        elif kind == 2:
            made.append(rng.choice(("peewee migration", "lambda cold start", "webhook retry", "tidb schema")))
        else:
            made.append(f"{rng.choice(_WORDS)}のlambda")
    return made


def repository(n: int) -> dict[str, bytes]:
    files = {real_corpus.path(i): article(i) for i in range(n)}
    files["README.md"] = b"# Zenn contents\n"
    return files
