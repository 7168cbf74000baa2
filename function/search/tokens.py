"""The terms of a text, as the lexical index stores them and a query asks for them.

Japanese and English share one index. The text is NFKC-normalised and case-folded (so full-width
``AWS``, ``AWS`` and ``aws`` are one term, and half-width katakana is katakana), then cut into runs of
letters and digits. Inside a run, Latin (and every other non-CJK) text is one term per word, and CJK
text (kanji, kana, hangul) is one term per pair of neighbouring characters (character bigrams: no
dictionary to ship, and a query finds any substring of two characters or more); a CJK run of one
character is that character. Markdown's markup characters, code punctuation and URL separators are not
letters, so code, math and URLs are indexed as the words they hold. HTML tags written in the Markdown
are dropped: what a reader sees is indexed, not the markup.
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter

# A term longer than this is cut to it: the terms table's column is this wide, and a 64-character
# "word" is a hash or a base64 blob that nobody types whole anyway.
MAX_TERM_CHARS = 64

# The scripts cut into bigrams: CJK ideographs (and their extensions and compatibility forms), kana
# with the prolonged sound mark, and hangul.
_CJK_CHARS = (
    "\u3040-\u30ff\u31f0-\u31ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af\U00020000-\U0002ffff"
)
# Letters and digits (``\w`` without the underscore, so ``snake_case`` is two words); within a run that
# is not ASCII, CJK text or other letters and digits.
_WORD = re.compile(r"[^\W_]+")
_RUNS = re.compile(f"([{_CJK_CHARS}]+)|([^{_CJK_CHARS}]+)")
_HTML_TAG = re.compile(r"</?[A-Za-z][A-Za-z0-9-]*(?:\s[^<>]*)?/?>")


def normalised(text: str) -> str:
    """``text`` as the index compares it: NFKC, then case-folded."""
    return unicodedata.normalize("NFKC", text).casefold()


def terms(text: str) -> list[str]:
    """Every term of ``text`` in order, repeats included."""
    found: list[str] = []
    for run in _WORD.findall(normalised(_HTML_TAG.sub(" ", text))):
        if run.isascii():  # most runs of a technical text: a word, no CJK to look for
            found.append(run[:MAX_TERM_CHARS])
            continue
        for cjk, word in _RUNS.findall(run):
            if word:
                found.append(word[:MAX_TERM_CHARS])
            elif len(cjk) == 1:
                found.append(cjk)
            else:
                # Bigrams built in C (a long run of Japanese is thousands of them).
                found += map(str.__add__, cjk[:-1], cjk[1:])
    return found


def term_counts(text: str) -> Counter[str]:
    """How often each term occurs in ``text``."""
    return Counter(terms(text))


def query_terms(query: str, *, limit: int) -> list[str]:
    """The distinct terms of a query, in their order, at most ``limit`` of them."""
    return list(dict.fromkeys(terms(query)))[:limit]
