"""The one boundary around reading one file of the repository: an article, a chapter, a book's config.

Whatever goes wrong while one file is read (decoded, its YAML loaded, its fields checked, its Markdown
rendered, its ids numbered) is that file's failure, never the sync's: an ``ArticleParseError`` whose
message an author can act on, so the file fails alone and the version stored before is kept. The parsers'
own errors already say what is wrong; anything else (a bug, a library's assertion on input nobody
foresaw) is named by its class and logged whole for the operator.

Two kinds of exception pass through: what the sync's own dependencies raise (``SYNC_FAILURES``: the
source, the database, the asset store, when an image is resolved), since a retry of the sync can cure
them and the file is not at fault; and what is not an ``Exception`` at all (an interrupt, an exit).

All of the reading runs under the file's CPU budget (``limits``): past it, the file fails the same way.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager

from function.articles.limits import MAX_RENDER_CPU_SECONDS, cpu_budget
from function.errors import SYNC_FAILURES, ArticleParseError, RenderLimitError

log = logging.getLogger(__name__)

# One budget for all of a file's reading: real articles take milliseconds.
MAX_FILE_CPU_SECONDS = MAX_RENDER_CPU_SECONDS


@contextmanager
def reading_one_file(what: str) -> Iterator[None]:
    """Read one file (``what``: "article", "chapter", "book config", "book") within its CPU budget; any
    exception but a dependency's becomes an ``ArticleParseError`` in words."""
    over_budget = f"this {what} takes more than {{seconds:g}} s of CPU to read"
    try:
        with cpu_budget(MAX_FILE_CPU_SECONDS, over_budget):
            yield
    except ArticleParseError:
        raise
    except SYNC_FAILURES:
        raise
    except RenderLimitError as exc:
        raise ArticleParseError(str(exc)) from None
    except RecursionError:
        raise ArticleParseError(f"this {what} is nested too deeply to read") from None
    except MemoryError:
        raise ArticleParseError(f"this {what} takes too much memory to read") from None
    except Exception as exc:
        kind = type(exc).__name__
        # The traceback is for the operator (a bug to report); the author gets words, not a dump.
        log.warning("Unexpected error while reading a file", exc_info=True, extra={"error_type": kind})
        raise ArticleParseError(
            f"blog-api could not read this {what}: it failed on it with an unexpected {kind} (logged "
            "for the blog's operator). Nothing of it was stored; the version stored before is kept"
        ) from None
